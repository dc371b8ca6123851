"""Read stored runs for the report: manifest, every attempt's result, reviews. Read-only.

A report must show a half-finished or partly damaged run rather than refuse it, so an unreadable
result.json or review file is carried as a load error on that attempt, not raised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..names import is_valid_lane, is_valid_name, split_lane
from ..store import AttemptResult, CellRef, RunManifest, attempt_dir, load_manifest, load_result

__all__ = ["LoadedAttempt", "LoadedRun", "load_run", "load_runs"]


@dataclass
class LoadedAttempt:
    """One cell of a run as stored: its result (None while pending) and any reviewer files."""

    run_id: str
    run_dir: Path
    task: str
    model: str  # the lane: the model, or ``model@agent`` under an external agent (its folder name)
    repeat: int
    result: AttemptResult | None = None
    load_error: str | None = None
    reviews: dict[str, dict[str, Any]] = field(default_factory=dict)  # reviewer name -> parsed JSON

    @property
    def cell(self) -> CellRef:
        """The stored cell: the lane split into its model and agent, each checked by the name rule."""
        return CellRef.of_lane(self.task, self.model, self.repeat)

    @property
    def agent(self) -> str:
        return split_lane(self.model)[1]

    @property
    def bare_model(self) -> str:
        """The model alone (``model`` is the lane)."""
        return split_lane(self.model)[0]

    @property
    def dir(self) -> Path:
        return attempt_dir(self.run_dir, self.cell)

    @property
    def key(self) -> str:
        """``task/model/rK``: unique within a run."""
        return f"{self.task}/{self.model}/r{self.repeat}"

    @property
    def uid(self) -> str:
        """``run/task/model/rK``: unique within a report."""
        return f"{self.run_id}/{self.key}"


@dataclass
class LoadedRun:
    run_dir: Path
    manifest: RunManifest
    attempts: list[LoadedAttempt]

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def tasks(self) -> list[str]:
        return _unique([*self.manifest.tasks, *(a.task for a in self.attempts)])

    @property
    def models(self) -> list[str]:
        # Lanes, not bare model names: the same model under two agents is two columns.
        return _unique([*(c.lane for c in self.manifest.cells), *(a.model for a in self.attempts)])


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _reviews(adir: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(adir.glob("review-*.json")):
        name = path.stem[len("review-"):] or "reviewer"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            data = {"error": f"unreadable review file {path.name}: {exc}"}
        out[name] = data if isinstance(data, dict) else {"value": data}
    return out


def load_run(run_dir: Path) -> LoadedRun:
    """The manifest's cells plus any attempt folder with a result.json the manifest lacks."""
    manifest = load_manifest(run_dir)
    cells = {c.key: c for c in manifest.cells}
    for path in sorted(run_dir.glob("*/*/r*/result.json")):
        rep = path.parent.name[1:]
        task, lane_name = path.parent.parent.parent.name, path.parent.parent.name
        if rep.isdigit() and is_valid_name(task) and is_valid_lane(lane_name):
            cell = CellRef.of_lane(task, lane_name, int(rep))
            cells.setdefault(cell.key, cell)
    attempts = []
    for cell in cells.values():
        att = LoadedAttempt(manifest.run_id, run_dir, cell.task, cell.lane, cell.repeat)
        try:
            att.result = load_result(att.dir / "result.json")
        except StoreError as exc:
            att.load_error = str(exc)
        if att.dir.is_dir():
            att.reviews = _reviews(att.dir)
        attempts.append(att)
    attempts.sort(key=lambda a: (a.task, a.model, a.repeat))
    return LoadedRun(run_dir=run_dir, manifest=manifest, attempts=attempts)


def load_runs(run_dirs: list[Path]) -> list[LoadedRun]:
    """Several runs for one report; the same folder twice counts once, two runs with one id is an error."""
    runs: list[LoadedRun] = []
    seen: dict[str, Path] = {}
    for d in run_dirs:
        run = load_run(d)
        prior = seen.get(run.run_id)
        if prior is not None:
            if prior.resolve() == d.resolve():
                continue
            raise StoreError(f"{prior} and {d} are both run '{run.run_id}'; give each run once.")
        seen[run.run_id] = d
        runs.append(run)
    if not runs:
        raise StoreError("No run given. Pass a run id from `ls artefacts/` or a run folder.")
    return runs
