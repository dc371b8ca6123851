"""The ``syntax`` check: every script the page runs must parse, judged by node inside a sandbox.

Classic scripts are compiled with ``vm.Script`` (the browser's Script goal; ``node --check`` on a
.js file would wrap it as CommonJS and wrongly reject e.g. ``let require``), modules with
``node --check file.mjs``. Errors are mapped back to the original file and line.
"""

from __future__ import annotations

import json
import re
import stat
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import structlog
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

from agentbench._files import lookup
from agentbench.errors import AgentbenchError, SandboxError
from agentbench.sandbox import DockerSandbox, Sandbox, SandboxLimits

from .._model import CheckResult, Evidence
from ._loads import page_scripts

__all__ = ["check_syntax"]

CHECK_ID = "syntax"
MAX_SCRIPT_BYTES = 8 * 1024 * 1024  # per file parsed (the entry, each script and module)
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


def _collect(root: Path, entry: str) -> tuple[list[_Script], list[Evidence], list[str]]:
    """Scripts to check, evidence for those skipped, and failures found without node.

    The scripts are those the page runs (``_loads.page_scripts``): inline and ``src`` scripts,
    root-absolute or relative, and the local modules reached through imports, each file once.
    """
    page = page_scripts(root, entry, max_bytes=MAX_SCRIPT_BYTES)
    scripts = [_Script(s.label, s.name, s.line - 1, s.text, s.module) for s in page.scripts]
    skipped: list[Evidence] = []
    failures: list[str] = []
    values = {"too large": f"skipped: over the {MAX_SCRIPT_BYTES >> 20} MiB this check reads per file",
              "remote": "skipped: not a local file", "missing": "not found",
              "nomodule": "skipped: not run by browsers", "too many": "skipped: too many script files"}
    for item in page.skipped:
        if item.why == "missing" and item.by_tag:  # a src the page names: it breaks the page
            failures.append(f"{item.label.split(' ')[0]}: script src {item.ref!r} not found")
        else:
            skipped.append(Evidence(label=item.label, value=values.get(item.why, f"skipped: {item.why}")))
    return scripts, skipped, failures


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


# Exit codes with which the shell or the engine says node never ran (not found, not executable,
# the exec itself failed): seen once under heavy load with nothing on stderr. Tried once more.
_NEVER_RAN = (125, 126, 127)


async def _run_node(scripts: list[_Script], sandbox: Sandbox | None) -> list[tuple[bool, str]]:
    """Copy the scripts into the sandbox, run the driver once, return (ok, node's report) each.

    A run in which node never started (``_NEVER_RAN``, no report at all) is an infrastructure
    hiccup, not the artefact's: it is run once more, in a fresh sandbox where it made its own.
    """
    async for attempt in AsyncRetrying(stop=stop_after_attempt(2), retry=retry_if_exception_type(_NodeNeverRan),
                                       reraise=True):
        with attempt:
            return await _run_node_once(scripts, sandbox)
    raise AssertionError("unreachable")


class _NodeNeverRan(SandboxError):
    """node did not start in the sandbox (see ``_NEVER_RAN``)."""


async def _run_node_once(scripts: list[_Script], sandbox: Sandbox | None) -> list[tuple[bool, str]]:
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
            if not own and result.exit_code in _NEVER_RAN and not result.stdout.strip():
                await box.exec(f"rm -rf {folder}", timeout_s=60)  # a sandbox given is left as it was
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
    if not reports and not result.timed_out and result.exit_code in _NEVER_RAN:
        structlog.get_logger().info("check.syntax_node_never_ran", exit=result.exit_code,
                 stderr=result.stderr.strip()[:200])
        raise _NodeNeverRan(f"node did not run in the sandbox (exit {result.exit_code}): "
                            f"{result.stderr.strip()[:500]}")
    if result.timed_out or result.truncated or any(name not in reports for name in names):
        raise SandboxError(
            f"node did not report on every script (exit {result.exit_code}, timed out {result.timed_out}): "
            f"{result.stderr.strip()[:500]}"
        )
    return [reports[name] for name in names]
