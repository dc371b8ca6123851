"""A model for agentbench's builtin agent that holds the work where a test needs it.

A test that must act while a run is in progress (Ctrl-C it, kill it, lose its engine) cannot
count on the run still being there after some seconds: a fast machine finishes first, a busy
one has not started. ``GatedModel`` makes "in progress" a state the test holds:

* agentbench's preflight gets what it asks for (text, a ``ping`` call, then text);
* an agent's first turn gets a ``write_file`` call writing ``index.html``;
* a later turn (a tool result is in the history, so the attempt's sandbox exists and was used)
  gets ``finish``, except that while the gate is shut it waits: the attempt stays mid-agent,
  its container up, until the test calls :meth:`open`. ``let_through`` such turns pass first.

``held`` counts the requests waiting now; :meth:`wait_held` waits for a number of them (the
run is then exactly there). :meth:`stop` opens the gate, so no request waits past the test.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from agentbench.config import ModelConfig
from agentbench.models import OpenAICompatServer, Reply

from .waiting import HANG_S

__all__ = ["GATED_MODEL", "PAGE", "GatedModel"]

GATED_MODEL = "gated-model"
PAGE = "<!DOCTYPE html><title>gated</title><p>written while a test held the run</p>\n"


def _call(name: str, args: dict[str, Any]) -> Reply:
    return Reply(message={"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        finish_reason="tool_calls", usage={"prompt_tokens": 100, "completion_tokens": 20})


class GatedModel(OpenAICompatServer):
    """See the module docstring."""

    def __init__(self, *, let_through: int = 0) -> None:
        super().__init__(self._answer, models=[GATED_MODEL])
        self.let_through = let_through
        self.held = 0  # requests waiting at the gate now
        self.passed = 0  # later turns answered while the gate was shut (at most let_through)
        self._gate = threading.Condition()
        self._open = False

    def _answer(self, body: dict[str, Any]) -> Reply:
        names = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        messages = body.get("messages") or []
        after_tool = any(m.get("role") == "tool" for m in messages)
        if "write_file" not in names:  # preflight
            if "ping" in names and not after_tool:
                return _call("ping", {"message": "hello"})
            return Reply(message={"role": "assistant", "content": "pong"})
        if not after_tool:
            return _call("write_file", {"path": "index.html", "content": PAGE})
        with self._gate:
            if not self._open and self.passed >= self.let_through:
                self.held += 1
                self._gate.notify_all()
                self._gate.wait_for(lambda: self._open)
                self.held -= 1
            elif not self._open:
                self.passed += 1
        return _call("finish", {"summary": "done"})

    def wait_held(self, n: int, *, timeout_s: float = HANG_S) -> None:
        """Wait until ``n`` requests wait at the gate (the attempts they belong to are mid-agent)."""
        with self._gate:
            if not self._gate.wait_for(lambda: self.held >= n, timeout_s):
                raise AssertionError(f"waited {timeout_s:g} s for {n} request(s) at the gate; {self.held} came")

    def open(self) -> None:
        """Let every waiting request and every later one through."""
        with self._gate:
            self._open = True
            self._gate.notify_all()

    def stop(self) -> None:
        self.open()
        super().stop()

    def config(self, **overrides: Any) -> ModelConfig:
        fields: dict[str, Any] = {"name": "gated", "base_url": self.base_url or self.start(), "model": GATED_MODEL,
                                  "max_retries": 0, "request_timeout_s": 3600.0}
        fields.update(overrides)
        return ModelConfig(**fields)

    def models_toml(self, name: str = "gated") -> str:
        """A ``models.toml`` entry for this model (start it first): a held request never times out."""
        return (f'[models.{name}]\nbase_url = "{self.base_url or self.start()}"\nmodel = "{GATED_MODEL}"\n'
                "max_retries = 0\nrequest_timeout_s = 3600\n")
