"""Browser checks: play the artefact in headless Chromium on a virtual clock and judge from pixels.

The engine knows no task. ``run_browser_checks`` (sync) / ``run_browser_checks_async`` import the
task's probe module (named by the caller, else resolved by ``checks/_tasks.py``), which registers
itself (``register_task``), and run, in one browser: ``load``, the task's probes, ``refresh-rate``
where the task gave a ``RefreshPlan``, and ``runtime-errors``. A defect is ``fail``; a probe that
cannot find what it needs is ``error`` with the reason; a harness failure is ``error`` on every
check, never an exception.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import structlog

from ...errors import CheckError
from .._model import CheckResult, Evidence
from ._frames import Frame
from ._harness import ORIGIN, BrowserHarness
from ._page import REPLAY_LIMIT_S, PageBroken, PageSession
from ._play import Run
from ._refresh import refresh_rate_check
from ._registry import (
    LOAD_RUN_KEY,
    TASKS,
    InputStep,
    LoadRun,
    ProbeContext,
    RefreshPlan,
    TaskProbes,
    load_probes,
    register_task,
)

__all__ = [
    "ORIGIN",
    "TASKS",
    "BrowserHarness",
    "Frame",
    "InputStep",
    "LoadRun",
    "PageBroken",
    "PageSession",
    "ProbeContext",
    "RefreshPlan",
    "TaskProbes",
    "load_probes",
    "register_task",
    "run_browser_checks",
    "run_browser_checks_async",
]

log = structlog.get_logger()

PROBE_TIMEOUT_S = 240.0


def _all_ids(task: TaskProbes | None) -> list[str]:
    return task.check_ids() if task is not None else ["load", "runtime-errors"]


async def _load_check(ctx: ProbeContext) -> CheckResult:
    """The page renders something non-blank and throws nothing while loading (first second).

    For a task whose probes start from the no-input run (``task_probes(..., load_run=...)``) the
    load session is that run (a :class:`Run` on their capture grid) and is handed on open to them
    once judged (``take_load_run``): one page load fewer per check, the same frames.

    A load cut by the harness's real-time step limit is tried again with ``REPLAY_LIMIT_S`` per step
    (issue 29): the same frame for frame on the virtual clock, so a page that hangs as it loads is
    cut again (``fail``) and one starved by a busy machine is judged as a quiet machine judges it.
    """
    started = time.monotonic()
    result, cut = await _load_try(ctx, started, None)
    if cut:
        first = result.detail
        result, _ = await _load_try(ctx, started, REPLAY_LIMIT_S)
        result.data["replayed"] = (f"cut by the harness's time limit per step the first time ({first[:300]}); "
                                   f"loaded again with {REPLAY_LIMIT_S:g} s per step")
        result.duration_s = time.monotonic() - started
    return result


async def _load_try(ctx: ProbeContext, started: float, step_timeout_s: float | None) -> tuple[CheckResult, bool]:
    """One try of the load check, and whether the step limit cut it (then its run is not handed on:
    the next try's is, or None after the last)."""
    run: Run | None = None
    last = step_timeout_s is not None
    if ctx.load_run is not None:
        run = await Run.open(ctx, every=ctx.load_run.every, step_timeout_s=step_timeout_s)
        session = run.session
        if ctx.load_run.track_bodies and not session.broken:
            await session.track_bodies(ctx.load_run.track_bodies)
    else:
        session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=60, step_timeout_s=step_timeout_s)
    result = await _load_judged(ctx, run, session, started, last)
    return result, bool(session.hung) and not last


async def _load_judged(ctx: ProbeContext, run: Run | None, session: PageSession, started: float,
                       last: bool) -> CheckResult:
    handed = False
    try:
        if not session.broken:
            await (run.to(1.0) if run is not None else session.advance(1.0))
        if session.broken:
            status = "error" if session.harness_limited else "fail"
            return CheckResult(id="load", status=status, detail=session.broken, data={"broken": True},
                               duration_s=time.monotonic() - started)
        result = await _judge_load(ctx, session, started)
        if run is not None and not run.broken:
            ctx.offer_load_run(run)
            handed = True
        if result.data.get("blank") and not session.errors and ctx.load_run is not None \
                and ctx.load_run.woken_by is not None:
            how = await ctx.load_run.woken_by(ctx)  # the probes' discovery (they have the run now)
            if how:
                result = CheckResult(id="load", status="pass", evidence=result.evidence,
                                     data={**result.data, "woken_by": how}, duration_s=time.monotonic() - started,
                                     detail=f"the page is blank at first; after {how} it comes to life")
        return result
    except PageBroken as exc:
        return CheckResult(id="load", status="fail", detail=str(exc), data={"broken": True},
                           duration_s=time.monotonic() - started)
    finally:
        if not handed:
            if last or not session.hung:  # a cut try leaves the offer to the next
                ctx.offer_load_run(None)
            await session.close()


async def _close_load_run(ctx: ProbeContext) -> None:
    """The load check's run, if the probes never took it (they failed first): its place is freed."""
    fut = ctx.shared.get(LOAD_RUN_KEY)
    if isinstance(fut, asyncio.Future) and fut.done() and isinstance(fut.result(), Run):
        await fut.result().close()


async def _judge_load(ctx: ProbeContext, session: PageSession, started: float) -> CheckResult:
    shot = await session.screenshot()
    path, rel = ctx.evidence_path("load.png")
    path.write_bytes(shot)
    snap = await session.snapshot()
    (r, g, b), _ = snap.image.dominant()
    rgb = snap.image.rgb
    off = sum(1 for i in range(0, len(rgb), 3)
              if abs(rgb[i] - r) + abs(rgb[i + 1] - g) + abs(rgb[i + 2] - b) > 30)
    evidence = [Evidence(kind="file", label="the page after 1 s", path=rel)]
    if session.blocked:
        evidence.append(Evidence(kind="value", label="blocked outside requests", value=session.blocked))
    took = time.monotonic() - started
    data = {"non_background_share": off / max(1, snap.width * snap.height), "blocked": session.blocked}
    if off < max(3, snap.width * snap.height // 2000):
        return CheckResult(id="load", status="fail", detail="the page is blank after loading",
                           evidence=evidence, data={**data, "blank": True}, duration_s=took)
    if session.errors:
        return CheckResult(id="load", status="fail", evidence=evidence, data=data, duration_s=took,
                           detail=f"uncaught error while loading: {session.errors[0]}")
    return CheckResult(id="load", status="pass", detail="the page renders without errors",
                       evidence=evidence, data=data, duration_s=took)


async def _refresh_check(ctx: ProbeContext, task: TaskProbes | None) -> list[CheckResult]:
    if task is None or task.refresh is None:
        return []
    plan = task.refresh
    try:
        return [await asyncio.wait_for(refresh_rate_check(ctx, list(plan.steps), plan.adapt, plan.script),
                                       PROBE_TIMEOUT_S)]
    except (TimeoutError, CheckError, Exception) as exc:
        log.exception("refresh-rate failed", task=task.task_id)
        return [CheckResult(id="refresh-rate", status="error",
                            detail=f"refresh-rate failed: {type(exc).__name__}: {exc}")]


def _runtime_errors(ctx: ProbeContext, marks: tuple[int, int, int]) -> CheckResult:
    """Page errors of every session of this run (``marks``: the harness's log sizes at its start)."""
    h = ctx.harness
    seen: list[str] = []
    for msg in [*h.page_errors[marks[0]:], *ctx.page_errors]:
        if msg not in seen:
            seen.append(msg)
    data = {"count": len(seen), "dialogs": h.dialogs[marks[1]:][:20], "blocked": h.blocked[marks[2]:][:20]}
    if not seen:
        return CheckResult(id="runtime-errors", status="pass", detail="no page errors during the probes", data=data)
    evidence = [Evidence(kind="text", label=f"page error {i + 1}", value=m) for i, m in enumerate(seen[:20])]
    return CheckResult(id="runtime-errors", status="fail", evidence=evidence, data=data,
                       detail=f"{len(seen)} distinct page error(s), first: {seen[0]}")


async def _task_probes(ctx: ProbeContext, task: TaskProbes | None) -> list[CheckResult]:
    if task is None:
        return []
    task_id, expected = task.task_id, task.checks
    try:
        results = await asyncio.wait_for(task.probes(ctx), PROBE_TIMEOUT_S)
    except PageBroken as exc:
        results, status, why = [], "fail", f"the page broke: {exc}"
    except (TimeoutError, CheckError, Exception) as exc:
        log.exception("probe failed", task=task_id)
        results, status, why = [], "error", f"probe failed: {type(exc).__name__}: {exc}"
    else:
        status, why = "error", "the probe returned no result for this check"
    have = {r.id for r in results}
    return results + [CheckResult(id=c, status=status, detail=why) for c in expected if c not in have]  # type: ignore[arg-type]


def _probe_module(task_id: str, probes: str | None) -> str | None:
    if probes is not None:
        return probes
    from .._tasks import probe_module  # the resolver stands outside the engine: it names the tasks

    return probe_module(task_id)


async def run_browser_checks_async(task_id: str, artefact_dir: Path, evidence_dir: Path, *,
                                   entry: str = "index.html", chromium_path: str | None = None,
                                   harness: BrowserHarness | None = None,
                                   probes: str | None = None, seed: int | None = None) -> list[CheckResult]:
    """Run every browser check for ``task_id`` on the artefact folder; never raises for the artefact.

    ``harness``: an already started BrowserHarness to reuse (left open); by default one Chromium
    is launched for this call and closed after it. ``probes``: the module that registers the task's
    probes (imported here); by default ``checks/_tasks.probe_module(task_id)``. Raises CheckError
    when that module cannot be imported or registers nothing for the task. ``seed``: Math.random's
    seed instead of the folder's digest (bench/seed_stability.py: a verdict must not hang on it).
    """
    task = load_probes(task_id, _probe_module(task_id, probes))
    artefact_dir, evidence_dir = Path(artefact_dir), Path(evidence_dir)
    if not (artefact_dir / entry).is_file():
        return [CheckResult(id=c, status="fail", detail=f"{entry} was not produced") for c in _all_ids(task)]
    own = harness is None
    if harness is None:
        harness = BrowserHarness(chromium_path)
        try:
            await harness.start()
        except CheckError as exc:
            return [CheckResult(id=c, status="error", detail=str(exc)) for c in _all_ids(task)]
    ctx = ProbeContext(harness=harness, artefact_dir=artefact_dir, entry=entry, evidence_dir=evidence_dir,
                       load_run=task.load_run if task is not None else None)
    clock = harness.begin_check(artefact_dir, seed=seed)  # one epoch and seed for every session of this check
    marks = (len(harness.page_errors), len(harness.dialogs), len(harness.blocked))
    started = time.monotonic()
    # load, the task's probes and refresh-rate use separate sessions: run them side by side (the
    # harness opens at most max_sessions at once). load asks first, so it gets the first place.
    load_task = asyncio.ensure_future(_load_check(ctx))
    rest = asyncio.ensure_future(asyncio.gather(_task_probes(ctx, task), _refresh_check(ctx, task)))
    try:
        load = await load_task
        load.data.update({"seed": clock.seed, "epoch": clock.epoch})
        results = [load]
        if load.data.get("broken"):  # hung, crashed or left: nothing else can run (called off below)
            why = f"the page could not be loaded: {load.detail}"
            results += [CheckResult(id=c, status="fail" if load.status == "fail" else "error", detail=why)
                        for c in _all_ids(task)[1:-1]]
        else:
            probes, refresh = await rest
            for r in probes:
                r.duration_s = r.duration_s or time.monotonic() - started
            results += probes + refresh
        results.append(_runtime_errors(ctx, marks))
        return results
    finally:
        for task in (load_task, rest):
            if not task.done():
                task.cancel()
        await asyncio.gather(load_task, rest, return_exceptions=True)
        await _close_load_run(ctx)
        if own:
            await harness.close()


def run_browser_checks(task_id: str, artefact_dir: Path, evidence_dir: Path, *, entry: str = "index.html",
                       chromium_path: str | None = None, probes: str | None = None) -> list[CheckResult]:
    """Synchronous wrapper of :func:`run_browser_checks_async` (safe inside a running event loop)."""
    coro = run_browser_checks_async(task_id, artefact_dir, evidence_dir, entry=entry, chromium_path=chromium_path,
                                    probes=probes)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, object] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=worker, name="agentbench-browser-checks")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
