"""ChatClient against a real loopback server (ScriptedServer): wire format, retries, deadlines."""

from __future__ import annotations

import json
import time
from email.utils import formatdate

import pytest
from structlog.testing import capture_logs

from agentbench.errors import ModelHTTPError, ModelProtocolError, ModelTimeout
from agentbench.models import ChatClient, Reply, Usage
from agentbench.models._client import parse_retry_after
from tests.helpers.scripted import ScriptedServer, text, tool_call

HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


def client_for(server: ScriptedServer, **overrides) -> ChatClient:
    return ChatClient(server.config(**overrides), api_key=overrides.pop("api_key", None), backoff_s=0.01,
                      backoff_max_s=0.05)


# -- plain answers ---------------------------------------------------------------------------------
async def test_text_reply_not_streamed(server: ScriptedServer) -> None:
    server.enqueue(text("Hello there", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    cfg = server.config(stream=False, temperature=0.3, max_tokens=100)
    async with ChatClient(cfg, api_key="sk-test") as client:
        result = await client.chat(HELLO, max_tokens=50)
    assert result.content == "Hello there"
    assert result.tool_calls == [] and result.reasoning is None
    assert result.finish_reason == "stop"
    assert result.usage == Usage(prompt_tokens=12, completion_tokens=3)
    assert result.stats.streamed is False and result.stats.ttft_s is None and result.stats.decode_tok_s is None
    assert result.stats.status == 200 and result.stats.attempts == 1
    assert result.message == {"role": "assistant", "content": "Hello there"}
    body = server.requests[0]
    assert body["model"] == "scripted-model" and body["messages"] == HELLO
    assert body["stream"] is False and "stream_options" not in body
    assert body["temperature"] == 0.3 and body["max_tokens"] == 50  # the argument overrides the config
    assert "thinking" not in body and "chat_template_kwargs" not in body  # unset: endpoint default
    assert server.request_headers[0]["Authorization"] == "Bearer sk-test"


async def test_text_reply_streamed_records_usage_ttft_and_speed(server: ScriptedServer) -> None:
    # 40 chunks of 2 chars paced at 100 chunks/s after a 0.3 s wait: decoding takes ~0.4 s.
    server.enqueue(text("ab" * 40, chunk_chars=2, tokens_per_s=100, delay_s=0.3,
                        usage={"prompt_tokens": 7, "completion_tokens": 40}))
    async with client_for(server) as client:
        result = await client.chat(HELLO)
    assert result.content == "ab" * 40
    assert result.usage.completion_tokens == 40 and result.usage.prompt_tokens == 7
    s = result.stats
    assert s.streamed and s.attempts == 1 and s.status == 200
    assert s.ttft_s >= 0.3  # the delay comes first
    assert s.wall_s >= s.ttft_s + 0.35  # 39 more paced chunks after the first token: ttft is not the end
    # Tokens over the time after the first token (at most wall - ttft), not over the whole wall time
    # (40/0.7 = 57): one-sided, so a busy machine's extra milliseconds cannot break it.
    assert 40 / (s.wall_s - s.ttft_s) <= s.decode_tok_s < 110  # and paced: 39 pauses of 10 ms at least
    assert server.requests[0]["stream_options"] == {"include_usage": True}
    assert "Authorization" not in server.request_headers[0]


async def test_tool_calls_streamed_in_pieces(server: ScriptedServer) -> None:
    args_a = json.dumps({"path": "index.html", "content": "<!doctype html><p>hi</p>"})
    reply = Reply(chunk_chars=3, message={"role": "assistant", "content": "Writing.", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "write_file", "arguments": args_a}},
        {"id": "call_b", "type": "function", "function": {"name": "run", "arguments": '{"cmd": "ls'}},
    ]})
    server.enqueue(reply)
    async with client_for(server) as client:
        result = await client.chat(HELLO, tools=[{"type": "function", "function": {"name": "write_file"}}])
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_a", "write_file", args_a),
        ("call_b", "run", '{"cmd": "ls'),  # invalid JSON kept verbatim, never repaired
    ]
    assert result.finish_reason == "tool_calls"
    assert result.message["tool_calls"][0] == {
        "id": "call_a", "type": "function", "function": {"name": "write_file", "arguments": args_a}}
    assert server.requests[0]["tools"][0]["function"]["name"] == "write_file"


async def test_tool_call_not_streamed(server: ScriptedServer) -> None:
    server.enqueue(tool_call("ping", {"message": "hi"}, id="c9"))
    async with client_for(server, stream=False) as client:
        result = await client.chat(HELLO)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in result.tool_calls] == [("c9", "ping", {"message": "hi"})]
    assert result.content is None and result.message["content"] == ""


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("stream", [True, False])
async def test_reasoning_read_from_either_field(server: ScriptedServer, key: str, stream: bool) -> None:
    server.enqueue(text("42", reasoning="six times seven", reasoning_key=key))
    async with client_for(server, stream=stream) as client:
        result = await client.chat(HELLO)
    assert result.reasoning == "six times seven" and result.content == "42"
    assert "reasoning_content" not in result.message  # vLLM format (default): not sent back
    if stream:
        assert result.usage.reasoning_tokens == 4  # estimated by the server from its pieces


# -- thinking ----------------------------------------------------------------------------------------
async def test_deepseek_thinking_payload_and_reasoning_sent_back(server: ScriptedServer) -> None:
    thinking_call = tool_call("ping", {}, id="c1")
    thinking_call.message["reasoning_content"] = "I should ping."
    server.enqueue(thinking_call, text("done"))
    async with client_for(server, thinking="on", thinking_format="deepseek") as client:
        first = await client.chat(HELLO, tools=[{"type": "function", "function": {"name": "ping"}}])
        assert first.reasoning == "I should ping."
        assert first.message["reasoning_content"] == "I should ping."
        history = [*HELLO, first.message, {"role": "tool", "tool_call_id": "c1", "content": "pong"}]
        second = await client.chat(history)
    assert second.content == "done"
    assert server.requests[0]["thinking"] == {"type": "enabled"}
    sent_back = server.requests[1]["messages"][1]
    assert sent_back["reasoning_content"] == "I should ping."
    assert sent_back["tool_calls"][0]["id"] == "c1"


@pytest.mark.parametrize(("fmt", "thinking", "expected"), [
    ("deepseek", "off", {"thinking": {"type": "disabled"}}),
    ("vllm", "on", {"chat_template_kwargs": {"thinking": True, "enable_thinking": True}}),
    ("vllm", "off", {"chat_template_kwargs": {"thinking": False, "enable_thinking": False}}),
])
async def test_thinking_toggle_sent_explicitly(server: ScriptedServer, fmt, thinking, expected) -> None:
    server.enqueue(text("ok"))
    async with client_for(server, thinking=thinking, thinking_format=fmt) as client:
        await client.chat(HELLO)
    body = server.requests[0]
    assert {k: body[k] for k in expected} == expected
    assert not ({"thinking", "chat_template_kwargs"} - set(expected)) & set(body)


# -- retries -----------------------------------------------------------------------------------------
async def test_server_error_then_success(server: ScriptedServer) -> None:
    server.enqueue(Reply(status=500), text("recovered"))
    async with client_for(server) as client:
        result = await client.chat(HELLO)
    assert result.content == "recovered" and result.stats.attempts == 2
    assert len(server.requests) == 2


async def test_429_retry_after_seconds_is_honoured(server: ScriptedServer) -> None:
    server.enqueue(Reply(status=429, headers={"Retry-After": "1"}), text("later"))
    async with client_for(server) as client:
        t0 = time.monotonic()
        with capture_logs() as logs:
            result = await client.chat(HELLO)
        waited = time.monotonic() - t0
    assert result.content == "later" and result.stats.attempts == 2
    # The wait the client chose is the header's (backoff alone would be ~0.01 s), and it did wait it.
    assert [e["wait_s"] for e in logs if e["event"] == "model.retry"] == [1.0]
    assert waited >= 0.95


async def test_retry_after_is_capped(server: ScriptedServer) -> None:
    server.enqueue(Reply(status=503, headers={"Retry-After": "3600"}), text("ok"))
    async with ChatClient(server.config(), backoff_s=0.01, retry_after_max_s=0.2) as client:
        t0 = time.monotonic()
        with capture_logs() as logs:
            await client.chat(HELLO)
    assert [e["wait_s"] for e in logs if e["event"] == "model.retry"] == [0.2]  # the cap, not the hour asked
    assert time.monotonic() - t0 >= 0.2


def test_parse_retry_after_forms() -> None:
    now = time.time()
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("1.5") == 1.5
    assert 9 <= parse_retry_after(formatdate(now + 10, usegmt=True), now=now) <= 10
    assert parse_retry_after(formatdate(now - 100, usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


async def test_retries_are_bounded(server: ScriptedServer) -> None:
    server.enqueue(*[Reply(status=503, body={"error": {"message": "overloaded"}})] * 3)
    async with client_for(server, max_retries=2) as client:
        with pytest.raises(ModelHTTPError) as info:
            await client.chat(HELLO)
    assert info.value.status == 503 and info.value.attempts == 3
    assert "overloaded" in info.value.body and "3 attempt" in str(info.value)
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 422])
async def test_client_errors_are_not_retried(server: ScriptedServer, status: int) -> None:
    server.enqueue(Reply(status=status, body={"error": {"message": f"nope {status}"}}))
    async with client_for(server, max_retries=3) as client:
        with pytest.raises(ModelHTTPError) as info:
            await client.chat(HELLO)
    assert len(server.requests) == 1  # exactly one request reached the server
    err = info.value
    assert err.status == status and err.attempts == 1 and f"nope {status}" in err.body
    assert "scripted-model" in str(err) and server.base_url in str(err)


async def test_error_body_truncated_to_2kib(server: ScriptedServer) -> None:
    server.enqueue(Reply(status=400, body="x" * 10_000))
    async with client_for(server) as client:
        with pytest.raises(ModelHTTPError) as info:
            await client.chat(HELLO)
    assert info.value.body == "x" * 2048


async def test_connection_reset_mid_stream_is_retried(server: ScriptedServer) -> None:
    server.enqueue(text("this answer is cut off", reset_after_chunks=3), text("second try"))
    async with client_for(server) as client:
        result = await client.chat(HELLO)
    assert result.content == "second try" and result.stats.attempts == 2


async def test_resets_exhaust_retries(server: ScriptedServer) -> None:
    server.enqueue(*[text("cut", reset_after_chunks=1)] * 2)
    async with client_for(server, max_retries=1) as client:
        with pytest.raises(ModelHTTPError) as info:
            await client.chat(HELLO)
    assert info.value.status is None and info.value.attempts == 2
    assert "connection failed" in str(info.value)


async def test_connection_refused() -> None:
    server = ScriptedServer()
    cfg = server.config(max_retries=1)
    server.stop()  # nothing listens on that port any more
    async with ChatClient(cfg, backoff_s=0.01) as client:
        with pytest.raises(ModelHTTPError) as info:
            await client.chat(HELLO)
    assert info.value.status is None and info.value.attempts == 2 and cfg.base_url in str(info.value)


# -- deadlines -----------------------------------------------------------------------------------------
# The server stalls this long (stopping it cuts the stall short): far past any deadline below, so an
# upper bound of half of it tells "the deadline fired" from "the stall was waited out" on any machine.
HANG = 120.0

async def test_hang_past_deadline_times_out_and_is_retried_within_bound(server: ScriptedServer) -> None:
    hang = Reply(message={"content": "late"}, hang_s=HANG)
    server.enqueue(hang, hang)
    async with client_for(server, stream=False, request_timeout_s=0.3, max_retries=1) as client:
        t0 = time.monotonic()
        with pytest.raises(ModelTimeout) as info:
            await client.chat(HELLO)
        elapsed = time.monotonic() - t0
    assert 0.6 <= elapsed < HANG / 2  # two attempts of 0.3 s plus a short backoff; never the server's hang
    assert len(server.requests) == 2
    assert "request_timeout_s=0.3" in str(info.value) and "2 attempt" in str(info.value)


async def test_keepalives_do_not_defeat_the_deadline(server: ScriptedServer) -> None:
    server.enqueue(text("never", hang_s=HANG))
    async with client_for(server, request_timeout_s=0.4, max_retries=0) as client:
        t0 = time.monotonic()
        with pytest.raises(ModelTimeout):
            await client.chat(HELLO)
        elapsed = time.monotonic() - t0
    assert 0.4 <= elapsed < HANG / 2  # the deadline, not the end of the keep-alives
    assert len(server.requests) == 1


async def test_keepalive_comments_are_skipped(server: ScriptedServer) -> None:
    server.enqueue(text("after the stall", hang_s=0.3))  # ~6 keep-alive comments, then content
    async with client_for(server, request_timeout_s=3) as client:
        result = await client.chat(HELLO)
    assert result.content == "after the stall"
    assert result.stats.ttft_s >= 0.3  # keep-alives are not tokens


# -- protocol errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("body", ["<html>proxy error</html>", {"object": "chat.completion", "choices": []}, "[1]"])
async def test_not_a_completion_is_a_protocol_error(server: ScriptedServer, body) -> None:
    server.enqueue(Reply(status=200, body=body))
    async with client_for(server, stream=False) as client:
        with pytest.raises(ModelProtocolError) as info:
            await client.chat(HELLO)
    assert len(server.requests) == 1 and server.base_url in str(info.value)


async def test_error_object_with_200_status_maps_to_http_error(server: ScriptedServer) -> None:
    server.enqueue(Reply(status=200, body={"error": {"message": "context too long", "code": 400}}))
    async with client_for(server, stream=False) as client:
        with pytest.raises(ModelHTTPError) as info:
            await client.chat(HELLO)
    assert info.value.status == 400 and "context too long" in info.value.body
    assert len(server.requests) == 1


async def test_list_models(server: ScriptedServer) -> None:
    async with client_for(server) as client:
        assert await client.list_models() == ["scripted-model"]


def sse(*events: dict | str) -> Reply:
    """A hand-written SSE body, for wire shapes the server's own streams never produce."""
    lines = "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)
    return Reply(status=200, body=lines, headers={"Content-Type": "text/event-stream"})


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


async def test_error_event_mid_stream_is_retried_when_retryable(server: ScriptedServer) -> None:
    server.enqueue(sse(chunk({"content": "par"}), {"error": {"message": "engine overloaded", "code": 503}}),
                   text("whole"))
    async with client_for(server) as client:
        result = await client.chat(HELLO)
    assert result.content == "whole" and result.stats.attempts == 2


async def test_stream_ending_before_done_is_retried_then_reported(server: ScriptedServer) -> None:
    server.enqueue(sse(chunk({"content": "half"})), sse(chunk({"content": "half"})))
    async with client_for(server, max_retries=1) as client:
        with pytest.raises(ModelProtocolError, match="before \\[DONE\\].*2 attempt"):
            await client.chat(HELLO)
    assert len(server.requests) == 2


async def test_stream_shapes_from_other_servers(server: ScriptedServer) -> None:
    # no tool-call indices, both reasoning fields in one delta, a multi-line data field, no [DONE]
    server.enqueue(sse(
        chunk({"role": "assistant", "reasoning": "r1", "reasoning_content": "r1"}),
        chunk({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": '{"x":'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": " 1}"}}]}),
        chunk({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": {"y": 2}}}]}),
        '{"object": "chat.completion.chunk",\n'
        'data: "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}',
    ))
    async with client_for(server) as client:
        result = await client.chat(HELLO)
    assert result.reasoning == "r1"  # not doubled
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [("a", "f", '{"x": 1}'), ("b", "g", '{"y": 2}')]
    assert result.finish_reason == "tool_calls" and result.usage == Usage()
    assert result.stats.decode_tok_s is None  # no usage reported: no made-up speed
