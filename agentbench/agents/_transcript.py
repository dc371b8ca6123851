"""An append-only JSON-lines record of one agent session.

Every message (system, user, assistant with reasoning and tool calls, tool results), every
request's statistics and every notable event is written as one JSON object per line and flushed
at once, so a crash or an infrastructure error loses nothing that happened before it.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel

__all__ = ["Transcript"]


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(value)
    return str(value)


class Transcript:
    """Append JSON lines to ``path``: ``{"ts", "elapsed_s", "kind", ...}``.

    Kinds: ``message`` (with ``message``: the chat message as sent or received), ``request``
    (``stats``, ``usage``, ``finish_reason`` of one model request), ``tool`` (one executed tool
    call: name, is_error, duration) and ``event`` (start, stop, errors).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Line-buffered append: each write reaches the OS when the line ends.
        self._file = self.path.open("a", encoding="utf-8", buffering=1)
        self._t0 = time.monotonic()

    def _write(self, kind: str, **fields: Any) -> None:
        if self._file.closed:
            raise ValueError(f"transcript {self.path} is closed")
        record = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "elapsed_s": round(time.monotonic() - self._t0, 3),
            "kind": kind,
            **fields,
        }
        self._file.write(json.dumps(record, ensure_ascii=False, default=_jsonable) + "\n")
        self._file.flush()

    def message(self, message: dict[str, Any], *, turn: int | None = None, reasoning: str | None = None) -> None:
        """Record one chat message exactly as it is (or will be) in the conversation.

        ``reasoning`` is the model's thinking when the message sent back does not carry it
        (only DeepSeek-format models get it back in the history), so it is never lost.
        """
        extra = {"reasoning": reasoning} if reasoning else {}
        self._write("message", turn=turn, message=message, **extra)

    def request(self, *, turn: int, stats: Any, usage: Any, finish_reason: str | None) -> None:
        """Record one model request's statistics (RequestStats, Usage)."""
        self._write("request", turn=turn, stats=stats, usage=usage, finish_reason=finish_reason)

    def tool(self, *, turn: int, call_id: str, name: str, is_error: bool, duration_s: float) -> None:
        """Record the execution of one tool call (its result is recorded as a message)."""
        self._write("tool", turn=turn, call_id=call_id, name=name, is_error=is_error,
                    duration_s=round(duration_s, 3))

    def event(self, event: str, **data: Any) -> None:
        """Record a session event: ``start``, ``stop``, ``model-error``, ``nudge`` and so on."""
        self._write("event", event=event, **data)

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def read(path: str | Path) -> list[dict[str, Any]]:
        """All records of a transcript file, in order (a torn last line is skipped)."""
        records = []
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return records
