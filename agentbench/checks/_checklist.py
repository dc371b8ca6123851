"""Checklists: what the prompt asked for (feature items) and what a careful build does (finish items).

``checklists/<task>.toml`` holds one ``[[items]]`` table per item. An item is decided by, in
order: a behaviour ``check`` from the task's probes, else the ``reviewer``, else a static detector
(``static`` names one in :mod:`._static`; ``pattern`` is an inline regex, or a list that must all
match). An item may name a check *and* a static detector: the check decides, the detector is shown
beside it, and where they disagree the result says so ("source uses delta time; at 240 Hz it
moved 4.0x faster"). A check in ``error`` is a harness gap: the item stays ``unknown`` rather than
fall back to the source, because an item is only as good as its evidence.

Loading validates everything up front: a malformed file names the file, the item and the field,
and an item naming a check the task's probes do not produce fails at load time, not at scoring.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from ..config import project_root
from ..errors import ArtefactError, TaskError
from ..tasks import Task, load_task, read_task_toml, task_file
from ._model import CheckResult
from .static._source import Source
from .static._static import DETECTORS, match_patterns

__all__ = [
    "Checklist",
    "ChecklistItem",
    "ChecklistResult",
    "ItemResult",
    "checklist_path",
    "checklists_dir",
    "evaluate_checklist",
    "load_checklist",
]

log = structlog.get_logger()

Verdict = Literal["pass", "fail"]


class ChecklistItem(BaseModel):
    """One line of a checklist. ``static_expect = false`` when finding the pattern is the defect."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    text: str = Field(min_length=1)
    kind: Literal["feature", "finish"]
    required: StrictBool
    weight: float = Field(gt=0)
    check: str | None = None
    static: str | None = None
    pattern: str | list[str] | None = None
    static_expect: StrictBool = True
    reviewer: StrictBool = False

    @field_validator("static")
    @classmethod
    def _known_detector(cls, v: str | None) -> str | None:
        if v is not None and v not in DETECTORS:
            raise ValueError(f"unknown static detector '{v}'; known: {', '.join(sorted(DETECTORS))}")
        return v

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str | list[str] | None) -> str | list[str] | None:
        for p in [v] if isinstance(v, str) else v or []:
            try:
                re.compile(p)
            except re.error as exc:
                raise ValueError(f"pattern /{p}/ is not a valid regex: {exc}") from exc
        return v

    @model_validator(mode="after")
    def _decidable(self) -> ChecklistItem:
        if self.static and self.pattern is not None:
            raise ValueError("give either `static` (a named detector) or `pattern`, not both")
        if self.check and self.reviewer:
            raise ValueError("an item is decided by a `check` or by the `reviewer`, not both")
        if not (self.check or self.reviewer or self.static or self.pattern is not None):
            raise ValueError("nothing decides this item: give `check`, `static`, `pattern` or `reviewer = true`")
        return self

    @property
    def patterns(self) -> list[str]:
        return [self.pattern] if isinstance(self.pattern, str) else list(self.pattern or [])

    @property
    def has_static(self) -> bool:
        return bool(self.static or self.patterns)

    @property
    def decided_by(self) -> str:
        if self.check:
            return f"check:{self.check}"
        return "reviewer" if self.reviewer else "static"


class Checklist(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str
    items: list[ChecklistItem] = Field(min_length=1)
    path: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _unique_ids(self) -> Checklist:
        seen: set[str] = set()
        for item in self.items:
            if item.id in seen:
                raise ValueError(f"item id '{item.id}' appears twice")
            seen.add(item.id)
        return self


class ItemResult(BaseModel):
    """How one item came out and why: the evidence a person can follow."""

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str
    kind: Literal["feature", "finish"]
    required: bool
    weight: float
    status: Literal["pass", "fail", "unknown"]
    decided_by: str  # "check:<id>" | "static" | "reviewer"
    static: Verdict | None = None
    behaviour: Verdict | None = None
    evidence: str = ""
    links: list[str] = Field(default_factory=list)  # evidence files, relative to the attempt folder
    disagreement: str | None = None


class ChecklistResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str
    items: list[ItemResult] = Field(default_factory=list)
    feature_score: float | None = None  # weighted share of decided feature items that pass
    finish_score: float | None = None
    disagreements: list[str] = Field(default_factory=list)
    required_failed: list[str] = Field(default_factory=list)
    unknown: list[str] = Field(default_factory=list)

    def items_json(self) -> list[dict[str, Any]]:
        return [i.model_dump(mode="json") for i in self.items]

    def summary(self) -> dict[str, Any]:
        return self.model_dump(mode="json", include={"feature_score", "finish_score", "disagreements",
                                                     "required_failed", "unknown"})


# -- loading -----------------------------------------------------------------------------------


def checklists_dir() -> Path:
    return project_root() / "checklists"


def checklist_path(task_id: str, root: Path | None = None) -> Path:
    """``<root>/<task_id>.toml`` given a root; else where the task keeps it (``tasks.task_file``):
    ``checklists/<id>.toml`` for a built-in, ``checklist.toml`` in a plug-in's data folder."""
    return root / f"{task_id}.toml" if root else task_file(task_id, "checklist")


def load_checklist(task_id: str, root: Path | None = None, *, task: Task | None = None) -> Checklist:
    """Load and validate ``<root>/<task_id>.toml`` (root: the checklists folder).

    Every item's ``check`` must be one of the task's check ids (``task.toml``'s ``checks``);
    errors raise :class:`TaskError` naming the file, the item and the field.
    """
    path = checklist_path(task_id, root)
    data = read_task_toml(path, task_id, what="checklist", example="checklists/flappy.toml")
    try:
        checklist = Checklist.model_validate(data)
    except ValidationError as exc:
        raise TaskError(f"{path}: {_describe(exc, data)}. Fix these fields.") from exc
    if checklist.task != task_id:
        raise TaskError(f"{path}: field 'task' is '{checklist.task}' but the file is for task '{task_id}'.")
    task = task or load_task(task_id)
    known = set(task.checks)
    for i, item in enumerate(checklist.items):
        if item.check is not None and item.check not in known:
            raise TaskError(
                f"{path}: item '{item.id}' (items[{i}]), field 'check': unknown check id '{item.check}'. "
                f"Task '{task_id}' produces: {', '.join(task.checks) or '(none)'}."
            )
    checklist.path = path
    return checklist


def _describe(exc: ValidationError, data: dict[str, Any]) -> str:
    raw_items = data.get("items") if isinstance(data.get("items"), list) else []
    parts = []
    for err in exc.errors():
        loc = list(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if len(loc) >= 2 and loc[0] == "items" and isinstance(loc[1], int):
            i = loc[1]
            raw = raw_items[i] if i < len(raw_items) else None
            item_id = raw.get("id") if isinstance(raw, dict) else None
            where = f"item '{item_id}' (items[{i}])" if item_id else f"items[{i}]"
            field = ".".join(str(p) for p in loc[2:])
            parts.append(f"{where}, field '{field}': {msg}" if field else f"{where}: {msg}")
        else:
            parts.append(f"field '{'.'.join(str(p) for p in loc) or '(top level)'}': {msg}")
    return "; ".join(parts)


# -- evaluation --------------------------------------------------------------------------------


def evaluate_checklist(
    checklist: Checklist,
    artefact_dir: Path,
    checks: list[CheckResult],
    *,
    reviewer: dict[str, bool] | None = None,
    entry: str = "index.html",
) -> ChecklistResult:
    """Decide every item from the check results, the reviewer's answers and the source."""
    by_id = {c.id: c for c in checks}
    reviewer = reviewer or {}
    try:
        source: Source | None = Source.from_artefact(artefact_dir, entry)
    except (OSError, ArtefactError) as exc:  # no entry, or one too large to read: static items unknown
        log.info("checklist.no_source", artefact=str(artefact_dir), error=str(exc))
        source = None
    results = [_evaluate_item(item, source, by_id, reviewer) for item in checklist.items]
    return ChecklistResult(
        task=checklist.task,
        items=results,
        feature_score=_score(results, "feature"),
        finish_score=_score(results, "finish"),
        disagreements=[f"{r.id}: {r.disagreement}" for r in results if r.disagreement],
        required_failed=[r.id for r in results if r.required and r.status == "fail"],
        unknown=[r.id for r in results if r.status == "unknown"],
    )


def _score(results: list[ItemResult], kind: str) -> float | None:
    """Weighted pass share over decided items; unknowns (harness gaps, no review yet) are left out."""
    decided = [r for r in results if r.kind == kind and r.status != "unknown"]
    total = sum(r.weight for r in decided)
    if not total:
        return None
    return round(sum(r.weight for r in decided if r.status == "pass") / total, 4)


def _evaluate_item(item: ChecklistItem, source: Source | None, by_id: dict[str, CheckResult],
                   reviewer: dict[str, bool]) -> ItemResult:
    evidence: list[str] = []
    links: list[str] = []
    static, static_phrase = _static_verdict(item, source, evidence)

    behaviour: Verdict | None = None
    check = by_id.get(item.check) if item.check else None
    if item.check:
        if check is None:
            evidence.insert(0, f"check {item.check}: did not run")
        else:
            if check.status in ("pass", "fail"):
                behaviour = check.status
            label = {"error": "harness error", "skip": "skipped"}.get(check.status, check.status)
            evidence.insert(0, f"check {item.check} {label}: {check.detail}".rstrip(": "))
            links = [e.path for e in check.evidence if e.kind == "file" and e.path]

    status: Literal["pass", "fail", "unknown"]
    if item.check:
        status = behaviour or "unknown"
    elif item.reviewer:
        verdict = reviewer.get(item.id)
        status = "unknown" if verdict is None else ("pass" if verdict else "fail")
        evidence.insert(0, "reviewer: awaiting review" if verdict is None else f"reviewer: {status}")
    else:
        status = static or "unknown"

    disagreement = None
    if behaviour is not None and static is not None and behaviour != static and check is not None:
        disagreement = f"{static_phrase}; {_behaviour_phrase(check)}"
    return ItemResult(
        id=item.id, text=item.text, kind=item.kind, required=item.required, weight=item.weight,
        status=status, decided_by=item.decided_by, static=static, behaviour=behaviour,
        evidence="\n".join(evidence), links=links, disagreement=disagreement,
    )


def _static_verdict(item: ChecklistItem, source: Source | None, evidence: list[str]) -> tuple[Verdict | None, str]:
    """(pass/fail/None, the phrase for what the source shows); appends the detector's evidence."""
    if not item.has_static:
        return None, ""
    name = item.static or "pattern"
    if source is None:
        evidence.append(f"static {name}: no source to read")
        return None, ""
    try:
        if item.static:
            found, snippet = DETECTORS[item.static].fn(source)
            d = DETECTORS[item.static]
            phrase = d.found if found else d.missing
        else:
            found, snippet = match_patterns(source, item.patterns)
            patterns = " and ".join(f"/{p}/" for p in item.patterns)
            phrase = f"source {'matches' if found else 'does not match'} {patterns}"
    except Exception as exc:  # noqa: BLE001 - a detector bug must not lose the behaviour verdict
        log.warning("checklist.detector_error", detector=name, error=repr(exc))
        evidence.append(f"static {name}: detector failed: {exc!r}")
        return None, ""
    evidence.append(f"static {name} {'found' if found else 'not found'}: {snippet}")
    if not found:  # which files the page runs, so "not found" says where it was looked for
        evidence.append(f"static {name} read: {source.reach()}")
    return ("pass" if found == item.static_expect else "fail"), phrase


def _behaviour_phrase(check: CheckResult) -> str:
    """What the probe saw, in words; the refresh-rate time warp is named by its factor."""
    if check.id == "refresh-rate":
        data = check.data if isinstance(check.data, dict) else {}
        factor = data.get("factor", data.get("s"))  # "s": the fit's slope, the same factor
        if isinstance(factor, (int, float)) and factor > 0:
            if check.status == "fail" and factor >= 1:
                return f"at 240 Hz it moved {factor:.1f}x faster"
            if check.status == "fail":
                return f"at 240 Hz it moved {1 / factor:.1f}x slower"
            return f"yet at 240 Hz it moved at the 60 Hz speed (factor {factor:.2f})"
    detail = f": {check.detail}" if check.detail else ""
    if check.status == "pass":
        return f"yet the {check.id} check passed{detail}"
    return f"the {check.id} check failed{detail}"
