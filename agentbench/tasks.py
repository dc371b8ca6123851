"""Tasks as data: ``tasks/<id>/task.toml`` plus the prompt a person would give in ``prompt.md``."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .config import project_root
from .errors import TaskError
from .names import validate_name

__all__ = ["Task", "TaskLimits", "list_tasks", "load_task", "read_task_toml", "resolve_tasks", "tasks_dir"]


class TaskLimits(BaseModel):
    """The budget of one attempt: a cap hit is recorded as a ``budget`` outcome."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(default=30, gt=0)
    max_tokens: int = Field(default=200_000, gt=0)
    wall_s: float = Field(default=900, gt=0)


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    entry: str = "index.html"
    checks: list[str] = Field(default_factory=list)
    limits: TaskLimits = Field(default_factory=TaskLimits)
    prompt: str = ""
    path: Path | None = None


def tasks_dir() -> Path:
    return project_root() / "tasks"


def list_tasks(root: Path | None = None) -> list[str]:
    root = root or tasks_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "task.toml").is_file())


def read_task_toml(path: Path, task_id: str, *, what: str, example: str) -> dict[str, Any]:
    """Read a per-task TOML file (a checklist, a reviewer rubric) into a dict whose ``task``
    defaults to ``task_id``; a missing file or bad TOML is a TaskError naming the file."""
    if not path.is_file():
        raise TaskError(f"{path}: no {what} for task '{task_id}'. Add one (see {example}).")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{path}: not valid TOML: {exc}. Fix the syntax there.") from exc
    data.setdefault("task", task_id)
    return data


def load_task(task_id: str, root: Path | None = None) -> Task:
    root = root or tasks_dir()
    validate_name("task id", task_id, where="--task")
    folder = root / task_id
    toml_path = folder / "task.toml"
    if not toml_path.is_file():
        valid = list_tasks(root)
        raise TaskError(f"Unknown task '{task_id}'. Valid tasks: {', '.join(valid) or '(none found)'}, or 'all'.")
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{toml_path}: not valid TOML: {exc}") from exc
    prompt_path = folder / "prompt.md"
    if not prompt_path.is_file():
        raise TaskError(f"{prompt_path}: missing. Each task needs the prompt a person would give in prompt.md.")
    try:
        return Task(id=task_id, prompt=prompt_path.read_text(encoding="utf-8").strip(), path=folder, **data)
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise TaskError(f"{toml_path}: {fields}. Fix these fields.") from exc


def resolve_tasks(spec: str, root: Path | None = None) -> list[Task]:
    """A comma-separated list of task ids, or ``all``."""
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise TaskError(f"No task given. Valid tasks: {', '.join(list_tasks(root))}, or 'all'.")
    if names == ["all"]:
        names = list_tasks(root)
    return [load_task(n, root) for n in names]
