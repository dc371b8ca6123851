"""Value types of one chat completion, as the rest of agentbench sees it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ChatResult", "RequestStats", "ToolCall", "Usage"]


class ToolCall(BaseModel):
    """One tool call as the model sent it.

    ``arguments`` is the raw JSON string, unparsed and unrepaired: it may be invalid, and the
    agent must answer an invalid one with a tool error rather than guess.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str


class Usage(BaseModel):
    """Token counts as the endpoint reported them (zeros when it reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Part of completion_tokens spent thinking (completion_tokens_details.reasoning_tokens).
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class RequestStats(BaseModel):
    """Timing of one ``ChatClient.chat`` call.

    ``wall_s`` covers the whole call, retries and backoff included. ``ttft_s`` (time to the first
    content, reasoning or tool-call delta) and ``decode_tok_s`` (completion tokens per second
    after that first token) describe the successful attempt; both are None when not streamed,
    and ``decode_tok_s`` is None when the endpoint reported no completion tokens.
    """

    wall_s: float
    ttft_s: float | None = None
    decode_tok_s: float | None = None
    attempts: int = 1
    status: int | None = None
    streamed: bool = False


class ChatResult(BaseModel):
    """One assistant turn.

    ``message`` is the assistant message to append to the history, shaped as the API wants it
    back: role, content, tool_calls (only when there are some) and, for DeepSeek-format thinking
    models, ``reasoning_content`` (DeepSeek answers 400 when it is missing on later tool turns).
    """

    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    stats: RequestStats
    message: dict[str, Any]
