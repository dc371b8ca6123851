"""External agents by name: every adapter, and the task prompt they all get.

An adapter says how to build its image (``image()``) and how to run one session in it
(``plan(...)``: the files to write outside the workspace, the environment and one bash command).
Everything else (the sandbox, the gateway, limits, outcomes) is shared by ``ExternalSession``.
Adapters register themselves with ``@agent("name")`` (``_adapter.py``) when imported here.
"""

from __future__ import annotations

from ..errors import ConfigError
from . import _aider, _crush, _opencode  # noqa: F401 - importing registers them
from ._adapter import AGENT_HOME, BUILTIN, AgentPlan, ExternalAgent, agent, registered

__all__ = ["AGENT_HOME", "AGENT_NAMES", "AgentPlan", "ExternalAgent", "agent", "agent_names", "get_agent",
           "task_prompt"]


def agent_names() -> list[str]:
    """Every agent ``--agent`` accepts: the builtin tool loop first."""
    return [BUILTIN, *sorted(registered())]


def get_agent(name: str) -> ExternalAgent:
    """The adapter registered as name; ConfigError listing the valid names otherwise."""
    adapters = registered()
    if name not in adapters:
        raise ConfigError(f"Unknown agent '{name}'. Valid agents: {', '.join(agent_names())}.")
    return adapters[name]()


AGENT_NAMES = ("builtin", "opencode", "aider", "crush")

PROMPT_SUFFIX = (
    "\n\nWork in the current folder (/workspace). The entry file {entry} must exist there when you "
    "finish: it is what will be opened in a web browser and used. There is no network: nothing can "
    "be downloaded or installed, and the page must not load anything from the internet."
)


def task_prompt(prompt: str, entry: str) -> str:
    """The task as every external agent gets it: the task text plus where the result must be."""
    return prompt.rstrip() + PROMPT_SUFFIX.format(entry=entry)
