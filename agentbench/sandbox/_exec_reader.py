"""Draining a ``docker exec`` output stream in a thread, keeping a capped head of each stream.

The command runs under a wrapper that writes an end mark on both streams once the command has
exited (see ``_docker_exec.run_command``). The mark is what says the command's output is all here:
Docker may deliver that output after it reports the process gone (on a busy machine, seconds
after), and a background child may hold the stream open long past it. The mark is taken out of
what is kept; output after it (a background child's) is kept as it comes, until the stream closes.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import structlog

__all__ = ["ExecReader"]


class _Stream:
    """One of the two streams: its kept head, and the bytes held back that may begin the mark."""

    def __init__(self, cap: int, mark: bytes) -> None:
        self.kept, self.cap, self.mark = bytearray(), cap, mark
        self.held = b""
        self.marked = not mark  # no mark to wait for: ended when the stream ends
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        if self.marked:
            self._keep(chunk)
            return
        data = self.held + chunk
        at = data.find(self.mark)
        if at >= 0:
            self.marked, self.held = True, b""
            self._keep(data[:at] + data[at + len(self.mark):])
            return
        hold = min(len(data), len(self.mark) - 1)  # a mark may be split across chunks
        self._keep(data[: len(data) - hold])
        self.held = data[len(data) - hold:]

    def flush(self) -> None:
        self._keep(self.held)
        self.held = b""

    def _keep(self, data: bytes) -> None:
        if data:
            room = self.cap - len(self.kept)
            self.kept += data[: max(room, 0)]
            self.truncated |= len(data) > room


class ExecReader(threading.Thread):
    """Drains an exec stream in a daemon thread, keeping the first cap bytes of each stream.

    ``ended`` resolves once the end mark has come on both streams (the command's own output is all
    read), ``done`` once the stream has closed. Without a mark only ``done`` ever resolves.
    """

    def __init__(self, stream: Any, cap: int, loop: asyncio.AbstractEventLoop, mark: bytes = b"") -> None:
        super().__init__(daemon=True, name="agentbench-exec-reader")
        self.stream, self.loop = stream, loop
        self._out, self._err = _Stream(cap, mark), _Stream(cap, mark)
        self.done: asyncio.Future[None] = loop.create_future()
        self.ended: asyncio.Future[None] = loop.create_future()
        self._ended_sent = False

    @property
    def out(self) -> bytearray:
        return self._out.kept

    @property
    def err(self) -> bytearray:
        return self._err.kept

    @property
    def truncated(self) -> bool:
        return self._out.truncated or self._err.truncated

    def run(self) -> None:
        try:
            for out, err in self.stream:
                for stream, chunk in ((self._out, out), (self._err, err)):
                    if chunk:
                        stream.feed(chunk)
                if self._out.marked and self._err.marked and not self._ended_sent:
                    self._ended_sent = True
                    self._signal(self.ended)
        except Exception as exc:  # noqa: BLE001 - a closed stream ends the read; exit code tells the rest
            structlog.get_logger().debug("sandbox.exec_stream_closed", reason=str(exc))
        finally:
            self._out.flush()
            self._err.flush()
            self._signal(self.done)

    def _signal(self, future: asyncio.Future[None]) -> None:
        try:
            self.loop.call_soon_threadsafe(_finish, future)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
