"""The model gateway: the only way out of an external agent's sandbox, and where the key is added.

The sandbox keeps ``--network none``. Inside it, ``forwarder.js`` listens on the container's own
loopback and relays bytes to a unix socket bind-mounted (read-only) from a private host folder;
this module serves HTTP on that socket::

    agent -> 127.0.0.1:PORT (container) -> forwarder.js -> /run/agentbench/gateway.sock
          -> ModelGateway (host): budget, model settings, API key -> the real base_url

Per chat request (``POST .../chat/completions``) the gateway:

* refuses it with a 400 ``budget_exceeded`` error once ``max_turns`` requests were forwarded or
  ``max_tokens`` (prompt + completion, summed) were spent, and sets ``stopped`` so the caller ends
  the agent at once instead of waiting for it to give up;
* rewrites it: ``model`` becomes the configured id, the model's temperature and thinking toggle
  are applied as ``ChatClient`` sends them, ``max_tokens`` is capped at the per-request limit,
  streamed requests ask for usage;
* forwards it with the Bearer key, retrying transport errors and 408/409/429/5xx up to the model's
  ``max_retries`` before any byte reached the agent;
* passes the answer through as it comes (SSE streams chunk by chunk) and records it: every request
  and response in ``gateway.jsonl``, the conversation and per-request statistics in the session
  transcript, token usage and timings in ``record``. The agent's own headers never go upstream.

``GET .../models`` lists the configured model; anything else gets a 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import structlog

from ..config import ModelConfig
from ..models._client import RETRYABLE_STATUSES, _ssl_context, apply_thinking
from ..models._stream import Assembled, ErrorEvent, _StreamState, assemble_completion
from ..models._types import RequestStats, Usage
from ._transcript import Transcript

__all__ = ["CONTAINER_DIR", "SOCKET_NAME", "GatewayRecord", "ModelGateway"]

log = structlog.get_logger()

CONTAINER_DIR = "/run/agentbench"  # where the socket folder is mounted in the sandbox
SOCKET_NAME = "gateway.sock"
BODY_LIMIT = 64 * 1024 * 1024  # a request carries the whole history; far above any real one
ERROR_BODY_LIMIT = 4096
SANDBOX_UID = 1000


@dataclass
class GatewayRecord:
    """What the gateway saw of one session: the basis of the attempt's outcome and statistics."""

    turns: int = 0  # chat requests forwarded upstream
    usage: Usage = field(default_factory=Usage)
    requests: list[RequestStats] = field(default_factory=list)
    cap_hit: str | None = None  # "max_turns" / "max_tokens" once a request was refused for it
    refused: int = 0
    ok: int = 0  # requests answered 200 with a complete completion
    errors: list[dict[str, Any]] = field(default_factory=list)  # upstream failures, in order
    last_failed: bool = False  # the latest forwarded request ended in an upstream failure

    @property
    def tokens(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens


class _Upstream(Exception):
    """A failed upstream attempt: status None for transport errors."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "", retryable: bool = True):
        super().__init__(message)
        self.status, self.body, self.retryable = status, body, retryable


class ModelGateway:
    """Serve one sandbox's model traffic on a private unix socket (see the module docstring)."""

    def __init__(self, model: ModelConfig, *, api_key: str | None, base_url: str | None = None,
                 max_turns: int, max_tokens: int, max_tokens_per_request: int | None = None,
                 transcript: Transcript | None = None, exchanges: Path | None = None,
                 backoff_s: float = 1.0, keep_dir: bool = False) -> None:
        self.model = model
        self.base_url = (base_url or model.base_url).rstrip("/")
        self.max_turns, self.max_tokens = max_turns, max_tokens
        self.max_tokens_per_request = max_tokens_per_request or model.max_tokens
        self.transcript = transcript
        self.record = GatewayRecord()
        self.stopped = asyncio.Event()  # set when the budget is spent
        self._exchanges = exchanges.open("a", encoding="utf-8", buffering=1) if exchanges else None
        self._backoff_s = backoff_s
        self.keep_dir = keep_dir
        self._api_key = api_key
        self._http: httpx.AsyncClient | None = None
        self._server: asyncio.AbstractServer | None = None
        self._dir: Path | None = None
        self._seen: list[Any] = []  # messages of the last request, to record only what is new
        self._lock = asyncio.Lock()  # one upstream request at a time: budgets stay exact
        self._streaming: set[asyncio.StreamWriter] = set()  # answers already under way

    @property
    def socket_dir(self) -> Path:
        assert self._dir is not None, "start() first"
        return self._dir

    async def start(self) -> Path:
        """Listen on a fresh socket in a private folder; returns the folder to bind-mount."""
        self._dir = Path(tempfile.mkdtemp(prefix="agentbench-gw-"))
        path = self._dir / SOCKET_NAME
        self._server = await asyncio.start_unix_server(self._serve, path=str(path), limit=1 << 20)
        # Only the sandbox user (uid 1000) may reach the socket: the folder is its own, mode 0700.
        # Without root (no chown) the folder is traversable but unlistable and the socket is open.
        try:
            os.chown(self._dir, SANDBOX_UID, SANDBOX_UID)
            os.chown(path, SANDBOX_UID, SANDBOX_UID)
            os.chmod(path, 0o600)
        except PermissionError:
            os.chmod(self._dir, 0o711)
            os.chmod(path, 0o666)
        headers = {"Accept": "application/json, text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._http = httpx.AsyncClient(headers=headers, verify=_ssl_context(),
                                       timeout=httpx.Timeout(self.model.request_timeout_s, connect=15.0))
        return self._dir

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        if self._http is not None:
            await self._http.aclose()
        if self._exchanges is not None:
            self._exchanges.close()
        if self._dir is not None:
            with contextlib.suppress(OSError):
                (self._dir / SOCKET_NAME).unlink()
            if not self.keep_dir:
                self.remove_dir()

    def remove_dir(self) -> None:
        """Remove the (empty) socket folder; with ``keep_dir`` the sandbox's owner calls this on close.

        Docker cannot read a container's files (``get_archive``) once a bind mount's source is
        gone, so the folder must outlive the gateway until the workspace was copied out.
        """
        if self._dir is not None:
            with contextlib.suppress(OSError):
                self._dir.rmdir()

    async def __aenter__(self) -> ModelGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---- HTTP on the socket ------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _version = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            body = await _read_body(reader, headers)
            path = target.split("?", 1)[0].rstrip("/")
            if method == "POST" and path.endswith("/chat/completions"):
                await self._chat(body, writer)
            elif method == "GET" and path.endswith("/models"):
                await _respond(writer, 200, {"object": "list", "data": [
                    {"id": self.model.model, "object": "model", "owned_by": "agentbench"}]})
            else:
                await _respond(writer, 404, _error(f"agentbench gateway: no {method} {path}", "not_found", 404))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError) as exc:
            log.debug("gateway.bad_request", error=str(exc))
            with contextlib.suppress(Exception):
                await _respond(writer, 400, _error(f"agentbench gateway: bad request ({exc})", "invalid_request", 400))
        except Exception:  # noqa: BLE001 - one bad connection must not take the gateway down
            log.exception("gateway.crash")
        finally:
            self._streaming.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()
                await writer.wait_closed()

    async def _chat(self, raw: bytes, writer: asyncio.StreamWriter) -> None:
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            await _respond(writer, 400, _error("agentbench gateway: expected a chat request (JSON with messages)",
                                               "invalid_request", 400))
            return
        async with self._lock:
            cap = ("max_turns" if self.record.turns >= self.max_turns
                   else "max_tokens" if self.record.tokens >= self.max_tokens else None)
            if cap is not None:
                self.record.cap_hit = self.record.cap_hit or cap
                self.record.refused += 1
                self.stopped.set()
                if self.transcript:
                    self.transcript.event("budget", cap=cap, turns=self.record.turns, tokens=self.record.tokens)
                await _respond(writer, 400, _error(
                    f"agentbench: this attempt's budget is spent ({cap}); no more model requests.",
                    "budget_exceeded", 400))
                return
            self.record.turns += 1
            await self._forward(self._rewrite(body), writer)

    def _rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        cfg = self.model
        payload = {**body, "model": cfg.model}
        if cfg.temperature is not None:
            payload["temperature"] = cfg.temperature
        limit = self.max_tokens_per_request
        if limit is not None:
            asked = [k for k in ("max_tokens", "max_completion_tokens") if isinstance(payload.get(k), int)]
            for key in asked:
                payload[key] = min(payload[key], limit)
            if not asked:
                payload["max_tokens"] = limit
        apply_thinking(payload, cfg)
        if payload.get("stream"):
            payload["stream_options"] = {**(payload.get("stream_options") or {}), "include_usage": True}
        return payload

    async def _forward(self, payload: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        assert self._http is not None
        url = f"{self.base_url}/chat/completions"
        started = time.monotonic()
        attempts = 0
        while True:
            attempts += 1
            t0 = time.monotonic()
            try:
                async with asyncio.timeout(self.model.request_timeout_s):
                    assembled, status = await self._attempt(url, payload, writer)
                break
            except (_Upstream, TimeoutError) as exc:
                failure = exc if isinstance(exc, _Upstream) else _Upstream(
                    f"no complete answer within {self.model.request_timeout_s:g} s")
                if failure.retryable and attempts <= self.model.max_retries and writer not in self._streaming:
                    await asyncio.sleep(min(self._backoff_s * 2 ** (attempts - 1), 8.0) * (0.5 + random.random() / 2))
                    continue
                await self._failed(failure, payload, writer, attempts, started)
                return
        a = assembled
        ttft = (a.t_first - t0) if a.t_first is not None else None
        decode = (a.t_end - a.t_first) if a.t_first is not None else 0.0
        stats = RequestStats(
            wall_s=round(time.monotonic() - started, 3), ttft_s=round(ttft, 3) if ttft is not None else None,
            decode_tok_s=(round(a.usage.completion_tokens / decode, 1)
                          if decode > 0 and a.usage.completion_tokens else None),
            attempts=attempts, status=status, streamed=a.streamed,
        )
        self.record.requests.append(stats)
        self.record.usage = self.record.usage + a.usage
        self.record.ok += 1
        self.record.last_failed = False
        self._note(payload, stats, a)

    async def _attempt(self, url: str, payload: dict[str, Any], writer: asyncio.StreamWriter) -> tuple[Assembled, int]:
        assert self._http is not None
        try:
            request = self._http.build_request("POST", url, json=payload)
            response = await self._http.send(request, stream=True)
        except httpx.TransportError as exc:
            raise _Upstream(f"{type(exc).__name__}: {exc}") from exc
        try:
            if response.status_code != 200:
                text = await _read_limited(response)
                raise _Upstream(f"HTTP {response.status_code}", status=response.status_code, body=text,
                                retryable=response.status_code in RETRYABLE_STATUSES)
            if "text/event-stream" in response.headers.get("content-type", ""):
                return await self._pass_stream(response, writer), 200
            data = await response.aread()
            try:
                assembled = assemble_completion(data, lambda m: ValueError(m))
            except (ValueError, ErrorEvent) as exc:
                retry = isinstance(exc, ErrorEvent) and exc.status in RETRYABLE_STATUSES
                raise _Upstream(f"not a chat completion: {exc}", status=200,
                                body=data[:ERROR_BODY_LIMIT].decode(errors="replace"), retryable=retry) from exc
            await _respond(writer, 200, data, content_type=response.headers.get("content-type", "application/json"))
            return assembled, 200
        except httpx.TransportError as exc:
            raise _Upstream(f"{type(exc).__name__} while reading: {exc}") from exc
        finally:
            await response.aclose()

    async def _pass_stream(self, response: httpx.Response, writer: asyncio.StreamWriter) -> Assembled:
        """Relay SSE bytes to the agent as they come, parsing a copy for the record."""
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        self._streaming.add(writer)  # from here a retry would corrupt the answer
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
            raise _Upstream(stream_error or "the stream ended before [DONE] or a finish reason", status=200,
                            retryable=False)
        return out

    async def _failed(self, failure: _Upstream, payload: dict[str, Any], writer: asyncio.StreamWriter,
                      attempts: int, started: float) -> None:
        entry = {"turn": self.record.turns, "status": failure.status, "message": str(failure),
                 "body": failure.body[:ERROR_BODY_LIMIT], "attempts": attempts}
        self.record.errors.append(entry)
        self.record.last_failed = True
        self.record.requests.append(RequestStats(wall_s=round(time.monotonic() - started, 3), attempts=attempts,
                                                 status=failure.status))
        log.warning("gateway.upstream_failed", model=self.model.name, **entry)
        if self.transcript:
            self.transcript.event("model-error", **entry)
        self._write_exchange(payload, {"error": entry})
        if writer not in self._streaming:
            status = failure.status if failure.status and failure.status >= 400 else 502
            await _respond(writer, status, _error(f"agentbench gateway: upstream failed: {failure}", "upstream_error",
                                                  status))

    def _note(self, payload: dict[str, Any], stats: RequestStats, a: Assembled) -> None:
        """Record one exchange: the full pair in gateway.jsonl, what is new in the transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": a.content}
        if a.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}} for c in a.tool_calls]
        self._write_exchange(payload, {"message": message, "reasoning": a.reasoning,
                                       "finish_reason": a.finish_reason, "usage": a.usage.model_dump()})
        if self.transcript is None:
            return
        messages = payload["messages"]
        continues = bool(self._seen) and len(messages) > len(self._seen) and messages[0] == self._seen[0]
        new = messages[len(self._seen) + 1:] if continues else messages
        if not continues:
            self.transcript.event("conversation", turn=self.record.turns, messages=len(messages))
        for m in new:
            self.transcript.message(m, turn=self.record.turns)
        self.transcript.request(turn=self.record.turns, stats=stats, usage=a.usage, finish_reason=a.finish_reason)
        self.transcript.message(message, turn=self.record.turns, reasoning=a.reasoning)
        self._seen = messages

    def _write_exchange(self, request: dict[str, Any], response: dict[str, Any]) -> None:
        if self._exchanges is not None:
            line = {"ts": time.time(), "turn": self.record.turns, "request": request, "response": response}
            self._exchanges.write(json.dumps(line, ensure_ascii=False) + "\n")


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts, size = [], 0
        while True:
            n = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
            if n == 0:
                with contextlib.suppress(asyncio.IncompleteReadError):
                    await reader.readuntil(b"\r\n")
                return b"".join(parts)
            size += n
            if size > BODY_LIMIT:
                raise ValueError("request body too large")
            parts.append(await reader.readexactly(n))
            await reader.readexactly(2)
    length = int(headers.get("content-length", "0") or 0)
    if length > BODY_LIMIT:
        raise ValueError("request body too large")
    return await reader.readexactly(length) if length else b""


async def _read_limited(response: httpx.Response) -> str:
    data = b""
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= ERROR_BODY_LIMIT:
            break
    return data[:ERROR_BODY_LIMIT].decode("utf-8", errors="replace")


def _error(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 502: "Bad Gateway"}


async def _respond(writer: asyncio.StreamWriter, status: int, body: dict[str, Any] | bytes, *,
                   content_type: str = "application/json") -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    reason = _REASONS.get(status, "Error")
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(data)}\r\n"
                 "Connection: close\r\n\r\n".encode() + data)
    await writer.drain()
