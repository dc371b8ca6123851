"""The sandbox's disk: a read-only root and size- and inode-capped tmpfs where the agent may write.

Without a quota the agent's 3 GB and 100k files landed on the host disk. Now the image's root
is mounted read-only and the only writable places are tmpfs mounts (``/workspace``,
``/home/agent``, ``/tmp``) with ``size=`` and ``nr_inodes=``: a full disk is ``ENOSPC`` inside
the container, reported to the agent as a tool error that says so, and the run goes on.
tmpfs pages count against the container's memory limit, so the sizes together stay under it.

Docker's archive API (``docker cp``) sees the image layer under a tmpfs mount, not the mount,
and refuses to write into a read-only root, so files go in and out as tar streams through
``docker exec``: ``tar -x`` reading our stdin, ``tar -c`` writing to our side, capped.
"""

from __future__ import annotations

import socket
import struct
import tempfile
import time
from typing import IO, Any

from agentbench.errors import SandboxError

from ._base import SandboxLimits
from ._paths import UID, WORKSPACE

__all__ = ["DISK_FULL_HINT", "disk_full", "exec_with_stdin", "quota_text", "storage_options", "stream_tar_out"]

HOME = "/home/agent"
_ENOSPC = ("No space left on device", "Disk quota exceeded")


def _mounts(limits: SandboxLimits) -> dict[str, tuple[int, int, str]]:
    """path -> (MiB, inodes, mode) of each writable mount."""
    return {
        WORKSPACE: (limits.disk_mb, limits.inodes, "0755"),
        HOME: (max(16, limits.disk_mb // 4), max(1000, limits.inodes // 4), "0755"),
        "/tmp": (max(16, limits.disk_mb // 2), max(1000, limits.inodes // 2), "1777"),
    }


def storage_options(limits: SandboxLimits) -> dict[str, Any]:
    """Keyword arguments for ``containers.create``: read-only root, capped tmpfs mounts."""
    tmpfs = {path: f"size={mib}m,nr_inodes={inodes},mode={mode},uid={UID},gid={UID},nosuid,nodev"
             for path, (mib, inodes, mode) in _mounts(limits).items()}
    return {"read_only": True, "tmpfs": tmpfs}


def quota_text(limits: SandboxLimits) -> str:
    return ", ".join(f"{path} {mib} MiB / {inodes} files" for path, (mib, inodes, _m) in _mounts(limits).items())


DISK_FULL_HINT = ("[agentbench] The sandbox disk quota is full ({quota}); nothing more can be written until "
                  "files are deleted. The rest of the file system is read-only.")


def disk_full(stderr: str) -> bool:
    """True when a command's error output says the disk (or its inodes) ran out."""
    return any(s in stderr for s in _ENOSPC)


def _frames(raw: bytes) -> tuple[bytes, bytes]:
    """Split Docker's multiplexed stream (8-byte headers) into (stdout, stderr)."""
    out, err, i = bytearray(), bytearray(), 0
    while i + 8 <= len(raw):
        kind, size = raw[i], struct.unpack(">I", raw[i + 4:i + 8])[0]
        chunk = raw[i + 8:i + 8 + size]
        (err if kind == 2 else out).extend(chunk)
        i += 8 + size
    return bytes(out), bytes(err)


def exec_with_stdin(api: Any, container_id: str, argv: list[str], data: bytes, *, timeout_s: float,
                    env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """Run argv as the sandbox user with ``data`` on its stdin (blocking); returns (exit code, stdout, stderr).

    Output beyond 1 MiB is dropped: these commands (``tar -x``) say little.
    """
    wrapped = ["timeout", "--kill-after=2s", f"{timeout_s:g}s", *argv]
    exec_id = api.exec_create(container_id, wrapped, stdin=True, user=f"{UID}:{UID}", workdir=WORKSPACE,
                              environment=env)["Id"]
    sock = api.exec_start(exec_id, socket=True)
    raw_sock = getattr(sock, "_sock", sock)
    raw_sock.settimeout(timeout_s + 10)
    received = bytearray()
    try:
        raw_sock.sendall(data)
        raw_sock.shutdown(socket.SHUT_WR)  # end of stdin: tar sees EOF
        while chunk := raw_sock.recv(65536):
            if len(received) < 1 << 20:
                received += chunk
    except OSError as exc:
        raise SandboxError(f"Streaming into the sandbox failed: {exc}") from exc
    finally:
        sock.close()
    deadline = time.monotonic() + 5
    while True:
        info = api.exec_inspect(exec_id)
        if not info.get("Running") or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    code = info.get("ExitCode")
    out, err = _frames(bytes(received))
    return (-1 if code is None else int(code)), out, err


def stream_tar_out(api: Any, container_id: str, folder: str, *, cap: int, timeout_s: float,
                   env: dict[str, str]) -> IO[bytes]:
    """A tar of ``folder`` made inside the container, spooled on the host (at most ``cap`` bytes).

    Returns a file positioned at 0 (the caller closes it). SandboxError when over the cap or
    when tar fails.
    """
    wrapped = ["timeout", "--kill-after=2s", f"{timeout_s:g}s", "tar", "-C", folder, "-cf", "-", "."]
    exec_id = api.exec_create(container_id, wrapped, user=f"{UID}:{UID}", workdir=WORKSPACE,
                              environment=env)["Id"]
    stream = api.exec_start(exec_id, stream=True, demux=True)
    spool = tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024)
    size, err = 0, bytearray()
    try:
        for out, errb in stream:
            if out:
                size += len(out)
                if size > cap:
                    raise SandboxError(f"The workspace is over {cap >> 20} MiB; not copying it out.")
                spool.write(out)
            if errb and len(err) < 65536:
                err += errb
        code = api.exec_inspect(exec_id).get("ExitCode")
        # tar exits 1 when a file changed while it was read; the archive is still whole.
        if code not in (0, 1):
            raise SandboxError(f"Copying the workspace out failed (tar exit {code}): "
                               f"{err.decode(errors='replace').strip()[:500]}")
    except BaseException:
        spool.close()
        close = getattr(stream, "close", None)
        if close is not None:
            close()
        raise
    spool.seek(0)
    return spool
