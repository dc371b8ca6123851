"""What the entry page runs: its script tags and, transitively, the local files and modules they load.

Static claims (``_source``) and the syntax check (``_syntax``) must describe the page a browser
runs, not every file that happens to lie in the folder: a dead ``old.js`` or a commented-out
``<script>`` is no claim the page makes, and a helper reached through ``import`` is one.

The rules follow the browser serving the folder at ``http://localhost/``:

- ``<script>`` elements as an HTML parser sees them (none inside a comment, ``<template>`` or
  ``<noscript>``); classic and ``type="module"`` run, ``nomodule`` classic scripts and data
  blocks (``type="text/template"``, JSON) do not;
- a ``src`` or import specifier resolves as a URL against its file: root-absolute ``/js/x.js``
  against the folder root, ``./`` and ``../`` against the file's folder, ``..`` never climbing
  above the root (the URL rules stop there), query strings and fragments dropped, ``%20``
  decoded; remote URLs (``https:``, ``//cdn``, ``data:``) and bare specifiers are not followed;
- modules are followed through static ``import``/``export ... from`` and through ``import()``
  with a literal specifier (in classic scripts too), transitively; each file is read once, so a
  cycle ends;
- every file is read with :func:`agentbench._files.read_bytes`: only plain files inside the
  folder, never through a link, each under a cap; what is not read is listed with the reason.

Import specifiers are found by pattern on the comment-blanked code, with strings told apart by
the skeleton view, so ``// import './old.js'`` or ``"import './x.js'"`` in a string is not an
import. It need not be a parser: a missed import only misses claims, as before.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from ..._files import read_bytes, safe_parts
from ...errors import ArtefactError
from ._jstext import blank_js

__all__ = ["PageScripts", "Script", "ScriptTag", "Skipped", "import_specs", "page_scripts", "resolve_url",
           "script_kind", "script_tags"]

_BASE = "http://localhost/"
# HTML's "JavaScript MIME type essence match" list; anything else non-empty is a data block.
JS_TYPES = {
    "application/ecmascript", "application/javascript", "application/x-ecmascript",
    "application/x-javascript", "text/ecmascript", "text/javascript", "text/javascript1.0",
    "text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
    "text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript",
}
# Imports of these are JSON, CSS or WebAssembly modules, not JavaScript to read.
_NOT_JS = (".json", ".css", ".wasm", ".html", ".htm", ".svg", ".txt")
# Import forms are read by hand from each keyword on (see import_specs): the obvious regexes
# (`import\s*(?:[\w\s{},*]+?\s*from\s*)?"..."`) backtrack cubically on a run of spaces, and a
# blanked comment is one.
_KEYWORD = re.compile(r"(?<![\w$.])(import|export)(?![\w$])")
_CLAUSE = re.compile(r"[\w$*{},\s]*")  # what may stand between `import`/`export` and `from`
_DYNAMIC = re.compile(r"""\(\s*(["'`])([^"'`\n$]{1,500})\1\s*[,)]""")
_CLAUSE_MAX = 4000  # characters from the keyword to the specifier, at most


@dataclass
class ScriptTag:
    """One ``<script>`` element of the page, where it is and what it holds."""

    attrs: dict[str, str]
    line: int  # 1-based line of the tag
    body_start: int = -1  # offset of the inline body in the HTML (-1: no body)
    body: str = ""

    @property
    def kind(self) -> str:
        return script_kind(self.attrs)

    @property
    def runs(self) -> bool:
        """A browser runs it: JavaScript, and not a ``nomodule`` fallback (Chromium runs modules)."""
        kind = self.kind
        return kind == "module" or (kind == "classic" and "nomodule" not in self.attrs)


def script_kind(attrs: dict[str, str]) -> str:
    """'classic', 'module', or the data-block type (not run)."""
    if "type" in attrs:
        kind = attrs["type"].strip().lower()
    elif attrs.get("language", "").strip():
        kind = "text/" + attrs["language"].strip().lower()
    else:
        kind = ""
    if kind == "" or kind in JS_TYPES:
        return "classic"
    return "module" if kind == "module" else kind


class _TagParser(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[ScriptTag] = []
        self._open: ScriptTag | None = None
        self._inert = 0  # depth of <template>/<noscript>: scripts there never run
        self._starts = [0] + [m.end() for m in re.finditer("\n", html)]

    def _offset(self) -> int:
        line, col = self.getpos()
        return self._starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("template", "noscript"):
            self._inert += 1
        elif tag == "script":
            self._open = ScriptTag({k: v or "" for k, v in attrs}, self.getpos()[0])
            if not self._inert:
                self.tags.append(self._open)

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            if self._open.body_start < 0:
                self._open.body_start = self._offset()
            self._open.body += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("template", "noscript"):
            self._inert = max(0, self._inert - 1)
        elif tag == "script":
            self._open = None


def script_tags(html: str) -> list[ScriptTag]:
    """The ``<script>`` elements a browser could run (none in comments, templates or noscript)."""
    parser = _TagParser(html)
    parser.feed(html)
    parser.close()
    for tag in parser.tags:
        # The body is a contiguous run of the HTML (script content is raw text); if a parser
        # version ever hands it over otherwise, find it again rather than trust wrong offsets.
        if tag.body_start >= 0 and html[tag.body_start:tag.body_start + len(tag.body)] != tag.body:
            tag.body_start = html.find(tag.body) if tag.body else -1
    return parser.tags


def resolve_url(base_file: str, ref: str) -> str | None:
    """``ref`` as written in ``base_file`` -> a path relative to the folder root, or None.

    None for a remote URL, a bare module specifier, or a reference to no file. ``..`` stops at
    the root, as the browser's URL rules do at ``http://localhost/``.
    """
    ref = re.sub(r"[\t\n\r]", "", ref).strip().replace("\\", "/")
    if not ref or ref.startswith("//") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", ref):
        return None  # remote, data:, blob:, javascript:
    url = urlsplit(urljoin(_BASE + base_file, ref))
    if url.netloc != "localhost":
        return None
    path = posixpath.normpath(unquote(url.path))
    rel = path.lstrip("/")
    try:
        safe_parts(rel)
    except ValueError:
        return None
    return rel


def import_specs(code: str, skeleton: str, *, module: bool) -> list[str]:
    """Specifiers (paths and URLs, not bare names) a script imports, in order.

    ``code`` and ``skeleton`` are the script's views from ``blank_js``.

    Static imports count only in a module (in a classic script they are a syntax error and load
    nothing); ``import()`` with a literal counts in both.
    """
    found = []
    for m in _KEYWORD.finditer(skeleton):  # keywords in code, not in strings or comments
        spec = _spec_after(code, skeleton, m.group(1), m.end(), module)
        # Bare names ('react') need an import map: no file. URLs are kept, to be listed as remote.
        if spec and (spec.startswith(("./", "../", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", spec)):
            found.append(spec)
    return found


def _spec_after(code: str, skeleton: str, keyword: str, at: int, module: bool) -> str | None:
    """The specifier of the import/export whose keyword ends at ``at``, or None (not one)."""
    i = at
    while i < len(skeleton) and skeleton[i].isspace():
        i += 1
    if keyword == "import" and skeleton.startswith("(", i):
        m = _DYNAMIC.match(code, i)
        return m.group(2).strip() if m else None
    if not module:
        return None
    limit = min(len(skeleton), i + _CLAUSE_MAX)
    quote = min((q for q in (skeleton.find('"', i, limit), skeleton.find("'", i, limit)) if q >= 0), default=-1)
    if quote < 0:
        return None
    if quote > i:  # `import x from "..."`, `export {a} from "..."`; `import "..."` has no clause
        if not _CLAUSE.fullmatch(skeleton, i, quote):
            return None
        clause = skeleton[i:quote]
        head, tail = clause.strip(), clause.rstrip()
        if not (tail.endswith("from") and (len(tail) == 4 or not re.match(r"[\w$]", tail[-5]))):
            return None
        if keyword == "export" and not head.startswith(("*", "{")):
            return None
    elif keyword == "export":
        return None
    start = quote + 1
    end = code.find(skeleton[quote], start, start + 1000)
    if end < 0 or "\n" in code[start:end]:
        return None
    return code[start:end].strip()


@dataclass
class Script:
    """One script the page runs: an inline body of the entry or a file, classic or module."""

    name: str  # the file it lives in, relative to the folder (the entry for an inline script)
    text: str
    module: bool
    via: str  # how the page reaches it: "index.html:12" (its tag) or "js/app.js imports './a.js'"
    inline: bool = False
    start: int = 0  # offset of text in its file (an inline body's offset in the entry HTML)
    line: int = 1  # 1-based line where text starts in its file

    _views: tuple[str, str] | None = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        """``index.html:12 (inline)`` or the file's name: where a person finds it."""
        return f"{self.via} (inline)" if self.inline else self.name

    @property
    def views(self) -> tuple[str, str]:
        """(code, skeleton) of the text (``_jstext.blank_js``), made once: it is a Python tokenizer."""
        if self._views is None:
            self._views = blank_js(self.text)
        return self._views


@dataclass
class Skipped:
    """A script the page names that is not read: ``why`` is remote, missing, too large or not run."""

    label: str  # where it is named: "index.html:9 script src='x.js'", "js/a.js imports './b.js'"
    ref: str  # the src or specifier as written
    why: str  # "remote", "missing", "too large", "not JavaScript", "nomodule" (not run by browsers)
    reason: str = ""  # the file helper's words (which file, what it is)

    @property
    def by_tag(self) -> bool:
        """Named by a tag of the page (not by an import)."""
        return " imports " not in self.label


@dataclass
class PageScripts:
    """The entry HTML, the scripts it runs (tag order, then imports breadth first), what was left out."""

    html: str
    scripts: list[Script]
    skipped: list[Skipped]


MAX_SCRIPTS = 256  # files one page may make us read (a page of 10,000 tags or imports is no page)


def page_scripts(root: Path, entry: str = "index.html", *, max_bytes: int,
                 max_total_bytes: int | None = None) -> PageScripts:
    """Read the entry page and every local script it runs (see the module docstring).

    The entry over ``max_bytes`` or missing raises (ArtefactError, FileNotFoundError); a script
    over it, missing or not a plain file is listed in ``skipped``, as are the scripts past
    ``MAX_SCRIPTS`` files or ``max_total_bytes`` in all (4 x ``max_bytes`` unless given).
    """
    html = read_bytes(root, entry, max_bytes=max_bytes).decode("utf-8", errors="replace")
    scripts: list[Script] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    budget = [MAX_SCRIPTS, 4 * max_bytes if max_total_bytes is None else max_total_bytes]

    def load(rel: str, via: str, label: str, ref: str, module: bool) -> Script | None:
        if rel in seen:
            return None
        seen.add(rel)
        if rel.lower().endswith(_NOT_JS):
            skipped.append(Skipped(label, ref, "not JavaScript"))
            return None
        if budget[0] <= 0:
            skipped.append(Skipped(label, ref, "too many", f"over {MAX_SCRIPTS} script files"))
            return None
        try:
            data = read_bytes(root, rel, max_bytes=min(max_bytes, max(0, budget[1])))
        except FileNotFoundError as exc:
            skipped.append(Skipped(label, ref, "missing", str(exc)))
            return None
        except ArtefactError as exc:
            skipped.append(Skipped(label, ref, "too large", str(exc)))
            return None
        budget[0] -= 1
        budget[1] -= len(data)
        return Script(rel, data.decode("utf-8", errors="replace"), module, via)

    for tag in script_tags(html):
        via = f"{entry}:{tag.line}"
        kind = tag.kind
        if kind not in ("classic", "module"):
            skipped.append(Skipped(f"{via} script type={kind!r}", tag.attrs.get("src") or f"type={kind}",
                                   "not JavaScript"))
            continue
        if "nomodule" in tag.attrs and kind == "classic":
            skipped.append(Skipped(f"{via} nomodule script", tag.attrs.get("src", ""), "nomodule"))
            continue
        if "src" in tag.attrs:
            ref = tag.attrs["src"]
            label = f"{via} script src={ref!r}"
            rel = resolve_url(entry, ref)
            if rel is None:
                skipped.append(Skipped(label, ref, "remote"))
            elif (script := load(rel, via, label, ref, kind == "module")) is not None:
                scripts.append(script)
        elif tag.body.strip() and tag.body_start >= 0:
            line = html.count("\n", 0, tag.body_start) + 1
            scripts.append(Script(entry, tag.body, kind == "module", via, True, tag.body_start, line))
    queue = list(scripts)
    while queue:
        script = queue.pop(0)
        if "import" not in script.text and not (script.module and "export" in script.text):
            continue  # most classic scripts: no need to tokenize them here
        for spec in import_specs(*script.views, module=script.module):
            via = f"{script.label} imports {spec!r}"
            rel = resolve_url(script.name, spec)
            if rel is None:
                skipped.append(Skipped(via, spec, "remote"))
                continue
            found = load(rel, via, via, spec, True)
            if found is not None:
                scripts.append(found)
                queue.append(found)
    return PageScripts(html, scripts, skipped)
