"""How a task plugs into the browser engine: one :func:`register_task` call per task, by task id.

A task's package (``agentbench.checks.flappy``, or a plug-in's module) calls ``register_task`` when it
is imported, with its check ids, its probe coroutine, and optionally how it starts from the load
check's run (:class:`LoadRun`) and how ``refresh-rate`` plays it (:class:`RefreshPlan`). The engine
never imports a task by name: it is handed the module to import (:func:`load_probes`), which
``checks/_tasks.py`` resolves outside the engine.

A probe coroutine receives a :class:`ProbeContext` and returns the task's CheckResults
(``flap-input``, ``game-over`` ... for flappy). It must never raise for a broken artefact:
a defect is ``fail``, a control it cannot find is ``error`` with the reason.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import CheckError
from .._model import CheckResult

if TYPE_CHECKING:  # the harness module imports playwright; keep the registry light
    from ._harness import BrowserHarness

__all__ = ["TASKS", "Adapt", "InputStep", "LoadRun", "ProbeContext", "ProbeFn", "RefreshPlan", "Rerun", "ScriptFn",
           "TaskProbes", "load_probes", "register_task"]

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
    # The real-time limit per step of the runs opened with this context (``_play.Run.open``): None is
    # the harness's usual one; a replay of a run that limit cut carries ``_page.REPLAY_LIMIT_S``.
    step_timeout_s: float | None = None

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


@dataclass(frozen=True)
class InputStep:
    """One input at virtual time ``t`` (s): ``press:<Key>`` or ``click:<fx>,<fy>`` (canvas fractions)."""

    t: float
    action: str


# A coroutine giving the script to play instead of the plan's steps (what the task's probes found:
# how the game starts, what spawns the balls), with a note for the detail; None: keep the steps.
ScriptFn = Callable[[ProbeContext], Awaitable[tuple[list[InputStep], str] | None]]
Rerun = Callable[[list[InputStep]], Awaitable[CheckResult]]
# (ctx, steps, result, rerun) -> the final result: what a task's probes learnt (how its game
# starts) can replay the check with another script or decide it another way.
Adapt = Callable[[ProbeContext, list[InputStep], CheckResult, Rerun], Awaitable[CheckResult]]


@dataclass(frozen=True)
class RefreshPlan:
    """A task gets the generic ``refresh-rate`` check (``_refresh.py``), played with these inputs.

    ``steps``: the input script (times from load); ``script`` may replace it with what the probes
    found; ``adapt`` gets the pixel verdict and may re-decide it (see ``Adapt``).
    """

    steps: Sequence[InputStep] = ()
    script: ScriptFn | None = None
    adapt: Adapt | None = None


@dataclass(frozen=True)
class TaskProbes:
    """What one task registered: its check ids (in its order), its probes and its hand-offs."""

    task_id: str
    checks: tuple[str, ...]
    probes: ProbeFn
    load_run: LoadRun | None = None
    refresh: RefreshPlan | None = None

    def check_ids(self) -> list[str]:
        """Every check id a check run of this task gives, in order (the engine's own around the task's)."""
        return ["load", *self.checks, *(["refresh-rate"] if self.refresh is not None else []), "runtime-errors"]


TASKS: dict[str, TaskProbes] = {}


def register_task(task_id: str, *, checks: Sequence[str], probes: ProbeFn, load_run: LoadRun | None = None,
                  refresh: RefreshPlan | None = None) -> TaskProbes:
    """Register a task's probes with the engine (called once, when the task's module is imported).

    ``checks``: the ids ``probes`` returns (one missing from its answer becomes ``error``);
    ``load_run``: the probes call ``ctx.take_load_run()`` (their run from load with no input,
    played as it says), so the load check plays its first second that way and hands it on;
    ``refresh``: the task gets ``refresh-rate``, played as the plan says.
    """
    if task_id in TASKS:
        raise ValueError(f"probes for task '{task_id}' registered twice")
    if refresh is not None:
        refresh = RefreshPlan(tuple(sorted(refresh.steps, key=lambda s: s.t)), refresh.script, refresh.adapt)
    entry = TASKS[task_id] = TaskProbes(task_id, tuple(checks), probes, load_run, refresh)
    return entry


def load_probes(task_id: str, module: str | None) -> TaskProbes | None:
    """The task's registration, importing ``module`` (a module name) first when it is not there yet.

    None when the task has no probe module (``module`` None: only the engine's own checks run).
    Raises CheckError when the module cannot be imported or registers nothing for ``task_id``.
    """
    if task_id in TASKS or module is None:
        return TASKS.get(task_id)
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - any import failure is the same answer: no probes
        raise CheckError(f"the probes of task '{task_id}' ({module}) failed to import: "
                         f"{type(exc).__name__}: {exc}") from exc
    if task_id not in TASKS:
        raise CheckError(f"{module} registered no probes for task '{task_id}'")
    return TASKS[task_id]
