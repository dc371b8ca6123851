"""settings.toml: where a run's sandboxes go (``[[engines]]`` tables).

Looked up in ``./settings.toml``, then ``$AGENTBENCH_HOME/settings.toml``. Without one, a run
uses the Docker engine the environment points at (``DOCKER_HOST``)::

    [[engines]]
    name = "local"                  # "local" without an address: DOCKER_HOST
    sandboxes = 4                   # cells on this engine at once
    checks = 2                      # cells in their check phase at once

    [[engines]]
    name = "gpu1"
    address = "ssh://bench@gpu1"
    sandboxes = 8
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .config import agentbench_home
from .errors import ConfigError
from .sandbox._engine_config import EngineConfig

__all__ = ["Settings", "find_settings_file", "load_settings"]


class Settings(BaseModel):
    """The whole settings file."""

    model_config = ConfigDict(extra="forbid")

    engines: list[EngineConfig] = Field(default_factory=list)


def find_settings_file() -> Path | None:
    for candidate in (Path.cwd() / "settings.toml", agentbench_home() / "settings.toml"):
        if candidate.is_file():
            return candidate
    return None


def load_settings(path: Path | None = None) -> Settings:
    """The settings (empty when there is no file); a ConfigError names the file, table and field."""
    path = path or find_settings_file()
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}. Fix the syntax at that line.") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from exc
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        raise ConfigError(f"{path}: unknown top-level key(s) {unknown}; engines are declared as [[engines]] tables.")
    if not isinstance(data.get("engines", []), list):
        raise ConfigError(f"{path}: 'engines' must be an array of tables: write each engine as [[engines]].")
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format(path, data, exc)) from exc
    names = [e.name for e in settings.engines]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{path}: engine name(s) {twice} used twice; every [[engines]] table needs its own name.")
    return settings


def _format(path: Path, data: dict, exc: ValidationError) -> str:
    lines = [f"{path}: invalid settings:"]
    for err in exc.errors():
        loc = list(err["loc"])
        where = "(file)"
        if len(loc) >= 2 and loc[0] == "engines" and isinstance(loc[1], int):
            table = data["engines"][loc[1]] if loc[1] < len(data["engines"]) else {}
            name = table.get("name", f"#{loc[1] + 1}") if isinstance(table, dict) else f"#{loc[1] + 1}"
            field = ".".join(str(p) for p in loc[2:]) or "(table)"
            where = f"[[engines]] {name!r}: {field}"
        msg = str(err["msg"]).removeprefix("Value error, ")
        lines.append(f"  {where}: {msg}")
    lines.append("Fix that field (see settings.example.toml for a working example).")
    return "\n".join(lines)
