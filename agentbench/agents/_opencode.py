"""opencode (npm ``opencode-ai``): ``opencode run --format json`` with the prompt on stdin.

Its provider is ``@ai-sdk/openai-compatible`` pointed at the gateway; every permission is allowed
(otherwise a permission ask is rejected and it still exits 0), updates, sharing and model-list
fetches are off. It only calls ``POST /v1/chat/completions``, always streaming with usage; the
first request of a session generates a title (it counts as a turn like any other request).
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from ._adapter import AGENT_HOME, AgentPlan, agent
from ._images import AgentImage, Log, run_tool

__all__ = ["OPENCODE_VERSION", "OpenCode"]

OPENCODE_VERSION = "1.18.33"
_PLATFORM_PACKAGE = "opencode-linux-x64"  # the executable opencode-ai's install picks on x86-64 glibc


def _fetch(ctx: Path, log: Log) -> None:
    spec = f"{_PLATFORM_PACKAGE}@{OPENCODE_VERSION}"
    log(f"Fetching {spec} with npm pack (~60 MB)...")
    name = run_tool(["npm", "pack", "--silent", spec], cwd=ctx, what="Fetching opencode").strip().splitlines()[-1]
    with tarfile.open(ctx / name) as tar:
        member = tar.getmember("package/bin/opencode")
        source = tar.extractfile(member)
        assert source is not None
        (ctx / "opencode").write_bytes(source.read())
    (ctx / "opencode").chmod(0o755)  # COPY keeps it; a chmod in the Dockerfile would double the layer
    (ctx / name).unlink()


@agent("opencode")
class OpenCode:
    name: str

    def image(self) -> AgentImage:
        return AgentImage(name="opencode", version=OPENCODE_VERSION, debs=("ripgrep",), fetch=_fetch)

    def plan(self, *, base_url: str, model_id: str, prompt: str, entry: str,
             max_tokens_per_request: int | None) -> AgentPlan:
        model: dict[str, object] = {"name": model_id, "tool_call": True}
        if max_tokens_per_request:
            model["limit"] = {"context": 200_000, "output": max_tokens_per_request}
        config = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {"agentbench": {
                "npm": "@ai-sdk/openai-compatible", "name": "agentbench",
                # The gateway adds the real key; this placeholder is all the sandbox ever holds.
                "options": {"baseURL": base_url, "apiKey": "agentbench-gateway"},
                "models": {model_id: model},
            }},
            "model": f"agentbench/{model_id}",
            "small_model": f"agentbench/{model_id}",
            "permission": {"*": "allow"},
            "autoupdate": False,
            "share": "disabled",
        }
        return AgentPlan(
            files={f"{AGENT_HOME}/prompt.txt": prompt},
            env={"OPENCODE_CONFIG_CONTENT": json.dumps(config)},
            command=f"opencode run --format json < {AGENT_HOME}/prompt.txt",
            junk=[".opencode"],
        )
