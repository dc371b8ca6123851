"""Run every check of a task on one artefact and turn the results into a verdict."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import structlog

from ..errors import AgentbenchError
from ..tasks import Task
from ._checker import CheckerCrashed, host_browser_opted_in, host_chromium
from ._checker_pool import shared_checker
from ._checklist import ChecklistResult, checklist_path, evaluate_checklist, load_checklist
from ._model import CheckResult
from ._tasks import probe_module

__all__ = ["CheckReport", "batch_limit", "browser_checks", "check_batch", "rests_on_errors", "run_checks",
           "verdict_of"]

log = structlog.get_logger()
T = TypeVar("T")
R = TypeVar("R")


class CheckReport:
    """The checks of one artefact with its verdict: pass only when every check passes."""

    def __init__(self, task: str, checks: list[CheckResult], duration_s: float,
                 checklist: ChecklistResult | None = None):
        self.task = task
        self.checks = checks
        self.duration_s = duration_s
        self.checklist = checklist  # items decided from these checks (None: the task has no checklist)
        self.verdict, self.score = verdict_of(checks)

    @property
    def harness_errors(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "error"]

    @property
    def rests_on_errors(self) -> bool:
        return rests_on_errors(self.checks)

    def checklist_json(self) -> tuple[list[dict], dict | None]:
        """(item dicts, summary) as stored in result.json: ``[]`` and None without a checklist."""
        if self.checklist is None:
            return [], None
        return self.checklist.items_json(), self.checklist.summary()

    def to_json(self) -> dict:
        items, summary = self.checklist_json()
        return {
            "task": self.task,
            "verdict": self.verdict,
            "score": self.score,
            "rests_on_errors": self.rests_on_errors,
            "checks": [c.model_dump(mode="json") for c in self.checks],
            "checklist": items,
            "checklist_summary": summary,
        }


def verdict_of(checks: list[CheckResult]) -> tuple[str, float]:
    """``pass`` only when every check passes (skips aside); score = passed / (decided + error) checks.

    A check in ``error`` (the harness could not decide) keeps the verdict from ``pass`` and counts
    as not passed in the score, so a failing verdict never scores 1.0; whether the verdict rests
    only on errors is told apart by :func:`rests_on_errors`.
    """
    counted = [c for c in checks if c.status in ("pass", "fail", "error")]
    passed = sum(1 for c in counted if c.status == "pass")
    score = passed / len(counted) if counted else 0.0
    decided = any(c.status in ("pass", "fail") for c in checks)
    ok = bool(checks) and all(c.status in ("pass", "skip") for c in checks) and decided
    return ("pass" if ok else "fail"), round(score, 4)


def rests_on_errors(checks: list[CheckResult]) -> bool:
    """True when the verdict is fail only because the harness could not tell (no check failed)."""
    return any(c.status == "error" for c in checks) and not any(c.status == "fail" for c in checks)


async def browser_checks(task_id: str, artefact_dir: Path, evidence_dir: Path, *,
                         entry: str = "index.html") -> list[CheckResult]:
    """The browser checks of one artefact: in the process's warm checker container by default.

    A checker that died under this artefact is replaced and the artefact tried once more; a second
    crash raises CheckerCrashed. With AGENTBENCH_HOST_BROWSER=1 (``--host-browser``) Chromium runs
    on the host instead, with a warning: the artefact's code is then not contained. The task's
    probe module is resolved here (``_tasks.probe_module``) and named to the browser engine.
    """
    probes = probe_module(task_id)
    if host_browser_opted_in():
        from .browser import run_browser_checks_async

        _warn_host_browser()
        return await run_browser_checks_async(task_id, artefact_dir, evidence_dir, entry=entry,
                                              chromium_path=host_chromium(), probes=probes)
    checker = shared_checker()
    try:
        return await checker.check(task_id, artefact_dir, evidence_dir, entry=entry, probes=probes)
    except CheckerCrashed as exc:
        log.warning("check.checker_crashed", task=task_id, error=str(exc))
        return await checker.check(task_id, artefact_dir, evidence_dir, entry=entry, probes=probes)


_warned: list[bool] = []


def _warn_host_browser() -> None:
    if not _warned:
        _warned.append(True)
        sys.stderr.write("warning: AGENTBENCH_HOST_BROWSER is set: Chromium runs ON THIS HOST with the "
                         "artefact's code, outside any container. Use it only for artefacts you trust.\n")


async def batch_limit(count: int) -> int:
    """How many of ``count`` artefacts to check at once: one per checker the pool may run.

    The pool is bounded by the engine's cores and memory (``_checker_pool.pool_size``). With
    ``--host-browser`` one at a time: nothing bounds the host's Chromiums but this.
    """
    if host_browser_opted_in() or count <= 1:
        return 1
    return min(count, await shared_checker().size())


async def check_batch(items: Sequence[T], check_one: Callable[[T], Awaitable[R]], limit: int) -> list[R]:
    """``check_one`` of every item, at most ``limit`` at once; each result in its item's place."""
    gate = asyncio.Semaphore(max(1, limit))

    async def one(item: T) -> R:
        async with gate:
            return await check_one(item)

    return list(await asyncio.gather(*(one(item) for item in items)))


def _order(task: Task, checks: list[CheckResult]) -> list[CheckResult]:
    rank = {cid: i for i, cid in enumerate(task.checks)}
    return sorted(checks, key=lambda c: rank.get(c.id, len(rank)))


async def run_checks(task: Task, artefact_dir: Path, attempt_dir: Path, *, sandbox=None) -> CheckReport:
    """Mechanical check in a sandbox, then the browser probes; evidence goes to attempt_dir/evidence."""
    from .static._syntax import check_syntax  # docker only when checks actually run

    started = time.monotonic()
    # Loaded before any check runs: a malformed checklist is an error now, not after the probes.
    checklist = load_checklist(task.id, task=task) if checklist_path(task.id).is_file() else None

    def report(results: list[CheckResult]) -> CheckReport:
        ordered = _order(task, results)
        items = None
        try:
            items = evaluate_checklist(checklist, artefact_dir, ordered, entry=task.entry) if checklist else None
        except Exception as exc:  # noqa: BLE001 - a checklist bug must not cost the check verdicts
            log.exception("checklist.error", task=task.id, error=repr(exc))
        return CheckReport(task.id, ordered, time.monotonic() - started, items)

    entry = artefact_dir / task.entry

    async def syntax() -> list[CheckResult]:
        try:
            return [await check_syntax(artefact_dir, sandbox, entry=task.entry)]
        except Exception as exc:  # a harness failure is recorded, never aborts the run
            log.warning("check.syntax.error", error=str(exc))
            return [CheckResult(id="syntax", status="error", detail=f"syntax check could not run: {exc}")]

    async def browser() -> list[CheckResult]:
        try:
            return await browser_checks(task.id, artefact_dir, attempt_dir / "evidence", entry=task.entry)
        except Exception as exc:  # noqa: BLE001 - recorded as harness errors, visible as such
            log.warning("check.browser.error", error=repr(exc))
            failed = "fail" if isinstance(exc, CheckerCrashed) and exc.out_of_memory else "error"
            detail = str(exc) if isinstance(exc, AgentbenchError) else f"browser harness failed: {exc!r}"
            return [CheckResult(id=cid, status=failed, detail=detail) for cid in task.checks if cid != "syntax"]

    if not entry.is_file():
        results = await syntax()
        for cid in task.checks:
            if cid != "syntax":
                results.append(CheckResult(id=cid, status="fail", detail=f"{task.entry} not found in the artefact"))
        return report(results)
    # Independent: the sandboxed syntax check runs while Chromium starts and the probes play.
    parsed, played = await asyncio.gather(syntax(), browser())
    results = parsed + played
    have = {c.id for c in results}
    for cid in task.checks:
        if cid not in have:
            results.append(CheckResult(id=cid, status="error", detail="no probe produced this check"))
    return report(results)
