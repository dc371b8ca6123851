"""Draining a ``docker exec`` output stream in a thread, keeping a capped head of each stream."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import structlog

__all__ = ["ExecReader"]


class ExecReader(threading.Thread):
    """Drains an exec stream in a daemon thread, keeping the first cap bytes of each stream."""

    def __init__(self, stream: Any, cap: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(daemon=True, name="agentbench-exec-reader")
        self.stream, self.cap, self.loop = stream, cap, loop
        self.out, self.err = bytearray(), bytearray()
        self.truncated = False
        self.last_data = time.monotonic()
        self.done: asyncio.Future[None] = loop.create_future()

    def run(self) -> None:
        try:
            for out, err in self.stream:
                self.last_data = time.monotonic()
                for buf, chunk in ((self.out, out), (self.err, err)):
                    if chunk:
                        room = self.cap - len(buf)
                        buf += chunk[: max(room, 0)]
                        self.truncated |= len(chunk) > room
        except Exception as exc:  # noqa: BLE001 - a closed stream ends the read; exit code tells the rest
            structlog.get_logger().debug("sandbox.exec_stream_closed", reason=str(exc))
        finally:
            try:
                self.loop.call_soon_threadsafe(_finish, self.done)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
