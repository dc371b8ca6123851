"""Sandboxes: where untrusted agent commands and artefacts run."""

from ._base import ExecResult, Sandbox, SandboxLimits

__all__ = ["ExecResult", "Sandbox", "SandboxLimits"]
