"""External agents as data plus a small adapter, registered by name with ``@agent("name")``.

An adapter says how to build its image (``image()``) and how to run one session in it
(``plan(...)``: the files to write outside the workspace, the environment and one bash command).
Everything else (the sandbox, the gateway, limits, outcomes) is shared by ``run_external``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..errors import ConfigError
from ._images import AgentImage

__all__ = ["AGENT_NAMES", "AgentPlan", "ExternalAgent", "agent", "agent_names", "get_agent", "task_prompt"]

BUILTIN = "builtin"
AGENT_HOME = "/tmp/agentbench"  # the adapter's own files in the sandbox, outside /workspace


@dataclass
class AgentPlan:
    """One session of an external agent: files written first, then ``command`` runs in /workspace."""

    command: str  # bash; its stdout/stderr are kept as evidence
    files: dict[str, str] = field(default_factory=dict)  # absolute path in the sandbox -> content
    env: dict[str, str] = field(default_factory=dict)
    junk: list[str] = field(default_factory=list)  # workspace paths the agent leaves that are not the artefact


class ExternalAgent(Protocol):
    """The adapter of one external coding agent."""

    name: str

    def image(self) -> AgentImage:
        """How to build (and tag) this agent's sandbox image."""
        ...

    def plan(self, *, base_url: str, model_id: str, prompt: str, entry: str,
             max_tokens_per_request: int | None) -> AgentPlan:
        """The session's files, environment and command; base_url is the gateway in the sandbox."""
        ...


A = TypeVar("A", bound=type)
_REGISTRY: dict[str, Callable[[], ExternalAgent]] = {}


def agent(name: str) -> Callable[[A], A]:
    """Register an adapter class under ``name`` (``@agent("opencode")``)."""

    def register(cls: A) -> A:
        if name in _REGISTRY or name == BUILTIN:
            raise ValueError(f"agent {name!r} is registered twice")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return register


def agent_names() -> list[str]:
    """Every agent ``--agent`` accepts: the builtin tool loop first."""
    _load()
    return [BUILTIN, *sorted(_REGISTRY)]


def get_agent(name: str) -> ExternalAgent:
    """The adapter registered as name; ConfigError listing the valid names otherwise."""
    _load()
    if name not in _REGISTRY:
        raise ConfigError(f"Unknown agent '{name}'. Valid agents: {', '.join(agent_names())}.")
    return _REGISTRY[name]()


def _load() -> None:
    from . import _aider, _crush, _opencode  # noqa: F401 - importing registers them


AGENT_NAMES = ("builtin", "opencode", "aider", "crush")

PROMPT_SUFFIX = (
    "\n\nWork in the current folder (/workspace). The entry file {entry} must exist there when you "
    "finish: it is what will be opened in a web browser and used. There is no network: nothing can "
    "be downloaded or installed, and the page must not load anything from the internet."
)


def task_prompt(prompt: str, entry: str) -> str:
    """The task as every external agent gets it: the task text plus where the result must be."""
    return prompt.rstrip() + PROMPT_SUFFIX.format(entry=entry)
