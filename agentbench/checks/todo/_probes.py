"""To-do list probes: add, complete, delete, filter, persistence, escaping, empty-input.

One exploration per page (``_todo_map``) learns by effect how this app adds a task, marks one done,
deletes one and filters; ``add``, ``complete`` and ``filter`` are judged from what it saw (its
effect table is their evidence). ``delete``, ``persistence``, ``escaping`` and ``empty-input`` each
replay what it learnt on a pristine page of their own, side by side. Tasks carry distinctive texts
so they can be found whatever markup the app chose.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from .._model import CheckResult, Evidence
from ..browser._find import REPLAY_LIMIT_S, run_check, settle
from ..browser._page import PageBroken
from ..browser._registry import ProbeContext
from ._app import AddBroken, TodoApp, TodoMap
from ._checks import TASKS, check_empty, check_escaping, check_escaping_filtered
from ._map import START_S, explore_todo
from ._verdicts import judge_add, judge_complete, judge_delete, judge_filter, judge_persistence

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["CHECK_IDS", "TASKS", "probe_todo"]

EXPLORE_LIMIT_S = 75.0
CHECK_IDS = ("add", "complete", "delete", "filter", "persistence", "escaping", "empty-input")


class Exploration:
    """The page's one exploration, run in its own session; checks await what they need of it."""

    def __init__(self, ctx: ProbeContext) -> None:
        loop = asyncio.get_running_loop()
        self.ctx = ctx
        self.adds: asyncio.Future[TodoMap] = loop.create_future()  # the add paths are known
        self.full: asyncio.Future[TodoMap] = loop.create_future()  # everything is known
        self.todo = TodoMap()
        self.outcome = ""  # "" | "absent" | "broken" | "error": why the map is incomplete
        self.why = ""
        self.shot: Evidence | None = None
        self.duration_s = 0.0
        self.replayed = ""  # why the exploration was run again, if it was
        self.task = asyncio.ensure_future(self._run())

    def _publish(self, fut: asyncio.Future[TodoMap]) -> None:
        if not fut.done():
            fut.set_result(self.todo)

    async def _run(self) -> None:
        started = time.monotonic()
        try:
            if await self._explore(None):
                # Cut by the harness's step limit: a page that hangs, or a busy machine. Explored
                # again from a pristine page with a far longer limit (the same frame for frame on
                # the virtual clock): a page that hangs is cut again and its verdict stands.
                first = self.why
                self.todo, self.outcome, self.why, self.shot = TodoMap(), "", "", None
                await self._explore(REPLAY_LIMIT_S)
                self.replayed = (f"cut by the harness's time limit per step the first time ({first[:300]}); "
                                 f"explored again with {REPLAY_LIMIT_S:g} s per step")
        finally:
            self.todo.problem = self.why
            self.duration_s = time.monotonic() - started
            self._publish(self.adds)
            self._publish(self.full)

    async def _explore(self, step_timeout_s: float | None) -> bool:
        """One exploration in its own session; True when the harness's step limit cut it."""
        session = None
        try:
            session = await self.ctx.harness.open(self.ctx.artefact_dir, self.ctx.entry, confirm=True,
                                                  step_timeout_s=step_timeout_s)
            if session.broken:
                raise PageBroken(session.broken)
            await asyncio.wait_for(explore_todo(session, self.todo, lambda _t: self._publish(self.adds)),
                                   EXPLORE_LIMIT_S)
        except AddBroken as exc:
            self.outcome, self.why = "absent", str(exc)
        except PageBroken as exc:
            self.outcome, self.why = "broken", f"the page broke while being explored: {exc}"
        except TimeoutError:
            self.outcome, self.why = "error", f"exploring the page did not finish within {EXPLORE_LIMIT_S:g} s"
        except CheckError as exc:
            self.outcome, self.why = "error", f"exploring the page failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - an exploration must end in a verdict, never raise
            text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            broken = session is not None and (session.hung or "context was destroyed" in text)
            self.outcome = "broken" if broken else "error"
            self.why = f"exploring the page failed: {text}"
        finally:
            if session is not None:
                await self._finish(session)
        return bool(session is not None and session.hung)

    async def _finish(self, session: PageSession) -> None:
        self.ctx.page_errors.extend(e for e in session.errors if e not in self.ctx.page_errors)
        try:
            if not session.broken:
                path, rel = self.ctx.evidence_path("explore.png")
                path.write_bytes(await session.screenshot())
                self.shot = Evidence(kind="file", label="the page at the end of the exploration", path=rel)
        except Exception:  # noqa: BLE001 - evidence is best effort
            pass
        try:
            await session.close()
        except Exception:  # noqa: BLE001
            pass

    def unusable(self, check_id: str) -> CheckResult | None:
        """The result for a check that cannot use the map (no task can be added, the page broke)."""
        if not self.outcome:
            return None
        if self.outcome == "absent" and check_id in {"escaping", "empty-input"}:
            return CheckResult(id=check_id, status="skip", detail=f"not tried: {self.why}")
        status = {"absent": "fail", "broken": "fail"}.get(self.outcome, "error")
        detail = self.why if check_id == "add" or self.outcome != "absent" else (
            f"no task can be added (see the add check), so this could not be used: {self.why}")
        return CheckResult(id=check_id, status=status, detail=detail)  # type: ignore[arg-type]


def _from_map(ex: Exploration, check_id: str, judge: Callable[[TodoMap], CheckResult]) -> CheckResult:
    """A check judged from the exploration's effect table (no page of its own)."""
    gap = ex.unusable(check_id)
    if gap is not None and not (check_id == "add" and ex.todo.add_paths):
        result = gap
    else:
        try:
            result = judge(ex.todo)
        except CheckError as exc:
            result = CheckResult(id=check_id, status="error", detail=str(exc))
        if ex.outcome and result.status == "pass" and check_id != "add":
            result = CheckResult(id=check_id, status="fail" if ex.outcome == "broken" else "error",
                                 detail=f"{ex.why} (before: {result.detail})", evidence=result.evidence)
    if result.status == "fail" and ex.shot is not None:
        result.evidence.append(ex.shot)
    if ex.replayed:
        result.data["replayed"] = ex.replayed
    result.duration_s = round(ex.duration_s, 3)
    return result


async def _judged(ex: Exploration, check_id: str, judge: Callable[[TodoMap], CheckResult]) -> CheckResult:
    await asyncio.shield(ex.full)
    return _from_map(ex, check_id, judge)


async def _replayed(ctx: ProbeContext, ex: Exploration, check_id: str, body: Any) -> CheckResult:
    """A check using the add paths the exploration found on a pristine page of its own (it starts as
    soon as they are known, while the exploration goes on)."""
    todo = await asyncio.shield(ex.adds)
    gap = ex.unusable(check_id)
    if gap is not None and not todo.add_paths:
        return gap

    async def run(s: PageSession) -> CheckResult:
        await settle(s, START_S)
        return await body(s, TodoApp(s, todo))

    return await run_check(ctx, check_id, run)


async def _escaping(ctx: ProbeContext, ex: Exploration) -> CheckResult:
    """``escaping`` on a fresh task, then (once the exploration has found how) on the markup task
    marked done and under each filter, on a pristine page of its own: one verdict."""
    first = await _replayed(ctx, ex, "escaping", check_escaping)
    if first.status != "pass":
        return first
    todo = await asyncio.shield(ex.full)
    if todo.marks_done is None:
        return first

    async def run(s: PageSession) -> CheckResult:
        await settle(s, START_S)
        return await check_escaping_filtered(s, TodoApp(s, todo))

    more = await run_check(ctx, "escaping", run)
    first.evidence += more.evidence
    first.duration_s = round(first.duration_s + more.duration_s, 3)
    if more.status == "fail":
        return CheckResult(id="escaping", status="fail", detail=more.detail, evidence=first.evidence,
                           data={**first.data, **more.data}, duration_s=first.duration_s)
    if more.status == "pass":
        first.detail += "; also once marked done, under each filter"
    else:
        first.detail += f" (marked done and filtered: not judged, {more.detail})"
    return first


async def probe_todo(ctx: ProbeContext, only: Iterable[str] | None = None) -> list[CheckResult]:
    """Use the to-do app like a person; one result per check id.

    `only` limits the run to some check ids (tests of a fixture built to break one check).
    """
    wanted = set(CHECK_IDS if only is None else only)
    ex = Exploration(ctx)
    jobs: dict[str, Any] = {
        "add": _judged(ex, "add", judge_add),
        "complete": _judged(ex, "complete", judge_complete),
        "delete": _judged(ex, "delete", judge_delete),
        "filter": _judged(ex, "filter", judge_filter),
        "persistence": _judged(ex, "persistence", judge_persistence),
        "escaping": _escaping(ctx, ex),
        "empty-input": _replayed(ctx, ex, "empty-input", check_empty),
    }
    try:
        order = [c for c in CHECK_IDS if c in wanted]
        for c in CHECK_IDS:
            if c not in wanted:
                jobs[c].close()
        results = await asyncio.gather(*(jobs[c] for c in order))
        return list(results)
    finally:
        if not ex.task.done():
            ex.task.cancel()
        await asyncio.gather(ex.task, return_exceptions=True)

