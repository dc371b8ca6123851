"""Reading JavaScript text without parsing it: comments and literal contents blanked in place.

Shared by what finds the page's scripts (``_loads``) and the static detectors (``_source``).
"""

from __future__ import annotations

import re

__all__ = ["blank_js"]

# After these characters a '/' starts a regex literal, not a division.
_REGEX_PREV = set("(,=:[!&|?{};+-*%<>~^")
_REGEX_KEYWORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield"}


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def blank_js(js: str) -> tuple[str, str]:
    """(code, skeleton) of a JS text: comments blanked; skeleton also blanks literal contents.

    A small hand tokenizer (strings, nested template literals, regex literals, comments); it need
    not be a parser, only never mistake a comment for code or code for a comment.
    """
    code = list(js)
    skel = list(js)
    n = len(js)
    i = 0
    # Stack of template-literal brace depths: inside `${ ... }` we are in code again.
    templates: list[int] = []
    depth = 0
    prev = ""  # last significant code character
    prev_word = ""

    def scan_string(start: int, quote: str) -> int:
        j = start + 1
        while j < n and js[j] != quote and js[j] != "\n":
            j += 2 if js[j] == "\\" else 1
        return min(j + 1, n)

    def scan_template(start: int) -> tuple[int, bool]:
        """From just after a backtick or a closing '}': up to the next '`' or '${'."""
        j = start
        while j < n:
            if js[j] == "\\":
                j += 2
            elif js[j] == "`":
                return j + 1, True
            elif js.startswith("${", j):
                return j + 2, False
            else:
                j += 1
        return n, True

    while i < n:
        c = js[i]
        if js.startswith("//", i):
            j = js.find("\n", i)
            j = n if j < 0 else j
            _blank(code, i, j)
            _blank(skel, i, j)
            i = j
        elif js.startswith("/*", i):
            j = js.find("*/", i + 2)
            j = n if j < 0 else j + 2
            _blank(code, i, j)
            _blank(skel, i, j)
            i = j
        elif c in "'\"":
            j = scan_string(i, c)
            _blank(skel, i + 1, max(i + 1, j - 1))
            prev, prev_word, i = c, "", j
        elif c == "`" or (c == "}" and templates and templates[-1] == depth):
            if c == "}":
                templates.pop()
            j, closed = scan_template(i + 1)
            _blank(skel, i + 1, j - (1 if closed else 2))
            if not closed:
                templates.append(depth)
            prev, prev_word, i = "`", "", j
        elif c == "/" and (prev == "" or prev in _REGEX_PREV or prev_word in _REGEX_KEYWORDS):
            j, in_class = i + 1, False
            while j < n and js[j] != "\n":
                if js[j] == "\\":
                    j += 2
                    continue
                if js[j] == "[":
                    in_class = True
                elif js[j] == "]":
                    in_class = False
                elif js[j] == "/" and not in_class:
                    break
                j += 1
            _blank(skel, i + 1, min(j, n))
            prev, prev_word, i = "/", "", j + 1
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            if not c.isspace():
                if c.isalnum() or c in "_$":
                    m = re.match(r"[\w$]+", js[i:i + 64])
                    word = m.group(0) if m else c
                    prev, prev_word = word[-1], word
                    i += len(word)
                    continue
                prev, prev_word = c, ""
            i += 1
    return "".join(code), "".join(skel)
