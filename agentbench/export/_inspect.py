"""A stored run as Inspect eval logs: one ``.eval`` file per task x lane, written with Inspect's API.

Mapping (what ``inspect view`` and ``inspect_ai.analysis`` then show):

- the log: task ``agentbench/<task>``, model ``openai-api/<model name>/<api model id>``, solver the
  agent; epochs = the run's repeats.
- one sample per attempt: id = the task, epoch = the repeat; input = the prompt the agent got;
  messages = the transcript (system, user, assistant with reasoning and tool calls, tool results);
  model usage; total time = the attempt's wall time.
- scores: ``verdict`` first (C pass, I fail; explanation: the failing checks), then every check by
  its id (C pass, I fail, N when the harness could not decide or the check did not apply; the
  explanation is our detail, the status, data and evidence are in the score's metadata).
- metadata: outcome, verdict, score, the artefact's path, the lane and agent, speed, limits.
- infra errors are errored samples (no scores); a budget hit is the sample's limit.

Metrics are our own numbers: the verdict's pass rate with its Wilson 95% interval, infra errors
left out, and each check's rate over the attempts where it decided pass or fail.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage
from inspect_ai.scorer import Score

from .. import __version__
from .._files import read_bytes
from ..errors import AgentbenchError, StoreError
from ..stats import wilson
from ..store import AttemptResult, CellRef, RunManifest, attempt_dir, load_manifest, load_result
from ._messages import first_prompt, to_messages

__all__ = ["inspect_log_name", "write_inspect_logs"]

STATUS_VALUE = {"pass": "C", "fail": "I", "error": "N", "skip": "N"}
BUDGET_LIMIT = {"max_turns": ("turn", "max_turns"), "max_tokens": ("token", "max_tokens"),
                "wall": ("time", "wall_s"), "length": ("token", "max_tokens_per_request")}
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


def _model_string(manifest: RunManifest, name: str) -> tuple[str, str | None]:
    """Inspect's ``provider/model`` for one of our models: ``openai-api/<name>/<api model id>``."""
    cfg = manifest.models.get(name) or {}
    return f"openai-api/{name}/{cfg.get('model') or name}", cfg.get("base_url") or None


def _records(run_dir: Path, cell: CellRef) -> list[dict[str, Any]]:
    """The attempt's transcript records (none when missing, a link or unreadable: it is data, not trusted)."""
    import json

    rel = f"{attempt_dir(run_dir, cell).relative_to(run_dir).as_posix()}/transcript.jsonl"
    try:
        raw = read_bytes(run_dir, rel, max_bytes=MAX_TRANSCRIPT_BYTES)
    except (AgentbenchError, OSError, ValueError):
        return []
    out = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a torn last line after a crash
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _check_scores(r: AttemptResult) -> dict[str, Score]:
    failing = [c.id for c in r.checks if c.status == "fail"]
    undecided = [c.id for c in r.checks if c.status == "error"]
    why = (f"failing: {', '.join(failing)}" if failing else "every check passed" if r.verdict == "pass"
           else f"no artefact ({r.outcome})" if not r.checks else "no check failed")
    if undecided:
        why += f"; undecided: {', '.join(undecided)}"
    scores = {"verdict": Score(value=STATUS_VALUE.get(r.verdict or "fail", "I"), answer=r.outcome, explanation=why,
                               metadata={"score": r.score, "outcome": r.outcome, "failing": failing,
                                         "undecided": undecided})}
    for c in r.checks:
        scores[c.id] = Score(value=STATUS_VALUE[c.status], explanation=c.detail,
                             metadata={"status": c.status, "data": c.data, "duration_s": c.duration_s,
                                       "evidence": [e.model_dump(mode="json") for e in c.evidence]})
    return scores


def _limit(r: AttemptResult) -> EvalSampleLimit | None:
    if r.outcome != "budget" and not r.agent.budget_hit:
        return None
    kind, key = BUDGET_LIMIT.get(r.agent.budget_hit or "", ("custom", ""))
    value = r.limits.get(key)
    return EvalSampleLimit(type=kind, limit=float(value) if isinstance(value, (int, float)) else 0.0,
                           reason=f"budget hit: {r.agent.budget_hit or 'unknown cap'}")


def _sample(run_dir: Path, cell: CellRef, r: AttemptResult | None, load_error: str | None, model: str,
            prompt: str) -> EvalSample:
    adir = attempt_dir(run_dir, cell)
    records = _records(run_dir, cell)
    messages = to_messages(records, model)
    last = next((m for m in reversed(messages) if isinstance(m, ChatMessageAssistant)), None)
    output = ModelOutput.from_message(last, stop_reason="stop") if last is not None else ModelOutput(model=model)
    key = f"{run_dir.name}/{cell.key}"
    common: dict[str, Any] = dict(
        id=cell.task, epoch=cell.repeat, input=first_prompt(records) or prompt, target="", messages=messages,
        output=output, uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"agentbench:{key}")),
    )
    if r is None:  # result.json unreadable: we cannot tell what happened
        return EvalSample(**common, metadata={"attempt_dir": str(adir), "lane": cell.lane, "agent": cell.agent},
                          error=EvalError(message=f"unreadable result: {load_error}", traceback="", traceback_ansi=""))
    artefact = adir / (r.artefact_path or "artefact") if r.artefact_path else None
    metadata = {
        "outcome": r.outcome, "verdict": r.verdict, "score": r.score, "lane": cell.lane, "agent": r.agent.agent,
        "run_id": r.run_id, "repeat": r.repeat,
        "artefact_path": str(artefact.resolve()) if artefact is not None else None,
        "artefact_path_in_run": artefact.relative_to(run_dir).as_posix() if artefact is not None else None,
        "attempt_dir": str(adir.resolve()), "wall_s": r.wall_s, "checks_s": r.checks_s, "harness_s": r.harness_s,
        "cost_usd": r.cost_usd, "engine": r.engine, "agent_summary": r.agent.model_dump(mode="json"),
        "speed": r.speed.model_dump(mode="json"), "limits": r.limits, "checklist_summary": r.checklist_summary,
    }
    s = r.speed
    usage = {model: ModelUsage(input_tokens=s.prompt_tokens, output_tokens=s.completion_tokens,
                               total_tokens=s.prompt_tokens + s.completion_tokens,
                               reasoning_tokens=s.reasoning_tokens or None)} if s.requests else {}
    error = None
    if r.outcome == "infra-error":
        e = r.error
        message = f"infra error ({e.kind}): {e.message}" if e else "infra error"
        error = EvalError(message=message, traceback=(e.body or "") if e else "", traceback_ansi="")
    return EvalSample(**common, metadata=metadata, model_usage=usage, total_time=r.wall_s,
                      started_at=r.started_at, completed_at=r.finished_at or r.started_at,
                      scores=None if error else _check_scores(r), error=error, limit=_limit(r))


def _metric_scores(results: list[AttemptResult]) -> list[EvalScore]:
    counted = [r for r in results if r.outcome != "infra-error"]

    def score(name: str, decided: list[bool], extra: dict[str, Any]) -> EvalScore:
        passed, n = sum(decided), len(decided)
        lo, hi = wilson(passed, n)
        metrics = {"accuracy": EvalMetric(name="accuracy", value=passed / n if n else 0.0),
                   "ci_low": EvalMetric(name="ci_low", value=lo), "ci_high": EvalMetric(name="ci_high", value=hi)}
        return EvalScore(name=name, scorer=name, scored_samples=n, unscored_samples=len(results) - n,
                         metrics=metrics, metadata={"passed": passed, **extra})

    out = [score("verdict", [r.verdict == "pass" for r in counted],
                 {"infra_errors": len(results) - len(counted),
                  "budget_hits": sum(1 for r in counted if r.outcome == "budget"),
                  "no_artefact": sum(1 for r in counted if r.outcome == "no-artefact")})]
    ids = list(dict.fromkeys(c.id for r in counted for c in r.checks))
    for cid in ids:
        statuses = [c.status for r in counted for c in r.checks if c.id == cid]
        out.append(score(cid, [s == "pass" for s in statuses if s in ("pass", "fail")],
                         {"undecided": statuses.count("error")}))
    return out


def _write_atomically(log: EvalLog, path: Path) -> Path:
    """Inspect writes the file; it lands under its name only whole (a reader never sees half a log)."""
    import os
    import secrets

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp.eval")
    try:
        write_eval_log(log, str(tmp), format="eval")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _ids(manifest: RunManifest, task: str, lane: str) -> tuple[str, str]:
    """(eval id, short task id): stable, so exporting again replaces the same files."""
    full = uuid.uuid5(uuid.NAMESPACE_URL, f"agentbench:{manifest.run_id}/{task}/{lane}")
    return str(full), full.hex[:22]


def inspect_log_name(manifest: RunManifest, task: str, lane: str) -> str:
    """``<created>_<task>_<lane>_<id>.eval``: Inspect's ``{timestamp}_{task}_{model}_{id}`` pattern,
    which its listing parses (so ``_`` in a lane becomes ``-`` here, and the id has no ``-``)."""
    created = manifest.created_at.replace(":", "-")
    return f"{created}_{task}_{lane.replace('_', '-')}_{_ids(manifest, task, lane)[1]}.eval"


def write_inspect_logs(run_dir: Path, out_dir: Path | None = None) -> list[Path]:
    """Write one Inspect log per task x lane of the run under out_dir (default ``<run>/inspect``)."""
    from ..errors import TaskError
    from ..tasks import load_task

    manifest = load_manifest(run_dir)
    out_dir = out_dir or run_dir / "inspect"
    groups: dict[tuple[str, str], list[CellRef]] = defaultdict(list)
    for cell in manifest.cells:
        groups[(cell.task, cell.lane)].append(cell)
    written = []
    for (task, lane), cells in groups.items():
        try:
            t = load_task(task)
            prompt, title = t.prompt, t.title
        except TaskError:
            prompt, title = "", task
        model, base_url = _model_string(manifest, cells[0].model)
        samples, results, pending = [], [], 0
        for cell in sorted(cells, key=lambda c: c.repeat):
            try:
                r, problem = load_result(attempt_dir(run_dir, cell) / "result.json"), None
            except StoreError as exc:
                r, problem = None, str(exc)
            if r is None and problem is None:
                pending += 1  # not run yet: not a sample (the log says it is unfinished)
                continue
            samples.append(_sample(run_dir, cell, r, problem, model, prompt))
            if r is not None:
                results.append(r)
        usage = ModelUsage()
        for s in samples:
            for u in s.model_usage.values():
                usage = usage + u
        started = [r.started_at for r in results]
        finished = [r.finished_at for r in results if r.finished_at]
        eval_id, task_id = _ids(manifest, task, lane)
        log = EvalLog(
            status="started" if pending else "success",
            eval=EvalSpec(
                eval_id=eval_id, run_id=manifest.run_id, created=manifest.created_at, task=f"agentbench/{task}",
                task_id=task_id,
                task_display_name=title, solver=f"agentbench/{cells[0].agent}",
                dataset=EvalDataset(name=task, samples=1, sample_ids=[task]), model=model, model_base_url=base_url,
                config=EvalConfig(epochs=manifest.repeats), packages={"agentbench": __version__},
                metadata={"agentbench_run": manifest.run_id, "lane": lane, "agent": cells[0].agent,
                          "run_dir": str(run_dir.resolve()), "pending_attempts": pending},
            ),
            results=EvalResults(total_samples=len(samples),
                                completed_samples=sum(1 for s in samples if s.error is None),
                                scores=_metric_scores(results)),
            stats=EvalStats(started_at=min(started) if started else "", completed_at=max(finished) if finished else "",
                            model_usage={model: usage} if usage.total_tokens else {}),
            samples=samples,
        )
        written.append(_write_atomically(log, out_dir / inspect_log_name(manifest, task, lane)))
    return written
