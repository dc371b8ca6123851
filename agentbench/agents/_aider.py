"""aider (PyPI ``aider-chat``): one ``--message-file`` session, edits applied from the model's text.

aider makes no tool calls: it asks for whole files (``--edit-format whole``) and writes what the
reply holds. It exits 0 even when the endpoint failed, so outcomes come from the gateway record
and the files. Git, update checks, analytics, URL detection and streaming are off; its history
files live outside the workspace.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ._adapter import AGENT_HOME, AgentPlan, agent
from ._images import AgentImage, Log, run_tool

__all__ = ["AIDER_VERSION", "Aider"]

AIDER_VERSION = "0.86.2"


def _fetch(ctx: Path, log: Log) -> None:
    log(f"Fetching aider-chat=={AIDER_VERSION} and its wheels with pip download (~120 MB)...")
    # The sandbox's python is Debian bookworm's 3.11: ask for wheels that fit it, whatever the host runs.
    run_tool(["python3", "-m", "pip", "download", "-q", "--disable-pip-version-check", "--only-binary=:all:",
              "--python-version", "3.11", "--implementation", "cp", "--platform", "manylinux2014_x86_64",
              "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
              "--platform", "linux_x86_64",
              "-d", str(ctx / "wheels"), f"aider-chat=={AIDER_VERSION}"], cwd=ctx, what="Fetching aider")


@agent("aider")
class Aider:
    name: str

    def image(self) -> AgentImage:
        return AgentImage(name="aider", version=AIDER_VERSION, debs=("python3", "python3-venv"), fetch=_fetch)

    def plan(self, *, base_url: str, model_id: str, prompt: str, entry: str,
             max_tokens_per_request: int | None) -> AgentPlan:
        name = f"openai/{model_id}"
        limit = max_tokens_per_request or 8192
        meta = {name: {"max_tokens": limit, "max_output_tokens": limit, "max_input_tokens": 200_000,
                       "input_cost_per_token": 0, "output_cost_per_token": 0, "litellm_provider": "openai",
                       "mode": "chat"}}
        argv = [
            "aider", "--model", name, "--openai-api-base", base_url, "--openai-api-key", "agentbench-gateway",
            "--message-file", f"{AGENT_HOME}/prompt.txt", "--model-metadata-file", f"{AGENT_HOME}/meta.json",
            "--edit-format", "whole", "--yes-always", "--no-git", "--no-check-update", "--analytics-disable",
            "--no-pretty", "--no-fancy-input", "--no-stream", "--no-detect-urls", "--no-show-model-warnings",
            "--no-show-release-notes", "--map-tokens", "0",
            "--chat-history-file", f"{AGENT_HOME}/chat.history.md",
            "--input-history-file", f"{AGENT_HOME}/input.history",
            entry,
        ]
        return AgentPlan(
            files={f"{AGENT_HOME}/prompt.txt": prompt, f"{AGENT_HOME}/meta.json": json.dumps(meta)},
            command=" ".join(shlex.quote(a) for a in argv) + " < /dev/null",
            junk=[".aider.tags.cache.v4", ".aider.chat.history.md", ".aider.input.history"],
        )
