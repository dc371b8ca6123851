"""The upstream side of the gateway: a failed attempt, and an SSE answer relayed as it comes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx

from ..models._stream import Assembled, ErrorEvent, _StreamState

__all__ = ["Upstream", "read_limited", "relay_stream"]


class Upstream(Exception):
    """A failed upstream attempt: status None for transport errors."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "", retryable: bool = True):
        super().__init__(message)
        self.status, self.body, self.retryable = status, body, retryable


async def read_limited(response: httpx.Response, limit: int) -> str:
    """At most ``limit`` bytes of a response body, as text (an error body is evidence, not data)."""
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= limit:
            break
    return data[:limit].decode("utf-8", errors="replace")


async def relay_stream(response: httpx.Response, writer: asyncio.StreamWriter) -> Assembled:
    """Relay SSE bytes to the agent as they come, parsing a copy for the record."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                 b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    state, pending, data_lines = _StreamState(), b"", []
    stream_error: str | None = None
    async for chunk in response.aiter_bytes():  # decoded: the agent never sees gzip
        if not chunk:
            continue
        writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in (ln.rstrip(b"\r").decode("utf-8", errors="replace") for ln in lines):
            if line.startswith("data:"):
                data_lines.append(line[5:].removeprefix(" "))
            elif line == "" and data_lines:
                event, data_lines = "\n".join(data_lines), []
                if event.strip() == "[DONE]":
                    state.out.complete = True
                    continue
                try:
                    state.feed(json.loads(event))
                except ErrorEvent as exc:
                    stream_error = f"error event in the stream: {exc}"
                except (ValueError, AttributeError):
                    stream_error = f"an SSE event is not a JSON object: {event[:200]!r}"
    writer.write(b"0\r\n\r\n")
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    out = state.result()
    out.t_end = time.monotonic()
    out.complete = out.complete or bool(out.finish_reason)
    if stream_error or not out.complete:
        raise Upstream(stream_error or "the stream ended before [DONE] or a finish reason", status=200,
                       retryable=False)
    return out
