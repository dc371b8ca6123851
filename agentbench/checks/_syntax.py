"""The ``syntax`` check: every script the page runs must parse, judged by node inside a sandbox.

Classic scripts are compiled with ``vm.Script`` (the browser's Script goal; ``node --check`` on a
.js file would wrap it as CommonJS and wrongly reject e.g. ``let require``), modules with
``node --check file.mjs``. Errors are mapped back to the original file and line.
"""

from __future__ import annotations

import json
import posixpath
import re
import stat
import tempfile
import time
import uuid
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import structlog

from agentbench._files import lookup, read_bytes
from agentbench.errors import AgentbenchError, ArtefactError, SandboxError
from agentbench.sandbox import DockerSandbox, Sandbox, SandboxLimits

from ._model import CheckResult, Evidence

__all__ = ["check_syntax"]

CHECK_ID = "syntax"
MAX_SCRIPT_BYTES = 8 * 1024 * 1024  # per file parsed (the entry, each script and module)
# HTML's "JavaScript MIME type essence match" list; anything else non-empty is a data block.
_JS_TYPES = {
    "application/ecmascript", "application/javascript", "application/x-ecmascript",
    "application/x-javascript", "text/ecmascript", "text/javascript", "text/javascript1.0",
    "text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
    "text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript",
}
_IMPORT_RES = [
    re.compile(r"""(?:^|[;\s})])import\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']([^"'\n]+)["']"""),
    re.compile(r"""(?:^|[;\s})])export\s*(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*["']([^"'\n]+)["']"""),
    re.compile(r"""\bimport\s*\(\s*["']([^"'\n]+)["']\s*[,)]"""),
]
_DRIVER = r"""
const fs = require('fs'), vm = require('vm'), cp = require('child_process');
for (const f of process.argv.slice(2)) {
  let ok = true, text = '';
  if (f.endsWith('.mjs')) {
    const r = cp.spawnSync(process.execPath, ['--check', f], {encoding: 'utf8'});
    if (r.status !== 0) { ok = false; text = (r.stderr || '') + (r.stdout || '') || ('exit ' + r.status); }
  } else {
    try { new vm.Script(fs.readFileSync(f, 'utf8'), {filename: f}); }
    catch (e) { ok = false; text = String((e && e.stack) || e); }
  }
  console.log(JSON.stringify({file: f, ok, text: text.slice(0, 2000)}));
}
"""


@dataclass
class _Script:
    label: str  # where it lives: "index.html:12 (inline)" or "game.js"
    origin: str  # the file errors are reported against, relative to the artefact folder
    line_offset: int  # added to node's line number (inline scripts start mid-file)
    source: str
    module: bool
    base_dir: str  # folder (relative, posix) that relative imports resolve against


@dataclass
class _Tag:
    attrs: dict[str, str]
    line: int
    data_line: int | None = None
    data: str = ""


class _ScriptParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[_Tag] = []
        self._open: _Tag | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._open = _Tag({k: v or "" for k, v in attrs}, self.getpos()[0])
            self.tags.append(self._open)

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            if self._open.data_line is None:
                self._open.data_line = self.getpos()[0]
            self._open.data += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open = None


def _kind(attrs: dict[str, str]) -> str:
    """'classic', 'module', or the data-block type (not run, not checked)."""
    if "type" in attrs:
        kind = attrs["type"].strip().lower()
    elif attrs.get("language", "").strip():
        kind = "text/" + attrs["language"].strip().lower()
    else:
        kind = ""
    if kind == "" or kind in _JS_TYPES:
        return "classic"
    return "module" if kind == "module" else kind


def _local(root: Path, base_dir: str, ref: str) -> str | None:
    """A relative URL -> a path relative to root, or None when it is remote or leaves root."""
    parts = urlsplit(ref.strip())
    if parts.scheme or parts.netloc or not parts.path:
        return None
    path = unquote(parts.path)
    joined = posixpath.normpath(path.lstrip("/") if path.startswith("/") else posixpath.join(base_dir, path))
    if joined == ".." or joined.startswith("../"):
        return None
    target = (root / joined).resolve()
    return joined if target.is_relative_to(root.resolve()) else None


_MISSING = "\0missing"


def _read(root: Path, rel: str, skipped: list[Evidence], label: str) -> str | None:
    """A local script's text; _MISSING when it is no plain file; None (and skip evidence) over the cap."""
    try:
        return read_bytes(root, rel, max_bytes=MAX_SCRIPT_BYTES).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return _MISSING
    except ArtefactError:
        skipped.append(Evidence(label=label, value=f"skipped: over the {MAX_SCRIPT_BYTES >> 20} MiB "
                                                   "this check reads per file"))
        return None


def _collect(root: Path, entry: str) -> tuple[list[_Script], list[Evidence], list[str]]:
    """Scripts to check, evidence for those skipped, and failures found without node."""
    html = read_bytes(root, entry, max_bytes=MAX_SCRIPT_BYTES).decode("utf-8", errors="replace")
    parser = _ScriptParser()
    parser.feed(html)
    parser.close()
    entry_dir = posixpath.dirname(entry)
    scripts: list[_Script] = []
    skipped: list[Evidence] = []
    failures: list[str] = []
    for tag in parser.tags:
        kind = _kind(tag.attrs)
        where = f"{entry}:{tag.line}"
        if kind not in ("classic", "module"):
            skipped.append(Evidence(label=f"{where} script type={kind!r}", value="skipped: not JavaScript"))
            continue
        if "nomodule" in tag.attrs and kind == "classic":
            skipped.append(Evidence(label=f"{where} nomodule script", value="skipped: not run by browsers"))
            continue
        module = kind == "module"
        if "src" in tag.attrs:
            src = tag.attrs["src"]
            rel = _local(root, entry_dir, src)
            if rel is None:
                skipped.append(Evidence(label=f"{where} script src={src!r}", value="skipped: not a local file"))
            elif (text := _read(root, rel, skipped, f"{where} script src={src!r}")) is _MISSING:
                failures.append(f"{where}: script src {src!r} not found")
            elif text is not None:
                scripts.append(_Script(rel, rel, 0, text, module, posixpath.dirname(rel)))
        elif tag.data.strip():
            scripts.append(_Script(f"{where} (inline)", entry, (tag.data_line or tag.line) - 1,
                                   tag.data, module, entry_dir))
    _follow_imports(root, scripts, skipped)
    return scripts, skipped, failures


def _follow_imports(root: Path, scripts: list[_Script], skipped: list[Evidence]) -> None:
    """Add local modules reached by import/export-from/import() (found by pattern, not parsed)."""
    seen = {s.origin for s in scripts if s.line_offset == 0}
    queue = list(scripts)
    while queue:
        script = queue.pop(0)
        for pattern in _IMPORT_RES:
            for spec in pattern.findall(script.source):
                if not spec.startswith(("./", "../", "/")):
                    continue  # bare names need an import map; URLs are remote
                rel = _local(root, script.base_dir, spec)
                if rel is None or rel in seen:
                    continue
                seen.add(rel)
                text = _read(root, rel, skipped, f"{script.label} imports {spec!r}")
                if text is _MISSING:
                    skipped.append(Evidence(label=f"{script.label} imports {spec!r}", value="not found"))
                    continue
                if text is None:
                    continue
                found = _Script(rel, rel, 0, text, True, posixpath.dirname(rel))
                scripts.append(found)
                queue.append(found)


def _node_error(text: str) -> tuple[int | None, str]:
    """(line, 'SyntaxError: ...') from node's report ('file:LINE', source, caret, blank, error)."""
    lines = text.splitlines()
    line = None
    if lines and (match := re.match(r"^.*:(\d+)$", lines[0])):
        line = int(match.group(1))
    message = next((ln.strip() for ln in lines if re.match(r"^\s*\w*Error\b", ln)), lines[0] if lines else "")
    return line, message


async def check_syntax(
    artefact_dir: Path, sandbox: Sandbox | None = None, *, entry: str = "index.html"
) -> CheckResult:
    """Parse every script the entry page runs with node inside a sandbox.

    Checks inline classic and module scripts, local ``<script src>`` files and local modules they
    import. ``fail`` names file and line (``index.html:42: SyntaxError: ...``); ``error`` means the
    sandbox could not be used. Creates (and removes) its own DockerSandbox when none is given.
    """
    started = time.monotonic()
    root = Path(artefact_dir)
    if root.is_file():
        root, entry = root.parent, root.name
    st = lookup(root, entry)
    if st is None or not stat.S_ISREG(st.st_mode):
        why = "not found" if not (root / entry).is_symlink() else "is a symlink, not a plain file"
        return CheckResult(id=CHECK_ID, status="fail", detail=f"{entry} {why}",
                           duration_s=time.monotonic() - started)
    if st.st_size > MAX_SCRIPT_BYTES:
        # Parsing it would cost memory and minutes for nothing a person needs: the probes judge it.
        return CheckResult(id=CHECK_ID, status="skip", duration_s=time.monotonic() - started,
                           detail=f"{entry} is {st.st_size / 1e6:.1f} MB, over the {MAX_SCRIPT_BYTES >> 20} MiB "
                                  "the syntax check reads; the behaviour checks judge it")
    scripts, evidence, failures = _collect(root, entry)
    if scripts:
        try:
            outcomes = await _run_node(scripts, sandbox)
        except AgentbenchError as exc:
            structlog.get_logger().warning("check.syntax_harness_error", error=str(exc))
            return CheckResult(id=CHECK_ID, status="error", detail=f"could not run node in a sandbox: {exc}",
                               evidence=evidence, duration_s=time.monotonic() - started)
        for script, (ok, text) in zip(scripts, outcomes, strict=True):
            kind = "module" if script.module else "classic"
            if ok:
                evidence.append(Evidence(label=f"{script.label} [{kind}]", value="ok"))
                continue
            line, message = _node_error(text)
            where = f"{script.origin}:{script.line_offset + line}" if line else script.origin
            failures.append(f"{where}: {message}")
            evidence.append(Evidence(label=f"{script.label} [{kind}]", value=f"{where}: {message}"))
    status = "fail" if failures else "pass"
    detail = "; ".join(failures) if failures else f"{len(scripts)} script(s) parse"
    return CheckResult(id=CHECK_ID, status=status, detail=detail, evidence=evidence,
                       data={"checked": len(scripts), "errors": len(failures)},
                       duration_s=time.monotonic() - started)


async def _run_node(scripts: list[_Script], sandbox: Sandbox | None) -> list[tuple[bool, str]]:
    """Copy the scripts into the sandbox, run the driver once, return (ok, node's report) each."""
    folder = f".agentbench-syntax-{uuid.uuid4().hex[:8]}"
    names = [f"{folder}/{i}.{'mjs' if s.module else 'js'}" for i, s in enumerate(scripts)]
    with tempfile.TemporaryDirectory(prefix="agentbench-syntax-") as tmp:
        job = Path(tmp) / folder
        job.mkdir()
        (job / "check.cjs").write_text(_DRIVER)
        for name, script in zip(names, scripts, strict=True):
            (Path(tmp) / name).write_text(script.source, encoding="utf-8")
        own = sandbox is None
        box = sandbox or await DockerSandbox.create(
            limits=SandboxLimits(memory_mb=512, exec_timeout_s=60), labels={"agentbench.role": "syntax"}
        )
        try:
            await box.copy_in(Path(tmp))
            command = f"node {folder}/check.cjs {' '.join(names)}; rc=$?; rm -rf {folder}; exit $rc"
            result = await box.exec(command, timeout_s=60)
        finally:
            if own:
                await box.close()
    reports = {}
    for line in result.stdout.splitlines():
        try:
            item = json.loads(line)
            reports[item["file"]] = (bool(item["ok"]), str(item["text"]))
        except (ValueError, KeyError, TypeError):
            continue
    if result.timed_out or result.truncated or any(name not in reports for name in names):
        raise SandboxError(
            f"node did not report on every script (exit {result.exit_code}, timed out {result.timed_out}): "
            f"{result.stderr.strip()[:500]}"
        )
    return [reports[name] for name in names]
