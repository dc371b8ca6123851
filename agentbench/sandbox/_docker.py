"""The Docker sandbox backend: one locked-down container per attempt.

The container runs ``sleep infinity`` under docker-init (which reaps orphans, so zombies never eat
the pid limit) with no network, no capabilities, ``no-new-privileges`` and memory/CPU/pid limits.
The init runs as ``KEEPER_UID`` and every command as ``SANDBOX_UID`` (uids no host account has,
_users.py): the agent cannot signal the init, so ``kill -9 -1`` ends the agent's own processes,
never the container. Every command goes through ``docker exec`` wrapped in coreutils ``timeout``;
a host-side guard backs it up. The docker SDK blocks, so its calls run in threads.
"""

from __future__ import annotations

import asyncio
import io
import posixpath
import tarfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from agentbench.errors import AgentbenchError, DockerUnavailable, ImageMissing, PathEscape, SandboxError

from ._base import ExecResult, Sandbox, SandboxLimits
from ._exec_reader import ExecReader
from ._image import IMAGE_TAG, connect_docker, image_exists
from ._owner import container_labels, sweep_orphans_once
from ._paths import (
    UID,
    WORKSPACE,
    is_inside_workspace,
    owned_by_agent,
    workspace_path,
)
from ._storage import DISK_FULL_HINT, disk_full, exec_with_stdin, quota_text, storage_options, stream_tar_out
from ._users import KEEPER_UID, check_host_users

__all__ = ["DockerSandbox"]

OUTPUT_CAP = 64 * 1024  # bytes kept per stream of an agent command
READ_CAP = 64 * 1024 * 1024  # largest file read_file / list_files will carry
COPY_CAP = 1024 * 1024 * 1024  # largest workspace copy_out will carry
KILL_AFTER_S = 2.0  # SIGTERM first, SIGKILL this long after
GUARD_S = 10.0  # host-side grace beyond timeout + kill-after before we step in
INTERNAL_TIMEOUT_S = 30.0
DEFAULT_LIMITS = SandboxLimits()
ENV = {
    "HOME": "/home/agent",
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
}

# Resolves $1 inside the container (symlinks included) and refuses what lands outside the workspace.
# $2 selects the action. Exit codes: 3 escape, 5 is a folder, 6 missing, 7 cannot make the folder.
_RESOLVE = r"""
p=$(realpath -m -- "$1") || exit 6
case "$p" in /workspace|/workspace/*) ;; *) printf '%s' "$p"; exit 3;; esac
case "$2" in
  write) [ -d "$p" ] && exit 5; mkdir -p -- "$(dirname -- "$p")" || exit 7; printf '%s' "$p";;
  read) [ -d "$p" ] && exit 5; [ -f "$p" ] || exit 6; exec cat -- "$p";;
  list) [ -e "$p" ] || exit 6; [ -d "$p" ] || { printf '%s\0' "$p"; exit 0; }
        exec find "$p" -type f -print0;;
esac
"""


@dataclass
class _Raw:
    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool
    duration_s: float


def _sdk_errors() -> tuple[type[BaseException], ...]:
    import docker
    import requests

    return (docker.errors.DockerException, requests.exceptions.RequestException)


def _map_error(exc: BaseException, what: str) -> SandboxError:
    import docker
    import requests

    if isinstance(exc, docker.errors.ImageNotFound):
        return ImageMissing(f"{what}: image not found; run `agentbench sandbox build`.")
    if isinstance(exc, docker.errors.NotFound):
        return SandboxError(f"{what}: the sandbox container is gone ({exc}).")
    if isinstance(exc, requests.exceptions.ConnectionError):
        return DockerUnavailable(f"{what}: lost the Docker engine ({exc}); is dockerd running?")
    return SandboxError(f"{what}: {exc}")


async def _call(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking SDK call in a thread, mapping its errors to the agentbench tree."""
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except _sdk_errors() as exc:
        raise _map_error(exc, what) from exc


class DockerSandbox(Sandbox):
    """A sandbox backed by one Docker container, removed (forcibly) on close."""

    def __init__(self, client: Any, container: Any, limits: SandboxLimits) -> None:
        self._client = client
        self._container = container
        self.limits = limits
        self._closed = False

    @property
    def container_id(self) -> str:
        return self._container.id

    @classmethod
    async def create(
        cls,
        *,
        image: str = IMAGE_TAG,
        limits: SandboxLimits = DEFAULT_LIMITS,
        labels: dict[str, str] | None = None,
        client: Any | None = None,
        mounts: list[Any] | None = None,
    ) -> DockerSandbox:
        """Start a fresh container from image. Raises DockerUnavailable or ImageMissing first.

        ``mounts`` (docker.types.Mount) are extra, e.g. the model gateway's socket folder, read-only.
        """
        check_host_users()
        client = await asyncio.to_thread(connect_docker, client)
        if not await _call("Looking up the sandbox image", image_exists, client, image):
            raise ImageMissing(f"The sandbox image {image} is not built: run `agentbench sandbox build`.")
        from docker.types import Ulimit

        await asyncio.to_thread(sweep_orphans_once, client)  # containers whose owner process died
        all_labels = container_labels(kind="sandbox", extra=labels)
        started = time.monotonic()
        container = await _call(
            "Creating the sandbox container",
            client.containers.create,
            image,
            command=["sleep", "infinity"],
            init=True,
            user=f"{KEEPER_UID}:{KEEPER_UID}",  # the agent's commands run as UID: it cannot signal the init
            working_dir=WORKSPACE,
            environment=ENV,
            hostname="sandbox",
            network_mode="none",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.pids,
            ulimits=[Ulimit(name="core", soft=0, hard=0)],
            labels=all_labels,
            **storage_options(limits),  # read-only root; /workspace, home, /tmp: capped tmpfs
            mounts=mounts or [],
        )
        sandbox = cls(client, container, limits)
        try:
            await _call("Starting the sandbox container", container.start)
        except BaseException:
            await sandbox.close()
            raise
        structlog.get_logger().debug(
            "sandbox.created", container=container.short_id, start_s=round(time.monotonic() - started, 3)
        )
        return sandbox

    # ---- commands -------------------------------------------------------------------------

    async def exec(self, command: str, *, timeout_s: float | None = None) -> ExecResult:
        limit = self.limits.exec_timeout_s if timeout_s is None else timeout_s
        raw = await self._exec_raw(["bash", "-c", command], timeout_s=limit, cap=OUTPUT_CAP)
        stderr = raw.stderr.decode("utf-8", errors="replace")
        if disk_full(stderr):
            stderr += "\n" + DISK_FULL_HINT.format(quota=quota_text(self.limits))
        return ExecResult(
            exit_code=raw.exit_code,
            stdout=raw.stdout.decode("utf-8", errors="replace"),
            stderr=stderr,
            timed_out=raw.timed_out,
            duration_s=raw.duration_s,
            truncated=raw.truncated,
        )

    async def _exec_raw(self, argv: list[str], *, timeout_s: float, cap: int) -> _Raw:
        """Run argv as the sandbox user under `timeout`, keeping at most cap bytes of each stream."""
        self._check_open()
        if timeout_s <= 0:
            raise SandboxError(f"timeout_s must be positive, got {timeout_s}.")
        api = self._client.api
        wrapped = ["timeout", f"--kill-after={KILL_AFTER_S:g}s", f"{timeout_s:g}s", *argv]
        # Every process of this command inherits the token, so the guard can find them all.
        token = uuid.uuid4().hex
        started = time.monotonic()
        exec_id = (
            await _call(
                "Starting a command in the sandbox",
                api.exec_create,
                self._container.id,
                wrapped,
                user=f"{UID}:{UID}",
                workdir=WORKSPACE,
                environment={**ENV, "AGENTBENCH_EXEC": token},
            )
        )["Id"]
        starting = asyncio.ensure_future(
            _call("Attaching to a sandbox command", api.exec_start, exec_id, stream=True, demux=True))
        try:
            stream = await asyncio.shield(starting)
        except asyncio.CancelledError:
            # Cancelled while Docker starts it: the start goes on in its thread and the command
            # would run unseen until its own limit. Let the start finish, then stop what it started.
            await asyncio.shield(self._stop_starting(starting, exec_id, token))
            raise
        reader = ExecReader(stream, cap, asyncio.get_running_loop())
        reader.start()
        try:
            guard_fired = await self._follow(exec_id, reader, stream, token, started + timeout_s + KILL_AFTER_S)
        except asyncio.CancelledError:
            # The caller gave up: stop the command too, instead of leaving it running unseen.
            stream.close()
            await asyncio.shield(self._kill_tagged(token))
            raise
        await reader.done
        info = await _call("Inspecting a sandbox command", api.exec_inspect, exec_id)
        duration = time.monotonic() - started
        code = info.get("ExitCode")
        exit_code = -1 if code is None else int(code)
        # 124: `timeout` sent TERM; 137: it had to KILL. A command exiting so on its own does it early.
        timed_out = guard_fired or (exit_code in (124, 137) and duration >= timeout_s * 0.98)
        return _Raw(exit_code, bytes(reader.out), bytes(reader.err), timed_out, reader.truncated, duration)

    async def _follow(self, exec_id: str, reader: ExecReader, stream: Any, token: str, killed_by: float) -> bool:
        """Wait for the command's output to end; True when the host-side guard had to kill it."""
        api = self._client.api
        poll = 0.02
        while not reader.done.done():
            await asyncio.wait([reader.done], timeout=poll)
            poll = min(poll * 2, 0.5)
            if reader.done.done():
                break
            info = await _call("Inspecting a sandbox command", api.exec_inspect, exec_id)
            if not info.get("Running", True):
                # The command ended. Docker may still be copying its last output, or a background
                # child may hold the stream open: read until it goes quiet, then stop reading.
                ended = time.monotonic()
                while not reader.done.done() and time.monotonic() - ended < 3.0:
                    if time.monotonic() - reader.last_data > 0.25:
                        break
                    await asyncio.wait([reader.done], timeout=0.05)
                stream.close()
            elif time.monotonic() > killed_by + GUARD_S:
                # `timeout` failed to end it: kill what carries the token, wherever it went.
                await self._kill_tagged(token)
                await asyncio.wait([reader.done], timeout=2.0)
                stream.close()
                await reader.done
                return True
        await reader.done
        return False

    async def _stop_starting(self, starting: asyncio.Future[Any], exec_id: str, token: str) -> None:
        """After a cancel during start-up: let the start finish, then kill what it started.

        Docker may create the process a moment after the start call returns, and a process being
        killed may have just forked: kill until the exec has ended and a scan finds nothing tagged.
        """
        try:
            stream = await starting
        except Exception:  # the start failed: nothing runs
            return
        stream.close()
        api = self._client.api
        for _ in range(200):  # ~10 s at most: the exec's own `timeout` ends it long before a leak matters
            found = await self._kill_tagged(token)
            info = await _call("Inspecting a sandbox command", api.exec_inspect, exec_id)
            if info.get("ExitCode") is not None and not info.get("Running") and not found:
                return
            await asyncio.sleep(0.05)

    async def _kill_tagged(self, token: str) -> bool:
        """SIGKILL every process whose environment carries token (the container stays usable).

        True when one was found.
        """
        # Builtins only: in a sandbox at its pid limit nothing can fork.
        script = (
            'f=0; for round in 1 2 3; do for d in /proc/[0-9]*; do '
            'while IFS= read -r -d "" var; do [ "$var" = "AGENTBENCH_EXEC=$1" ] && kill -KILL "${d#/proc/}" && f=1; '
            'done < "$d/environ"; done 2>/dev/null; done; exit $f'
        )
        api = self._client.api
        exec_id = (await _call("Killing a runaway sandbox command", api.exec_create, self._container.id,
                               ["bash", "-c", script, "kill", token], user=f"{UID}:{UID}"))["Id"]
        await _call("Killing a runaway sandbox command", api.exec_start, exec_id)
        info = await _call("Killing a runaway sandbox command", api.exec_inspect, exec_id)
        return info.get("ExitCode") == 1

    # ---- files ----------------------------------------------------------------------------

    async def _resolve(self, path: str, action: str) -> _Raw:
        target = workspace_path(path)
        raw = await self._exec_raw(["sh", "-c", _RESOLVE, "resolve", target, action],
                                   timeout_s=INTERNAL_TIMEOUT_S, cap=READ_CAP)
        if raw.exit_code == 3:
            where = raw.stdout.decode(errors="replace")
            raise PathEscape(f"Path {path!r} resolves through a symlink to {where}, outside the workspace.")
        if raw.exit_code == 5:
            raise SandboxError(f"{path!r} is a folder in the workspace; give a file path.")
        if raw.exit_code == 6:
            raise SandboxError(f"No such file in the workspace: {path!r}.")
        if raw.exit_code == 7:
            if disk_full(raw.stderr.decode(errors="replace")):
                raise SandboxError(DISK_FULL_HINT.format(quota=quota_text(self.limits)))
            raise SandboxError(f"Cannot create the folder for {path!r} (a file may be in the way).")
        if raw.truncated:
            raise SandboxError(f"{path!r} is over {READ_CAP >> 20} MiB; too large to carry out of the sandbox.")
        if raw.exit_code != 0:
            detail = raw.stderr.decode(errors="replace").strip() or f"exit {raw.exit_code}"
            raise SandboxError(f"Sandbox file operation on {path!r} failed: {detail}")
        return raw

    async def write_file(self, path: str, content: str | bytes) -> None:
        if workspace_path(path) == WORKSPACE:
            raise SandboxError("Cannot write to the workspace folder itself; give a file path.")
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        resolved = (await self._resolve(path, "write")).stdout.decode()
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            info = tarfile.TarInfo(posixpath.basename(resolved))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            info.uid = info.gid = UID
            info.uname = info.gname = "agent"
            tar.addfile(info, io.BytesIO(data))
        await self._untar(posixpath.dirname(resolved), buffer.getvalue(), f"Writing {path!r} into the sandbox")

    async def _untar(self, folder: str, archive: bytes, what: str) -> None:
        """Extract a tar inside the container as the sandbox user (the archive API cannot write to tmpfs)."""
        self._check_open()
        code, _out, err = await _call(what, exec_with_stdin, self._client.api, self._container.id,
                                      ["tar", "-x", "--no-same-owner", "--no-overwrite-dir", "-C", folder, "-f", "-"],
                                      archive, timeout_s=INTERNAL_TIMEOUT_S, env=ENV)
        text = err.decode(errors="replace").strip()
        if code != 0 and disk_full(text):
            raise SandboxError(f"{what} failed: " + DISK_FULL_HINT.format(quota=quota_text(self.limits)))
        if code != 0:
            raise SandboxError(f"{what} failed (tar exit {code}): {text[:500]}")

    async def read_file(self, path: str) -> bytes:
        return (await self._resolve(path, "read")).stdout

    async def list_files(self, path: str = ".") -> list[str]:
        raw = await self._resolve(path, "list")
        found = [p.decode("utf-8", errors="replace") for p in raw.stdout.split(b"\0") if p]
        return sorted(posixpath.relpath(p, WORKSPACE) for p in found if is_inside_workspace(p))

    async def copy_out(self, dest: Path) -> None:
        self._check_open()
        dest = Path(dest)
        dest.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(self._copy_out_blocking, dest)

    def _copy_out_blocking(self, dest: Path) -> None:
        from agentbench._files import DEFAULT_LIMITS as FILE_LIMITS
        from agentbench._files_copy import extract_tar

        try:
            with stream_tar_out(self._client.api, self._container.id, WORKSPACE, cap=COPY_CAP,
                                timeout_s=INTERNAL_TIMEOUT_S * 4, env=ENV) as spool:
                with tarfile.open(fileobj=spool, mode="r|") as tar:
                    # Plain files and folders only: no link, device or FIFO reaches the host; capped.
                    report = extract_tar(tar, dest, limits=FILE_LIMITS, what="the workspace")
        except _sdk_errors() as exc:
            raise _map_error(exc, "Copying the workspace out") from exc
        except (tarfile.TarError, AgentbenchError) as exc:
            structlog.get_logger().warning("sandbox.copy_out_failed", error=str(exc))
            raise SandboxError(f"Copying the workspace out failed: {exc}") from exc
        for rel, why in report.skipped:
            structlog.get_logger().warning("sandbox.copy_out_skipped", member=rel, reason=why)

    async def copy_in(self, src: Path) -> None:
        self._check_open()
        src = Path(src)
        if not src.is_dir():
            raise SandboxError(f"copy_in needs a folder; {src} is not one.")
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for child in sorted(src.iterdir()):
                tar.add(child, arcname=child.name, filter=owned_by_agent)
        await self._untar(WORKSPACE, buffer.getvalue(), f"Copying {src} into the sandbox")

    # ---- lifecycle ------------------------------------------------------------------------

    async def ended_from_inside(self) -> str | None:
        """See ``Sandbox.ended_from_inside`` and ``_health.docker_sandbox_ended``."""
        from ._health import docker_sandbox_ended

        return await docker_sandbox_ended(self, self._client, self._container)

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("The sandbox is closed; create a new one.")

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        import docker

        try:
            await asyncio.to_thread(self._container.remove, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except _sdk_errors() as exc:
            raise _map_error(exc, f"Removing sandbox container {self._container.short_id}") from exc
