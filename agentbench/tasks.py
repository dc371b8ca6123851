"""Tasks as data: ``task.toml`` plus the prompt a person would give in ``prompt.md``.

Two kinds of task, one public path (``load_task``, ``list_tasks``, ``resolve_tasks``):

- built-in: ``tasks/<id>/`` with ``checklists/<id>.toml`` and ``reviewers/<id>.toml`` in the
  project, resolved straight from those folders (no installed package metadata is read);
- plug-in: an installed package that names a :class:`TaskPlugin` under the entry-point group
  ``agentbench.tasks`` (name = task id), as pytest and Inspect find theirs::

      [project.entry-points."agentbench.tasks"]
      counter = "agentbench_counter:task"      # task = TaskPlugin(data=..., probes="agentbench_counter.probes")

  Its data folder holds ``task.toml``, ``prompt.md``, ``checklist.toml`` and ``reviewer.toml``;
  its probe module registers the task's probes with the browser engine when imported (see
  ``examples/counter``). A plug-in cannot replace a built-in task: the same id is an error.
"""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .config import project_root
from .errors import NameInvalid, TaskError
from .names import validate_name

__all__ = [
    "ENTRY_POINT_GROUP",
    "PLUGIN_FILES",
    "InstalledPlugin",
    "Task",
    "TaskLimits",
    "TaskPlugin",
    "builtin_tasks",
    "installed_plugins",
    "list_tasks",
    "load_task",
    "plugin_for",
    "read_task_toml",
    "resolve_tasks",
    "task_file",
    "tasks_dir",
]

ENTRY_POINT_GROUP = "agentbench.tasks"
# What a plug-in's data folder holds, by role: every one must be there.
PLUGIN_FILES = {"task": "task.toml", "prompt": "prompt.md", "checklist": "checklist.toml", "reviewer": "reviewer.toml"}
_HOW_TO = "See examples/counter in the agentbench repository for a complete plug-in."


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


@dataclass(frozen=True)
class TaskPlugin:
    """What a plug-in task's entry point names: where its data lies and which module holds its probes.

    ``data``: a folder with ``task.toml``, ``prompt.md``, ``checklist.toml`` and ``reviewer.toml``
    (usually ``Path(__file__).parent / "data"`` in the plug-in's package). ``probes``: the dotted
    name of the module that registers the task's probes when imported; it is imported in the
    checker container too, so it must live in a package of its own (outside ``agentbench``), whose
    ``.py`` and ``.js`` files are copied into the checker image.
    """

    data: Path
    probes: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", Path(self.data))


@dataclass(frozen=True)
class InstalledPlugin:
    """A plug-in task found through its entry point, checked: the id, its data, its probe module."""

    task_id: str
    data: Path
    probes: str
    origin: str  # "entry point 'counter = agentbench_counter:task' of agentbench-counter 0.1.0"


def tasks_dir() -> Path:
    return project_root() / "tasks"


def builtin_tasks(root: Path | None = None) -> list[str]:
    """The built-in task ids: the folders of ``root`` (default ``tasks/``) that hold a task.toml."""
    root = root or tasks_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "task.toml").is_file())


def list_tasks(root: Path | None = None) -> list[str]:
    """Every task id: the built-ins (from ``root``, default ``tasks/``) and the installed plug-ins.

    A plug-in is listed by its entry point's name (nothing of it is imported here); one whose name
    clashes with a built-in or another plug-in is a TaskError saying which.
    """
    builtin = builtin_tasks(root)
    plugins = _plugin_entry_points()
    for name, eps in plugins.items():
        _refuse_clash(name, eps, builtin)
    return builtin + sorted(set(plugins) - set(builtin))


def _origin(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    owner = f" of {dist.name} {dist.version}" if dist is not None else ""
    return f"entry point '{ep.name} = {ep.value}'{owner}"


_EP_CACHE: dict[tuple[str, ...], dict[str, list[importlib.metadata.EntryPoint]]] = {}
_LOADED: dict[tuple[tuple[str, ...], str], InstalledPlugin] = {}


def _plugin_entry_points() -> dict[str, list[importlib.metadata.EntryPoint]]:
    """The ``agentbench.tasks`` entry points by name (a name two distributions register has two)."""
    key = tuple(sys.path)
    found = _EP_CACHE.get(key)
    if found is None:
        found = {}
        seen: set[tuple[str, str, str]] = set()
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            ident = (ep.name, ep.value, dist.name if dist is not None else "")
            if ident not in seen:  # one distribution seen twice on sys.path counts once
                seen.add(ident)
                found.setdefault(ep.name, []).append(ep)
        _EP_CACHE.clear()
        _EP_CACHE[key] = found
    return found


def _refuse_clash(name: str, eps: list[importlib.metadata.EntryPoint], builtin: list[str]) -> None:
    where = f'[project.entry-points."{ENTRY_POINT_GROUP}"] in its pyproject.toml'
    if name in builtin:
        raise TaskError(f"Plug-in task '{name}' ({_origin(eps[0])}) has the id of the built-in task '{name}'. "
                        f"A plug-in cannot replace a built-in task: rename its entry point ({where}) and "
                        "reinstall it, or uninstall it.")
    if len(eps) > 1:
        raise TaskError(f"Task '{name}' is registered by more than one installed plug-in: "
                        f"{'; '.join(_origin(ep) for ep in eps)}. Uninstall one, or rename its entry point ({where}).")


def plugin_for(task_id: str, root: Path | None = None) -> InstalledPlugin | None:
    """The installed plug-in for ``task_id``, imported and checked; None for a built-in or unknown id.

    Built-ins resolve without reading any package metadata. A plug-in that fails to import, names
    something other than a :class:`TaskPlugin`, lacks a data file or names a bad probe module is a
    TaskError naming the plug-in, what is wrong and what to do.
    """
    if task_id in builtin_tasks(root):
        return None
    eps = _plugin_entry_points().get(task_id)
    if not eps:
        return None
    _refuse_clash(task_id, eps, [])
    key = (tuple(sys.path), task_id)
    if key not in _LOADED:
        _LOADED[key] = _load_plugin(eps[0])
    return _LOADED[key]


def installed_plugins(root: Path | None = None, *,
                      on_error: Callable[[TaskError], None] | None = None) -> list[InstalledPlugin]:
    """Every installed plug-in task, imported and checked, by id. A bad one (a clash, an import
    failure, a missing file) raises its TaskError, or, given ``on_error``, is handed to it and left out."""
    builtin = builtin_tasks(root)
    found = []
    for name, eps in sorted(_plugin_entry_points().items()):
        try:
            _refuse_clash(name, eps, builtin)
            plugin = plugin_for(name, root)
        except TaskError as exc:
            if on_error is None:
                raise
            on_error(exc)
            continue
        if plugin is not None:
            found.append(plugin)
    return found


def _load_plugin(ep: importlib.metadata.EntryPoint) -> InstalledPlugin:
    origin = _origin(ep)
    fix = "Fix or reinstall that package, or uninstall it."
    try:
        validate_name("task id", ep.name, where=origin)
    except NameInvalid as exc:
        raise TaskError(f"{exc} Rename the entry point and reinstall the package.") from None
    try:
        value = ep.load()
    except Exception as exc:  # noqa: BLE001 - any failure of foreign code is reported as the plug-in's
        raise TaskError(f"Plug-in task '{ep.name}' ({origin}) could not be loaded: {type(exc).__name__}: {exc}. "
                        f"{fix}") from exc
    if not isinstance(value, TaskPlugin):
        raise TaskError(f"Plug-in task '{ep.name}' ({origin}) names a {type(value).__name__}, not an "
                        "agentbench.tasks.TaskPlugin(data=<folder>, probes=<module>). Make the entry point "
                        f"name one. {_HOW_TO}")
    data = value.data.resolve()
    missing = [name for name in PLUGIN_FILES.values() if not (data / name).is_file()]
    if missing:
        raise TaskError(f"Plug-in task '{ep.name}' ({origin}): its data folder {data} lacks "
                        f"{', '.join(missing)}. A plug-in's data folder holds {', '.join(PLUGIN_FILES.values())}; "
                        f"add the missing files to the package (package data) and reinstall it. {_HOW_TO}")
    top = value.probes.split(".")[0]
    if not all(part.isidentifier() for part in value.probes.split(".")) or top == "agentbench":
        raise TaskError(f"Plug-in task '{ep.name}' ({origin}): probes={value.probes!r} is not a module of the "
                        "plug-in's own package (a dotted name outside 'agentbench', e.g. "
                        f"'{ep.value.split(':')[0].split('.')[0]}.probes'). {fix}")
    return InstalledPlugin(task_id=ep.name, data=data, probes=value.probes, origin=origin)


def task_file(task_id: str, role: str) -> Path:
    """Where task ``task_id`` keeps its ``checklist`` or ``reviewer`` rubric (the file may not exist).

    Built-ins: ``checklists/<id>.toml``, ``reviewers/<id>.toml``; plug-ins: their data folder's
    ``checklist.toml``, ``reviewer.toml``.
    """
    folders = {"checklist": "checklists", "reviewer": "reviewers"}
    if role not in folders:
        raise ValueError(f"unknown task file role {role!r}")
    plugin = plugin_for(task_id)
    if plugin is not None:
        return plugin.data / PLUGIN_FILES[role]
    return project_root() / folders[role] / f"{task_id}.toml"


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
    """The task ``task_id``: a built-in from ``root`` (default ``tasks/``), else an installed plug-in."""
    root = root or tasks_dir()
    validate_name("task id", task_id, where="--task")
    folder = root / task_id
    if not (folder / "task.toml").is_file():
        plugin = plugin_for(task_id, root)
        if plugin is None:
            valid = list_tasks(root)
            raise TaskError(f"Unknown task '{task_id}'. Valid tasks: {', '.join(valid) or '(none found)'}, or 'all'.")
        folder = plugin.data
    toml_path = folder / "task.toml"
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
