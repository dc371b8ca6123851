"""The check worker that runs inside the checker container: one warm Chromium, many artefacts.

Started by the host with ``docker exec -i <checker> python3 -m agentbench.checks.browser._worker``.
It speaks newline-delimited JSON: stdin carries requests, stdout only answers (everything else a
library prints goes to stderr, which the host keeps for error messages).

- first line out: ``{"ready": true, "chromium": "<version>"}`` once Chromium is up, or
  ``{"ready": false, "error": "..."}``;
- in: ``{"id": 7, "task": "flappy", "entry": "index.html", "probes": "agentbench.checks.flappy",
  "files": [["index.html", "<base64>"], ...]}`` (``probes``: the module registering the task's probes,
  resolved by the host; null or absent: the built-in one);
  out: ``{"id": 7, "results": [<CheckResult>...], "evidence": [["evidence/x.png", "<base64>"], ...]}``
  or ``{"id": 7, "error": "..."}``. Requests are taken as they come and played one at a time.
  An answer also carries ``"timings"``: where its time went in the worker (see ``_Timings``); the
  ready line ``import_s`` (Python's start and the imports) and ``browser_s`` (Chromium up, connected).

When stdin closes (the host process ended, however it ended) the worker stops the container.
The artefact is written under /tmp (a size-limited tmpfs) and made read-only before the page
sees it; the job folder is removed after its answer is sent.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["main"]

JOBS = Path(os.environ.get("AGENTBENCH_CHECKER_JOBS", "/tmp/agentbench-jobs"))  # the worker's own (0700)
MAX_LINE = 256 * 1024 * 1024  # a request carries the artefact: the host caps it well below this


def _protocol_out() -> Any:
    """A private copy of stdout for answers; fd 1 then points at stderr, so stray prints cannot corrupt it."""
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _write_artefact(root: Path, files: list[list[str]]) -> None:
    for name, data in files:
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"bad artefact path {name!r}")
        target = root.joinpath(*rel.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(data))
    # Read-only for the rest of the job: nothing in the check may change what is judged.
    for dirpath, _dirnames, filenames in os.walk(root):
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o444)
        os.chmod(dirpath, 0o555)


def _read_evidence(job: Path) -> list[list[str]]:
    out = []
    folder = job / "evidence"
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                out.append([path.relative_to(job).as_posix(), base64.b64encode(path.read_bytes()).decode()])
    return out


def _cgroup_cpu_s() -> float | None:
    """CPU seconds of every process in this container so far (its cgroup, v2 or v1), or None."""
    for path, scale in (("/sys/fs/cgroup/cpu.stat", 1e6), ("/sys/fs/cgroup/cpuacct/cpuacct.usage", 1e9)):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if path.endswith("cpu.stat") and line.startswith("usage_usec "):
                return int(line.split()[1]) / scale
            if path.endswith("cpuacct.usage") and line.strip().isdigit():
                return int(line) / scale
    return None


def _process_age_s() -> float:
    """Seconds since this process started (Python's start and the package's imports, at first)."""
    try:
        since_boot = float(Path("/proc/uptime").read_text().split()[0])
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        return max(0.0, since_boot - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


class _Timings:
    """Where one request's time went in the worker: seconds of each phase, with the container's CPU.

    ``write_s`` (artefact written), ``queued_s`` (waiting for the artefact before it),
    ``checks_s`` (every browser check), ``evidence_s`` (evidence read and encoded); ``cpu_s``: the
    container's CPU seconds over the request (every artefact it played meanwhile included);
    ``sessions``, ``contexts``: pages opened and browser contexts made for it; ``virtual_s``: page
    time played.
    """

    def __init__(self) -> None:
        self._t = time.monotonic()
        self._cpu = _cgroup_cpu_s()
        self.spans: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.spans[name] = round(now - self._t, 4)
        self._t = now

    def harness(self, harness: Any, before: tuple[int, int, float] | None = None) -> tuple[int, int, float]:
        now = (harness.sessions_opened, harness.contexts_created, harness.virtual_s)
        if before is not None:
            self.spans.update(sessions=now[0] - before[0], contexts=now[1] - before[1],
                              virtual_s=round(now[2] - before[2], 2))
        return now

    def as_json(self) -> dict[str, float]:
        cpu = _cgroup_cpu_s()
        if cpu is not None and self._cpu is not None:
            self.spans["cpu_s"] = round(cpu - self._cpu, 3)
        return self.spans


class ChromiumGone(RuntimeError):
    """The browser the worker connected to is gone: the worker ends, and the host replaces the container."""


class Worker:
    """Holds the warm harness; relaunches Chromium when it went away between requests."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.harness: Any = None
        self._lock = asyncio.Lock()
        self._write = asyncio.Lock()
        self._one = asyncio.Lock()
        self.started: dict[str, float] = {}  # first start: the process's imports, Chromium connected

    async def harness_up(self) -> Any:
        from ._harness import BrowserHarness

        began = time.monotonic()
        async with self._lock:
            endpoint = os.environ.get("AGENTBENCH_CDP_ENDPOINT") or None
            if self.harness is not None and not self.harness.connected:
                await self.harness.close()
                self.harness = None
                if endpoint:  # Chromium runs under its own uid and cannot be started from here
                    raise ChromiumGone("Chromium went away (it runs as its own user; the host starts it anew)")
            if self.harness is None:
                harness = BrowserHarness(os.environ.get("AGENTBENCH_CHROMIUM"), cdp_endpoint=endpoint)
                await harness.start()
                self.harness = harness
                if not self.started:
                    self.started = {"import_s": round(_process_age_s() - (time.monotonic() - began), 4),
                                    "browser_s": round(time.monotonic() - began, 4)}
            return self.harness

    async def send(self, message: dict) -> None:
        line = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        async with self._write:
            await asyncio.to_thread(self.out.write, line)

    async def handle(self, request: dict) -> None:
        from . import run_browser_checks_async

        rid = request.get("id")
        job = JOBS / f"job-{int(rid)}"
        timings = _Timings()
        try:
            shutil.rmtree(job, ignore_errors=True)
            JOBS.mkdir(mode=0o700, exist_ok=True)  # Chromium's uid cannot read or change the jobs
            (job / "artefact").mkdir(parents=True)
            _write_artefact(job / "artefact", request["files"])
            timings.lap("write_s")
            # One artefact at a time on the shared harness: its page-error, dialog and blocked logs
            # are harness-wide, so two artefacts played at once would see each other's errors in
            # `runtime-errors`. Each artefact's own sessions still run side by side.
            async with self._one:
                timings.lap("queued_s")
                harness = await self.harness_up()
                counts = timings.harness(harness)
                results = await run_browser_checks_async(request["task"], job / "artefact", job / "evidence",
                                                         entry=request.get("entry", "index.html"), harness=harness,
                                                         probes=request.get("probes"))
                timings.lap("checks_s")
                timings.harness(harness, counts)
                if not harness.connected and os.environ.get("AGENTBENCH_CDP_ENDPOINT"):
                    # The browser died under this artefact: no answer (the host sees the worker end,
                    # replaces the container and tries the artefact once more).
                    raise ChromiumGone("Chromium went away during the check")
            evidence = _read_evidence(job)
            timings.lap("evidence_s")
            await self.send({"id": rid, "results": [r.model_dump(mode="json") for r in results],
                             "evidence": evidence, "timings": timings.as_json()})
        except ChromiumGone:
            os._exit(3)
        except Exception as exc:  # noqa: BLE001 - one artefact's failure is its own answer
            await self.send({"id": rid, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            for dirpath, _dirnames, _ in os.walk(job):
                os.chmod(dirpath, 0o755)
            shutil.rmtree(job, ignore_errors=True)


async def _serve(out: Any) -> int:
    try:
        return await _serve_requests(out)
    finally:
        # The host is gone (its pipe closed) or the worker cannot go on: stop the container too, so
        # a host process that died leaves no running checker behind (init, PID 1, passes the
        # signal on to `sleep`).
        with contextlib.suppress(OSError):
            os.kill(1, signal.SIGTERM)


async def _serve_requests(out: Any) -> int:
    worker = Worker(out)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    # The host may die while Chromium starts (it starts Chromium after this worker): a closed
    # stdin ends the wait at once, not after the connect's time limit.
    first = asyncio.ensure_future(reader.readline())
    up = asyncio.ensure_future(worker.harness_up())
    await asyncio.wait({first, up}, return_when=asyncio.FIRST_COMPLETED)
    if first.done() and not first.result():
        up.cancel()
        await asyncio.gather(up, return_exceptions=True)
        return 1
    try:
        harness = await up
        await worker.send({"ready": True, "chromium": harness.version, "pid": os.getpid(), **worker.started})
    except Exception as exc:  # noqa: BLE001 - reported to the host, which shows it
        first.cancel()
        await worker.send({"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    tasks: set[asyncio.Task] = set()
    while True:
        line = await first if first is not None else await reader.readline()
        first = None
        if not line:
            break
        try:
            request = json.loads(line)
        except json.JSONDecodeError as exc:
            await worker.send({"id": None, "error": f"malformed request: {exc}"})
            continue
        if request.get("op") == "quit":
            break
        task = asyncio.ensure_future(worker.handle(request))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    if worker.harness is not None:
        await worker.harness.close()
    return 0


def main() -> int:
    """Entry point of ``python3 -m agentbench.checks.browser._worker``."""
    out = _protocol_out()
    import structlog

    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    return asyncio.run(_serve(out))


if __name__ == "__main__":
    sys.exit(main())
