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
* rewrites it (``_gateway_policy.py``): only the fields a chat request needs go upstream, ``n`` is
  1, every token cap is an integer within the limits whatever its JSON type, ``model`` becomes the
  configured id, the model's temperature and thinking toggle are applied as ``ChatClient`` sends
  them, streamed requests ask for usage;
* forwards it with the Bearer key, retrying transport errors and 408/409/429/5xx up to the model's
  ``max_retries`` before any byte reached the agent;
* passes the answer through as it comes (SSE streams chunk by chunk) and records it: every request
  and response in ``gateway.jsonl``, the conversation and per-request statistics in the session
  transcript, token usage and timings in ``record``. The agent's own headers never go upstream.

``GET .../models`` lists the configured model; anything else gets a 404.

The sandbox is the other end of the socket, so the gateway holds against it (``_gateway_http.py``):
at most ``MAX_CONNECTIONS`` connections at once (more are closed as they arrive), request heads
and bodies read within time limits, bodies over ``BODY_LIMIT`` refused before they are read, one
request parsed at a time, and every record bounded. Requests it refuses are the agent's doing:
they are counted in ``record.rejected``, never forwarded, never an infrastructure error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import structlog

from .._limits import raise_fd_limit
from ..config import ModelConfig
from ..models._client import RETRYABLE_STATUSES, _ssl_context
from ..models._stream import Assembled, ErrorEvent, assemble_completion
from ..models._types import RequestStats, Usage
from ._gateway_http import BODY_TIMEOUT_S, HEADER_LIMIT, HEADER_TIMEOUT_S, Refused, error_body, read_request, respond
from ._gateway_policy import bounded, bounded_json, rewrite
from ._gateway_relay import Upstream, read_limited, relay_stream
from ._socket_dir import private_socket_dir, restrict_socket
from ._transcript import Transcript

__all__ = ["CONTAINER_DIR", "MAX_CONNECTIONS", "SOCKET_NAME", "GatewayRecord", "ModelGateway"]

log = structlog.get_logger()

CONTAINER_DIR = "/run/agentbench"  # where the socket folder is mounted in the sandbox
SOCKET_NAME = "gateway.sock"
ERROR_BODY_LIMIT = 4096
RESPONSE_LIMIT = 16 * 1024 * 1024  # a non-streamed completion read back from upstream
LINGER_S = 1.0  # a refused request's unread body is drained (discarded) this long before closing
MAX_CONNECTIONS = 32  # per gateway: an agent needs a few; a flood must not take the run's descriptors


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
    rejected: list[dict[str, Any]] = field(default_factory=list)  # refused by the gateway (too big, malformed)
    dropped_fields: set[str] = field(default_factory=set)  # request fields never forwarded
    connections_refused: int = 0  # connections closed at once: MAX_CONNECTIONS were open

    @property
    def tokens(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens


class ModelGateway:
    """Serve one sandbox's model traffic on a private unix socket (see the module docstring)."""

    def __init__(self, model: ModelConfig, *, api_key: str | None, base_url: str | None = None,
                 max_turns: int, max_tokens: int, max_tokens_per_request: int | None = None,
                 transcript: Transcript | None = None, exchanges: Path | None = None,
                 backoff_s: float = 1.0, keep_dir: bool = False, max_connections: int = MAX_CONNECTIONS,
                 header_timeout_s: float = HEADER_TIMEOUT_S, body_timeout_s: float = BODY_TIMEOUT_S) -> None:
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
        self._max_connections = max_connections
        self._open = 0  # connections being served
        self._parse = asyncio.Lock()  # one body parsed at a time: a parse can take many times its size
        self._read_timeouts = {"header_timeout_s": header_timeout_s, "body_timeout_s": body_timeout_s}

    @property
    def socket_dir(self) -> Path:
        assert self._dir is not None, "start() first"
        return self._dir

    async def start(self) -> Path:
        """Listen on a fresh socket in a private folder; returns the folder to bind-mount.

        The folder and the socket are reachable only by the sandbox user and this process
        (``_socket_dir.py``): no other account of the host can use the key through them.
        """
        raise_fd_limit()
        self._dir = private_socket_dir()
        path = self._dir / SOCKET_NAME
        self._server = await asyncio.start_unix_server(self._serve, path=str(path), limit=HEADER_LIMIT)
        restrict_socket(self._dir, path)
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
        if self._open >= self._max_connections:
            # Closed before a byte is read: a flood of connections costs it nothing but the accept.
            self.record.connections_refused += 1
            writer.transport.abort()
            return
        self._open += 1
        try:
            request = await read_request(reader, **self._read_timeouts)
            if request.method == "POST" and request.path.endswith("/chat/completions"):
                await self._chat(request.body, writer)
            elif request.method == "GET" and request.path.endswith("/models"):
                await respond(writer, 200, {"object": "list", "data": [
                    {"id": self.model.model, "object": "model", "owned_by": "agentbench"}]})
            else:
                await respond(writer, 404, error_body(f"agentbench gateway: no {request.method} {request.path}",
                                                      "not_found", 404))
        except Refused as exc:
            self._reject(exc.status, str(exc), declared=exc.declared)
            with contextlib.suppress(Exception):
                await respond(writer, exc.status, error_body(f"agentbench gateway: {exc}", "invalid_request",
                                                             exc.status))
                if exc.status == 413:  # its body is still coming: let the answer reach it first
                    await _linger(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.debug("gateway.connection_lost", error=str(exc))
        except Exception:  # noqa: BLE001 - one bad connection must not take the gateway down
            log.exception("gateway.crash")
        finally:
            self._open -= 1
            self._streaming.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()
                await asyncio.wait_for(writer.wait_closed(), 5)

    def _reject(self, status: int, message: str, *, declared: int | None = None) -> None:
        """Record a request the gateway refused to forward (the agent built it)."""
        entry = {"turn": self.record.turns, "status": status, "message": message[:ERROR_BODY_LIMIT]}
        if declared is not None:
            entry["declared_bytes"] = declared
        self.record.rejected.append(entry)
        del self.record.rejected[:-100]  # a flood of refusals keeps the latest
        log.info("gateway.rejected", model=self.model.name, **entry)
        if self.transcript and len(self.record.rejected) <= 20:
            self.transcript.event("gateway-rejected", **entry)
        self._write_exchange(None, {"rejected": entry})

    async def _chat(self, raw: bytes, writer: asyncio.StreamWriter) -> None:
        async with self._parse:
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):
                body = None
            del raw
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise Refused(400, "expected a chat request (a JSON object with messages)")
        async with self._lock:
            cap = ("max_turns" if self.record.turns >= self.max_turns
                   else "max_tokens" if self.record.tokens >= self.max_tokens else None)
            if cap is not None:
                self.record.cap_hit = self.record.cap_hit or cap
                self.record.refused += 1
                self.stopped.set()
                if self.transcript:
                    self.transcript.event("budget", cap=cap, turns=self.record.turns, tokens=self.record.tokens)
                await respond(writer, 400, error_body(
                    f"agentbench: this attempt's budget is spent ({cap}); no more model requests.",
                    "budget_exceeded", 400))
                return
            self.record.turns += 1
            payload, dropped = rewrite(body, self.model, limit=self.max_tokens_per_request,
                                       budget=self.max_tokens - self.record.tokens)
            if dropped and not set(dropped) <= self.record.dropped_fields:
                self.record.dropped_fields.update(dropped)
                if self.transcript:
                    self.transcript.event("fields-dropped", turn=self.record.turns, fields=bounded(dropped, 200)[:50])
            await self._forward(payload, writer)

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
            except (Upstream, TimeoutError) as exc:
                failure = exc if isinstance(exc, Upstream) else Upstream(
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
            raise Upstream(f"{type(exc).__name__}: {exc}") from exc
        try:
            if response.status_code != 200:
                text = await read_limited(response, ERROR_BODY_LIMIT)
                raise Upstream(f"HTTP {response.status_code}", status=response.status_code, body=text,
                                retryable=response.status_code in RETRYABLE_STATUSES)
            if "text/event-stream" in response.headers.get("content-type", ""):
                self._streaming.add(writer)  # from here a retry would corrupt the answer
                return await relay_stream(response, writer), 200
            data = b""
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > RESPONSE_LIMIT:
                    raise Upstream(f"the completion is over {RESPONSE_LIMIT >> 20} MiB", status=200, retryable=False)
            try:
                assembled = assemble_completion(data, lambda m: ValueError(m))
            except (ValueError, ErrorEvent) as exc:
                retry = isinstance(exc, ErrorEvent) and exc.status in RETRYABLE_STATUSES
                raise Upstream(f"not a chat completion: {exc}", status=200,
                                body=data[:ERROR_BODY_LIMIT].decode(errors="replace"), retryable=retry) from exc
            await respond(writer, 200, data, content_type=response.headers.get("content-type", "application/json"))
            return assembled, 200
        except httpx.TransportError as exc:
            raise Upstream(f"{type(exc).__name__} while reading: {exc}") from exc
        finally:
            await response.aclose()

    async def _failed(self, failure: Upstream, payload: dict[str, Any], writer: asyncio.StreamWriter,
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
            await respond(writer, status, error_body(f"agentbench gateway: upstream failed: {failure}",
                                                     "upstream_error", status))

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
            self.transcript.message(bounded(m), turn=self.record.turns)
        self.transcript.request(turn=self.record.turns, stats=stats, usage=a.usage, finish_reason=a.finish_reason)
        self.transcript.message(bounded(message), turn=self.record.turns, reasoning=bounded(a.reasoning))
        self._seen = messages

    def _write_exchange(self, request: dict[str, Any] | None, response: dict[str, Any]) -> None:
        """One bounded line of gateway.jsonl (strings and the line cut, with a marker, when too long)."""
        if self._exchanges is not None:
            line = {"ts": time.time(), "turn": self.record.turns, "request": request, "response": response}
            self._exchanges.write(bounded_json(line) + "\n")


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Let a refused client read its answer: closing with its body unread resets the connection,
    and the reset can overtake the answer. What still arrives is discarded, for a second at most."""
    writer.write_eof()
    with contextlib.suppress(Exception):
        async with asyncio.timeout(LINGER_S):
            while await reader.read(1 << 16):
                pass
