"""preflight() against real loopback endpoints: one that works, ones that do not."""

from __future__ import annotations

from agentbench.models import ChatClient, Reply, preflight
from tests.helpers.scripted import ScriptedServer, text, tool_call


def by_name(items) -> dict[str, tuple[bool, str]]:
    return {i.name: (i.ok, i.detail) for i in items}


async def test_preflight_passes_on_a_working_endpoint() -> None:
    ping = tool_call("ping", {"message": "hello"}, id="p1")
    ping.message["reasoning_content"] = "The user wants a ping."
    with ScriptedServer(
        text("pong", reasoning="Easy."),                        # completion (not streamed)
        ping,                                                   # tool call
        text("Got pong back."),                                 # answer to the tool result
        text("pong", usage={"prompt_tokens": 5, "completion_tokens": 1}),  # streaming
    ) as server:
        async with ChatClient(server.config(thinking="on", thinking_format="deepseek"), backoff_s=0.01) as client:
            items = await preflight(client)
        assert server.pending == 0
        round_trip = server.requests[2]["messages"]
    result = by_name(items)
    assert [i.name for i in items] == ["reachable", "model-listed", "completion", "tool-call", "streaming", "thinking"]
    assert all(ok for ok, _ in result.values()), result
    assert "ttft" in result["streaming"][1]
    # the tool round trip sent DeepSeek's reasoning back, as its API requires
    assert round_trip[1]["reasoning_content"] == "The user wants a ping."
    assert round_trip[2] == {"role": "tool", "tool_call_id": "p1", "content": "pong"}
    assert server.requests[0]["stream"] is False and server.requests[3]["stream"] is True


async def test_preflight_reports_what_is_wrong() -> None:
    with ScriptedServer(
        text("pong", reasoning="thinking anyway"),               # completion: reasoning despite thinking=off
        text('<tool_call>{"name": "ping"}</tool_call>'),        # a tool call written as text
        Reply(status=400, body={"error": {"message": "stream not supported"}}),
        models=["some-other-model"],
    ) as server:
        cfg = server.config(model="wanted-model", thinking="off")
        async with ChatClient(cfg, backoff_s=0.01) as client:
            items = await preflight(client)
    result = by_name(items)
    assert result["reachable"][0] is True
    assert result["model-listed"] == (False, result["model-listed"][1])
    assert "some-other-model" in result["model-listed"][1]
    assert result["completion"][0] is True
    assert result["tool-call"][0] is False and "cannot parse tool calls" in result["tool-call"][1]
    assert result["streaming"][0] is False and "400" in result["streaming"][1]
    assert result["thinking"][0] is False and "enable_thinking" in result["thinking"][1]


async def test_preflight_unreachable_endpoint() -> None:
    server = ScriptedServer()
    cfg = server.config(max_retries=0)
    server.stop()
    async with ChatClient(cfg, backoff_s=0.01) as client:
        items = await preflight(client)
    assert [(i.name, i.ok) for i in items] == [("reachable", False)]
    assert cfg.base_url in items[0].detail
