"""The OpenAI-compatible chat client: the one boundary where httpx errors become ModelErrors.

Choices made here (see DESIGN.md "Models"):

- ``request_timeout_s`` is a total deadline for one HTTP attempt, streaming included, enforced
  with ``asyncio.timeout`` so ``: keep-alive`` comments cannot defeat it. A timed-out attempt counts
  as one attempt and is retried within ``max_retries``; when the last one times out the call raises
  ``ModelTimeout``. Backoff waits are outside the deadline.
- ``max_retries`` retries follow the first attempt (so at most ``max_retries + 1`` requests).
  Retried: 408, 409, 429, 5xx, transport errors (refused, reset, also mid-stream) and streams that
  end before ``[DONE]``. Never retried: every other 4xx (400, 401, 402, 403, 404, 422 ...) and
  answers that are not chat completions (``ModelProtocolError``).
- An ``{"error": {...}}`` object instead of a completion (a 200 body, or an SSE event mid-stream as
  vLLM sends) is treated like that HTTP status: retried when its ``code`` is retryable.
- ``Retry-After`` (seconds or an HTTP date) is honoured, capped at ``retry_after_max_s``; otherwise
  exponential backoff with jitter from ``backoff_s`` up to ``backoff_max_s``.
- Thinking is sent explicitly when the config sets it: DeepSeek format
  ``{"thinking": {"type": "enabled"|"disabled"}}``; vLLM format ``chat_template_kwargs`` with both
  ``thinking`` (DeepSeek V3.x templates) and ``enable_thinking`` (Qwen3, GLM templates): templates
  ignore variables they do not use, so sending both is harmless and covers both families.
- ``reasoning_content`` goes back in ``ChatResult.message`` only for DeepSeek-format models, which
  require it on tool turns; vLLM chat templates would otherwise re-render old reasoning into the
  prompt and strict servers reject unknown message fields.
- ``max_concurrency`` from the config bounds concurrent attempts through one client.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import random
import ssl
import time
from datetime import UTC
from typing import Any, Self

import httpx
import structlog
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from ..config import ModelConfig
from ..errors import ModelError, ModelHTTPError, ModelProtocolError, ModelTimeout
from ._stream import Assembled, ErrorEvent, assemble_completion, assemble_stream
from ._types import ChatResult, RequestStats

__all__ = ["RETRYABLE_STATUSES", "ChatClient"]

log = structlog.get_logger()

#: Statuses worth another try: timeouts, conflicts, rate limits, server errors.
RETRYABLE_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))
_BODY_LIMIT = 2048


def apply_thinking(payload: dict[str, Any], cfg: ModelConfig) -> None:
    """Set the model's thinking toggle in a request body, in the form its engine reads (in place)."""
    if cfg.thinking is None:
        return
    on = cfg.thinking == "on"
    if cfg.thinking_format == "deepseek":
        payload["thinking"] = {"type": "enabled" if on else "disabled"}
    else:
        payload["chat_template_kwargs"] = {**(payload.get("chat_template_kwargs") or {}),
                                           "thinking": on, "enable_thinking": on}


class _RetryableHTTP(ModelHTTPError):
    """A retryable status; carries the server's Retry-After in seconds, if any."""

    def __init__(self, message: str, *, status: int, body: str, retry_after: float | None):
        super().__init__(message, status=status, body=body)
        self.retry_after = retry_after


class _StreamCut(ModelProtocolError):
    """The stream ended without ``[DONE]`` or a finish reason: treated like a reset."""


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or HTTP date), None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now_ts = time.time() if now is None else now
    return max(0.0, when.timestamp() - now_ts)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # httpx builds a fresh context (loading every CA) per client, ~0.1 s; one per process is enough.
    return httpx.create_ssl_context()


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, _RetryableHTTP | ModelTimeout | _StreamCut | httpx.TransportError)


class ChatClient:
    """Async client for one OpenAI-compatible model endpoint (``POST {base_url}/chat/completions``).

    ``api_key`` is sent as a Bearer token (resolve it with ``config.resolve_api_key``);
    ``transport`` replaces httpx's (e.g. a unix-socket transport); ``base_url`` overrides the
    config's. ``backoff_s``, ``backoff_max_s`` and ``retry_after_max_s`` shape the waits between
    retries (tests make them small). Use as ``async with ChatClient(cfg) as client: ...``.
    """

    def __init__(
        self,
        config: ModelConfig,
        *,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        base_url: str | None = None,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        retry_after_max_s: float = 60.0,
    ) -> None:
        self.config = config
        self.base_url = (base_url or config.base_url).rstrip("/")
        self._backoff_s = backoff_s
        self._backoff_max_s = backoff_max_s
        self._retry_after_max_s = retry_after_max_s
        self._slots = asyncio.Semaphore(config.max_concurrency)
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # httpx's own timeouts are a backstop only; the real deadline is asyncio.timeout below.
        self._http = httpx.AsyncClient(
            headers=headers,
            transport=transport,
            verify=_ssl_context(),
            timeout=httpx.Timeout(config.request_timeout_s),
            limits=httpx.Limits(max_connections=config.max_concurrency * 2, max_keepalive_connections=8),
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    # -- public calls ------------------------------------------------------------------------
    def build_payload(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None, stream: bool | None = None,
    ) -> dict[str, Any]:
        """The request body ``chat`` sends (exposed so the gateway and tests can inspect it)."""
        cfg = self.config
        stream = cfg.stream if stream is None else stream
        payload: dict[str, Any] = {"model": cfg.model, "messages": messages, "stream": stream}
        if stream:
            payload["stream_options"] = {"include_usage": True}
        if tools:
            payload["tools"] = tools
        if cfg.temperature is not None:
            payload["temperature"] = cfg.temperature
        limit = max_tokens if max_tokens is not None else cfg.max_tokens
        if limit is not None:
            payload["max_tokens"] = limit
        apply_thinking(payload, cfg)
        return payload

    async def chat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None, stream: bool | None = None,
    ) -> ChatResult:
        """One assistant turn. ``stream`` overrides ``config.stream`` for this call.

        Raises ModelHTTPError (error status, or retries exhausted), ModelTimeout (the last
        attempt passed ``request_timeout_s``) or ModelProtocolError (not a chat completion).
        """
        payload = self.build_payload(messages, tools=tools, max_tokens=max_tokens, stream=stream)
        url = f"{self.base_url}/chat/completions"
        started = time.monotonic()
        attempts = 0

        async def attempt() -> tuple[Assembled, int, float]:
            nonlocal attempts
            attempts += 1
            async with self._slots:
                t0 = time.monotonic()
                try:
                    async with asyncio.timeout(self.config.request_timeout_s):
                        assembled, status = await self._post(url, payload)
                except TimeoutError as exc:
                    raise self._timeout(url) from exc
                return assembled, status, t0

        try:
            assembled, status, t0 = await self._with_retries(attempt, url)
        except ModelError as exc:
            self._log_failure(exc, url, attempts, time.monotonic() - started)
            raise
        return self._result(assembled, status, attempts, started, t0)

    async def list_models(self) -> list[str]:
        """Model ids from ``GET {base_url}/models``."""
        url = f"{self.base_url}/models"

        async def attempt() -> list[str]:
            async with self._slots:
                try:
                    async with asyncio.timeout(self.config.request_timeout_s):
                        response = await self._http.get(url)
                        await self._raise_for_status(response, url)
                except TimeoutError as exc:
                    raise self._timeout(url) from exc
            try:
                data = response.json()["data"]
                return [str(item["id"]) for item in data]
            except (ValueError, KeyError, TypeError) as exc:
                raise ModelProtocolError(
                    f"{url} did not answer a model list (model '{self.config.name}'): "
                    f"{response.text[:200]!r}"
                ) from exc

        return await self._with_retries(attempt, url)

    # -- one attempt ---------------------------------------------------------------------------
    async def _post(self, url: str, payload: dict[str, Any]) -> tuple[Assembled, int]:
        async with self._http.stream("POST", url, json=payload) as response:
            await self._raise_for_status(response, url)
            is_sse = response.headers.get("content-type", "").startswith("text/event-stream")
            try:
                if is_sse:
                    assembled = await assemble_stream(response.aiter_lines(), self._protocol_error(url))
                    if not assembled.complete:
                        raise _StreamCut(f"{self._who(url)}: the stream ended before [DONE]")
                else:  # also when a server ignores stream=true and answers one JSON object
                    raw = await response.aread()
                    assembled = assemble_completion(raw, self._protocol_error(url))
            except ErrorEvent as event:
                detail = f"{self._who(url)} sent an error object: {event}"
                body = json.dumps(event.error)[:_BODY_LIMIT]
                if event.status in RETRYABLE_STATUSES:
                    raise _RetryableHTTP(detail, status=event.status, body=body, retry_after=None) from event
                raise ModelHTTPError(detail, status=event.status, body=body, attempts=1) from event
            assembled.t_end = time.monotonic()
            return assembled, response.status_code

    async def _raise_for_status(self, response: httpx.Response, url: str) -> None:
        if response.status_code < 400:
            return
        body = await self._read_limited(response)
        status = response.status_code
        detail = f"{self._who(url)} answered HTTP {status}: {body[:300]}"
        if status in RETRYABLE_STATUSES:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            raise _RetryableHTTP(detail, status=status, body=body, retry_after=retry_after)
        hint = {
            401: " Check the API key (the model's api_key_env variable).",
            402: " The account is out of credit.",
            403: " The key is not allowed to use this model.",
            404: " Check base_url (it usually ends in /v1) and the model name.",
        }.get(status, "")
        raise ModelHTTPError(detail + hint, status=status, body=body, attempts=1)

    @staticmethod
    async def _read_limited(response: httpx.Response) -> str:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= _BODY_LIMIT:
                break
        return b"".join(chunks)[:_BODY_LIMIT].decode("utf-8", errors="replace")

    # -- retries -------------------------------------------------------------------------------
    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _RetryableHTTP) and exc.retry_after is not None:
            return min(exc.retry_after, self._retry_after_max_s)
        # Exponential with jitter, computed here: tenacity renamed wait_exponential_jitter's
        # parameters between the versions pyproject allows.
        base = min(self._backoff_max_s, self._backoff_s * 2 ** (state.attempt_number - 1))
        return base + random.uniform(0, self._backoff_s)

    def _before_sleep(self, url: str):
        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning(
                "model.retry", model=self.config.name, url=url, attempt=state.attempt_number,
                error=str(exc)[:300], wait_s=round(state.upcoming_sleep, 3),
            )

        return before_sleep

    async def _with_retries(self, fn, url: str):
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(_retryable),
            before_sleep=self._before_sleep(url),
            reraise=True,
        )
        try:
            return await retrying(fn)
        except _RetryableHTTP as exc:
            n = retrying.statistics.get("attempt_number", 1)
            raise ModelHTTPError(
                f"{exc} (gave up after {n} attempt(s))", status=exc.status, body=exc.body, attempts=n
            ) from exc
        except ModelHTTPError as exc:
            exc.attempts = retrying.statistics.get("attempt_number", 1)
            raise
        except _StreamCut as exc:
            n = retrying.statistics.get("attempt_number", 1)
            raise ModelProtocolError(f"{exc} (gave up after {n} attempt(s))") from exc
        except ModelTimeout as exc:
            n = retrying.statistics.get("attempt_number", 1)
            raise ModelTimeout(f"{exc} (gave up after {n} attempt(s))") from exc
        except httpx.TimeoutException as exc:
            n = retrying.statistics.get("attempt_number", 1)
            raise ModelTimeout(
                f"{self._timeout(url)} (httpx {type(exc).__name__}, gave up after {n} attempt(s))") from exc
        except httpx.TransportError as exc:
            n = retrying.statistics.get("attempt_number", 1)
            raise ModelHTTPError(
                f"{self._who(url)}: connection failed after {n} attempt(s): {type(exc).__name__}: {exc}. "
                "Is the server running and base_url right?",
                status=None, body="", attempts=n,
            ) from exc

    # -- results and messages ------------------------------------------------------------------
    def _result(self, a: Assembled, status: int, attempts: int, started: float, t0: float) -> ChatResult:
        wall = time.monotonic() - started
        ttft = a.t_first - t0 if a.t_first is not None else None
        decode = None
        if a.t_first is not None and a.usage.completion_tokens > 0:
            span = a.t_end - a.t_first
            decode = a.usage.completion_tokens / span if span > 1e-3 else None
        stats = RequestStats(
            wall_s=wall, ttft_s=ttft, decode_tok_s=decode, attempts=attempts, status=status, streamed=a.streamed
        )
        message: dict[str, Any] = {"role": "assistant", "content": a.content or ""}
        if a.tool_calls:
            message["tool_calls"] = [
                {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}
                for tc in a.tool_calls
            ]
        if a.reasoning and self.config.thinking_format == "deepseek":
            message["reasoning_content"] = a.reasoning
        u = a.usage
        log.info(
            "model.request", model=self.config.name, status=status, attempts=attempts,
            prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens,
            reasoning_tokens=u.reasoning_tokens, wall_s=round(wall, 3),
            ttft_s=None if ttft is None else round(ttft, 3), finish_reason=a.finish_reason,
        )
        return ChatResult(
            content=a.content, reasoning=a.reasoning, tool_calls=a.tool_calls, finish_reason=a.finish_reason,
            usage=u, stats=stats, message=message,
        )

    def _log_failure(self, exc: ModelError, url: str, attempts: int, wall: float) -> None:
        log.warning(
            "model.request_failed", model=self.config.name, url=url, attempts=attempts,
            status=getattr(exc, "status", None), error=type(exc).__name__, wall_s=round(wall, 3),
        )

    def _who(self, url: str) -> str:
        return f"model '{self.config.name}' ({self.config.model}) at {url}"

    def _timeout(self, url: str) -> ModelTimeout:
        return ModelTimeout(
            f"{self._who(url)} did not finish within request_timeout_s={self.config.request_timeout_s:g}s; "
            "raise request_timeout_s in models.toml if the model is just slow"
        )

    def _protocol_error(self, url: str):
        def make(what: str) -> ModelProtocolError:
            return ModelProtocolError(f"{self._who(url)} did not answer a valid chat completion: {what}")

        return make
