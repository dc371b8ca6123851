"""An artefact's source as views that keep every offset, so a finding can name its file and line.

A static detector must not be fooled by ``// TODO: use performance.now()`` in a comment, nor lose
its place in the HTML file. Each file therefore gets views of the same length as the file, with
what a view leaves out replaced by spaces (newlines kept):

- ``text``: markup and scripts, HTML and JS comments blanked (for markup and inline patterns)
- ``code``: only the scripts the page runs (inline ``<script>``, local ``src`` files and the modules
  they import, see ``_loads``), JS comments blanked
- ``skeleton``: ``code`` with the contents of strings, templates and regex literals blanked too,
  for brace matching and for finding identifiers without matching words inside strings
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._jstext import blank_js
from ._loads import Skipped, page_scripts, script_tags

__all__ = ["MAX_SOURCE_BYTES", "Hit", "Source", "SourceFile", "blank_js"]

MAX_SOURCE_BYTES = 4 * 1024 * 1024  # per file read for static analysis (see Source.from_artefact)

_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
@dataclass
class SourceFile:
    """One file of the artefact with its views (all the same length as ``raw``)."""

    name: str
    raw: str
    text: str
    code: str
    skeleton: str
    _line_starts: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def from_html(cls, name: str, html: str, views: dict[int, tuple[str, str]] | None = None) -> SourceFile:
        """The entry's views; ``views`` maps an inline body's offset to its (code, skeleton) if made."""
        text = list(_HTML_COMMENT_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), html))
        code = [ch if ch == "\n" else " " for ch in html]
        skel = list(code)
        for tag in script_tags(html):
            if not tag.runs or "src" in tag.attrs or tag.body_start < 0:
                continue  # JSON, templates, shaders, nomodule fallbacks: not code that runs
            start, end = tag.body_start, tag.body_start + len(tag.body)
            c, s = (views or {}).get(start) or blank_js(tag.body)
            code[start:end], skel[start:end], text[start:end] = c, s, c
        return cls(name, html, "".join(text), "".join(code), "".join(skel))

    @classmethod
    def from_js(cls, name: str, js: str, views: tuple[str, str] | None = None) -> SourceFile:
        c, s = views or blank_js(js)
        return cls(name, js, c, c, s)

    def line_of(self, pos: int) -> int:
        if not self._line_starts:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.raw)]
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def snippet(self, pos: int, width: int = 110) -> str:
        """``index.html:42: the line at pos``, trimmed: the evidence a person can go and read."""
        line = self.line_of(pos)
        start = self._line_starts[line - 1]
        end = self.raw.find("\n", start)
        text = self.raw[start:end if end >= 0 else len(self.raw)].strip()
        if len(text) > width:
            text = text[: width - 3] + "..."
        return f"{self.name}:{line}: {text}"


@dataclass(frozen=True)
class Hit:
    file: SourceFile
    match: re.Match[str]

    @property
    def pos(self) -> int:
        return self.match.start()

    @property
    def snippet(self) -> str:
        return self.file.snippet(self.match.start())


class Source:
    """The entry HTML plus the local scripts it loads, as views (see the module docstring)."""

    def __init__(self, files: list[SourceFile], skipped: list[Skipped] | None = None):
        self.files = files
        self.skipped = skipped or []  # scripts the page names that were not read, and why

    @classmethod
    def from_artefact(cls, artefact_dir: Path, entry: str = "index.html") -> Source:
        """Read the entry file and the local scripts it runs; FileNotFoundError when no entry.

        The scripts are those the page loads (``_loads.page_scripts``): ``src`` files, root-absolute
        or relative, and the ES modules they import, transitively; a dead file in the folder is no
        claim. Only plain files inside the folder are read (no link followed), each at most
        ``MAX_SOURCE_BYTES``: the views cost about 20 bytes a character, so a 46 MB entry once
        took 2 GB. An entry over the cap raises ArtefactError; a script over it is left out.
        """
        page = page_scripts(Path(artefact_dir), entry, max_bytes=MAX_SOURCE_BYTES)
        inline = {s.start: s.views for s in page.scripts if s.inline}
        files = [SourceFile.from_html(entry, page.html, inline)]
        files += [SourceFile.from_js(s.name, s.text, s.views) for s in page.scripts if not s.inline]
        return cls(files, page.skipped)

    def reach(self, most: int = 8) -> str:
        """What was read and what the page names but was not: ``index.html, js/app.js; not read: ...``.

        Said beside a claim not found, so a person sees which files it rests on.
        """
        def listed(items: list[str]) -> str:
            more = f" and {len(items) - most} more" if len(items) > most else ""
            return ", ".join(items[:most]) + more

        text = listed([f.name for f in self.files])
        if self.skipped:
            text += "; not read: " + listed([f"{s.ref or s.label} ({s.why})" for s in self.skipped])
        return text

    @classmethod
    def from_text(cls, html: str, name: str = "index.html") -> Source:
        return cls([SourceFile.from_html(name, html)])

    def find(self, pattern: str | re.Pattern[str], view: str = "code", flags: int = 0) -> Iterator[Hit]:
        regex = re.compile(pattern, flags) if isinstance(pattern, str) else pattern
        for f in self.files:
            for m in regex.finditer(getattr(f, view)):
                yield Hit(f, m)

    def first(self, pattern: str | re.Pattern[str], view: str = "code", flags: int = 0) -> Hit | None:
        return next(self.find(pattern, view, flags), None)

    # -- small structural rules over the skeleton ------------------------------------------

    @staticmethod
    def block_end(f: SourceFile, open_pos: int) -> int:
        """Offset just past the '}' matching the '{' at open_pos (end of file when unbalanced)."""
        depth = 0
        s = f.skeleton
        for i in range(open_pos, len(s)):
            if s[i] == "{":
                depth += 1
            elif s[i] == "}":
                depth -= 1
                if depth == 0:
                    return i + 1
        return len(s)

    def enclosing_function(self, f: SourceFile, pos: int) -> tuple[str | None, int, int] | None:
        """(name or None when anonymous, body start, body end) of the innermost function around pos.

        None means pos is at top level, so it runs when the script loads.
        """
        s = f.skeleton
        depth = 0
        i = pos - 1
        while i >= 0:
            ch = s[i]
            if ch == "}":
                depth += 1
            elif ch == "{":
                if depth == 0:
                    end = self.block_end(f, i)
                    head = s[max(0, i - 200):i]
                    kind = _function_head(head)
                    if kind is not None:
                        return (kind or None), i, end
                else:
                    depth -= 1
            i -= 1
        return None

    def references(self, name: str, *, outside: tuple[int, int] | None = None,
                   file: SourceFile | None = None) -> list[Hit]:
        """Uses of identifier ``name`` that are not its own definition (nor inside ``outside``)."""
        regex = re.compile(rf"(?<![\w$.]){re.escape(name)}\b|(?<=\.){re.escape(name)}\b")
        hits = []
        for h in self.find(regex, view="skeleton"):
            if outside is not None and h.file is file and outside[0] <= h.pos < outside[1]:
                continue
            before = h.file.skeleton[max(0, h.pos - 12):h.pos]
            after = h.file.skeleton[h.match.end():h.match.end() + 40]
            if re.search(r"\bfunction\s*\*?\s*$", before):
                continue  # `function name(`: the definition
            if re.match(r"\s*=(?!=)\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*=>|[\w$]+\s*=>)", after):
                continue  # `name = () =>`: the definition
            if re.match(r"\s*\([^()]*\)\s*\{", after) and not re.search(r"[=(,:;!&|?]\s*$|\breturn\s*$", before):
                continue  # `name() {`: a method definition, not a call
            hits.append(h)
        return hits


_KEYWORD_BLOCKS = re.compile(r"\b(?:if|for|while|switch|catch|with)\s*\([^{}]*\)\s*$|\b(?:else|try|finally|do)\s*$")


def _function_head(head: str) -> str | None:
    """For the text before a '{': '' for an anonymous function, its name, or None (not a function)."""
    if _KEYWORD_BLOCKS.search(head):
        return None
    m = re.search(r"\bfunction\s*\*?\s*([\w$]*)\s*\([^()]*\)\s*$", head)
    if m:
        if m.group(1):
            return m.group(1)
        named = re.search(r"([\w$]+)\s*[=:]\s*(?:async\s+)?function\s*\*?\s*\([^()]*\)\s*$", head)
        return named.group(1) if named else ""
    m = re.search(r"(?:([\w$]+)\s*[=:]\s*)?(?:async\s+)?(?:\([^()]*\)|[\w$]+)\s*=>\s*$", head)
    if m:
        return m.group(1) or ""
    m = re.search(r"(?:^|[\s;{}])(?:static\s+|async\s+|get\s+|set\s+)*([\w$]+)\s*\([^()]*\)\s*$", head)
    if m and m.group(1) not in {"if", "for", "while", "switch", "catch", "with", "return", "function"}:
        return m.group(1)  # a method in a class or object literal
    return None
