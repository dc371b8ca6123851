"""Checker containers side by side: a batch of artefacts checked on every core of the engine.

One checker container plays one artefact at a time (its worker's page-error, dialog and blocked
logs are harness-wide, so two artefacts in one harness would see each other's errors). A
:class:`CheckerPool` holds up to ``size`` of them on one engine: an artefact goes to an idle one;
when all are busy and the pool is below its size, a new one is started for it; else it waits, first
come first served. Every container has the limits a lone checker has (memory, CPU, pids, tmpfs), so
a page is judged in the same box whether it is checked alone or beside others.

What bounds ``size``: ``AGENTBENCH_CHECKERS`` when set; else the engine's cores (more containers
only fight over them), and no more containers than the engine's memory holds at each one's limit.
Containers start on demand: a single artefact starts one, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CheckError
from ._checker import CheckerContainer
from ._model import CheckResult

__all__ = ["CheckerPool", "close_shared_checker", "pool_size", "shared_checker"]


def _bytes(size: str) -> int:
    """'3g', '512m', '1073741824' as bytes (docker's own suffixes)."""
    text = size.strip().lower().rstrip("b")
    scale = {"k": 2**10, "m": 2**20, "g": 2**30}.get(text[-1:], 1)
    return int(float(text.rstrip("kmg")) * scale)


def pool_size(cores: int | None, memory_total: int | None, memory_each: str) -> int:
    """How many checkers an engine runs at once (see the module docstring): at least 1."""
    raw = os.environ.get("AGENTBENCH_CHECKERS", "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise CheckError(f"AGENTBENCH_CHECKERS must be a whole number >= 1, not {raw!r}")
        return int(raw)
    size = max(1, cores or os.cpu_count() or 1)
    if memory_total:
        size = min(size, max(1, memory_total // max(1, _bytes(memory_each))))
    return size


class CheckerPool:
    """Up to ``size`` warm checker containers of one engine; ``check`` may be awaited concurrently.

    ``size`` None: measured from the engine on first need (see :func:`pool_size`). ``factory``
    makes a container (tests give their own); by default a :class:`CheckerContainer` on ``engine``.
    """

    def __init__(self, size: int | None = None, *, engine: Any | None = None,
                 factory: Callable[[], Any] | None = None) -> None:
        self._engine = engine
        self._factory = factory or (lambda: CheckerContainer(engine=engine))
        self._size = size
        self._lock = threading.Lock()  # the pool serves every event loop of the process
        self._all: list[Any] = []
        self._idle: list[Any] = []
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = deque()

    @property
    def containers(self) -> list[Any]:
        """The pool's checkers so far (each may have been replaced after a crash: see ``started``)."""
        with self._lock:
            return list(self._all)

    @property
    def started(self) -> int:
        """Containers started so far, replacements included."""
        return sum(c.started for c in self.containers)

    async def size(self) -> int:
        """How many artefacts the pool checks at once on its engine."""
        if self._size is None:
            self._size = await asyncio.to_thread(self._measure)
        return self._size

    def _measure(self) -> int:
        from ..sandbox._image import connect_docker

        cores = memory = None
        with contextlib.suppress(Exception):  # an engine that will not say: the host's cores
            client = connect_docker(self._engine.new_client() if self._engine is not None else None)
            info = client.info()
            cores, memory = info.get("NCPU"), info.get("MemTotal")
        return pool_size(cores, memory, CheckerContainer(engine=self._engine).memory)

    async def start(self) -> None:
        """Start the first checker now (a check starts the rest when it needs them).

        It stays idle while it starts: a check that comes meanwhile takes it and waits for its
        start, rather than starting a second one for a single artefact.
        """
        with self._lock:
            if not self._all:
                self._all.append(self._factory())
                self._idle.append(self._all[0])
            checker = self._all[0]
        await checker.start()

    async def check(self, task_id: str, artefact_dir: Path, evidence_dir: Path, *,
                    entry: str = "index.html", probes: str | None = None,
                    timings: dict | None = None) -> list[CheckResult]:
        """``CheckerContainer.check`` on an idle checker of the pool (waits while all are busy)."""
        checker = await self._acquire()
        try:
            return await checker.check(task_id, artefact_dir, evidence_dir, entry=entry, probes=probes,
                                       timings=timings)
        finally:
            self._release(checker)

    def cpu_seconds(self) -> float:
        """CPU seconds of the pool's live containers so far (each read from its cgroup)."""
        return sum(c.cpu_seconds() for c in self.containers)

    async def close(self) -> None:
        await asyncio.to_thread(self._close_sync)

    def _close_sync(self) -> None:
        with self._lock:
            checkers, self._all, self._idle = self._all, [], []
        for checker in checkers:
            checker._close_sync()

    # -- handing out checkers ----------------------------------------------------------------------

    async def _acquire(self) -> Any:
        size = await self.size()
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._idle:
                return self._idle.pop()
            if len(self._all) < size:
                checker = self._factory()
                self._all.append(checker)
                return checker
            future: asyncio.Future = loop.create_future()
            self._waiters.append((loop, future))
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # handed over just as this wait was cancelled
                self._release(future.result())
            raise

    def _release(self, checker: Any) -> None:
        with self._lock:
            if checker not in self._all:  # the pool was closed meanwhile
                return
            while self._waiters:
                loop, future = self._waiters.popleft()
                if future.done():
                    continue
                try:
                    loop.call_soon_threadsafe(self._hand, future, checker)
                except RuntimeError:  # that waiter's loop is closed
                    continue
                return
            self._idle.append(checker)

    def _hand(self, future: asyncio.Future, checker: Any) -> None:
        if future.done():  # its waiter gave up: the next one gets it
            self._release(checker)
        else:
            future.set_result(checker)


_shared: dict[str, CheckerPool] = {}
_shared_lock = threading.Lock()


def shared_checker() -> CheckerPool:
    """The process's warm checkers on the bound engine (created on first use, removed at exit).

    Inside a cell placed on one of a run's engines (``bind_engine``) the checkers run on that
    engine, one pool per engine; elsewhere on the environment's engine. A pool starts one
    container, and more (up to its size) only while artefacts wait for one (``_checker_pool``).
    """
    from ..sandbox._binding import bound_engine

    engine = bound_engine()
    key = engine.name if engine is not None else ""
    with _shared_lock:
        if not _shared:
            import atexit

            atexit.register(close_shared_checker)
        if key not in _shared:
            _shared[key] = CheckerPool(engine=engine)
        return _shared[key]


def close_shared_checker() -> None:
    """Remove the process's checker containers (every pool's), if any were started."""
    with _shared_lock:
        checkers = list(_shared.values())
        _shared.clear()
    for checker in checkers:
        checker._close_sync()
