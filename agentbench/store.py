"""Run layout, atomic writes and the stored result schema.

::

    <out>/<run-id>/run.json                         the manifest (models, tasks, repeats, cells)
    <out>/<run-id>/<task>/<model>/r<k>/result.json  one attempt, written atomically last
    <out>/<run-id>/<task>/<model>/r<k>/artefact/    what the agent left in the workspace
    <out>/<run-id>/<task>/<model>/r<k>/transcript.jsonl
    <out>/<run-id>/<task>/<model>/r<k>/evidence/    filmstrips, screenshots, logs
    <out>/<run-id>/<task>/<model>@<agent>/r<k>/     the same, for an external agent (opencode, aider,
                                                    crush): its gateway.jsonl and agent/ logs too

The builtin agent's folders keep the plain ``<model>`` name; a model under an external agent is its
own lane ``<model>@<agent>``, so the same model under two agents is stored, counted and shown apart.

A cell is done exactly when its result.json exists: resume runs every other cell afresh.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .checks._model import CheckResult
from .errors import StoreError
from .names import BUILTIN_AGENT, is_valid_name, lane, name_field, split_lane, validate_name

__all__ = [
    "AgentSummary",
    "AttemptResult",
    "CellRef",
    "InfraError",
    "Outcome",
    "RunManifest",
    "SpeedStats",
    "atomic_write_text",
    "attempt_dir",
    "lane",
    "load_manifest",
    "load_result",
    "new_run_id",
    "resolve_run_dir",
    "split_lane",
    "write_json",
]

SCHEMA_VERSION = 1
Outcome = Literal["scored", "no-artefact", "budget", "infra-error"]


def utcnow() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temp file in the same folder, fsync, rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json(path: Path, model: BaseModel | dict[str, Any]) -> None:
    text = model.model_dump_json(indent=2) if isinstance(model, BaseModel) else json.dumps(model, indent=2)
    atomic_write_text(path, text + "\n")


class CellRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: name_field("task id")  # both become folder names (agentbench/names.py)
    model: name_field("model name")
    repeat: int = Field(ge=0)
    agent: name_field("agent name") = BUILTIN_AGENT  # a registered agent: part of the lane's folder

    @property
    def lane(self) -> str:
        """What results are grouped by: the model, or ``model@agent`` under an external agent."""
        return lane(self.model, self.agent)

    @property
    def key(self) -> str:
        return f"{self.task}/{self.lane}/r{self.repeat}"


    def named_by(self, names: list[str] | None) -> bool:
        """True when ``names`` is None or holds this cell's lane or its model (every lane of it)."""
        return names is None or self.lane in names or self.model in names

    @classmethod
    def of_lane(cls, task: str, lane_name: str, repeat: int, *, where: str = "") -> CellRef:
        """The cell of a lane read back (a folder name, a command-line argument), its parts checked."""
        model, agent = split_lane(lane_name, where=where)
        return cls(task=task, model=model, repeat=repeat, agent=agent)


def attempt_dir(run_dir: Path, cell: CellRef) -> Path:
    return run_dir / cell.task / cell.lane / f"r{cell.repeat}"


class InfraError(BaseModel):
    """Why an attempt could not be run: never counted against the model."""

    model_config = ConfigDict(extra="forbid")

    kind: str  # "model-endpoint", "sandbox", "harness", "internal"
    message: str
    status: int | None = None
    body: str | None = None


class AgentSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str = "builtin"
    status: str | None = None  # finished / no-artefact / budget
    stop_reason: str | None = None
    budget_hit: str | None = None  # max_turns / max_tokens / wall / length
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    text_tool_calls: int = 0
    summary: str | None = None
    # Why the session ended so when it was not the model's own choice: its sandbox stopped from the
    # inside, the requests its agent built were rejected (a model outcome, with the reason).
    detail: str | None = None


class SpeedStats(BaseModel):
    model_config = ConfigDict(extra="forbid")

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    model_wall_s: float = 0.0
    mean_ttft_s: float | None = None
    decode_tok_s: float | None = None  # completion tokens over decode time, all requests
    retries: int = 0


class AttemptResult(BaseModel):
    """result.json: one attempt of one model on one task."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    task: str
    model: str
    repeat: int
    outcome: Outcome
    verdict: Literal["pass", "fail"] | None = None
    score: float | None = None
    checks: list[CheckResult] = Field(default_factory=list)
    checklist: list[dict[str, Any]] = Field(default_factory=list)  # ItemResult dicts (checks/_checklist.py)
    checklist_summary: dict[str, Any] | None = None  # feature_score, finish_score, disagreements, ...
    agent: AgentSummary = Field(default_factory=AgentSummary)
    speed: SpeedStats = Field(default_factory=SpeedStats)
    limits: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float = 0.0
    wall_s: float = 0.0
    harness_s: float = 0.0  # wall time outside model calls and checks: sandbox, tools, store
    checks_s: float = 0.0
    error: InfraError | None = None
    artefact_path: str | None = None  # relative to the attempt folder
    engine: str | None = None  # the Docker engine the cell ran on (its name in settings.toml / --engine)
    started_at: str = Field(default_factory=utcnow)
    finished_at: str | None = None

    @property
    def lane(self) -> str:
        """The model, or ``model@agent`` under an external agent (see ``CellRef.lane``)."""
        return lane(self.model, self.agent.agent)

    @property
    def cell(self) -> CellRef:
        return CellRef(task=self.task, model=self.model, repeat=self.repeat, agent=self.agent.agent)


class RunManifest(BaseModel):
    """run.json: what the run was asked to do; cells are the plan, results live per attempt."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    run_id: name_field("run id")
    created_at: str = Field(default_factory=utcnow)
    agentbench_version: str = ""
    command: list[str] = Field(default_factory=list)
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)  # configs, never keys
    tasks: list[str] = Field(default_factory=list)
    repeats: int = 1
    agent: str = "builtin"  # the --agent given, or "per-model" when models.toml chose
    max_tokens: int | None = None
    checks: bool = True  # resume keeps what the run was started with
    concurrency: int = 1
    cells: list[CellRef] = Field(default_factory=list)
    status: Literal["running", "completed", "interrupted", "failed"] = "running"
    updated_at: str = Field(default_factory=utcnow)

    def lanes(self) -> list[str]:
        """What a filter may name in this run: its model names and its lanes (``model@agent``)."""
        return list(dict.fromkeys([*self.models, *(c.lane for c in self.cells)]))


def resolve_run_dir(out_dir: Path, ref: str) -> Path:
    """A run given as a folder path, or as a run id under out_dir (the folder holding run folders)."""
    path = Path(ref)
    if (path / "run.json").is_file():
        return path
    if not is_valid_name(ref):  # not a run folder, so a run id: one that names no other place
        validate_name("run id", ref, where=f"run '{ref}'")
    if (out_dir / ref / "run.json").is_file():
        return out_dir / ref
    raise StoreError(f"No run '{ref}' in {out_dir} (looked for {out_dir / ref / 'run.json'}).")


def load_manifest(run_dir: Path) -> RunManifest:
    path = run_dir / "run.json"
    if not path.is_file():
        raise StoreError(f"{run_dir}: no run.json here; give a run id from `ls artefacts/` or a run folder path.")
    try:
        return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise StoreError(f"{path}: unreadable manifest: {exc}") from exc


def load_result(path: Path) -> AttemptResult | None:
    if not path.is_file():
        return None
    try:
        return AttemptResult.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise StoreError(f"{path}: unreadable result: {exc}. Delete it to rerun that cell with --resume.") from exc
