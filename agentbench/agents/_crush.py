"""Crush (charmbracelet/crush): ``crush run -q`` against an ``openai-compat`` provider.

Its npm package only downloads the Go binary from GitHub releases, so the image is built from a
binary the user provides: ``AGENTBENCH_CRUSH_BINARY=/path/to/crush``. The image tag carries the
binary's digest, so a new binary gets a new image. Metrics and provider auto-update are off.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from ..errors import ConfigError
from ._adapter import AGENT_HOME, AgentPlan, agent
from ._images import AgentImage, Log

__all__ = ["CRUSH_BINARY_ENV", "Crush", "crush_binary"]

CRUSH_BINARY_ENV = "AGENTBENCH_CRUSH_BINARY"


def crush_binary() -> Path | None:
    """The user's Crush binary (from AGENTBENCH_CRUSH_BINARY), or None when none is given."""
    value = os.environ.get(CRUSH_BINARY_ENV)
    if not value:
        return None
    path = Path(value)
    if not path.is_file():
        raise ConfigError(f"{CRUSH_BINARY_ENV}={value}: no such file; give the path of a linux-amd64 crush binary.")
    return path


@agent("crush")
class Crush:
    name: str

    def image(self) -> AgentImage:
        binary = crush_binary()
        if binary is None:
            raise ConfigError(
                f"The crush agent needs its binary: set {CRUSH_BINARY_ENV} to a linux-amd64 crush executable "
                "(from https://github.com/charmbracelet/crush/releases, or `npm install -g @charmland/crush` "
                "where its download works). agentbench builds agentbench/agent-crush from it."
            )
        digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:12]

        def fetch(ctx: Path, log: Log) -> None:
            log(f"Using the crush binary {binary}")
            shutil.copyfile(binary, ctx / "crush")
            (ctx / "crush").chmod(0o755)

        return AgentImage(name="crush", version=digest, fetch=fetch)

    def plan(self, *, base_url: str, model_id: str, prompt: str, entry: str,
             max_tokens_per_request: int | None) -> AgentPlan:
        model: dict[str, object] = {"id": model_id, "name": model_id, "context_window": 200_000,
                                    "default_max_tokens": max_tokens_per_request or 8192}
        config = {
            "$schema": "https://charm.land/crush.json",
            "providers": {"agentbench": {"type": "openai-compat", "base_url": base_url,
                                         "api_key": "agentbench-gateway", "models": [model]}},
            "models": {"large": {"provider": "agentbench", "model": model_id},
                       "small": {"provider": "agentbench", "model": model_id}},
            "options": {"disable_provider_auto_update": True, "disable_metrics": True},
            "permissions": {"allowed_tools": ["bash", "download", "edit", "fetch", "glob", "grep", "ls",
                                              "multiedit", "view", "write"]},
        }
        return AgentPlan(
            files={f"{AGENT_HOME}/prompt.txt": prompt, "/home/agent/.config/crush/crush.json": json.dumps(config)},
            command=f'crush run -q "$(cat {AGENT_HOME}/prompt.txt)"',
            junk=[".crush"],
        )
