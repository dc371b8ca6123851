"""Place a run's cells on Docker engines with free capacity; lose an engine without losing the run.

The pool is opened once per run: every engine is pinged first (an unreachable one stops the run
before anything is written, naming it). A cell asks :meth:`EnginePool.place` for an engine: the
least loaded live engine with a free slot, relative to its capacity, the first listed on a tie.
On its first cell an engine gets its images (:meth:`Engine.provision`); an engine that cannot
get them is dropped and the cell goes elsewhere. After a cell, :meth:`EnginePool.settle` pings
its engine: when the engine no longer answers, the cell becomes ``infra-error`` naming it (its
evidence cannot be trusted) and no further cell goes there; ``--resume RUN --retry infra``
reruns those cells on the engines that remain.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import structlog

from .errors import DockerUnavailable, SandboxError
from .sandbox._engine_config import EngineConfig
from .sandbox._engines import Engine, connect_engine
from .store import AttemptResult, InfraError, write_json

__all__ = ["EnginePool", "NoEngineLeft", "open_pool"]

log = structlog.get_logger()
Notice = Callable[[str], Any]


class NoEngineLeft(SandboxError):
    """Every engine of the run was lost (or could not get its images)."""


class EnginePool:
    """The engines of one run, their load, and which were lost."""

    def __init__(self, engines: list[Engine], notice: Notice | None = None,
                 images: list[Any] | None = None) -> None:
        if not engines:
            raise ValueError("an engine pool needs at least one engine")
        self.engines = engines
        self._notice = notice or (lambda msg: log.info("engine.notice", message=msg))
        self._changed = asyncio.Condition()
        self._sources: list[Engine] = []  # engines images may be loaded from (the local one too)
        self._images = list(images or [])  # EngineImages this run needs besides ENGINE_IMAGES

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.engines]

    def live(self) -> list[Engine]:
        return [e for e in self.engines if e.lost is None]

    @contextlib.asynccontextmanager
    async def place(self) -> AsyncIterator[Engine]:
        """Hold a slot on an engine (with its images) for one cell; NoEngineLeft when none is left."""
        engine = await self._acquire()
        try:
            yield engine
        finally:
            async with self._changed:
                engine.active -= 1
                self._changed.notify_all()

    async def _acquire(self) -> Engine:
        while True:
            async with self._changed:
                while True:
                    live = self.live()
                    if not live:
                        raise NoEngineLeft(self._none_left())
                    free = [e for e in live if e.capacity is None or e.active < e.capacity]
                    if free:
                        break
                    await self._changed.wait()
                engine = min(free, key=lambda e: (e.active / self._weight(e), self.engines.index(e)))
                engine.active += 1
            try:
                await engine.provision(self._sources_for(engine), self._notice, self._images)
                return engine
            except SandboxError as exc:
                async with self._changed:
                    engine.active -= 1
                self.mark_lost(engine, f"could not get its images: {exc}")

    def _weight(self, engine: Engine) -> float:
        # Unbounded engines weigh as much as the largest bounded one, so placement stays even.
        bounded = [e.capacity for e in self.engines if e.capacity]
        return float(engine.capacity or max(bounded, default=1))

    def _sources_for(self, engine: Engine) -> list[Engine]:
        return [e for e in self.engines if e is not engine] + self._sources

    def mark_lost(self, engine: Engine, reason: str) -> None:
        """Stop placing cells on engine; cells waiting for a slot go to the others."""
        if engine.lost is not None:
            return
        engine.lost = reason
        rest = ", ".join(e.name for e in self.live()) or "none"
        self._notice(f"{engine.label()} is out of this run: {reason}. Remaining engines: {rest}.")
        log.warning("engine.lost", engine=engine.name, reason=reason)

        async def wake() -> None:
            async with self._changed:
                self._changed.notify_all()

        with contextlib.suppress(RuntimeError):  # no running loop: nobody waits
            asyncio.get_running_loop().create_task(wake())

    async def settle(self, engine: Engine, result: AttemptResult, result_path: Path) -> AttemptResult:
        """After a cell: if its engine stopped answering, the cell is an infra error naming it."""
        if engine.lost is None and await engine.alive():
            return result
        self.mark_lost(engine, "it stopped answering")
        before = f" ({result.error.kind}: {result.error.message})" if result.error else ""
        result = result.model_copy(update={
            "outcome": "infra-error", "verdict": None, "score": None,
            "error": InfraError(kind="engine", message=f"{engine.label()} was lost during this cell{before}. "
                                "Rerun it elsewhere with `agentbench run --resume RUN --retry infra`."),
        })
        write_json(result_path, result)
        return result

    def _none_left(self) -> str:
        lost = "; ".join(f"{e.label()}: {e.lost}" for e in self.engines)
        return f"No Docker engine is left for this cell ({lost})."

    async def sweep(self, labels: dict[str, str]) -> None:
        """Remove containers carrying labels on every live engine (a resumed run's leftovers)."""
        from .sandbox import sweep_containers

        for engine in self.live():
            with contextlib.suppress(Exception):
                await asyncio.to_thread(sweep_containers, engine.client, labels=labels)


async def open_pool(configs: list[EngineConfig], notice: Notice | None = None,
                    images: list[Any] | None = None) -> EnginePool:
    """Connect to every engine at once; DockerUnavailable naming each one that does not answer.

    images: EngineImages this run needs on every engine besides ENGINE_IMAGES (the checker's).
    """

    async def one(config: EngineConfig) -> Engine | BaseException:
        try:
            return Engine(config, await asyncio.to_thread(connect_engine, config))
        except DockerUnavailable as exc:
            return exc

    found = await asyncio.gather(*(one(c) for c in configs))
    failed = [f for f in found if isinstance(f, BaseException)]
    if failed:
        raise DockerUnavailable("\n".join(str(f) for f in failed))
    pool = EnginePool([f for f in found if isinstance(f, Engine)], notice, images)
    if all(c.address is not None for c in configs):
        # The environment's engine, when reachable, is a source of images for remote engines.
        with contextlib.suppress(DockerUnavailable):
            from .sandbox._engine_config import local_engine

            client = await asyncio.to_thread(connect_engine, local_engine(), timeout=10)
            # 10 s is for the ping only: an image streamed out of it (docker save) may pause longer
            # than that between chunks on a busy machine (CI saw a ReadTimeout here).
            client.api.timeout = 600
            pool._sources.append(Engine(local_engine(), client))
    return pool
