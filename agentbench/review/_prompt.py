"""What the reviewer is asked and how its answer is read.

- Rubrics: ``reviewers/<task>.toml``, one ``[[criteria]]`` table per criterion (id, text, weight,
  required). A criterion whose id is a ``reviewer = true`` item of ``checklists/<task>.toml``
  decides that item; an id naming an item that a check or a detector decides is an error, since
  the review would look like it decides something it does not.
- Inputs: the artefact's text files (each in a fence longer than any backtick run inside it, so
  the source cannot close its own block), evidence PNGs from result.json (refresh-rate filmstrips
  first), and the probe results unless the review is blind.
- Answers: one JSON object, bare or in a fenced block, validated with pydantic. The error text
  goes back to the model in a bounded re-ask.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import jinja2
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .._files import open_regular, plain_files
from ..checks import Checklist
from ..config import project_root
from ..errors import ArtefactError, TaskError
from ..store import AttemptResult
from ..tasks import read_task_toml, task_file

__all__ = [
    "AnswerInvalid",
    "Criterion",
    "CriterionAnswer",
    "ImageRef",
    "PairwiseAnswer",
    "ReviewAnswer",
    "Rubric",
    "SourceFile",
    "build_messages",
    "collect_images",
    "collect_sources",
    "load_rubric",
    "parse_answer",
    "probe_lines",
    "render",
    "reviewers_dir",
]

_TEXT_SUFFIXES = {".html": "html", ".htm": "html", ".js": "javascript", ".mjs": "javascript", ".css": "css",
                  ".json": "json", ".md": "", ".txt": ""}
_MAX_IMAGE_BYTES = 4 * 1024 * 1024
M = TypeVar("M", bound=BaseModel)


# -- rubrics -----------------------------------------------------------------------------------


class Criterion(BaseModel):
    """One thing the reviewer decides: met or not met, with a reason."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    text: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)
    required: StrictBool = False


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str
    criteria: list[Criterion] = Field(min_length=1)
    path: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _unique(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"criterion id(s) {dup} appear more than once")
        if not any(c.required for c in self.criteria):
            raise ValueError("no criterion has `required = true`; the review's pass/fail needs at least one")
        return self

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.criteria]


def reviewers_dir() -> Path:
    return project_root() / "reviewers"


def load_rubric(task_id: str, root: Path | None = None, *, checklist: Checklist | None = None) -> Rubric:
    """Load ``<root>/<task_id>.toml`` and check it against the task's checklist, if given."""
    path = root / f"{task_id}.toml" if root else task_file(task_id, "reviewer")  # a plug-in's: in its data
    data = read_task_toml(path, task_id, what="reviewer rubric", example="reviewers/flappy.toml")
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in exc.errors())
        raise TaskError(f"{path}: {where}. Fix these fields.") from exc
    if rubric.task != task_id:
        raise TaskError(f"{path}: field 'task' is '{rubric.task}' but the file is for task '{task_id}'.")
    if checklist is not None:
        items = {i.id: i for i in checklist.items}
        wanted = [i.id for i in checklist.items if i.reviewer]
        missing = [i for i in wanted if i not in rubric.ids]
        if missing:
            raise TaskError(f"{path}: checklist items {missing} are decided by the reviewer but have no criterion "
                            "with that id; add them so a review can decide them.")
        clash = [c for c in rubric.ids if c in items and not items[c].reviewer]
        if clash:
            raise TaskError(f"{path}: criteria {clash} share an id with checklist items decided by a check or a "
                            "detector, not the reviewer; rename them.")
    rubric.path = path
    return rubric


# -- inputs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceFile:
    name: str
    text: str
    total: int
    lang: str
    fence: str

    @property
    def body(self) -> str:
        """The text as it goes between the fences (no trailing blank line before the closing one)."""
        return self.text.rstrip("\n")

    @property
    def shown(self) -> int:
        return len(self.text)

    @property
    def truncated(self) -> bool:
        return self.shown < self.total


def _fence_for(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def collect_sources(artefact_dir: Path, entry: str, max_chars: int) -> list[SourceFile]:
    """The entry file first, then the other text files, within ``max_chars`` in all.

    The artefact is a model's: files are found and read through ``_files`` (no link followed, no
    FIFO or device opened) and each is read only as far as the budget left can show.
    """
    if not artefact_dir.is_dir():
        return []
    found = [(rel, size) for rel, size in plain_files(artefact_dir) if Path(rel).suffix.lower() in _TEXT_SUFFIXES]
    found.sort(key=lambda f: (f[0] != entry, f[0]))
    out: list[SourceFile] = []
    budget = max_chars
    for rel, size in found:
        if budget <= 0:
            break
        try:
            with open_regular(artefact_dir, rel) as (fh, _size):
                raw = fh.read(4 * budget + 4)  # UTF-8: at most 4 bytes a character
                whole = not fh.read(1)
        except (OSError, ArtefactError):
            continue
        text = raw.decode("utf-8", errors="replace")
        shown = text[:budget]
        budget -= len(shown)
        out.append(SourceFile(name=rel, text=shown, total=len(text) if whole else max(size, len(text)),
                              lang=_TEXT_SUFFIXES[Path(rel).suffix.lower()], fence=_fence_for(shown)))
    return out


@dataclass(frozen=True)
class ImageRef:
    caption: str
    path: Path

    def data_url(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.path.read_bytes()).decode("ascii")


def collect_images(attempt_dir: Path, result: AttemptResult, max_images: int) -> list[ImageRef]:
    """PNG evidence named in result.json: the refresh-rate filmstrips first, then check order."""
    root = attempt_dir.resolve()
    found: list[tuple[int, ImageRef]] = []
    seen: set[Path] = set()
    for order, check in enumerate(result.checks):
        for ev in check.evidence:
            if ev.kind != "file" or not ev.path or not ev.path.lower().endswith(".png"):
                continue
            path = (attempt_dir / ev.path).resolve()
            if path in seen or not path.is_relative_to(root) or not path.is_file():
                continue
            if path.stat().st_size > _MAX_IMAGE_BYTES:
                continue
            seen.add(path)
            rank = -1 if check.id == "refresh-rate" else order
            found.append((rank, ImageRef(caption=f"{check.id}: {ev.label} ({path.name})", path=path)))
    found.sort(key=lambda pair: pair[0])  # stable: evidence order kept within a check
    return [img for _, img in found[:max(0, max_images)]]


@dataclass(frozen=True)
class ProbeLine:
    id: str
    status: str
    detail: str


def probe_lines(result: AttemptResult, max_detail: int = 300) -> list[ProbeLine]:
    out = []
    for c in result.checks:
        detail = " ".join(c.detail.split())
        if len(detail) > max_detail:
            detail = detail[: max_detail - 1] + "…"
        out.append(ProbeLine(id=c.id, status=c.status, detail=detail))
    return out


# -- rendering ---------------------------------------------------------------------------------


def _env(root: Path) -> jinja2.Environment:
    # A prompt is not HTML: autoescape would mangle the source. Values are inserted verbatim and
    # never re-parsed as templates, and the fences are chosen per file (_fence_for).
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root)), undefined=jinja2.StrictUndefined, autoescape=False,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )


def render(template: str, context: dict[str, Any], root: Path | None = None) -> str:
    """Render ``reviewers/<template>`` with StrictUndefined: a missing variable is an error."""
    root = root or reviewers_dir()
    try:
        return _env(root).get_template(template).render(**context)
    except jinja2.TemplateNotFound as exc:
        raise TaskError(f"{root / template}: reviewer prompt template missing.") from exc
    except jinja2.TemplateError as exc:
        raise TaskError(f"{root / template}: {type(exc).__name__}: {exc}") from exc


def build_messages(prompt: str, images: list[ImageRef], *, vision: bool) -> list[dict[str, Any]]:
    """One user message: plain text, or OpenAI content parts with the images as data URLs."""
    if not vision or not images:
        return [{"role": "user", "content": prompt}]
    parts: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
    for i, img in enumerate(images, 1):
        parts.append({"type": "text", "text": f"Image {i}: {img.caption}"})
        parts.append({"type": "image_url", "image_url": {"url": img.data_url()}})
    return [{"role": "user", "content": parts}]


# -- answers -----------------------------------------------------------------------------------


class AnswerInvalid(ValueError):
    """The reviewer's answer is not the JSON asked for; the message says what to fix."""


class CriterionAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    met: bool
    reason: str = Field(min_length=1)


class ReviewAnswer(BaseModel):
    """What the reviewer must answer; ``context={"criteria": [ids]}`` checks coverage."""

    model_config = ConfigDict(extra="ignore")

    criteria: list[CriterionAnswer]
    score: float = Field(ge=0, le=10)
    verdict: str = Field(min_length=1)

    @model_validator(mode="after")
    def _covers(self, info: ValidationInfo) -> ReviewAnswer:
        expected = list((info.context or {}).get("criteria") or [])
        if not expected:
            return self
        got = [c.id for c in self.criteria]
        problems = []
        if missing := [i for i in expected if i not in got]:
            problems.append(f"missing criteria {missing}")
        if unknown := [i for i in got if i not in expected]:
            problems.append(f"unknown criteria {unknown}")
        if dup := sorted({i for i in got if got.count(i) > 1}):
            problems.append(f"criteria {dup} given more than once")
        if problems:
            raise ValueError("; ".join(problems) + f" (answer each of {expected} exactly once)")
        return self


class PairwiseAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    winner: Literal["A", "B", "tie"]
    reason: str = Field(min_length=1)

    @field_validator("winner", mode="before")
    @classmethod
    def _normalise(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().strip("\"'")
            return "tie" if v.lower() == "tie" else v.upper()
        return v


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCED = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


def _candidates(text: str) -> list[str]:
    text = _THINK.sub("", text)
    if "</think>" in text:  # reasoning leaked without its opening tag
        text = text.rsplit("</think>", 1)[1]
    text = text.strip()
    out = [text, *(m.strip() for m in _FENCED.findall(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        out.append(text[start : end + 1])
    return out


def _describe(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = ".".join(str(p) for p in e["loc"])
        msg = e["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


def parse_answer(text: str, schema: type[M], context: dict[str, Any] | None = None) -> M:
    """The first JSON object in ``text`` (bare, fenced or embedded) that validates as ``schema``."""
    first_error: str | None = None
    for candidate in _candidates(text or ""):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(data, dict):
            first_error = first_error or f"expected a JSON object, got {type(data).__name__}"
            continue
        try:
            return schema.model_validate(data, context=context)
        except ValidationError as exc:
            first_error = first_error or _describe(exc)
    if first_error:
        raise AnswerInvalid(f"the JSON does not match the format asked for: {first_error}")
    raise AnswerInvalid("no JSON object found in the answer" if (text or "").strip() else "the answer was empty")
