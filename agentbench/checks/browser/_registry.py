"""Per-task probe registry: each task's probes are one coroutine registered by task id.

A probe coroutine receives a :class:`ProbeContext` and returns the task's CheckResults
(``flap-input``, ``game-over`` ... for flappy). It must never raise for a broken artefact:
a defect is ``fail``, a control it cannot find is ``error`` with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._model import CheckResult

if TYPE_CHECKING:  # the harness module imports playwright; keep the registry light
    from ._harness import BrowserHarness

__all__ = ["LOAD_RUNS", "PROBES", "LoadRun", "ProbeContext", "ProbeFn", "task_probes"]

LOAD_RUN_KEY = "load-run"


@dataclass(frozen=True)
class LoadRun:
    """How a task's probes play their run from load with no input, for the load check to play it so.

    ``every``: their capture grid (virtual s); ``track_bodies``: the balls drawn are logged every
    that many frames from the start (0: not); ``woken_by``: for a page still blank after 1 s,
    what input of a person's the probes found brings it to life (a canvas waiting for a click is
    not a page that failed to load), or None.
    """

    every: float
    track_bodies: int = 0
    woken_by: Callable[[ProbeContext], Awaitable[str | None]] | None = None


@dataclass
class ProbeContext:
    """What a task's probes get: an open browser, the artefact and where to put evidence."""

    harness: BrowserHarness
    artefact_dir: Path
    entry: str
    evidence_dir: Path  # files written here; Evidence.path is relative to evidence_dir.parent
    # Page errors seen by the probes, collected for the shared `runtime-errors` check.
    page_errors: list[str] = field(default_factory=list)
    # What one check of this run learnt for another (flappy: how the game starts, handed to
    # refresh-rate); see ``shared_future``.
    shared: dict[str, object] = field(default_factory=dict)
    # How the load check plays its session to hand it on to the task's probes (see ``take_load_run``).
    load_run: LoadRun | None = None

    def shared_future(self, key: str) -> asyncio.Future[object]:
        """The future under ``key`` in ``shared``, created on first use by either side."""
        fut = self.shared.get(key)
        if fut is None:
            fut = self.shared[key] = asyncio.get_running_loop().create_future()
        return fut  # type: ignore[return-value]

    async def discover(self, key: str, find: Callable[[], Awaitable[object]]) -> object | None:
        """One discovery per check run under ``key``: the first caller runs ``find()``, the others wait.

        Every caller gets the same result; None for all when ``find`` raised (the page broke).
        """
        fut = self.shared_future(key)
        owner = f"{key}:owner"
        if owner not in self.shared:
            self.shared[owner] = True
            try:
                fut.set_result(await find())
            except Exception:  # noqa: BLE001 - every waiter gets None
                if not fut.done():
                    fut.set_result(None)
        return await asyncio.shield(fut)

    def offer_load_run(self, run: object | None) -> None:
        """The load check hands on its run (its page with no input, at 1 s), or None; once."""
        fut = self.shared_future(LOAD_RUN_KEY)
        if not fut.done():
            fut.set_result(run)

    async def take_load_run(self) -> object | None:
        """The load check's run (a ``_play.Run``, the caller's to continue and close), once; else None.

        None when this check run does not hand it on (``load_run``), the page broke while
        loading, or it was taken already.
        """
        if self.load_run is None or self.shared.get(f"{LOAD_RUN_KEY}:taken"):
            return None
        self.shared[f"{LOAD_RUN_KEY}:taken"] = True
        return await asyncio.shield(self.shared_future(LOAD_RUN_KEY))

    def evidence_path(self, name: str) -> tuple[Path, str]:
        """(absolute path to write, relative path for Evidence.path) for an evidence file."""
        self.evidence_dir.mkdir(parents=True, exist_ok=True)
        return self.evidence_dir / name, f"{self.evidence_dir.name}/{name}"


ProbeFn = Callable[[ProbeContext], Awaitable[list[CheckResult]]]
PROBES: dict[str, ProbeFn] = {}
LOAD_RUNS: dict[str, LoadRun] = {}  # tasks whose probes take the load check's run (see ProbeContext)


def task_probes(task_id: str, *, load_run: LoadRun | None = None) -> Callable[[ProbeFn], ProbeFn]:
    """Register the probe coroutine for a task id.

    ``load_run``: the probes call ``ctx.take_load_run()`` (their run from load with no input,
    played as it says), so the load check plays its first second that way and hands it on.
    """

    def register(fn: ProbeFn) -> ProbeFn:
        if task_id in PROBES:
            raise ValueError(f"probes for task '{task_id}' registered twice")
        PROBES[task_id] = fn
        if load_run is not None:
            LOAD_RUNS[task_id] = load_run
        return fn

    return register
