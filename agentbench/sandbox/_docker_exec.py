"""Docker SDK calls for the sandbox: off the event loop, errors mapped, commands under a guard.

The docker SDK blocks, so :func:`call` runs its calls in threads and maps their errors to the
agentbench tree (:func:`map_error`). :func:`run_command` runs one command in a container as the
sandbox user, wrapped in coreutils ``timeout``; every process of it carries a token in its
environment, so a host-side guard (:func:`kill_tagged`) finds and kills them all, even ones that
left the process group, when ``timeout`` did not end it or the caller gave up.

A shell around ``timeout`` writes an end mark on both streams once the command has exited, so its
output is read to the end however late Docker delivers it, and never waited for past that (a
background child may hold the stream open). The mark is random per command and given to the shell
in two halves, so no process listing or environment shows it whole.
"""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any

from agentbench.errors import DockerUnavailable, ImageMissing, SandboxError

from ._exec_reader import ExecReader
from ._paths import UID, WORKSPACE

__all__ = ["GUARD_S", "KILL_AFTER_S", "Raw", "call", "kill_tagged", "map_error", "run_command", "sdk_errors"]

KILL_AFTER_S = 2.0  # SIGTERM first, SIGKILL this long after
GUARD_S = 10.0  # host-side grace beyond timeout + kill-after before we step in
# Run by sh: $1$2 is the end mark; the rest is the command under `timeout`, whose status it keeps.
_WRAP = 'm="$1$2"; shift 2; "$@"; s=$?; printf %s "$m"; printf %s "$m" >&2; exit $s'


@dataclass
class Raw:
    """What one command left: exit code, both streams (capped), whether it timed out, how long it took."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool
    duration_s: float


def sdk_errors() -> tuple[type[BaseException], ...]:
    import docker
    import requests

    return (docker.errors.DockerException, requests.exceptions.RequestException)


def map_error(exc: BaseException, what: str) -> SandboxError:
    import docker
    import requests

    if isinstance(exc, docker.errors.ImageNotFound):
        return ImageMissing(f"{what}: image not found; run `agentbench sandbox build`.")
    if isinstance(exc, docker.errors.NotFound):
        return SandboxError(f"{what}: the sandbox container is gone ({exc}).")
    if isinstance(exc, requests.exceptions.ConnectionError):
        return DockerUnavailable(f"{what}: lost the Docker engine ({exc}); is dockerd running?")
    return SandboxError(f"{what}: {exc}")


async def call(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking SDK call in a thread, mapping its errors to the agentbench tree."""
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except sdk_errors() as exc:
        raise map_error(exc, what) from exc


async def run_command(api: Any, container_id: str, argv: list[str], *, timeout_s: float, cap: int,
                      env: dict[str, str]) -> Raw:
    """Run argv as the sandbox user under `timeout`, keeping at most cap bytes of each stream."""
    if timeout_s <= 0:
        raise SandboxError(f"timeout_s must be positive, got {timeout_s}.")
    half, other = secrets.token_hex(12), secrets.token_hex(12)
    wrapped = ["sh", "-c", _WRAP, "agentbench-exec", half, other,
               "timeout", f"--kill-after={KILL_AFTER_S:g}s", f"{timeout_s:g}s", *argv]
    # Every process of this command inherits the token, so the guard can find them all.
    token = uuid.uuid4().hex
    started = time.monotonic()
    exec_id = (
        await call(
            "Starting a command in the sandbox",
            api.exec_create,
            container_id,
            wrapped,
            user=f"{UID}:{UID}",
            workdir=WORKSPACE,
            environment={**env, "AGENTBENCH_EXEC": token},
        )
    )["Id"]
    starting = asyncio.ensure_future(
        call("Attaching to a sandbox command", api.exec_start, exec_id, stream=True, demux=True))
    try:
        stream = await asyncio.shield(starting)
    except asyncio.CancelledError:
        # Cancelled while Docker starts it: the start goes on in its thread and the command
        # would run unseen until its own limit. Let the start finish, then stop what it started.
        await asyncio.shield(_stop_starting(api, container_id, starting, exec_id, token))
        raise
    reader = ExecReader(stream, cap, asyncio.get_running_loop(), mark=(half + other).encode())
    reader.start()
    killed_by = started + timeout_s + KILL_AFTER_S
    try:
        guard_fired = await _follow(api, container_id, exec_id, reader, stream, token, killed_by)
        info = await _exited(api, container_id, exec_id, token, killed_by)
    except asyncio.CancelledError:
        # The caller gave up: stop the command too, instead of leaving it running unseen.
        stream.close()
        await asyncio.shield(kill_tagged(api, container_id, token))
        raise
    duration = time.monotonic() - started
    code = info.get("ExitCode")
    exit_code = -1 if code is None else int(code)
    # 124: `timeout` sent TERM; 137: it had to KILL. A command exiting so on its own does it early.
    timed_out = guard_fired or (exit_code in (124, 137) and duration >= timeout_s * 0.98)
    return Raw(exit_code, bytes(reader.out), bytes(reader.err), timed_out, reader.truncated, duration)


async def _follow(api: Any, container_id: str, exec_id: str, reader: ExecReader, stream: Any, token: str,
                  killed_by: float) -> bool:
    """Wait for the command's output to end; True when the host-side guard had to kill it.

    The output has ended when the end mark came on both streams (the stream is then closed: a
    background child may hold it open) or the stream closed. A command gone without its mark (the
    wrapper itself was killed) is read for up to ``GUARD_S`` more, as nothing will say more.
    """
    poll = 0.02
    while not reader.done.done():
        await asyncio.wait([reader.done, reader.ended], timeout=poll, return_when=asyncio.FIRST_COMPLETED)
        poll = min(poll * 2, 0.5)
        if reader.ended.done():
            stream.close()
            break
        if reader.done.done():
            break
        info = await call("Inspecting a sandbox command", api.exec_inspect, exec_id)
        if not info.get("Running", True):
            # The wrapper has exited: its mark is written, though Docker may still be copying it and
            # the output before it (seconds on a busy machine). Without a mark (the wrapper itself
            # was killed) a background child may hold the stream open: read for a while, then stop.
            await asyncio.wait([reader.done, reader.ended], timeout=GUARD_S, return_when=asyncio.FIRST_COMPLETED)
            stream.close()
        elif time.monotonic() > killed_by + GUARD_S:
            # `timeout` failed to end it: kill what carries the token, wherever it went.
            await kill_tagged(api, container_id, token)
            await asyncio.wait([reader.done], timeout=2.0)
            stream.close()
            await reader.done
            return True
    await reader.done
    return False


async def _exited(api: Any, container_id: str, exec_id: str, token: str, killed_by: float) -> dict[str, Any]:
    """The exec's inspection once it has exited: its output may end (the mark) a moment before."""
    poll, killed = 0.01, False
    while True:
        info = await call("Inspecting a sandbox command", api.exec_inspect, exec_id)
        if not info.get("Running", False) or (killed and time.monotonic() > killed_by + 2 * GUARD_S):
            return info
        if not killed and time.monotonic() > killed_by + GUARD_S:
            await kill_tagged(api, container_id, token)
            killed = True
        await asyncio.sleep(poll)
        poll = min(poll * 2, 0.25)


async def _stop_starting(api: Any, container_id: str, starting: asyncio.Future[Any], exec_id: str,
                         token: str) -> None:
    """After a cancel during start-up: let the start finish, then kill what it started.

    Docker may create the process a moment after the start call returns, and a process being
    killed may have just forked: kill until the exec has ended and a scan finds nothing tagged.
    """
    try:
        stream = await starting
    except Exception:  # the start failed: nothing runs
        return
    stream.close()
    for _ in range(200):  # ~10 s at most: the exec's own `timeout` ends it long before a leak matters
        found = await kill_tagged(api, container_id, token)
        info = await call("Inspecting a sandbox command", api.exec_inspect, exec_id)
        if info.get("ExitCode") is not None and not info.get("Running") and not found:
            return
        await asyncio.sleep(0.05)


async def kill_tagged(api: Any, container_id: str, token: str) -> bool:
    """SIGKILL every process whose environment carries token (the container stays usable).

    True when one was found.
    """
    # Builtins only: in a sandbox at its pid limit nothing can fork.
    script = (
        'f=0; for round in 1 2 3; do for d in /proc/[0-9]*; do '
        'while IFS= read -r -d "" var; do [ "$var" = "AGENTBENCH_EXEC=$1" ] && kill -KILL "${d#/proc/}" && f=1; '
        'done < "$d/environ"; done 2>/dev/null; done; exit $f'
    )
    exec_id = (await call("Killing a runaway sandbox command", api.exec_create, container_id,
                           ["bash", "-c", script, "kill", token], user=f"{UID}:{UID}"))["Id"]
    await call("Killing a runaway sandbox command", api.exec_start, exec_id)
    info = await call("Killing a runaway sandbox command", api.exec_inspect, exec_id)
    return info.get("ExitCode") == 1
