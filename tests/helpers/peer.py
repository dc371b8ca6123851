"""A scripted peer: a loopback OpenAI-compatible model that writes one file, the way each agent expects.

Unlike ``ScriptedServer`` (a FIFO), the peer answers by what a request is, because an external
agent decides on its own how many requests it makes and in which order (opencode asks for a
title first, sometimes alongside the main turn):

* agentbench's preflight (a ``ping`` tool) gets a ping call, then text;
* a request offering a ``write`` tool (opencode, Crush) gets one call writing ``path`` with
  ``content``; once a tool result is in the history it gets a short closing text;
* any other request (aider, opencode's title) gets ``path`` in aider's whole-file edit format.

Every request is stored (``server.requests``, ``server.request_headers``); ``on_request`` runs
in the server thread before each answer (the tests look into the live sandbox from there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentbench.config import ModelConfig
from agentbench.models import OpenAICompatServer, Reply

__all__ = ["PEER_MODEL", "ScriptedPeer"]

PEER_MODEL = "peer-model"


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("function", {}).get("name", "") for t in body.get("tools") or []]


class ScriptedPeer(OpenAICompatServer):
    """A model that writes ``content`` to ``path`` (see the module docstring)."""

    def __init__(self, path: str, content: str, *, usage: dict[str, int] | None = None,
                 on_request: Callable[[dict[str, Any]], None] | None = None, fail_status: int | None = None) -> None:
        super().__init__(self._answer, models=[PEER_MODEL])
        self.path, self.content = path, content
        self.usage = usage or {"prompt_tokens": 1000, "completion_tokens": 200}
        self.on_request = on_request
        self.fail_status = fail_status  # every agent request fails with this status (endpoint failure)

    def _answer(self, body: dict[str, Any]) -> Reply:
        names = _tool_names(body)
        messages = body.get("messages") or []
        if "ping" in names:  # preflight
            if any(m.get("role") == "tool" for m in messages):
                return Reply(message={"role": "assistant", "content": "pong"})
            return Reply(message={"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_ping", "type": "function", "function": {"name": "ping", "arguments": "{}"}}]})
        if self.on_request is not None:
            self.on_request(body)
        if self.fail_status is not None:
            return Reply(status=self.fail_status)
        if "write" in names:
            if any(m.get("role") == "tool" for m in messages):
                return Reply(message={"role": "assistant", "content": f"Done: {self.path} is written."},
                             usage=self.usage)
            args = {"filePath": f"/workspace/{self.path}", "file_path": f"/workspace/{self.path}",
                    "content": self.content}
            call = {"id": "call_write", "type": "function",
                    "function": {"name": "write", "arguments": json.dumps(args)}}
            return Reply(message={"role": "assistant", "content": None, "tool_calls": [call]}, usage=self.usage)
        body = self.content if self.content.endswith("\n") else self.content + "\n"
        return Reply(message={"role": "assistant", "content": f"{self.path}\n```html\n{body}```\n"},
                     usage=self.usage)

    def config(self, **overrides: Any) -> ModelConfig:
        fields: dict[str, Any] = {"name": "peer", "base_url": self.base_url or self.start(), "model": PEER_MODEL,
                                  "request_timeout_s": 30.0, "max_retries": 1}
        fields.update(overrides)
        return ModelConfig(**fields)
