"""The Docker sandbox backend: one locked-down container per attempt.

The container runs ``sleep infinity`` under docker-init (which reaps orphans, so zombies never eat
the pid limit) with no network, no capabilities, ``no-new-privileges`` and memory/CPU/pid limits.
The init runs as ``KEEPER_UID`` and every command as ``SANDBOX_UID`` (uids no host account has,
_users.py): the agent cannot signal the init, so ``kill -9 -1`` ends the agent's own processes,
never the container. Every command goes through ``docker exec`` wrapped in coreutils ``timeout``;
a host-side guard backs it up (both in _docker_exec.py). The docker SDK blocks, so its calls run in
threads.
"""

from __future__ import annotations

import asyncio
import io
import posixpath
import tarfile
import time
from pathlib import Path
from typing import Any

import structlog

from agentbench.errors import AgentbenchError, ImageMissing, PathEscape, SandboxError

from ._base import ExecResult, Sandbox, SandboxLimits
from ._docker_exec import Raw, call, map_error, run_command, sdk_errors
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
        if not await call("Looking up the sandbox image", image_exists, client, image):
            raise ImageMissing(f"The sandbox image {image} is not built: run `agentbench sandbox build`.")
        from docker.types import Ulimit

        await asyncio.to_thread(sweep_orphans_once, client)  # containers whose owner process died
        all_labels = container_labels(kind="sandbox", extra=labels)
        started = time.monotonic()
        container = await call(
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
            await call("Starting the sandbox container", container.start)
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

    async def _exec_raw(self, argv: list[str], *, timeout_s: float, cap: int) -> Raw:
        """Run argv as the sandbox user under `timeout`, keeping at most cap bytes of each stream."""
        self._check_open()
        return await run_command(self._client.api, self._container.id, argv, timeout_s=timeout_s, cap=cap, env=ENV)

    # ---- files ----------------------------------------------------------------------------

    async def _resolve(self, path: str, action: str) -> Raw:
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
        code, _out, err = await call(what, exec_with_stdin, self._client.api, self._container.id,
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
        except sdk_errors() as exc:
            raise map_error(exc, "Copying the workspace out") from exc
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
        except sdk_errors() as exc:
            raise map_error(exc, f"Removing sandbox container {self._container.short_id}") from exc
