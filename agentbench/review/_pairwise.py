"""Pairwise reviews: which of two models' artefacts of one task is better, asked in both orders.

Reviewers favour a position (often the first shown). Each pair is therefore asked twice with the
artefacts swapped; only an answer that names the same model both times counts as a win. An
answer that flips with the order is recorded as a tie *and* counted as position bias; a model in
one order and "tie" in the other is a tie marked inconsistent. Model names are never shown to
the reviewer, only "A" and "B". Stored in ``<run>/pairwise-<task>-<reviewer>.json``.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field

from ..checks._checklist import checklist_path, load_checklist
from ..config import ModelConfig
from ..errors import StoreError
from ..models import ChatClient
from ..store import AttemptResult, load_manifest, load_result, utcnow, write_json
from ..store import attempt_dir as cell_dir
from ..tasks import Task, load_task
from ._prompt import (
    ImageRef,
    PairwiseAnswer,
    Rubric,
    build_messages,
    collect_images,
    collect_sources,
    load_rubric,
    probe_lines,
    render,
)
from ._review import (
    ReviewError,
    ReviewOptions,
    ReviewUsage,
    _client,
    _slug,
    _usable,
    ask_json,
    reviewable,
    same_model,
)

__all__ = ["Comparison", "PairwiseAsk", "PairwiseRecord", "decide", "pairwise_file", "pairwise_task"]

log = structlog.get_logger()


class PairwiseAsk(BaseModel):
    """One question: the artefacts in one order."""

    model_config = ConfigDict(extra="forbid")

    order: list[str]  # model names shown as [A, B]
    status: Literal["ok", "reviewer-error"]
    winner_raw: Literal["A", "B", "tie"] | None = None  # what the reviewer answered
    winner: str | None = None  # the model that answer names, or "tie"
    reason: str | None = None
    error: ReviewError | None = None
    raw_answers: list[str] = Field(default_factory=list)  # kept when no answer could be used
    reasks: int = 0
    usage: ReviewUsage = Field(default_factory=ReviewUsage)
    wall_s: float = 0.0


class Comparison(BaseModel):
    """Two attempts (the same repeat of two models) compared in both orders."""

    model_config = ConfigDict(extra="forbid")

    repeat: int
    models: list[str]  # [first model, second model] as the first ask showed them
    asks: list[PairwiseAsk]
    status: Literal["ok", "reviewer-error"]
    winner: str | None = None  # a model, "tie", or None when an ask failed
    position_bias: bool = False  # the answer followed the position, not the artefact
    inconsistent: bool = False  # a model in one order, "tie" in the other


class PairwiseRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    run_id: str
    task: str
    reviewer: str
    reviewer_model: str
    blind: bool
    vision: bool
    comparisons: list[Comparison] = Field(default_factory=list)
    wins: dict[str, int] = Field(default_factory=dict)
    ties: int = 0
    position_bias: int = 0  # comparisons whose answer flipped with the order
    errors: int = 0
    usage: ReviewUsage = Field(default_factory=ReviewUsage)
    cost_usd: float = 0.0
    wall_s: float = 0.0
    same_model_warning: list[str] = Field(default_factory=list)  # compared models the reviewer is
    reviewed_at: str = Field(default_factory=utcnow)


def decide(first: str | None, second: str | None) -> tuple[str | None, bool, bool]:
    """(winner, position_bias, inconsistent) from the two asks' answers (model names or "tie")."""
    if first is None or second is None:
        return None, False, False
    if first == second:
        return first, False, False
    if "tie" in (first, second):
        return "tie", False, True
    return "tie", True, False


def pairwise_file(run_dir: Path, task: str, reviewer: str, *, blind: bool = False) -> Path:
    return run_dir / f"pairwise-{_slug(task)}-{_slug(reviewer)}{'-blind' if blind else ''}.json"


def _side(label: str, adir: Path, result: AttemptResult, task: Task, blind: bool, opts: ReviewOptions,
          per_side_images: int) -> tuple[dict[str, Any], list[ImageRef]]:
    artefact = adir / (result.artefact_path or "artefact")
    # Each side gets half the source budget, so one long artefact cannot crowd out the other.
    files = collect_sources(artefact, task.entry, opts.max_source_chars // 2)
    images = [ImageRef(caption=f"artefact {label}, {img.caption}", path=img.path)
              for img in collect_images(adir, result, per_side_images)]
    return {"label": label, "files": files, "checks": [] if blind else probe_lines(result)}, images


async def _ask(client: ChatClient, reviewer: ModelConfig, order: list[tuple[str, Path, AttemptResult]],
               task: Task, rubric: Rubric, blind: bool, opts: ReviewOptions) -> PairwiseAsk:
    sides, images = [], []
    for label, (_, adir, result) in zip("AB", order, strict=True):
        side, imgs = _side(label, adir, result, task, blind, opts, max(1, opts.max_images // 2))
        sides.append(side)
        images += imgs
    shown = images if reviewer.vision else []
    prompt = render("pairwise.md.j2", {"task_id": task.id, "task_prompt": task.prompt, "criteria": rubric.criteria,
                                       "sides": sides, "images": shown})
    ex = await ask_json(client, build_messages(prompt, shown, vision=reviewer.vision), PairwiseAnswer,
                        max_reasks=opts.max_reasks, max_tokens=opts.max_tokens)
    names = [model for model, _, _ in order]
    ask = PairwiseAsk(order=names, status="ok" if ex.answer is not None else "reviewer-error", error=ex.error,
                      reasks=ex.reasks, usage=ex.usage, wall_s=ex.wall_s)
    if isinstance(ex.answer, PairwiseAnswer):
        ask.winner_raw = ex.answer.winner
        ask.winner = {"A": names[0], "B": names[1]}.get(ex.answer.winner, "tie")
        ask.reason = " ".join(ex.answer.reason.split())[:600]
    else:
        ask.raw_answers = ex.raw
    return ask


async def pairwise_task(
    run_dir: Path, task_id: str, reviewer: ModelConfig, *, models: list[str] | None = None, blind: bool = False,
    options: ReviewOptions | None = None, client: ChatClient | None = None,
) -> tuple[Path, PairwiseRecord]:
    """Compare every pair of ``models`` (default: all with an artefact) repeat by repeat, in both orders.

    Raises StoreError when fewer than two models have a reviewable artefact of the task.
    """
    _usable(reviewer)
    opts = options or ReviewOptions()
    manifest = load_manifest(run_dir)
    if task_id not in manifest.tasks:
        raise StoreError(f"Run {manifest.run_id} has no task '{task_id}'; it has {', '.join(manifest.tasks)}.")
    task = load_task(task_id)
    checklist = load_checklist(task_id, task=task) if checklist_path(task_id).is_file() else None
    rubric = load_rubric(task_id, checklist=checklist)
    attempts: dict[str, dict[int, tuple[Path, AttemptResult]]] = {}
    bare: dict[str, str] = {}  # lane -> its model's name (for its config)
    for cell in manifest.cells:
        if cell.task != task_id or not cell.named_by(models):
            continue
        adir = cell_dir(run_dir, cell)
        result = load_result(adir / "result.json")
        if reviewable(adir, result, task) is None and result is not None:
            # Lanes, not models: the same model under two agents is two contestants.
            attempts.setdefault(cell.lane, {})[cell.repeat] = (adir, result)
            bare[cell.lane] = cell.model
    asked = models or []  # names given in this order are compared in it

    def rank(lane_name: str) -> int:
        return next((i for i, m in enumerate(asked) if m in (lane_name, bare[lane_name])), len(asked))

    names = sorted(attempts, key=rank)
    if len(names) < 2:
        raise StoreError(f"Pairwise review of '{task_id}' needs artefacts of two models in run {manifest.run_id}; "
                         f"found {names or 'none'}. Pick models with --models A,B.")
    record = PairwiseRecord(run_id=manifest.run_id, task=task_id, reviewer=reviewer.name,
                            reviewer_model=reviewer.model, blind=blind, vision=reviewer.vision,
                            wins={m: 0 for m in names})
    record.same_model_warning = [m for m in names if same_model(reviewer, bare[m], manifest.models.get(bare[m]))]
    for m in record.same_model_warning:
        log.warning("review.same_model", reviewer=reviewer.name, artefact_model=m, task=task_id)
    started = time.monotonic()
    async with _client(reviewer, client) as c:
        for m1, m2 in itertools.combinations(names, 2):
            for rep in sorted(set(attempts[m1]) & set(attempts[m2])):
                one, two = (m1, *attempts[m1][rep]), (m2, *attempts[m2][rep])
                asks = [await _ask(c, reviewer, [one, two], task, rubric, blind, opts),
                        await _ask(c, reviewer, [two, one], task, rubric, blind, opts)]
                winner, bias, inconsistent = decide(asks[0].winner, asks[1].winner)
                ok = all(a.status == "ok" for a in asks)
                record.comparisons.append(Comparison(
                    repeat=rep, models=[m1, m2], asks=asks, status="ok" if ok else "reviewer-error",
                    winner=winner, position_bias=bias, inconsistent=inconsistent,
                ))
    for comp in record.comparisons:
        for a in comp.asks:
            for k in ("requests", "prompt_tokens", "completion_tokens", "reasoning_tokens"):
                setattr(record.usage, k, getattr(record.usage, k) + getattr(a.usage, k))
        if comp.status != "ok":
            record.errors += 1
        elif comp.winner == "tie":
            record.ties += 1
        elif comp.winner is not None:
            record.wins[comp.winner] += 1
        record.position_bias += comp.position_bias
    record.cost_usd = round(reviewer.cost(record.usage.prompt_tokens, record.usage.completion_tokens), 6)
    record.wall_s = round(time.monotonic() - started, 3)
    path = pairwise_file(run_dir, task_id, reviewer.name, blind=blind)
    write_json(path, record)
    log.info("review.pairwise_stored", task=task_id, comparisons=len(record.comparisons), wins=record.wins,
             ties=record.ties, position_bias=record.position_bias, path=str(path))
    return path, record
