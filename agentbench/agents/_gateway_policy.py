"""What of an agent's chat request goes upstream, and how much of an exchange is recorded.

The agent is not trusted to build the request the key pays for: only the fields a chat request
needs are forwarded (:data:`CHAT_FIELDS`; the rest is dropped and named in the record), ``n`` is
forced to 1, and every token cap is an integer within the attempt's limits whatever JSON type the
agent sent (a string, a float, ``true``, a number of 100 digits). The model's own settings
(model id, temperature, thinking toggle) replace the agent's.

Records are bounded too: one exchange in ``gateway.jsonl`` and one message in the transcript keep
at most :data:`RECORD_CHARS` of any string and :data:`RECORD_BYTES` in all, with a marker saying
what was cut.
"""

from __future__ import annotations

import json
from typing import Any

from ..config import ModelConfig
from ..models._client import apply_thinking

__all__ = ["CHAT_FIELDS", "RECORD_BYTES", "RECORD_CHARS", "TOKEN_FIELDS", "bounded", "bounded_json", "rewrite"]

# The chat-completions fields an agent may set; everything else is dropped before forwarding.
CHAT_FIELDS = frozenset({
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "temperature", "top_p", "stop",
    "max_tokens", "max_completion_tokens", "stream", "stream_options", "presence_penalty", "frequency_penalty",
    "seed", "response_format", "n",
})
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")
RECORD_CHARS = 64 * 1024  # of one string in a record
RECORD_BYTES = 1024 * 1024  # of one record line
CUT = "[agentbench: {n} characters cut here]"


def _token_cap(value: Any, limit: int | None, budget: int) -> int | None:
    """The cap to send for one token field the agent gave (None: drop the field)."""
    valid = isinstance(value, int) and not isinstance(value, bool) and value > 0
    if limit is not None:
        return min(value, limit) if valid else limit
    return min(value, budget) if valid else None


def rewrite(body: dict[str, Any], cfg: ModelConfig, *, limit: int | None, budget: int) -> tuple[dict[str, Any],
                                                                                                list[str]]:
    """The payload to forward for the agent's ``body``, and the names of the fields dropped.

    ``limit`` is the per-request token cap (None when none is configured), ``budget`` the tokens
    the attempt has left: a token field is then at most ``limit``, or at most ``budget``.
    """
    dropped = sorted(k for k in body if k not in CHAT_FIELDS)
    payload = {k: v for k, v in body.items() if k in CHAT_FIELDS}
    payload["model"] = cfg.model
    payload.pop("n", None)  # one completion per request, whatever was asked: n=64 is 64 paid answers
    if cfg.temperature is not None:
        payload["temperature"] = cfg.temperature
    asked = [k for k in TOKEN_FIELDS if k in payload]
    for key in asked:
        cap = _token_cap(payload[key], limit, max(1, budget))
        if cap is None:
            del payload[key]
        else:
            payload[key] = cap
    if limit is not None and not asked:
        payload["max_tokens"] = limit
    apply_thinking(payload, cfg)
    if payload.get("stream") is True:
        payload["stream_options"] = {"include_usage": True}
    else:
        payload.pop("stream", None)
        payload.pop("stream_options", None)
    return payload, dropped


def bounded(value: Any, max_chars: int = RECORD_CHARS) -> Any:
    """``value`` with every string longer than ``max_chars`` cut in the middle, saying how much."""
    if isinstance(value, str):
        if len(value) <= max_chars:
            return value
        half = max_chars // 2
        return value[:half] + CUT.format(n=len(value) - 2 * half) + value[-half:]
    if isinstance(value, dict):
        return {str(k)[:max_chars]: bounded(v, max_chars) for k, v in value.items()}
    if isinstance(value, list):
        return [bounded(v, max_chars) for v in value]
    return value


def bounded_json(record: dict[str, Any], max_bytes: int = RECORD_BYTES) -> str:
    """One JSON line for ``record``, at most about ``max_bytes``: long strings cut, then the whole record."""
    line = json.dumps(bounded(record), ensure_ascii=False)
    if len(line.encode()) <= max_bytes:
        return line
    head = line[: max_bytes // 2]
    return json.dumps({k: record[k] for k in ("ts", "turn") if k in record} | {
        "cut": f"agentbench: this record was {len(line.encode())} bytes; its first {len(head)} characters follow",
        "head": head}, ensure_ascii=False)
