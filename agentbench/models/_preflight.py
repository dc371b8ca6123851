"""Endpoint preflight: is this model usable by agentbench before a run spends time on it?"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from ..errors import ModelError, ModelHTTPError
from ._client import ChatClient
from ._text_calls import find_text_tool_calls
from ._types import ChatResult

__all__ = ["PING_TOOL", "PreflightItem", "preflight"]


class PreflightItem(BaseModel):
    """One preflight check: its name, whether it passed, and what was seen (or what to fix).

    ``blocks``: a failure that is the endpoint's (unreachable, the server cannot parse tool calls)
    stops the model's cells as infrastructure errors; one that is the model's own (it answers in
    prose instead of calling a tool) does not: the cells run and the model fails there on its own.
    """

    name: str
    ok: bool
    detail: str
    blocks: bool = True


PING_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "ping",
        "description": "Reply to a ping. Always call this when asked to ping.",
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "Text to send."}},
            "required": ["message"],
        },
    },
}

_PLAIN = [{"role": "user", "content": "Reply with the single word: pong"}]
_TOOL = [{"role": "user", "content": "Call the ping tool with message 'hello'. Do not answer in text."}]


def _error_detail(exc: ModelError) -> str:
    return f"{type(exc).__name__}: {exc}"


async def _chat(client: ChatClient, messages: list[dict[str, Any]], **kw: Any) -> ChatResult | ModelError:
    try:
        return await client.chat(messages, **kw)
    except ModelError as exc:
        return exc


async def preflight(client: ChatClient) -> list[PreflightItem]:
    """Run the checks in this order and return one item each; never raises for endpoint failures.

    ``reachable`` and ``model-listed`` (GET /models), ``completion`` (a plain non-streamed
    answer), ``tool-call`` (the model calls a ``ping`` tool with valid JSON arguments, then answers
    the tool result: the round trip DeepSeek thinking needs ``reasoning_content`` for),
    ``streaming`` (a streamed answer with usage), ``thinking`` (the configured toggle was accepted
    and, when off, honoured). An unreachable endpoint stops after the first item.
    """
    cfg = client.config
    items: list[PreflightItem] = []

    try:
        models = await client.list_models()
    except ModelHTTPError as exc:
        if exc.status is None:  # nothing answered at all
            return [PreflightItem(name="reachable", ok=False, detail=_error_detail(exc))]
        items.append(PreflightItem(name="reachable", ok=True, detail=f"{client.base_url} answers"))
        items.append(PreflightItem(name="model-listed", ok=False, detail=f"GET /models failed: {_error_detail(exc)}"))
    except ModelError as exc:
        return [PreflightItem(name="reachable", ok=False, detail=_error_detail(exc))]
    else:
        items.append(PreflightItem(name="reachable", ok=True, detail=f"{client.base_url} answers"))
        listed = cfg.model in models
        shown = ", ".join(models[:10]) + (" ..." if len(models) > 10 else "")
        items.append(PreflightItem(
            name="model-listed", ok=listed,
            detail=f"'{cfg.model}' is served" if listed
            else f"'{cfg.model}' is not among the served models ({shown or 'none'}); fix `model` in models.toml",
        ))

    plain = await _chat(client, _PLAIN, stream=False)
    if isinstance(plain, ModelError):
        items.append(PreflightItem(name="completion", ok=False, detail=_error_detail(plain)))
    else:
        ok = bool(plain.content and plain.content.strip())
        items.append(PreflightItem(
            name="completion", ok=ok,
            detail=f"answered {plain.content[:60]!r} in {plain.stats.wall_s:.2f}s" if ok
            else f"empty answer (finish_reason={plain.finish_reason}); raise max_tokens if thinking used them up",
        ))

    items.append(await _tool_round_trip(client))

    streamed = await _chat(client, _PLAIN, stream=True)
    if isinstance(streamed, ModelError):
        items.append(PreflightItem(name="streaming", ok=False, detail=_error_detail(streamed)))
    else:
        ok = bool(streamed.stats.streamed and streamed.content)
        s = streamed.stats
        speed = f", {s.decode_tok_s:.1f} tok/s" if s.decode_tok_s else ", no usage reported"
        ttft = f"ttft {s.ttft_s:.2f}s" if s.ttft_s is not None else "no tokens"
        items.append(PreflightItem(
            name="streaming", ok=ok,
            detail=f"{ttft}{speed}" if ok else "no streamed content; set stream = false in models.toml",
        ))

    items.append(_thinking_item(client, plain))
    return items


_TOOL_WORDS = re.compile(r"tool|function", re.IGNORECASE)
_PARSER_HINT = "enable tool-call parsing on the server (vLLM: --enable-auto-tool-choice --tool-call-parser ...)"


async def _tool_round_trip(client: ChatClient) -> PreflightItem:
    first = await _chat(client, _TOOL, tools=[PING_TOOL])
    if isinstance(first, ModelError):
        status = getattr(first, "status", None)
        said = f"{first} {getattr(first, 'body', '') or ''}"
        if status == 400 and _TOOL_WORDS.search(said):  # the server refuses requests with tools
            return PreflightItem(name="tool-call", ok=False, detail=f"the server cannot take tool calls: "
                                 f"{_error_detail(first)}; {_PARSER_HINT}")
        return PreflightItem(name="tool-call", ok=False, detail=_error_detail(first))
    calls = [c for c in first.tool_calls if c.name == "ping"]
    if not calls:
        seen = (first.content or "")[:80]
        count, kinds = find_text_tool_calls(first.content)
        if count:  # the model called the tool, in the text: the server did not parse it
            return PreflightItem(
                name="tool-call", ok=False,
                detail=f"the server cannot parse tool calls: the model wrote one as text ({', '.join(kinds)}: "
                f"{seen!r}); {_PARSER_HINT}",
            )
        # Prose: the server works, the model does not call tools. That is the model's result to have.
        return PreflightItem(
            name="tool-call", ok=False, blocks=False,
            detail=f"the model answered in prose instead of calling the ping tool ({seen!r}); its cells run "
            "and it is judged by what it does",
        )
    call = calls[0]
    try:
        json.loads(call.arguments)
    except ValueError:
        return PreflightItem(name="tool-call", ok=False, detail=f"arguments are not JSON: {call.arguments[:80]!r}")
    history = [*_TOOL, first.message, {"role": "tool", "tool_call_id": call.id, "content": "pong"}]
    second = await _chat(client, history, tools=[PING_TOOL])
    if isinstance(second, ModelError):
        return PreflightItem(
            name="tool-call", ok=False, detail=f"the turn after the tool result failed: {_error_detail(second)}"
        )
    return PreflightItem(name="tool-call", ok=True, detail=f"ping({call.arguments}) and a follow-up turn worked")


def _thinking_item(client: ChatClient, plain: ChatResult | ModelError) -> PreflightItem:
    cfg = client.config
    if cfg.thinking is None:
        return PreflightItem(name="thinking", ok=True, detail="not set; the endpoint's default applies")
    sent = json.dumps({k: v for k, v in client.build_payload([]).items() if k in ("thinking", "chat_template_kwargs")})
    if isinstance(plain, ModelError):
        status = getattr(plain, "status", None)
        return PreflightItem(
            name="thinking", ok=False,
            detail=f"a request with {sent} failed (HTTP {status}); check thinking_format "
            f"('{cfg.thinking_format}') or remove `thinking`",
        )
    if cfg.thinking == "off" and plain.reasoning:
        return PreflightItem(
            name="thinking", ok=False,
            detail=f"thinking is off but the model still reasoned: {sent} was ignored; check thinking_format",
        )
    if cfg.thinking == "on" and not plain.reasoning:
        return PreflightItem(
            name="thinking", ok=True,
            detail=f"{sent} accepted, but no reasoning came back (the server may hide or not parse it)",
        )
    return PreflightItem(name="thinking", ok=True, detail=f"{sent} accepted")
