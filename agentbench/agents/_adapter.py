"""What an external agent's adapter is: its plan for one session, its protocol, and ``@agent("name")``.

Adapters (``_aider.py``, ``_opencode.py``, ``_crush.py``) import this module only; the registry
(``_registry.py``) imports the adapters, so the dependency runs one way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..names import validate_name
from ._images import AgentImage

__all__ = ["AGENT_HOME", "BUILTIN", "AgentPlan", "ExternalAgent", "agent", "registered"]

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
    """Register an adapter class under ``name`` (``@agent("opencode")``).

    The name is part of a lane's folder (``<model>@<agent>``), so it follows the name rule.
    """
    validate_name("agent name", name, where="@agent(...)")

    def register(cls: A) -> A:
        if name in _REGISTRY or name == BUILTIN:
            raise ValueError(f"agent {name!r} is registered twice")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return register


def registered() -> dict[str, Callable[[], ExternalAgent]]:
    """The adapters registered so far, by name (``_registry`` imports them all first)."""
    return _REGISTRY
