"""The Sandbox contract every backend implements (and the conformance suite checks)."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ExecResult", "Sandbox", "SandboxLimits"]


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits applied to every sandbox container."""

    memory_mb: int = 1024
    cpus: float = 1.0
    pids: int = 256
    exec_timeout_s: float = 60.0
    # The writable tmpfs disk (see _storage.py): /workspace gets this, /home/agent and /tmp a share.
    disk_mb: int = 256
    inodes: int = 20_000


@dataclass
class ExecResult:
    """The outcome of one command run inside the sandbox."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    duration_s: float = 0.0
    truncated: bool = field(default=False)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Sandbox(abc.ABC):
    """An isolated place to run untrusted commands: no network, limits, non-root.

    Paths are relative to the workspace (``/workspace`` in the container). A path that is
    absolute, climbs out with ``..`` or resolves through a symlink to outside the workspace
    raises :class:`agentbench.errors.PathEscape`.
    """

    workspace: str = "/workspace"

    @abc.abstractmethod
    async def exec(self, command: str, *, timeout_s: float | None = None) -> ExecResult:
        """Run a shell command in the workspace as the sandbox user, killed after timeout_s."""

    @abc.abstractmethod
    async def write_file(self, path: str, content: str | bytes) -> None:
        """Write a file inside the workspace, creating parent folders."""

    @abc.abstractmethod
    async def read_file(self, path: str) -> bytes:
        """Read a file from inside the workspace."""

    @abc.abstractmethod
    async def list_files(self, path: str = ".") -> list[str]:
        """List files (recursively, relative to the workspace) under path."""

    @abc.abstractmethod
    async def copy_out(self, dest: Path) -> None:
        """Copy the whole workspace to a host folder (dest is created)."""

    @abc.abstractmethod
    async def copy_in(self, src: Path) -> None:
        """Copy a host folder's contents into the workspace."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Remove the sandbox and everything in it. Safe to call twice."""

    async def ended_from_inside(self) -> str | None:
        """Why the sandbox no longer runs, when its own commands stopped it and the infrastructure is
        sound (checked independently: see ``_health.py``); None when it runs or that cannot be told.

        Backends that can tell override this; the default never blames the agent.
        """
        return None

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
