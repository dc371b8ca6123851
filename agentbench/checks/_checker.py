"""Browser checks in a checker container: the host never runs the artefact's code itself.

A warm container (``agentbench/checker:<code hash>``) serves many artefacts, one at a time: a
worker in it (``checks/browser/_worker.py``) keeps one Chromium up and answers requests over a
``docker exec`` stdin/stdout pipe. Artefact files go in and evidence files come back inside the
JSON messages, so nothing is bind-mounted and a remote engine works the same as the local socket.
A process's artefacts go to a pool of such containers, one per core at most (``_checker_pool``).

The container: ``--network none``, ``CHECKER_UID`` (a uid no host account has: sandbox/_users.py),
every capability dropped, ``no-new-privileges``, a
read-only root with size-limited tmpfs for /tmp and the home folder, and memory (no swap), CPU and
pid limits. Page memory of every kind (JS heap, ArrayBuffers, fetched data, workers) counts
against the container's memory limit: a page that blows it has its renderer killed (the check
says the page crashed) or the whole container; a dead container is replaced for the next artefact.
When the host process ends however it ends (even ``kill -9``), its end of the pipe closes and the
worker stops the container; what is left, in whatever state (even "Created", when the process
died between create and start), carries ``agentbench=1`` and its owner's labels, so the next
agentbench process's sweep (sandbox/_owner.py) removes it.

This module imports no playwright: the host needs only the Docker SDK.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import secrets
import socket
import stat
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Any

import structlog

from .. import _files
from ..errors import CheckError
from ._model import CheckResult

__all__ = [
    "CheckerContainer",
    "CheckerCrashed",
    "host_browser_opted_in",
    "host_chromium",
    "read_artefact_files",
]

log = structlog.get_logger()

WORKER_CMD = ["python3", "-m", "agentbench.checks.browser._worker"]
# The same caps as every other path an artefact's files take (check, report, copy-out): a file
# under them is judged by its behaviour in the checker, never refused here.
MAX_FILE_BYTES = _files.MAX_FILE_BYTES
MAX_ARTEFACT_BYTES = _files.MAX_TOTAL_BYTES
MAX_ANSWER_BYTES = 128 * 1024 * 1024  # one answer (results + evidence PNGs) read back
READY_TIMEOUT_S = 90.0
CHECK_TIMEOUT_S = 900.0  # the worker's probes have their own limits; this only catches a hung worker


class CheckerCrashed(CheckError):
    """The checker container (or its worker) died while an artefact was being checked.

    ``out_of_memory``: the engine says the container hit its memory limit (the page's doing).
    """

    def __init__(self, message: str, *, out_of_memory: bool = False) -> None:
        super().__init__(message)
        self.out_of_memory = out_of_memory


HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"


def host_browser_opted_in() -> bool:
    """True when AGENTBENCH_HOST_BROWSER asks for Chromium on the host (an explicit, warned opt-in)."""
    return os.environ.get("AGENTBENCH_HOST_BROWSER", "").strip().lower() in ("1", "true", "yes")


def host_chromium() -> str | None:
    """AGENTBENCH_CHROMIUM, else the headless shell when installed (half the cost), else the default."""
    chosen = os.environ.get("AGENTBENCH_CHROMIUM", "").strip()
    if chosen:
        return chosen
    return HEADLESS_SHELL if os.path.exists(HEADLESS_SHELL) else None


def _env_size(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


def read_artefact_files(root: Path) -> list[tuple[str, bytes]]:
    """The artefact's regular files (relative posix name, bytes), never following a link out.

    Symlinks, devices, FIFOs and sockets are skipped; a file over MAX_FILE_BYTES or a total over
    MAX_ARTEFACT_BYTES raises CheckError naming it.
    """
    root = Path(root)
    files: list[tuple[str, bytes]] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            rel = PurePosixPath(Path(path).relative_to(root).as_posix())
            if info.st_size > MAX_FILE_BYTES:
                raise CheckError(f"artefact file {rel} is {info.st_size} bytes: over the "
                                 f"{MAX_FILE_BYTES // 2**20} MiB a checked file may have")
            total += info.st_size
            if total > MAX_ARTEFACT_BYTES:
                raise CheckError(f"the artefact is over {MAX_ARTEFACT_BYTES // 2**20} MiB (at {rel})")
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                files.append((rel.as_posix(), handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]))
    return files


class CheckerContainer:
    """One warm checker container with its worker; ``check`` may be awaited concurrently.

    Use ``await checker.check(task, artefact_dir, evidence_dir)``; it starts the container on
    first use and replaces it when it died. ``close()`` removes it.
    """

    def __init__(self, client: Any | None = None, *, memory: str | None = None, cpus: float | None = None,
                 pids: int = 4096, engine: Any | None = None) -> None:
        self._client = client
        self._engine = engine  # a run's Engine: the container goes there (None: the environment's engine)
        self.memory = memory or _env_size("AGENTBENCH_CHECKER_MEMORY", "3g")
        self.cpus = cpus or float(_env_size("AGENTBENCH_CHECKER_CPUS", str(max(1, os.cpu_count() or 1))))
        self.pids = pids
        self.container: Any = None
        self.chromium = ""
        self.started = 0  # containers started so far (a replaced one counts again)
        self._lock = threading.Lock()
        self._sock: Any = None
        self._raw: Any = None
        self._reader: threading.Thread | None = None
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._next_id = 0
        self._stderr: list[str] = []
        self._dead: str | None = None
        self._oom = False
        self._send_lock = threading.Lock()
        # Where the last start's time went: image_s (the image found or built), container_s (run),
        # ready_s (worker and Chromium up), and the worker's own import_s and browser_s.
        self.start_timings: dict[str, float] = {}

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the container and its worker now (``check`` does it on first use)."""
        await asyncio.to_thread(self._ensure)

    def _ensure(self) -> None:
        with self._lock:
            if self.container is not None and self._dead is None:
                return
            if self.container is not None:
                self._remove()
            self._start()

    def _start(self) -> None:
        import docker

        from ..sandbox._checker_image import ensure_checker_image
        from ..sandbox._image import connect_docker
        from ..sandbox._owner import container_labels, sweep_orphans_once
        from ..sandbox._users import CHECKER_UID, CHROMIUM_UID, check_host_users

        began = time.monotonic()
        check_host_users()
        if self._client is None and self._engine is not None:
            self._client = self._engine.new_client()
        self._client = connect_docker(self._client)
        from ._tasks import plugin_probe_modules

        image = ensure_checker_image(self._client, modules=plugin_probe_modules())  # with plug-ins' probes
        sweep_orphans_once(self._client)  # containers (checkers too) whose owner process died
        timings = {"image_s": time.monotonic() - began}
        uid = f"{CHECKER_UID}:{CHECKER_UID}"
        try:
            self.container = self._client.containers.run(
                image, command=["sleep", "infinity"], detach=True, init=True, network_mode="none",
                user=uid, cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=True,
                tmpfs={"/tmp": "rw,nosuid,nodev,size=512m,mode=1777",
                       "/home/checker": f"rw,nosuid,nodev,size=64m,uid={CHECKER_UID},gid={CHECKER_UID},mode=0700"},
                shm_size="256m", mem_limit=self.memory, memswap_limit=self.memory,
                nano_cpus=int(self.cpus * 1e9), pids_limit=self.pids, ipc_mode="private",
                labels=container_labels(kind="checker"))
        except docker.errors.DockerException as exc:
            raise CheckError(f"could not start the checker container from {image}: {exc}") from exc
        self.started += 1
        timings["container_s"] = time.monotonic() - began - timings["image_s"]
        self._dead, self._stderr, self._oom = None, [], False
        port = secrets.choice(range(20000, 60000))
        try:
            # The worker first (its closed stdin stops the container, however this process ends),
            # then Chromium under its own uid: the worker (CHECKER_UID) connects to it over CDP, so a
            # compromised renderer cannot reach the worker's pipe to forge an answer.
            exec_id = self._client.api.exec_create(
                self.container.id, WORKER_CMD, stdin=True, stdout=True, stderr=True,
                environment={"AGENTBENCH_CDP_ENDPOINT": f"http://127.0.0.1:{port}"})["Id"]
            self._sock = self._client.api.exec_start(exec_id, socket=True)
            chromium = self._client.api.exec_create(
                self.container.id, _chromium_cmd(port), user=f"{CHROMIUM_UID}:{CHROMIUM_UID}",
                environment={"HOME": "/tmp/chromium-home"})["Id"]
            self._client.api.exec_start(chromium, detach=True)
        except docker.errors.DockerException as exc:
            self._remove()
            raise CheckError(f"could not start the check worker in the checker container: {exc}") from exc
        self._raw = getattr(self._sock, "_sock", self._sock)
        ready: dict[str, Any] = {}
        got_ready = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, args=(ready, got_ready), daemon=True,
                                        name="agentbench-checker-reader")
        self._reader.start()
        if not got_ready.wait(READY_TIMEOUT_S) or not ready.get("ready"):
            why = ready.get("error") or self._dead or f"no answer in {READY_TIMEOUT_S:.0f} s"
            tail = "\n".join(self._stderr[-8:])
            self._remove()
            raise CheckError(f"the checker's Chromium did not start: {why}" + (f"\n{tail}" if tail else ""))
        self.chromium = ready.get("chromium", "")
        timings["ready_s"] = time.monotonic() - began - timings["image_s"] - timings["container_s"]
        timings.update({k: ready[k] for k in ("import_s", "browser_s") if isinstance(ready.get(k), (int, float))})
        self.start_timings = {k: round(v, 4) for k, v in timings.items()}
        log.info("checker.started", image=image, container=self.container.short_id, chromium=self.chromium)

    def _remove(self) -> None:
        import docker

        container, self.container = self.container, None
        raw, self._sock, self._raw = self._raw, None, None
        if raw is not None:
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                raw.close()
        if container is not None:
            try:
                container.remove(force=True, v=True)
            except docker.errors.DockerException:
                pass

    async def close(self) -> None:
        """Remove the container; pending checks end with CheckerCrashed."""
        await asyncio.to_thread(self._close_sync)

    def _close_sync(self) -> None:
        with self._lock:
            self._remove()
        self._fail_pending("the checker was closed")

    # -- the pipe --------------------------------------------------------------------------------

    def _read_loop(self, ready: dict, got_ready: threading.Event) -> None:
        from docker.utils.socket import SocketError, next_frame_header, read_exactly

        sock, buffers = self._sock, {1: bytearray(), 2: bytearray()}
        try:
            while True:
                kind, size = next_frame_header(sock)
                if size < 0:
                    break
                buf = buffers.get(kind, buffers[2])
                buf += read_exactly(sock, size)
                if len(buf) > MAX_ANSWER_BYTES:
                    raise CheckError(f"the checker sent a message over {MAX_ANSWER_BYTES // 2**20} MiB")
                while b"\n" in buf:
                    line, _, rest = bytes(buf).partition(b"\n")
                    buf[:] = rest
                    if kind == 1:
                        self._deliver(json.loads(line), ready, got_ready)
                    else:
                        self._stderr = [*self._stderr[-200:], line.decode(errors="replace")]
        except (OSError, SocketError, ValueError, CheckError) as exc:
            if self._sock is sock:
                self._dead = f"{type(exc).__name__}: {exc}"
        finally:
            if self._sock is sock:
                self._dead = self._dead or "the check worker exited"
                self._dead = self._why_dead(self._dead)
                got_ready.set()
                self._fail_pending(self._dead)

    def _why_dead(self, fallback: str) -> str:
        try:
            self.container.reload()
            state = self.container.attrs.get("State", {})
        except Exception:  # noqa: BLE001 - the container may be gone already
            return fallback
        if state.get("OOMKilled"):
            self._oom = True
            return (f"the checker container ran out of memory (limit {self.memory}): a page used more "
                    "than the checker allows")
        tail = " | ".join(self._stderr[-3:])
        return f"{fallback}" + (f" ({tail})" if tail else "")

    def _deliver(self, message: dict, ready: dict, got_ready: threading.Event) -> None:
        if "ready" in message and "id" not in message:
            ready.update(message)
            got_ready.set()
            return
        entry = self._pending.pop(message.get("id"), None)
        if entry is None:
            return
        loop, future = entry
        loop.call_soon_threadsafe(lambda: future.done() or future.set_result(message))

    def _fail_pending(self, why: str) -> None:
        pending, self._pending = self._pending, {}
        for loop, future in pending.values():
            exc = CheckerCrashed(why, out_of_memory=self._oom)
            try:
                loop.call_soon_threadsafe(lambda f=future, e=exc: f.done() or f.set_exception(e))
            except RuntimeError:  # that loop is closed
                pass

    def _send(self, message: dict) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        with self._send_lock:
            self._raw.sendall(data)

    # -- checks ----------------------------------------------------------------------------------

    async def check(self, task_id: str, artefact_dir: Path, evidence_dir: Path, *,
                    entry: str = "index.html", probes: str | None = None,
                    timings: dict | None = None) -> list[CheckResult]:
        """Run every browser check of ``task_id`` on the artefact in the container.

        ``probes``: the module that registers the task's probes, imported by the worker (the
        container has no installed metadata to resolve it from); None: the worker's built-in one.

        Evidence files land in ``evidence_dir`` (paths in the results are relative to its parent,
        as on the host). Raises CheckError when the artefact cannot be sent or the checker fails.
        ``timings``: filled with the worker's phases of this artefact (see ``_worker._Timings``).
        """
        files = await asyncio.to_thread(read_artefact_files, Path(artefact_dir))
        request = {"task": task_id, "entry": entry, "probes": probes,
                   "files": [[name, base64.b64encode(data).decode()] for name, data in files]}
        await asyncio.to_thread(self._ensure)
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        with self._send_lock:
            self._next_id += 1
            rid = request["id"] = self._next_id
        self._pending[rid] = (loop, future)
        try:
            await asyncio.to_thread(self._send, request)
        except OSError as exc:
            self._pending.pop(rid, None)
            raise CheckerCrashed(f"could not send the artefact to the checker: {exc}") from exc
        try:
            answer = await asyncio.wait_for(future, CHECK_TIMEOUT_S)
        except TimeoutError:
            self._pending.pop(rid, None)
            self._dead = f"the checker gave no answer in {CHECK_TIMEOUT_S:.0f} s"
            raise CheckerCrashed(self._dead) from None
        if answer.get("error"):
            raise CheckError(f"the checker could not check the artefact: {answer['error']}")
        if timings is not None and isinstance(answer.get("timings"), dict):
            timings.update(answer["timings"])
        _write_evidence(Path(evidence_dir), answer.get("evidence", []))
        return [CheckResult.model_validate(r) for r in answer["results"]]

    def cpu_seconds(self) -> float:
        """CPU time used by every process of the container so far (its cgroup: all of Chromium's processes).

        Read from the local cgroup v2 file when the engine is local, else from the engine's stats.
        """
        if self.container is None:
            return 0.0
        for path in (f"/sys/fs/cgroup/system.slice/docker-{self.container.id}.scope/cpu.stat",
                     f"/sys/fs/cgroup/docker/{self.container.id}/cpu.stat",
                     f"/sys/fs/cgroup/cpuacct/docker/{self.container.id}/cpuacct.usage"):  # cgroup v1
            try:
                for line in Path(path).read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
                    if path.endswith("cpuacct.usage") and line.strip().isdigit():
                        return int(line) / 1e9
            except OSError:
                continue
        stats = self.container.stats(stream=False, one_shot=True)
        return stats["cpu_stats"]["cpu_usage"]["total_usage"] / 1e9


def _chromium_cmd(port: int) -> list[str]:
    """The checker's Chromium: the harness's flags and Playwright's defaults, DevTools on loopback.

    The port is reachable only inside the container (``--network none``); the page cannot reach it
    (every request of the page is routed by the harness, and DevTools refuses WebSockets that carry
    an Origin). Its output is dropped: a page must not fill the container's /tmp through it.
    """
    from ._chromium_flags import CHROMIUM_ARGS, PLAYWRIGHT_DEFAULTS

    flags = list(dict.fromkeys([*PLAYWRIGHT_DEFAULTS, *CHROMIUM_ARGS]))
    return ["sh", "-c", 'exec "$0" "$@" >/dev/null 2>&1', HEADLESS_SHELL, *flags,
            f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1",
            "--user-data-dir=/tmp/chromium-home/profile", "--no-startup-window"]


def _write_evidence(evidence_dir: Path, items: list[list[str]]) -> None:
    """Write evidence files sent back as ``evidence/<name>``; any other path is refused."""
    for name, data in items:
        rel = PurePosixPath(name)
        if len(rel.parts) < 2 or rel.parts[0] != "evidence" or ".." in rel.parts or rel.is_absolute():
            raise CheckError(f"the checker sent evidence with a bad path {name!r}")
        target = evidence_dir.joinpath(*rel.parts[1:])
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(base64.b64decode(data))
        os.replace(tmp, target)
