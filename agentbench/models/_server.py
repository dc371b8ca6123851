"""A real OpenAI-compatible HTTP server on loopback, driven by a Python callable.

Used by the built-in demo replay model and by tests. It speaks HTTP/1.1 with keep-alive, so the
client's connection pool, chunked SSE streams, keep-alive comments, stalls and mid-stream resets
are all the real thing on the wire::

    def handler(body: dict) -> Reply:
        return Reply(message={"role": "assistant", "content": "hi"})

    with OpenAICompatServer(handler, models=["m"]) as base_url:   # "http://127.0.0.1:PORT/v1"
        ...

``GET /v1/models`` lists ``models``; ``POST /v1/chat/completions`` calls the handler with the
request body and answers a ``chat.completion``, or ``chat.completion.chunk`` SSE events when the
request asked ``stream``. A handler that raises gets a 500 and the exception is kept in ``errors``.
"""

from __future__ import annotations

import json
import math
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["OpenAICompatServer", "Reply"]


@dataclass
class Reply:
    """What the server answers to one chat request.

    ``body`` (a dict sent as JSON, or a raw string, as text/plain unless ``headers`` set a
    Content-Type) is sent verbatim with ``status`` and wins over ``message``; a non-200 ``status``
    without a body gets an OpenAI-style error object.
    ``message`` is the assistant message (``content``, ``reasoning_content`` or ``reasoning``,
    ``tool_calls`` in OpenAI form); streamed, its texts are cut into ``chunk_chars`` pieces, one
    SSE event each. ``usage`` defaults to an estimate (one token per streamed piece).
    ``delay_s`` sleeps before anything is sent. ``hang_s`` stalls: a plain answer sleeps before
    answering; a stream sends its headers and role chunk, then only ``: keep-alive`` comments for
    that long. ``reset_after_chunks`` sends that many SSE events and then resets the TCP
    connection. ``tokens_per_s`` paces the content, reasoning and argument pieces.
    """

    status: int = 200
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    message: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    delay_s: float = 0.0
    hang_s: float = 0.0
    reset_after_chunks: int | None = None
    tokens_per_s: float | None = None
    chunk_chars: int = 4


class _Reset(Exception):
    """Raised inside the handler to abort a response with a TCP reset."""


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def _normalise_message(message: dict[str, Any] | None) -> dict[str, Any]:
    msg = {"role": "assistant", **(message or {})}
    msg.setdefault("content", None if msg.get("tool_calls") else "")
    if msg.get("tool_calls"):
        msg["tool_calls"] = [
            {"id": tc.get("id") or f"call_{uuid.uuid4().hex[:12]}", "type": "function",
             "function": dict(tc["function"])}
            for tc in msg["tool_calls"]
        ]
    return msg


def _reasoning_key(msg: dict[str, Any]) -> str | None:
    for key in ("reasoning_content", "reasoning"):
        if msg.get(key):
            return key
    return None


class _Server(ThreadingHTTPServer):
    # The stdlib default backlog of 5 resets connections when a matrix run opens 16 at once.
    request_queue_size = 128
    daemon_threads = True


class OpenAICompatServer:
    """OpenAI-compatible chat server in a daemon thread (see the module docstring)."""

    #: Interval between ``: keep-alive`` comments while a stream stalls.
    keepalive_s: float = 0.05

    def __init__(
        self,
        handler: Callable[[dict[str, Any]], Reply],
        *,
        models: list[str],
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.handler = handler
        self.models = list(models)
        self.host = host
        self.port = port
        self.requests: list[dict[str, Any]] = []  # every chat request body, in arrival order
        self.request_headers: list[dict[str, str]] = []  # headers of every request (incl. GET)
        self.errors: list[BaseException] = []  # exceptions raised by the handler
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> str:
        """Bind, serve in a daemon thread and return the base URL ``http://HOST:PORT/v1``."""
        if self._httpd is not None:
            return self.base_url
        self._stopping.clear()
        httpd = _Server((self.host, self.port), _make_handler(self))
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self.base_url = f"http://{self.host}:{self.port}/v1"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-compat-server", daemon=True
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving, wake stalled replies and close open connections."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # unblock keep-alive threads waiting for a next request
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def sleep(self, seconds: float) -> None:
        """Sleep, but wake at once when the server stops (so stop() never waits on a stall)."""
        if seconds > 0:
            self._stopping.wait(seconds)

    # -- building answers --------------------------------------------------------------------
    def _record(self, body: dict[str, Any] | None, headers: dict[str, str]) -> int:
        with self._lock:
            self.request_headers.append(headers)
            if body is None:
                return -1
            self.requests.append(body)
            return len(self.requests) - 1

    def _completion_base(self, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "created": int(time.time()),
            "model": body.get("model") or (self.models[0] if self.models else "unknown"),
        }

    def _usage(self, body: dict[str, Any], msg: dict[str, Any], reply: Reply) -> dict[str, Any]:
        if reply.usage is None:
            return self._estimate_usage(body, msg, reply.chunk_chars)
        usage = dict(reply.usage)
        usage.setdefault("total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        return usage

    @staticmethod
    def _estimate_usage(body: dict[str, Any], msg: dict[str, Any], chunk_chars: int) -> dict[str, Any]:
        def n(text: str | None) -> int:
            return math.ceil(len(text or "") / max(1, chunk_chars))

        key = _reasoning_key(msg)
        reasoning = n(msg.get(key)) if key else 0
        args = sum(n(tc["function"].get("arguments")) for tc in msg.get("tool_calls") or [])
        completion = reasoning + n(msg.get("content")) + args
        prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }

    def completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The ``chat.completion`` object for a non-streamed reply."""
        msg = _normalise_message(reply.message)
        finish = reply.finish_reason or ("tool_calls" if msg.get("tool_calls") else "stop")
        usage = self._usage(body, msg, reply)
        return {
            **self._completion_base(body),
            "object": "chat.completion",
            "choices": [{"index": 0, "message": msg, "finish_reason": finish, "logprobs": None}],
            "usage": usage,
        }

    def chunks(self, body: dict[str, Any], reply: Reply) -> Iterator[tuple[dict[str, Any], bool]]:
        """SSE chunk objects for a streamed reply, each with whether it is a paced token."""
        msg = _normalise_message(reply.message)
        base = {**self._completion_base(body), "object": "chat.completion.chunk"}
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        extra = {"usage": None} if include_usage else {}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return {**base, "choices": [choice], **extra}

        yield chunk({"role": "assistant", "content": ""}), False
        key = _reasoning_key(msg)
        if key:
            for piece in _pieces(msg[key], reply.chunk_chars):
                yield chunk({key: piece}), True
        for piece in _pieces(msg.get("content") or "", reply.chunk_chars):
            yield chunk({"content": piece}), True
        for i, tc in enumerate(msg.get("tool_calls") or []):
            fn = tc["function"]
            head = {"index": i, "id": tc["id"], "type": "function",
                    "function": {"name": fn.get("name", ""), "arguments": ""}}
            yield chunk({"tool_calls": [head]}), False
            for piece in _pieces(fn.get("arguments") or "", reply.chunk_chars):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), True
        finish = reply.finish_reason or ("tool_calls" if msg.get("tool_calls") else "stop")
        yield chunk({}, finish), False
        if include_usage:
            usage = self._usage(body, msg, reply)
            yield {**base, "choices": [], "usage": usage}, False


def _make_handler(server: OpenAICompatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive + chunked streams, as real endpoints do

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes: without this, Nagle's algorithm meets the
            # client's delayed ACK and every answer waits ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with server._lock:
                server._conns.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._conns.discard(self.connection)
            try:
                super().finish()
            except OSError:
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass  # tests and the demo must stay quiet

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except _Reset:
                self._reset()
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                self.close_connection = True  # the client went away (e.g. its deadline passed)

        # -- plumbing ----------------------------------------------------------------------
        def _reset(self) -> None:
            """Close with RST (SO_LINGER 0), like a proxy or server dying mid-stream."""
            self.close_connection = True
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.rfile.close()  # drop the makefile reference so close() really closes
                self.connection.close()
            except OSError:
                pass

        def _send(self, status: int, payload: bytes, content_type: str, headers: dict[str, str]) -> None:
            self.send_response(status)
            headers = {"Content-Type": content_type, **headers}  # a scripted Content-Type wins
            headers["Content-Length"] = str(len(payload))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(obj).encode(), "application/json", headers or {})

        def _write_chunk(self, text: str) -> None:
            data = text.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        # -- routes ------------------------------------------------------------------------
        def do_GET(self) -> None:
            server._record(None, dict(self.headers))
            if self.path.rstrip("/").endswith("/models"):
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "agentbench"} for m in server.models]
                self._send_json(200, {"object": "list", "data": data})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}", "code": 404}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                server._record(None, dict(self.headers))
                self._send_json(404, {"error": {"message": f"no route {self.path}", "code": 404}})
                return
            try:
                body = json.loads(raw)
            except ValueError as exc:
                body = f"invalid JSON body: {exc}"
            if not isinstance(body, dict):
                server._record(None, dict(self.headers))
                problem = body if isinstance(body, str) else "the body is not a JSON object"
                self._send_json(400, {"error": {"message": problem, "code": 400}})
                return
            server._record(body, dict(self.headers))
            try:
                reply = server.handler(body)
            except Exception as exc:  # noqa: BLE001 - reported as a 500 and kept for the test
                with server._lock:
                    server.errors.append(exc)
                self._send_json(500, {"error": {"message": f"handler failed: {exc!r}", "code": 500}})
                return
            server.sleep(reply.delay_s)
            if reply.body is not None or reply.status != 200:
                self._answer_raw(reply)
            elif body.get("stream"):
                self._answer_stream(body, reply)
            else:
                server.sleep(reply.hang_s)
                self._send_json(200, server.completion(body, reply), reply.headers)

        def _answer_raw(self, reply: Reply) -> None:
            server.sleep(reply.hang_s)
            if isinstance(reply.body, str):
                self._send(reply.status, reply.body.encode(), "text/plain", reply.headers)
                return
            body = reply.body
            if body is None:
                body = {"error": {"message": f"scripted status {reply.status}", "type": "error",
                                  "code": reply.status}}
            self._send_json(reply.status, body, reply.headers)

        def _answer_stream(self, body: dict[str, Any], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            pause = 1.0 / reply.tokens_per_s if reply.tokens_per_s else 0.0
            for sent, (obj, paced) in enumerate(server.chunks(body, reply)):
                if reply.reset_after_chunks is not None and sent >= reply.reset_after_chunks:
                    raise _Reset
                if paced and pause:
                    server.sleep(pause)
                self._write_chunk(f"data: {json.dumps(obj)}\n\n")
                if sent == 0 and reply.hang_s > 0:
                    self._keepalives(reply.hang_s)
            self._write_chunk("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")

        def _keepalives(self, seconds: float) -> None:
            until = time.monotonic() + seconds
            while not server._stopping.is_set() and time.monotonic() < until:
                self._write_chunk(": keep-alive\n\n")
                server.sleep(min(server.keepalive_s, until - time.monotonic()))

    return Handler
