"""The agentbench exception tree.

Foreign exceptions (httpx, docker, playwright, pydantic) are mapped to this tree at one
boundary each, with ``raise ... from exc``::

    AgentbenchError
    ├── ConfigError            bad models.toml, unknown model, missing API key variable
    ├── TaskError              bad or unknown task
    ├── StoreError             run folder missing or unreadable
    ├── ModelError             the model endpoint failed (infrastructure, not the model)
    │   ├── ModelHTTPError     non-retryable status, or retries exhausted (carries status, body)
    │   ├── ModelTimeout       the total deadline of one request passed
    │   └── ModelProtocolError the answer was not a valid chat completion
    ├── SandboxError           the sandbox could not be created or used
    │   ├── DockerUnavailable  no Docker engine reachable (says how to start one)
    │   ├── ImageMissing       the sandbox image is not built (says how to build it)
    │   └── PathEscape         a path left the workspace (shown to the agent as a tool error)
    ├── CheckError             the harness could not check an artefact (not a verdict)
    ├── ArtefactError          an artefact folder or file is over its size caps
    ├── NameInvalid            a user-given name that becomes a path breaks the name rule
    └── MissingExtra           an optional extra is not installed (says what to pip install)

Every error carries a message a person can act on: which file, which field, what to do.
"""

from __future__ import annotations

__all__ = [
    "AgentbenchError",
    "ArtefactError",
    "CheckError",
    "ConfigError",
    "DockerUnavailable",
    "ImageMissing",
    "MissingExtra",
    "ModelError",
    "ModelHTTPError",
    "ModelProtocolError",
    "ModelTimeout",
    "NameInvalid",
    "PathEscape",
    "SandboxError",
    "StoreError",
    "TaskError",
]


class AgentbenchError(Exception):
    """Base of every error agentbench raises on purpose."""


class ConfigError(AgentbenchError):
    """Configuration is missing or malformed."""


class TaskError(AgentbenchError):
    """A task is unknown or its files are malformed."""


class StoreError(AgentbenchError):
    """A run folder is missing or unreadable."""


class ModelError(AgentbenchError):
    """The model endpoint failed. This is an infrastructure error, never the model's fault."""


class ModelHTTPError(ModelError):
    """The endpoint answered with an error status (after bounded retries where retryable)."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "", attempts: int = 1):
        super().__init__(message)
        self.status = status
        self.body = body
        self.attempts = attempts


class ModelTimeout(ModelError):
    """A request passed its total deadline."""


class ModelProtocolError(ModelError):
    """The endpoint's answer was not a valid chat completion."""


class SandboxError(AgentbenchError):
    """The sandbox could not be created or used."""


class DockerUnavailable(SandboxError):
    """No Docker engine is reachable."""


class ImageMissing(SandboxError):
    """The sandbox image has not been built."""


class PathEscape(SandboxError):
    """A path given by the agent leaves the workspace."""


class CheckError(AgentbenchError):
    """The harness itself could not check an artefact."""


class ArtefactError(AgentbenchError):
    """An artefact file or folder is over its caps (per file, in all, file count, depth)."""


class NameInvalid(AgentbenchError):
    """A name given by a user (model, task, run, reviewer, agent) cannot safely become a path."""


class MissingExtra(AgentbenchError):
    """An optional part of agentbench needs a package that is not installed; the message says how to install it."""
