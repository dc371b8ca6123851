"""Our transcript.jsonl (OpenAI-format chat messages) as Inspect chat messages.

Needs ``inspect_ai`` (imported by the caller's check first). The transcript is read as data: a
tool call whose arguments are not valid JSON keeps its raw text and a parse error, exactly as the
agent saw it; message content given as parts keeps its text parts.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall, ToolCallError

__all__ = ["first_prompt", "to_messages"]


def _text(content: Any) -> str:
    """Message content as text: a string as is, OpenAI content parts joined, anything else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and part.get("type"):
                parts.append(f"[{part['type']}]")  # an image or file part: named, not carried
            else:
                parts.append(json.dumps(part, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def _tool_call(raw: Any, index: int) -> ToolCall:
    raw = raw if isinstance(raw, dict) else {}
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    args_text = fn.get("arguments")
    arguments: dict[str, Any] = {}
    parse_error = None
    if isinstance(args_text, dict):
        arguments = args_text
    elif isinstance(args_text, str) and args_text.strip():
        try:
            parsed = json.loads(args_text)
        except ValueError as exc:
            parse_error = f"arguments are not valid JSON ({exc}): {args_text[:2000]}"
        else:
            if isinstance(parsed, dict):
                arguments = parsed
            else:
                parse_error = f"arguments are not a JSON object: {args_text[:2000]}"
    return ToolCall(id=str(raw.get("id") or f"call_{index}"), function=str(fn.get("name") or "?"),
                    arguments=arguments, parse_error=parse_error)


def to_messages(records: list[dict[str, Any]], model: str) -> list[ChatMessage]:
    """The chat messages of a transcript, in order; tool results marked as errors where the tool failed."""
    failed = {r.get("call_id") for r in records if r.get("kind") == "tool" and r.get("is_error")}
    names: dict[str, str] = {}
    out: list[ChatMessage] = []
    for rec in records:
        msg = rec.get("message")
        if rec.get("kind") != "message" or not isinstance(msg, dict):
            continue
        role = msg.get("role")
        text = _text(msg.get("content"))
        if role == "system":
            out.append(ChatMessageSystem(content=text))
        elif role == "user":
            out.append(ChatMessageUser(content=text))
        elif role == "assistant":
            calls = [_tool_call(c, i) for i, c in enumerate(msg.get("tool_calls") or [])]
            names.update({c.id: c.function for c in calls})
            reasoning = rec.get("reasoning") or msg.get("reasoning_content") or msg.get("reasoning")
            content: str | list[Any] = text
            if isinstance(reasoning, str) and reasoning:
                content = [ContentReasoning(reasoning=reasoning), *([ContentText(text=text)] if text else [])]
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None, model=model))
        elif role == "tool":
            call_id = str(msg.get("tool_call_id") or "")
            error = ToolCallError(type="unknown", message=text[:2000]) if call_id in failed else None
            out.append(ChatMessageTool(content=text, tool_call_id=call_id or None,
                                       function=names.get(call_id) or msg.get("name"), error=error))
    return out


def first_prompt(records: list[dict[str, Any]]) -> str | None:
    """The first user message: the task prompt as the agent got it."""
    for rec in records:
        msg = rec.get("message")
        if rec.get("kind") == "message" and isinstance(msg, dict) and msg.get("role") == "user":
            return _text(msg.get("content"))
    return None
