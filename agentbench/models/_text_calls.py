"""Tool calls a model wrote as *text* instead of through the tools API.

``<tool_call>`` tags, ``<function=...>`` tags, DeepSeek tokens and DSML, Mistral ``[TOOL_CALLS]``,
Llama's ``<|python_tag|>`` and JSON call objects: the builtin agent never executes them (it tells
the model so), and the preflight reads them as a server that does not parse tool calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["find_text_tool_calls"]


# Each marker stands for one call; families where a wrapper token surrounds several calls count
# the per-call token and fall back to one when only the wrapper leaked.
_TEXT_MARKERS: list[tuple[str, re.Pattern[str], re.Pattern[str] | None]] = [
    ("<tool_call> tag", re.compile(r"<tool_call>|<\|tool_call\|>"), None),
    ("<function=...> tag", re.compile(r"<function=[\w.-]+>"), None),
    ("DeepSeek tool-call tokens", re.compile(r"<[|｜]tool[▁_ ]call[▁_ ]begin[|｜]>"),
     re.compile(r"<[|｜]tool[▁_ ]calls[▁_ ]begin[|｜]>")),
    ("DeepSeek DSML markup", re.compile(r"<[|｜]DSML[|｜]invoke\b"), re.compile(r"<[|｜]DSML[|｜]")),
    ("[TOOL_CALLS] token", re.compile(r"\[TOOL_CALLS\]"), None),
    ("<|python_tag|> token", re.compile(r"<\|python_tag\|>"), None),
]
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n(.*?)```", re.DOTALL)


def _is_call_object(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    return isinstance(obj.get("name"), str) and ("arguments" in obj or "parameters" in obj)


def _json_calls(text: str) -> int:
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return 0
    items = obj if isinstance(obj, list) else [obj]
    return sum(1 for item in items if _is_call_object(item))


def find_text_tool_calls(content: str | None) -> tuple[int, list[str]]:
    """How many tool calls ``content`` contains as text, and what kinds (empty when none).

    Looks for ``<tool_call>`` / ``<function=...>`` tags, DeepSeek ``<｜tool▁call▁begin｜>``
    tokens and DSML, Mistral ``[TOOL_CALLS]``, and JSON objects ``{"name": ..., "arguments": ...}``
    either fenced or as the whole message.
    """
    if not content:
        return 0, []
    count, kinds = 0, []
    for label, per_call, wrapper in _TEXT_MARKERS:
        n = len(per_call.findall(content))
        if n == 0 and wrapper is not None and wrapper.search(content):
            n = 1
        if n:
            count, kinds = max(count, n), kinds + [label]
    fenced = sum(_json_calls(block.strip()) for block in _FENCE.findall(content))
    whole = _json_calls(content.strip()) if not fenced else 0
    if fenced or whole:
        kinds.append("JSON tool call in the message text")
        count = max(count, fenced + whole)
    return count, kinds
