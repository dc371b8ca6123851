"""HTTP/1.1 on the gateway's unix socket: one request per connection, read within bounds.

Everything here is sized for an attacker on the other end (the sandbox): the request head must
arrive within ``HEADER_TIMEOUT_S`` and fit ``HEADER_LIMIT``; the body within ``BODY_TIMEOUT_S``
and ``BODY_LIMIT``, the limit checked before a byte of it is read (a declared Content-Length) or
as it arrives (chunked). A request outside the bounds is answered with its status (400, 408,
413, 431) and the connection closed, its body never read. A connection closed before a whole
request arrived made no request: ConnectionError, nothing to answer.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BODY_LIMIT",
    "BODY_TIMEOUT_S",
    "HEADER_LIMIT",
    "HEADER_TIMEOUT_S",
    "Refused",
    "Request",
    "error_body",
    "read_request",
    "respond",
]

HEADER_LIMIT = 64 * 1024
HEADER_TIMEOUT_S = 15.0
# A chat request carries the whole history: 4 MiB is about a million tokens of text, far above any
# model's context, and small enough that a few at once cannot weigh on the host process.
BODY_LIMIT = 4 * 1024 * 1024
BODY_TIMEOUT_S = 60.0


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Refused(Exception):
    """A request the gateway will not read on: answered with ``status`` and closed."""

    def __init__(self, status: int, message: str, *, declared: int | None = None) -> None:
        super().__init__(message)
        self.status, self.declared = status, declared


async def read_request(reader: asyncio.StreamReader, *, header_timeout_s: float = HEADER_TIMEOUT_S,
                       body_timeout_s: float = BODY_TIMEOUT_S, body_limit: int = BODY_LIMIT) -> Request:
    """Read one request within the bounds of the module docstring; Refused otherwise."""
    try:
        async with asyncio.timeout(header_timeout_s):
            head = await reader.readuntil(b"\r\n\r\n")
    except TimeoutError:
        raise Refused(408, f"no complete request head within {header_timeout_s:g} s") from None
    except asyncio.LimitOverrunError:
        raise Refused(431, f"request head over {HEADER_LIMIT // 1024} KiB") from None
    except asyncio.IncompleteReadError as exc:
        # Closed before a whole head: no request was made (a readiness probe connects and closes).
        raise ConnectionResetError(f"closed after {len(exc.partial)} bytes of a request head") from None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ", 2)
    except ValueError:
        raise Refused(400, f"not an HTTP request line: {lines[0][:80]!r}") from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            key, _, value = line.partition(":")
            key = key.strip().lower()
            if key in headers and key in ("content-length", "transfer-encoding"):
                raise Refused(400, f"{key} given twice")
            headers[key] = value.strip()
    try:
        async with asyncio.timeout(body_timeout_s):
            body = await _read_body(reader, headers, body_limit)
    except TimeoutError:
        raise Refused(408, f"the request body did not arrive within {body_timeout_s:g} s") from None
    except asyncio.IncompleteReadError as exc:
        raise ConnectionResetError(f"closed after {len(exc.partial)} bytes of a request body") from None
    return Request(method=method, path=target.split("?", 1)[0].rstrip("/"), headers=headers, body=body)


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str], limit: int) -> bytes:
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    if chunked and "content-length" in headers:
        raise Refused(400, "both Content-Length and chunked Transfer-Encoding")
    if chunked:
        parts, size = [], 0
        while True:
            try:
                line = await reader.readuntil(b"\r\n")
            except asyncio.LimitOverrunError:
                raise Refused(400, "a chunk-size line is too long") from None
            try:
                n = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise Refused(400, f"bad chunk size {line[:40]!r}") from None
            if n < 0:
                raise Refused(400, "negative chunk size")
            if n == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, if any
                    pass
                return b"".join(parts)
            size += n
            if size > limit:  # before this chunk is read
                raise Refused(413, f"request body over {limit} bytes (chunked)", declared=size)
            parts.append(await reader.readexactly(n))
            await reader.readexactly(2)
    raw = headers.get("content-length", "0").strip() or "0"
    if not (raw.isascii() and raw.isdigit()):
        raise Refused(400, f"Content-Length is not a whole number: {raw[:40]!r}")
    length = int(raw) if len(raw) < 16 else limit + 1
    if length > limit:
        raise Refused(413, f"request body of {length} bytes is over the {limit} bytes allowed", declared=length)
    return await reader.readexactly(length) if length else b""


def error_body(message: str, kind: str, code: int) -> dict[str, Any]:
    """An OpenAI-style error object (agents show its message)."""
    return {"error": {"message": message, "type": kind, "code": code}}


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 408: "Request Timeout", 413: "Content Too Large",
            429: "Too Many Requests", 431: "Request Header Fields Too Large", 502: "Bad Gateway",
            503: "Service Unavailable"}


async def respond(writer: asyncio.StreamWriter, status: int, body: dict[str, Any] | bytes, *,
                  content_type: str = "application/json") -> None:
    """Write one whole response and ``Connection: close``."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    reason = _REASONS.get(status, "Error")
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(data)}\r\n"
                 "Connection: close\r\n\r\n".encode() + data)
    await writer.drain()
