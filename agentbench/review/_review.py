"""Review stored attempts with a second model; one ``review-<reviewer>.json`` per attempt.

A review never touches result.json: it reads the artefact, the evidence PNGs and the probe
results, asks the reviewer, and stores its answer, usage, cost and time beside result.json,
together with the task's checklist recomputed with the reviewer's answers for its
``reviewer = true`` items. Reviews can be rerun at any time without rerunning agents.

An answer that is not the JSON asked for gets a bounded re-ask quoting the validation error;
after that, and on any endpoint failure (ModelError), the review is stored with status
``reviewer-error`` and no score: a reviewer's failure is never recorded as a low mark.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field

from ..checks import Checklist, evaluate_checklist, load_checklist
from ..checks._checklist import checklist_path
from ..config import ModelConfig, load_models, resolve_api_key, resolve_model
from ..errors import ConfigError, ModelError, ModelHTTPError, StoreError
from ..models import ChatClient
from ..store import AttemptResult, lane, load_manifest, load_result, utcnow, write_json
from ..store import attempt_dir as cell_dir
from ..tasks import Task, load_task
from ._prompt import (
    AnswerInvalid,
    ReviewAnswer,
    Rubric,
    build_messages,
    collect_images,
    collect_sources,
    load_rubric,
    parse_answer,
    probe_lines,
    render,
)

__all__ = [
    "CriterionVerdict",
    "ReviewError",
    "ReviewOptions",
    "ReviewRecord",
    "ReviewRunSummary",
    "ReviewUsage",
    "ask_json",
    "resolve_reviewer",
    "review_attempt",
    "review_file",
    "review_run",
    "same_model",
]

log = structlog.get_logger()
REVIEW_SCHEMA_VERSION = 1


@dataclass
class ReviewOptions:
    """Knobs of one review pass; the defaults suit the four tasks' single-file artefacts."""

    max_reasks: int = 1  # re-asks after an invalid answer, then reviewer-error
    max_images: int = 6  # evidence PNGs sent to a vision reviewer (refresh-rate filmstrips first)
    max_source_chars: int = 60_000  # of artefact source in one prompt; the rest is cut, and said so
    max_tokens: int | None = None  # per request; None: the reviewer config's
    concurrency: int = 1  # attempts reviewed at once
    missing_only: bool = False  # skip attempts that already have an ok review by this reviewer


class ReviewUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0


class ReviewError(BaseModel):
    """Why a review has no score: ``infra`` (the endpoint failed) or ``invalid-answer``."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["infra", "invalid-answer"]
    message: str
    status: int | None = None


class CriterionVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    met: bool
    reason: str
    weight: float
    required: bool


class ReviewRecord(BaseModel):
    """review-<reviewer>.json: one reviewer's judgement of one attempt."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    schema_version: int = REVIEW_SCHEMA_VERSION
    run_id: str
    task: str
    repeat: int
    reviewer: str  # the reviewer's name in models.toml
    reviewer_model: str  # the model id it serves
    model_of_artefact: str
    agent_of_artefact: str = "builtin"  # the agent it worked under: the lane is model@agent unless builtin
    blind: bool  # True: the probe results were withheld
    vision: bool  # True: the evidence PNGs were sent as images
    status: Literal["ok", "reviewer-error"]
    criteria: list[CriterionVerdict] = Field(default_factory=list)
    score: float | None = None  # the reviewer's overall mark, 0..10
    weighted_score: float | None = None  # 0..10 from the criteria's weights: a check on `score`
    verdict: str | None = None  # one short sentence
    passed: bool | None = None  # every required criterion met; None without a usable answer
    error: ReviewError | None = None
    raw_answers: list[str] = Field(default_factory=list)  # kept when no answer could be used
    reasks: int = 0
    images: list[str] = Field(default_factory=list)  # evidence files sent as images, attempt-relative
    usage: ReviewUsage = Field(default_factory=ReviewUsage)
    cost_usd: float = 0.0
    wall_s: float = 0.0
    same_model_warning: bool = False  # the reviewer is the model that wrote the artefact
    checklist: list[dict[str, Any]] = Field(default_factory=list)  # recomputed with this review's answers
    checklist_summary: dict[str, Any] | None = None
    reviewed_at: str = Field(default_factory=utcnow)

    @property
    def lane(self) -> str:
        """The reviewed attempt's lane: its model, or ``model@agent`` under an external agent."""
        return lane(self.model_of_artefact, self.agent_of_artefact)


@dataclass
class ReviewRunSummary:
    run_id: str
    run_dir: Path
    reviewer: str
    reviews: list[tuple[Path, ReviewRecord]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "task/model/rK: why"

    @property
    def errors(self) -> list[ReviewRecord]:
        return [r for _, r in self.reviews if r.status != "ok"]


# -- the reviewer model ------------------------------------------------------------------------


def resolve_reviewer(name: str, models: dict[str, ModelConfig] | None = None) -> ModelConfig:
    """The reviewer's config by name; ConfigError for unknown names, demo models, unset keys."""
    cfg = resolve_model(name, models if models is not None else load_models())
    _usable(cfg)
    resolve_api_key(cfg)
    return cfg


def _usable(cfg: ModelConfig) -> None:
    if cfg.demo:
        raise ConfigError(f"'{cfg.name}' is a built-in demo model, which only replays agent sessions: demo models "
                          "cannot review; configure a model in models.toml and pass it with --reviewer.")


def same_model(reviewer: ModelConfig, artefact_model: str, artefact_config: dict[str, Any] | None) -> bool:
    """True when the reviewer is, by name or by served model id, the model that wrote the artefact."""
    if reviewer.name == artefact_model:
        return True
    served = (artefact_config or {}).get("model")
    return isinstance(served, str) and served.strip().lower() == reviewer.model.strip().lower()


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "reviewer"


def review_file(attempt_dir: Path, reviewer: str, *, blind: bool = False) -> Path:
    """``review-<reviewer>.json``; a blind review is ``review-<reviewer>-blind.json``, so it never
    overwrites an informed one and the two can be compared."""
    return attempt_dir / f"review-{_slug(reviewer)}{'-blind' if blind else ''}.json"


@contextlib.asynccontextmanager
async def _client(reviewer: ModelConfig, client: ChatClient | None) -> AsyncIterator[ChatClient]:
    if client is not None:
        yield client
        return
    async with ChatClient(reviewer, api_key=resolve_api_key(reviewer)) as own:
        yield own


@dataclass
class Exchange:
    """The outcome of asking for one JSON answer, re-asks included."""

    answer: BaseModel | None = None
    raw: list[str] = field(default_factory=list)
    usage: ReviewUsage = field(default_factory=ReviewUsage)
    reasks: int = 0
    error: ReviewError | None = None
    wall_s: float = 0.0


async def ask_json(
    client: ChatClient, messages: list[dict[str, Any]], schema: type[BaseModel], *,
    context: dict[str, Any] | None = None, max_reasks: int = 1, max_tokens: int | None = None,
) -> Exchange:
    """Ask, validate, re-ask at most ``max_reasks`` times with the error; never raises ModelError."""
    ex = Exchange()
    history = list(messages)
    started = time.monotonic()
    try:
        for attempt in range(max(0, max_reasks) + 1):
            result = await client.chat(history, max_tokens=max_tokens)
            u = ex.usage
            u.requests += 1
            u.prompt_tokens += result.usage.prompt_tokens
            u.completion_tokens += result.usage.completion_tokens
            u.reasoning_tokens += result.usage.reasoning_tokens
            raw = result.content or ""
            ex.raw.append(raw)
            try:
                ex.answer = parse_answer(raw, schema, context)
                break
            except AnswerInvalid as exc:
                problem = str(exc)
                if result.finish_reason == "length":
                    problem += " (the answer was cut off at the token limit: keep it shorter)"
                log.info("review.invalid_answer", attempt=attempt + 1, error=problem[:300])
                if attempt == max(0, max_reasks):
                    ex.error = ReviewError(kind="invalid-answer", message=problem)
                    break
                ex.reasks += 1
                history += [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": f"Your answer could not be used: {problem}. Answer again with "
                                                "only the JSON object in the format asked for."},
                ]
    except ModelError as exc:
        status = exc.status if isinstance(exc, ModelHTTPError) else None
        ex.error = ReviewError(kind="infra", message=str(exc), status=status)
        log.warning("review.infra_error", error=str(exc)[:300], status=status)
    ex.wall_s = round(time.monotonic() - started, 3)
    return ex


# -- one attempt -------------------------------------------------------------------------------


async def review_attempt(
    client: ChatClient, reviewer: ModelConfig, run_dir: Path, result: AttemptResult, *, task: Task,
    rubric: Rubric, checklist: Checklist | None = None, artefact_config: dict[str, Any] | None = None,
    blind: bool = False, options: ReviewOptions | None = None,
) -> tuple[Path, ReviewRecord]:
    """Review one attempt and store the record atomically; returns (file, record)."""
    opts = options or ReviewOptions()
    adir = cell_dir(run_dir, result.cell)
    artefact = adir / (result.artefact_path or "artefact")
    images = collect_images(adir, result, opts.max_images)
    shown = images if reviewer.vision else []
    prompt = render("review.md.j2", {
        "task_id": task.id, "task_title": task.title, "task_prompt": task.prompt,
        "criteria": rubric.criteria, "files": collect_sources(artefact, task.entry, opts.max_source_chars),
        "images": shown, "checks": [] if blind else probe_lines(result),
    })
    warn = same_model(reviewer, result.model, artefact_config)
    if warn:
        log.warning("review.same_model", reviewer=reviewer.name, artefact_model=result.model)
    ex = await ask_json(client, build_messages(prompt, shown, vision=reviewer.vision), ReviewAnswer,
                        context={"criteria": rubric.ids}, max_reasks=opts.max_reasks, max_tokens=opts.max_tokens)
    record = ReviewRecord(
        run_id=result.run_id, task=result.task, repeat=result.repeat, reviewer=reviewer.name,
        reviewer_model=reviewer.model, model_of_artefact=result.model, agent_of_artefact=result.agent.agent,
        blind=blind, vision=reviewer.vision,
        status="ok" if ex.answer is not None else "reviewer-error", error=ex.error, reasks=ex.reasks,
        images=[img.path.relative_to(adir.resolve()).as_posix() for img in shown], usage=ex.usage,
        cost_usd=round(reviewer.cost(ex.usage.prompt_tokens, ex.usage.completion_tokens), 6), wall_s=ex.wall_s,
        same_model_warning=warn,
    )
    if isinstance(ex.answer, ReviewAnswer):
        _fill(record, ex.answer, rubric)
        if checklist is not None:
            met = {c.id: c.met for c in record.criteria}
            items = evaluate_checklist(checklist, artefact, result.checks, reviewer=met, entry=task.entry)
            record.checklist, record.checklist_summary = items.items_json(), items.summary()
    else:
        record.raw_answers = ex.raw
    path = review_file(adir, reviewer.name, blind=blind)
    write_json(path, record)
    log.info("review.stored", cell=result.cell.key, status=record.status,
             score=record.score, path=str(path))
    return path, record


def _fill(record: ReviewRecord, answer: ReviewAnswer, rubric: Rubric) -> None:
    by_id = {a.id: a for a in answer.criteria}
    record.criteria = [
        CriterionVerdict(id=c.id, met=by_id[c.id].met, reason=by_id[c.id].reason.strip(), weight=c.weight,
                         required=c.required)
        for c in rubric.criteria
    ]
    total = sum(c.weight for c in record.criteria)
    record.weighted_score = round(10 * sum(c.weight for c in record.criteria if c.met) / total, 2)
    record.score = answer.score
    record.verdict = " ".join(answer.verdict.split())[:600]
    record.passed = all(c.met for c in record.criteria if c.required)


# -- a whole run -------------------------------------------------------------------------------


def reviewable(adir: Path, result: AttemptResult | None, task: Task) -> str | None:
    """Why an attempt cannot be reviewed (None: it can)."""
    if result is None:
        return "no result.json yet"
    if result.outcome in ("no-artefact", "infra-error"):
        return f"outcome {result.outcome}"
    if not (adir / (result.artefact_path or "artefact") / task.entry).is_file():
        return f"no {task.entry} in the artefact"
    return None


def _has_ok_review(path: Path) -> bool:
    try:
        return ReviewRecord.model_validate_json(path.read_text(encoding="utf-8")).status == "ok"
    except (OSError, ValueError):
        return False


async def review_run(
    run_dir: Path, reviewer: ModelConfig, *, blind: bool = False, tasks: list[str] | None = None,
    models: list[str] | None = None, options: ReviewOptions | None = None, client: ChatClient | None = None,
    progress: Callable[[str, ReviewRecord], None] | None = None,
) -> ReviewRunSummary:
    """Review every reviewable attempt of a stored run (optionally only some tasks / models).

    ``client`` replaces the ChatClient built from ``reviewer`` (tests pass one with short backoff).
    Raises ConfigError for a demo reviewer, TaskError for a missing or malformed rubric,
    StoreError for a missing run; each attempt's reviewer failure is stored, never raised.
    """
    _usable(reviewer)
    opts = options or ReviewOptions()
    manifest = load_manifest(run_dir)
    summary = ReviewRunSummary(run_id=manifest.run_id, run_dir=run_dir, reviewer=reviewer.name)
    for asked, known, what in ((tasks, manifest.tasks, "task"), (models, manifest.lanes(), "model")):
        unknown = [x for x in asked or [] if x not in known]
        if unknown:
            raise StoreError(f"Run {manifest.run_id} has no {what} {unknown}; it has {', '.join(known)}.")
    wanted_tasks = [t for t in manifest.tasks if tasks is None or t in tasks]
    setup: dict[str, tuple[Task, Rubric, Checklist | None]] = {}
    for tid in wanted_tasks:  # every rubric is validated before the first token is spent
        task = load_task(tid)
        checklist = load_checklist(tid, task=task) if checklist_path(tid).is_file() else None
        setup[tid] = (task, load_rubric(tid, checklist=checklist), checklist)
    todo: list[AttemptResult] = []
    for cell in manifest.cells:
        if cell.task not in setup or not cell.named_by(models):
            continue
        adir = cell_dir(run_dir, cell)
        result = load_result(adir / "result.json")
        why = reviewable(adir, result, setup[cell.task][0])
        if why is None and opts.missing_only and _has_ok_review(review_file(adir, reviewer.name, blind=blind)):
            why = "already reviewed"
        if why is not None:
            summary.skipped.append(f"{cell.key}: {why}")
            continue
        assert result is not None
        todo.append(result)
    gate = asyncio.Semaphore(max(1, opts.concurrency))

    async def one(c: ChatClient, result: AttemptResult) -> tuple[Path, ReviewRecord]:
        task, rubric, checklist = setup[result.task]
        async with gate:
            out = await review_attempt(c, reviewer, run_dir, result, task=task, rubric=rubric, checklist=checklist,
                                       artefact_config=manifest.models.get(result.model), blind=blind, options=opts)
        if progress:
            progress("done", out[1])
        return out

    if todo:
        async with _client(reviewer, client) as c:
            summary.reviews = list(await asyncio.gather(*(one(c, r) for r in todo)))
    return summary
