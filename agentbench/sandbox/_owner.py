"""Which process owns a sandbox container, and sweeping those whose owner died.

A process killed hard (``kill -9``, an OOM kill, a lost terminal) leaves its containers behind.
Several agentbench processes share one engine (a run, a `check`, another person's tests), so a
sweep may remove a container only when its owner is certainly gone. Each container carries
labels naming its owner: the pid, the process's start time (pids are reused), the host name,
the kernel boot id and the pid namespace. A container is an orphan when it was made on this
host in this pid namespace and its pid is gone or now belongs to a younger process, or when it
was made on this host before the last boot. Anything else (another host, another pid
namespace, labels missing) is left alone.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from typing import Any

import structlog

from ._image import SANDBOX_LABEL

__all__ = ["container_labels", "owner_is_dead", "owner_labels", "sweep_orphans", "sweep_orphans_once"]

PID, START, HOST, BOOT, PIDNS = (f"{SANDBOX_LABEL}.owner.{k}" for k in ("pid", "start", "host", "boot", "pidns"))
_swept = threading.Lock()
_done = False


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), '' if gone."""
    stat = _read(f"/proc/{pid}/stat")
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    rest = stat.rpartition(")")[2].split()
    return rest[19] if len(rest) > 19 else ""


@functools.lru_cache(maxsize=1)
def _identity() -> tuple[str, str, str]:
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = ""
    return socket.gethostname(), _read("/proc/sys/kernel/random/boot_id"), pidns


def owner_labels() -> dict[str, str]:
    """Labels naming this process as the owner of a container it creates."""
    host, boot, pidns = _identity()
    pid = os.getpid()
    return {PID: str(pid), START: _start_time(pid), HOST: host, BOOT: boot, PIDNS: pidns}


def container_labels(*, kind: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Every label a container we create carries: ``agentbench=1``, its kind, when, and its owner.

    With these the sweep can remove it after its owner died, whatever state it was left in.
    """
    import time

    labels = {SANDBOX_LABEL: "1", f"{SANDBOX_LABEL}.kind": kind, f"{SANDBOX_LABEL}.created": f"{time.time():.3f}",
              **owner_labels()}
    labels.update({k: str(v) for k, v in (extra or {}).items()})
    return labels


def owner_is_dead(labels: dict[str, str]) -> bool:
    """True only when the owner named by the labels certainly no longer runs (see the module docstring)."""
    host, boot, pidns = _identity()
    if PID not in labels or labels.get(HOST) != host or not boot:
        return False
    if labels.get(BOOT) != boot:
        return bool(labels.get(BOOT))  # made on this host before the last boot: its owner is gone
    if not pidns or labels.get(PIDNS) != pidns:
        return False  # another pid namespace (a container sharing the engine): its pids are not ours
    try:
        pid = int(labels[PID])
    except ValueError:
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, someone else's
    started = _start_time(pid)
    return bool(started and labels.get(START) and started != labels[START])  # the pid was reused


def sweep_orphans(client: Any) -> list[str]:
    """Remove sandbox containers whose owner process is dead; returns their short ids."""
    import docker

    removed: list[str] = []
    try:
        # ignore_removed: another process's sweep (or its owner closing it) may remove a listed container
        # before the SDK looks at it; that 404 must not end this sweep.
        containers = client.containers.list(all=True, filters={"label": [f"{SANDBOX_LABEL}=1", PID]},
                                            ignore_removed=True)
    except docker.errors.DockerException as exc:
        structlog.get_logger().debug("sandbox.sweep_failed", error=str(exc))
        return removed
    for container in containers:
        if not owner_is_dead(container.labels):
            continue
        try:
            container.remove(force=True, v=True)
        except docker.errors.NotFound:
            continue
        except docker.errors.DockerException as exc:
            structlog.get_logger().debug("sandbox.sweep_failed", container=container.short_id, error=str(exc))
            continue
        removed.append(container.short_id)
    if removed:
        structlog.get_logger().info("sandbox.swept_orphans", containers=removed)
    return removed


def sweep_orphans_once(client: Any) -> None:
    """sweep_orphans, the first time a process creates a sandbox (later calls return at once)."""
    global _done
    if _done:
        return
    with _swept:
        if not _done:
            _done = True
            sweep_orphans(client)
