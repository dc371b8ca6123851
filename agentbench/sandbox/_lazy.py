"""A sandbox created in the background: container start-up overlaps the agent's first model call."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from ._base import ExecResult, Sandbox

__all__ = ["LazySandbox"]


class LazySandbox(Sandbox):
    """Starts creating the real sandbox at once and waits for it only at first use.

    The first model request of an attempt takes seconds on a real engine, container creation a
    few hundred milliseconds: overlapping them takes the container out of the critical path.
    A creation error surfaces at the first use (the agent propagates it as an infra error).
    """

    def __init__(self, factory: Callable[[], Awaitable[Sandbox]]):
        self._task: asyncio.Task[Sandbox] = asyncio.ensure_future(factory())
        self._closed = False

    async def _get(self) -> Sandbox:
        return await asyncio.shield(self._task)

    async def exec(self, command: str, *, timeout_s: float | None = None) -> ExecResult:
        return await (await self._get()).exec(command, timeout_s=timeout_s)

    async def write_file(self, path: str, content: str | bytes) -> None:
        await (await self._get()).write_file(path, content)

    async def read_file(self, path: str) -> bytes:
        return await (await self._get()).read_file(path)

    async def list_files(self, path: str = ".") -> list[str]:
        return await (await self._get()).list_files(path)

    async def copy_out(self, dest: Path) -> None:
        await (await self._get()).copy_out(dest)

    async def copy_in(self, src: Path) -> None:
        await (await self._get()).copy_in(src)

    async def ended_from_inside(self) -> str | None:
        if not self._task.done() or self._task.cancelled() or self._task.exception() is not None:
            return None  # never created: nothing of the agent's ran in it
        return await self._task.result().ended_from_inside()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Never leave a container behind: wait for a creation in flight, then remove it.
        try:
            sandbox = await asyncio.shield(self._task)
        except BaseException:  # creation failed or was cancelled: nothing to remove
            with contextlib.suppress(BaseException):
                self._task.exception()
            return
        await sandbox.close()
