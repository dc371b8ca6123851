"""ScriptedServer: a real loopback OpenAI-compatible server answering from a FIFO of replies.

    with ScriptedServer() as server:
        server.enqueue(text("hello"), Reply(status=500), tool_call("write_file", {"path": "a"}))
        client = ChatClient(server.config(), backoff_s=0.01)
        ...
        server.requests  # every chat request body received

A request that finds the queue empty gets a 500 and is recorded in ``errors``; leaving the
``with`` block then fails the test, so an unexpected extra request (a wrong retry) never passes.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any, Self

from agentbench.config import ModelConfig
from agentbench.models import OpenAICompatServer, Reply

__all__ = ["ScriptExhausted", "ScriptedServer", "text", "tool_call"]

MODEL_ID = "scripted-model"


class ScriptExhausted(AssertionError):
    """A request arrived after every scripted reply was used."""


def text(content: str, *, reasoning: str | None = None, reasoning_key: str = "reasoning_content",
         **reply: Any) -> Reply:
    """A plain assistant answer (optionally with reasoning under ``reasoning_key``)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message[reasoning_key] = reasoning
    return Reply(message=message, **reply)


def tool_call(name: str, arguments: dict[str, Any] | str, *, id: str = "call_1",
              content: str | None = None, **reply: Any) -> Reply:
    """An assistant turn calling one tool; ``arguments`` as an object, or a raw (maybe invalid) string."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    message = {"role": "assistant", "content": content,
               "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args}}]}
    return Reply(message=message, **reply)


class ScriptedServer(OpenAICompatServer):
    """OpenAICompatServer whose handler pops scripted replies in order."""

    def __init__(self, *replies: Reply, models: list[str] | None = None) -> None:
        super().__init__(self._next_reply, models=models or [MODEL_ID])
        self._queue: deque[Reply] = deque(replies)
        self._queue_lock = threading.Lock()

    def enqueue(self, *replies: Reply) -> ScriptedServer:
        with self._queue_lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        with self._queue_lock:
            return len(self._queue)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._queue_lock:
            if not self._queue:
                raise ScriptExhausted(f"no scripted reply left for request #{len(self.requests)}")
            return self._queue.popleft()

    def config(self, **overrides: Any) -> ModelConfig:
        """A ModelConfig pointing at this server (start it first), fast-failing by default."""
        fields: dict[str, Any] = {"name": "scripted", "base_url": self.base_url or self.start(),
                                  "model": self.models[0], "request_timeout_s": 5.0, "max_retries": 2}
        fields.update(overrides)
        return ModelConfig(**fields)

    def __enter__(self) -> Self:  # type: ignore[override] - the server, not its URL
        self.start()
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.stop()
        if exc_type is None and self.errors:
            raise AssertionError(f"ScriptedServer handler errors: {self.errors!r}") from self.errors[0]
