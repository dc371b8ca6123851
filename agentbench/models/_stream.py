"""Assembling a chat completion from an SSE stream or a JSON body (no I/O, no retries here)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelProtocolError
from ._types import ToolCall, Usage

__all__ = ["Assembled", "ErrorEvent", "assemble_completion", "assemble_stream", "parse_usage"]

ErrorFactory = Callable[[str], ModelProtocolError]


class ErrorEvent(Exception):
    """The endpoint sent an ``{"error": ...}`` object instead of a completion (vLLM does, mid-stream)."""

    def __init__(self, error: Any):
        super().__init__(str(error)[:500])
        self.error = error
        code = error.get("code") if isinstance(error, dict) else None
        self.status = code if isinstance(code, int) else None


@dataclass
class Assembled:
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    streamed: bool = False
    complete: bool = False
    t_first: float | None = None  # monotonic time of the first content/reasoning/tool delta
    t_end: float = 0.0


def parse_usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("completion_tokens_details") or {}

    def num(value: Any) -> int:
        return value if isinstance(value, int) and value >= 0 else 0

    return Usage(
        prompt_tokens=num(raw.get("prompt_tokens")),
        completion_tokens=num(raw.get("completion_tokens")),
        reasoning_tokens=num(details.get("reasoning_tokens")) if isinstance(details, dict) else 0,
    )


def _text(value: Any) -> str:
    """Content as text; some servers send a list of ``{"type": "text", "text": ...}`` parts."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "".join(p.get("text", "") for p in value if isinstance(p, dict))
    return str(value)


def _arguments(value: Any) -> str:
    # The spec says a JSON string; a few servers (Ollama) send an object. Keep strings untouched.
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _reasoning_of(obj: dict[str, Any]) -> str:
    # Newer vLLM sends `reasoning`, DeepSeek and older vLLM `reasoning_content`; some versions send
    # both with the same text, so take one per delta, never both.
    return _text(obj.get("reasoning_content") or obj.get("reasoning"))


class _StreamState:
    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.out = Assembled(streamed=True)
        self.saw_choice = False

    def _first(self) -> None:
        if self.out.t_first is None:
            self.out.t_first = time.monotonic()

    def feed(self, chunk: dict[str, Any]) -> None:
        if chunk.get("error"):
            raise ErrorEvent(chunk["error"])
        if chunk.get("usage"):
            self.out.usage = parse_usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue  # n=1: only the first choice matters
            self.saw_choice = True
            delta = choice.get("delta") or {}
            if piece := _reasoning_of(delta):
                self._first()
                self.reasoning.append(piece)
            if piece := _text(delta.get("content")):
                self._first()
                self.content.append(piece)
            for raw in delta.get("tool_calls") or []:
                self._tool_delta(raw)
            if choice.get("finish_reason"):
                self.out.finish_reason = choice["finish_reason"]

    def _tool_delta(self, raw: dict[str, Any]) -> None:
        self._first()
        index = raw.get("index")
        if not isinstance(index, int):  # servers without indices: a new id starts a new call
            known = {c["id"]: i for i, c in self.calls.items()}
            if raw.get("id") in known:
                index = known[raw["id"]]
            elif raw.get("id") or not self.calls:
                index = len(self.calls)
            else:
                index = max(self.calls)
        call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        if raw.get("id") and not call["id"]:
            call["id"] = raw["id"]
        fn = raw.get("function") or {}
        if fn.get("name") and not call["name"]:
            call["name"] = fn["name"]
        call["arguments"].append(_arguments(fn.get("arguments")))

    def result(self) -> Assembled:
        out = self.out
        out.content = "".join(self.content) or None
        out.reasoning = "".join(self.reasoning) or None
        out.tool_calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments="".join(c["arguments"]))
            for i, c in sorted(self.calls.items())
        ]
        return out


async def assemble_stream(lines: AsyncIterator[str], error: ErrorFactory) -> Assembled:
    """Read SSE lines until ``[DONE]`` or the end; comments (``: keep-alive``) are skipped."""
    state = _StreamState()
    data: list[str] = []

    def dispatch() -> bool:
        payload = "\n".join(data)
        data.clear()
        if payload.strip() == "[DONE]":
            state.out.complete = True
            return True
        try:
            chunk = json.loads(payload)
        except ValueError as exc:
            raise error(f"an SSE event is not JSON: {payload[:200]!r}") from exc
        if not isinstance(chunk, dict):
            raise error(f"an SSE event is not a JSON object: {payload[:200]!r}")
        state.feed(chunk)
        return False

    async for line in lines:
        if line == "":
            if data and dispatch():
                break
        elif line.startswith(":"):
            continue  # comment, e.g. keep-alive; the total deadline still runs
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value.removeprefix(" "))
        # event:, id:, retry: fields carry nothing a chat completion needs
    else:
        if data:
            dispatch()
    if not state.saw_choice:
        if not state.out.complete:
            return state.result()  # nothing at all: the caller treats it as a cut stream
        raise error("the stream had no choices")
    if state.out.finish_reason:
        state.out.complete = True
    return state.result()


def assemble_completion(raw: bytes, error: ErrorFactory) -> Assembled:
    """Parse a non-streamed ``chat.completion`` body."""
    try:
        obj = json.loads(raw)
    except ValueError as exc:
        raise error(f"the body is not JSON: {raw[:200]!r}") from exc
    if not isinstance(obj, dict):
        raise error(f"the body is not a JSON object: {raw[:200]!r}")
    if obj.get("error"):
        raise ErrorEvent(obj["error"])
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise error(f"no choices in {raw[:200]!r}")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise error(f"choices[0] has no message: {raw[:200]!r}")
    calls = []
    for i, raw_call in enumerate(message.get("tool_calls") or []):
        fn = raw_call.get("function") or {}
        calls.append(ToolCall(
            id=raw_call.get("id") or f"call_{i}", name=fn.get("name") or "", arguments=_arguments(fn.get("arguments"))
        ))
    return Assembled(
        content=_text(message.get("content")) or None,
        reasoning=_reasoning_of(message) or None,
        tool_calls=calls,
        finish_reason=choices[0].get("finish_reason"),
        usage=parse_usage(obj.get("usage")),
        streamed=False,
        complete=True,
        t_end=time.monotonic(),
    )
