"""Settings, paths and models.toml.

models.toml is looked up in ``./models.toml``, then ``$AGENTBENCH_HOME/models.toml``.
The built-in demo models (``demo``, ``demo-careful``) need no configuration.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError
from .names import name_field

__all__ = [
    "DEMO_MODELS",
    "ModelConfig",
    "agentbench_home",
    "find_models_file",
    "load_models",
    "project_root",
    "resolve_api_key",
    "resolve_model",
]


def project_root() -> Path:
    """The folder holding tasks/, sandboxes/, checklists/ (the source checkout)."""
    env = os.environ.get("AGENTBENCH_ROOT")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent


def agentbench_home() -> Path:
    """User folder for models.toml and caches (``$AGENTBENCH_HOME``, default ~/.agentbench)."""
    return Path(os.environ.get("AGENTBENCH_HOME", Path.home() / ".agentbench"))


class ModelConfig(BaseModel):
    """One OpenAI-compatible model endpoint."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    name: name_field("model name")  # becomes <run>/<task>/<model>/: one rule, agentbench/names.py
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    thinking: Literal["on", "off"] | None = None
    # How the thinking toggle is sent: DeepSeek's API wants {"thinking": {"type": ...}},
    # vLLM wants chat_template_kwargs {"thinking": bool}.
    thinking_format: Literal["deepseek", "vllm"] = "vllm"
    price_input_per_m: float = Field(default=0.0, ge=0)
    price_output_per_m: float = Field(default=0.0, ge=0)
    vision: bool = False
    max_concurrency: int = Field(default=4, gt=0)
    stream: bool = True
    request_timeout_s: float = Field(default=600.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    # Which coding agent drives this model unless `--agent` says otherwise: builtin, opencode,
    # aider or crush (see README "Agents").
    agent: name_field("agent name") = "builtin"  # part of the lane's folder (<model>@<agent>)
    # Built-in replay model: which recorded behaviour it plays ("rushed" or "careful").
    demo: Literal["rushed", "careful"] | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_input_per_m + completion_tokens * self.price_output_per_m) / 1e6


DEMO_MODELS: dict[str, ModelConfig] = {
    "demo": ModelConfig(
        name="demo", base_url="http://127.0.0.1:0/v1", model="agentbench-demo-rushed", demo="rushed"
    ),
    "demo-careful": ModelConfig(
        name="demo-careful", base_url="http://127.0.0.1:0/v1", model="agentbench-demo-careful", demo="careful"
    ),
}


def find_models_file() -> Path | None:
    for candidate in (Path.cwd() / "models.toml", agentbench_home() / "models.toml"):
        if candidate.is_file():
            return candidate
    return None


def _format_validation(path: Path, name: str, exc: ValidationError) -> str:
    lines = [f"{path}: model '{name}' is invalid:"]
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(table)"
        lines.append(f"  [models.{name}] {field}: {err['msg']}")
    lines.append("Fix the field in that table (see models.example.toml for a working example).")
    return "\n".join(lines)


def load_models(path: Path | None = None) -> dict[str, ModelConfig]:
    """All models: the built-in demos plus those in models.toml (which may override nothing built in)."""
    models = dict(DEMO_MODELS)
    path = path or find_models_file()
    if path is None:
        return models
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}. Fix the syntax at that line.") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from exc
    unknown = set(data) - {"models"}
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key(s) {sorted(unknown)}; models are declared as [models.NAME] tables."
        )
    tables = data.get("models", {})
    if not isinstance(tables, dict):
        raise ConfigError(f"{path}: 'models' must be a table of tables, like [models.lane].")
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: models.{name} must be a table ([models.{name}]), not a value.")
        if name in DEMO_MODELS:
            raise ConfigError(f"{path}: [models.{name}] clashes with a built-in demo model; choose another name.")
        try:
            models[name] = ModelConfig(name=name, **table)
        except ValidationError as exc:
            raise ConfigError(_format_validation(path, name, exc)) from exc
        except TypeError as exc:  # e.g. a 'name' key given twice
            raise ConfigError(f"{path}: [models.{name}]: {exc}") from exc
    return models


def resolve_model(name: str, models: dict[str, ModelConfig] | None = None) -> ModelConfig:
    models = models if models is not None else load_models()
    if name not in models:
        where = find_models_file()
        hint = (f" (from {where})" if where
                else " (no models.toml found in . or $AGENTBENCH_HOME; copy models.example.toml)")
        raise ConfigError(f"Unknown model '{name}'. Valid models: {', '.join(sorted(models))}{hint}.")
    return models[name]


def resolve_api_key(model: ModelConfig) -> str | None:
    """The API key from the model's environment variable; an error naming the variable if unset."""
    if not model.api_key_env:
        return None
    key = os.environ.get(model.api_key_env)
    if not key:
        raise ConfigError(
            f"Model '{model.name}' needs an API key: set the environment variable {model.api_key_env} "
            f"(export {model.api_key_env}=...), or remove api_key_env from [models.{model.name}] "
            "if the endpoint needs none."
        )
    return key
