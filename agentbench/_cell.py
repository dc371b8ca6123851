"""One cell of a run: sandbox -> agent -> collect -> checks -> result.json, and its infra-error result.

``runner.run`` plans the matrix and places each cell on an engine; this module runs one cell there.
A failure inside the cell is its outcome (:func:`run_cell` catches everything), never the run's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from pathlib import Path
from typing import Any

import structlog

from .config import ModelConfig, resolve_api_key
from .errors import AgentbenchError, ModelError, ModelHTTPError, SandboxError
from .store import AgentSummary, AttemptResult, CellRef, InfraError, SpeedStats, attempt_dir, utcnow, write_json
from .tasks import Task

__all__ = ["drain_closes", "infra_result", "run_cell"]

log = structlog.get_logger()


def _speed(outcome_requests: list[Any], usage: Any) -> SpeedStats:
    stats = SpeedStats(requests=len(outcome_requests))
    if usage is not None:
        stats.prompt_tokens = usage.prompt_tokens
        stats.completion_tokens = usage.completion_tokens
        stats.reasoning_tokens = usage.reasoning_tokens
    stats.model_wall_s = round(sum(r.wall_s for r in outcome_requests), 3)
    ttfts = [r.ttft_s for r in outcome_requests if r.ttft_s is not None]
    stats.mean_ttft_s = round(sum(ttfts) / len(ttfts), 3) if ttfts else None
    decode_time = sum(r.wall_s - (r.ttft_s or 0.0) for r in outcome_requests)
    if stats.completion_tokens and decode_time > 0:
        stats.decode_tok_s = round(stats.completion_tokens / decode_time, 1)
    stats.retries = sum(max(0, r.attempts - 1) for r in outcome_requests)
    return stats


async def run_cell(
    cell: CellRef,
    model: ModelConfig,
    task: Task,
    run_id: str,
    run_dir: Path,
    *,
    base_url: str | None = None,
    max_tokens: int | None = None,
    checks: bool = True,
    engine: Any | None = None,
) -> AttemptResult:
    """One attempt: sandbox -> agent -> collect -> checks -> result.json (written last, atomically)."""
    from .agents import AgentLimits, Transcript
    from .checks._run import run_checks
    from .models import ChatClient

    adir = _fresh_attempt_dir(run_dir, cell)
    limits = AgentLimits(
        max_turns=task.limits.max_turns, max_tokens=task.limits.max_tokens, wall_s=task.limits.wall_s
    )
    result = AttemptResult(
        run_id=run_id, task=task.id, model=model.name, repeat=cell.repeat, outcome="infra-error",
        limits=_recorded_limits(task, model, max_tokens), engine=engine.name if engine is not None else None,
        agent=AgentSummary(agent=cell.agent),
    )
    started = time.monotonic()
    model_s = checks_s = 0.0
    outcome = None
    sandbox = None
    copy_error: Exception | None = None
    try:
        api_key = resolve_api_key(model)
        labels = {"agentbench.run": run_id, "agentbench.cell": cell.key}
        agent, sandbox = _agent_and_sandbox(cell, model, api_key=api_key, base_url=base_url, adir=adir,
                                            labels=labels)
        transcript = Transcript(adir / "transcript.jsonl")
        async with ChatClient(model, api_key=api_key, base_url=base_url) as client:
            try:
                outcome = await agent.run(
                    prompt=task.prompt, sandbox=sandbox, client=client, limits=limits, entry=task.entry,
                    transcript=transcript, max_tokens_per_request=max_tokens,
                )
            finally:
                try:
                    await sandbox.copy_out(adir / "artefact")
                except Exception as exc:  # noqa: BLE001 - the agent's own error, if any, is the one to report
                    copy_error = exc
                # The agent's container is done with: checks get fresh ones, so nothing the agent
                # left behind (a wrapper on PATH, a background process) can sway a verdict.
                _close_later(sandbox)
                sandbox = None
        ended = outcome is not None and outcome.stop_reason == "sandbox-ended"
        if isinstance(copy_error, SandboxError) and not ended:  # an artefact left in the sandbox is not
            raise copy_error  # "no artefact"; one the agent's commands destroyed with its sandbox is
        result.artefact_path = "artefact"
        result.agent = AgentSummary(
            agent=cell.agent, status=outcome.status, stop_reason=outcome.stop_reason,
            budget_hit=outcome.budget_hit, turns=outcome.turns, tool_calls=outcome.tool_calls,
            tool_errors=outcome.tool_errors, text_tool_calls=outcome.text_tool_calls, summary=outcome.summary,
            detail=outcome.detail,
        )
        result.speed = _speed(outcome.requests, outcome.usage)
        model_s = result.speed.model_wall_s
        result.cost_usd = round(model.cost(result.speed.prompt_tokens, result.speed.completion_tokens), 6)
        result.outcome = {"finished": "scored", "no-artefact": "no-artefact", "budget": "budget"}[outcome.status]
        entry_exists = (adir / "artefact" / task.entry).is_file()
        if not entry_exists and result.outcome == "scored":
            result.outcome = "no-artefact"  # the agent said it finished, but the entry file is not there
        if entry_exists and checks:  # budget-hit attempts with an artefact are still checked, and flagged
            async with engine.check_slot() if engine is not None else contextlib.nullcontext():
                t0 = time.monotonic()
                report = await run_checks(task, adir / "artefact", adir)
                checks_s = time.monotonic() - t0
            result.checks, result.verdict, result.score = report.checks, report.verdict, report.score
            result.checklist, result.checklist_summary = report.checklist_json()
    except ModelError as exc:
        status = exc.status if isinstance(exc, ModelHTTPError) else None
        body = exc.body if isinstance(exc, ModelHTTPError) else None
        result.error = InfraError(kind="model-endpoint", message=str(exc), status=status, body=body)
        log.warning("cell.infra_error", cell=cell.key, error=str(exc))
    except SandboxError as exc:
        result.error = InfraError(kind="sandbox", message=str(exc))
        log.warning("cell.infra_error", cell=cell.key, error=str(exc))
    except AgentbenchError as exc:
        result.error = InfraError(kind="config", message=str(exc))
    except Exception as exc:  # noqa: BLE001 - one cell's crash must not abort the run
        result.error = InfraError(kind="internal", message=f"{type(exc).__name__}: {exc}")
        log.exception("cell.crash", cell=cell.key)
    finally:
        if sandbox is not None:
            with contextlib.suppress(Exception):
                await sandbox.close()
    if result.error is not None:
        result.outcome = "infra-error"
        result.verdict = None
        result.score = None
    result.wall_s = round(time.monotonic() - started, 3)
    result.checks_s = round(checks_s, 3)
    result.harness_s = round(max(0.0, result.wall_s - model_s - checks_s), 3)
    result.finished_at = utcnow()
    write_json(adir / "result.json", result)
    return result


def _agent_and_sandbox(cell: CellRef, model: ModelConfig, *, api_key: str | None, base_url: str | None,
                       adir: Path, labels: dict[str, str]) -> tuple[Any, Any]:
    """The cell's agent and the sandbox it works in (copied out and closed by run_cell alike).

    The builtin tool loop gets a plain web sandbox; an external agent (opencode, aider, crush)
    brings its own, made from its image with the model gateway mounted (agents/_external.py).
    """
    from .agents import BuiltinAgent, ExternalSession, get_agent
    from .sandbox import DockerSandbox, LazySandbox

    if cell.agent == "builtin":
        return BuiltinAgent(), LazySandbox(lambda: DockerSandbox.create(labels=labels))
    session = ExternalSession(get_agent(cell.agent), model=model, api_key=api_key, adir=adir, base_url=base_url,
                              labels=labels)
    return session, session.sandbox


_CLOSING: set[asyncio.Task[None]] = set()


def _close_later(sandbox: Any) -> None:
    """Remove a finished sandbox off the critical path; ``drain_closes`` awaits them all."""

    async def close() -> None:
        with contextlib.suppress(Exception):
            await sandbox.close()

    task = asyncio.ensure_future(close())
    _CLOSING.add(task)
    task.add_done_callback(_CLOSING.discard)


async def drain_closes() -> None:
    while _CLOSING:
        await asyncio.gather(*list(_CLOSING), return_exceptions=True)


def _fresh_attempt_dir(run_dir: Path, cell: CellRef) -> Path:
    """The attempt folder, emptied: a half-done attempt from a crash starts afresh."""
    adir = attempt_dir(run_dir, cell)
    if adir.exists():
        shutil.rmtree(adir)
    adir.mkdir(parents=True)
    return adir


def _recorded_limits(task: Task, model: ModelConfig, max_tokens: int | None) -> dict[str, Any]:
    return {**task.limits.model_dump(), "max_tokens_per_request": max_tokens or model.max_tokens}


def infra_result(run_id: str, run_dir: Path, cell: CellRef, task: Task, model: ModelConfig,
                  max_tokens: int | None, error: InfraError) -> AttemptResult:
    result = AttemptResult(
        run_id=run_id, task=task.id, model=cell.model, repeat=cell.repeat, outcome="infra-error", error=error,
        limits=_recorded_limits(task, model, max_tokens), finished_at=utcnow(), agent=AgentSummary(agent=cell.agent),
    )
    write_json(_fresh_attempt_dir(run_dir, cell) / "result.json", result)
    return result
