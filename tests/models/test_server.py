"""OpenAICompatServer on the wire, read with plain httpx (no agentbench client in between)."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from agentbench.models import OpenAICompatServer, Reply
from tests.helpers.scripted import ScriptedServer, ScriptExhausted, text, tool_call
from tests.helpers.waiting import HANG_S


def sse_events(response: httpx.Response) -> tuple[list[dict], list[str]]:
    """(data objects, comment lines) of a streamed answer; asserts it ends with [DONE]."""
    events, comments, done = [], [], False
    for line in response.iter_lines():
        if line.startswith(":"):
            comments.append(line)
        elif line.startswith("data: "):
            assert not done, "data after [DONE]"
            if line == "data: [DONE]":
                done = True
            else:
                events.append(json.loads(line[6:]))
    assert done
    return events, comments


def test_models_and_completion_objects() -> None:
    seen = []

    def handler(body: dict) -> Reply:
        seen.append(body["messages"][-1]["content"])
        return Reply(message={"content": "pong"}, usage={"prompt_tokens": 3, "completion_tokens": 1})

    with OpenAICompatServer(handler, models=["m1", "m2"]) as base_url:
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        models = httpx.get(f"{base_url}/models").json()
        assert [m["id"] for m in models["data"]] == ["m1", "m2"] and models["object"] == "list"
        answer = httpx.post(f"{base_url}/chat/completions",
                            json={"model": "m2", "messages": [{"role": "user", "content": "ping"}]}).json()
        assert httpx.get(f"{base_url}/nothing").status_code == 404
    assert seen == ["ping"]
    assert answer["object"] == "chat.completion" and answer["model"] == "m2"
    assert answer["id"].startswith("chatcmpl-") and isinstance(answer["created"], int)
    assert answer["choices"] == [{"index": 0, "message": {"role": "assistant", "content": "pong"},
                                  "finish_reason": "stop", "logprobs": None}]
    assert answer["usage"]["prompt_tokens"] == 3 and answer["usage"]["total_tokens"] == 4


@pytest.mark.parametrize("include_usage", [True, False])
def test_stream_chunks(include_usage: bool) -> None:
    reply = tool_call("write_file", '{"path": "a.html"}', id="c7", content="ok", chunk_chars=5)
    with ScriptedServer(reply) as server:
        body = {"model": "scripted-model", "messages": [], "stream": True}
        if include_usage:
            body["stream_options"] = {"include_usage": True}
        with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body) as response:
            assert response.headers["content-type"] == "text/event-stream"
            events, _ = sse_events(response)
    assert {e["object"] for e in events} == {"chat.completion.chunk"}
    assert len({e["id"] for e in events}) == 1
    deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert "".join(d.get("content", "") for d in deltas) == "ok"
    calls = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert calls[0]["id"] == "c7" and calls[0]["function"]["name"] == "write_file"
    args = [tc["function"]["arguments"] for tc in calls]
    assert "".join(args) == '{"path": "a.html"}' and len([a for a in args if a]) == 4  # 18 chars / 5
    finals = [e for e in events if e["choices"] and e["choices"][0]["finish_reason"]]
    assert [f["choices"][0]["finish_reason"] for f in finals] == ["tool_calls"]
    if include_usage:
        assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] == 5
        assert all(e["usage"] is None for e in events[:-1])
    else:
        assert all("usage" not in e for e in events)


def test_stall_sends_keepalive_comments_then_content() -> None:
    with ScriptedServer(text("hi", hang_s=1.0)) as server:
        server.keepalive_s = 0.01  # ~100 comments in the stall: 3 need only 3 turns of its thread in a second
        t0 = time.monotonic()
        with httpx.stream("POST", f"{server.base_url}/chat/completions",
                          json={"messages": [], "stream": True}) as response:
            events, comments = sse_events(response)
        elapsed = time.monotonic() - t0
    assert elapsed >= 1.0
    assert len(comments) >= 3 and set(comments) == {": keep-alive"}
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == "hi"


def test_tokens_per_s_paces_the_stream() -> None:
    with ScriptedServer(text("x" * 20, chunk_chars=1, tokens_per_s=100)) as server:
        t0 = time.monotonic()
        with httpx.stream("POST", f"{server.base_url}/chat/completions",
                          json={"messages": [], "stream": True}) as response:
            sse_events(response)
        elapsed = time.monotonic() - t0
    assert 0.19 <= elapsed < 10  # 20 pieces at 100/s: paced (and not at 100 s each, a unit slip)


def test_reset_mid_stream_is_a_transport_error() -> None:
    with ScriptedServer(text("abcdefgh", chunk_chars=1, reset_after_chunks=3)) as server:
        got: list[str] = []
        with pytest.raises(httpx.TransportError), httpx.stream(
            "POST", f"{server.base_url}/chat/completions", json={"messages": [], "stream": True}
        ) as response:
            got.extend(response.iter_lines())
    assert sum(line.startswith("data: ") for line in got) <= 3  # no [DONE], cut after 3 events


def test_error_replies_and_raw_bodies() -> None:
    with ScriptedServer(Reply(status=429, headers={"Retry-After": "7"}), Reply(status=200, body="not json")) as s:
        first = httpx.post(f"{s.base_url}/chat/completions", json={"messages": []})
        second = httpx.post(f"{s.base_url}/chat/completions", json={"messages": [], "stream": True})
        bad = httpx.post(f"{s.base_url}/chat/completions", content=b"{oops")
    assert first.status_code == 429 and first.headers["retry-after"] == "7" and first.json()["error"]["code"] == 429
    assert second.status_code == 200 and second.text == "not json"
    assert bad.status_code == 400 and len(s.requests) == 2  # the unparsable body is not recorded


def test_exhausted_script_fails_the_test() -> None:
    server = ScriptedServer(text("only one"))
    with pytest.raises(AssertionError, match="no scripted reply left"), server:
        assert httpx.post(f"{server.base_url}/chat/completions", json={"messages": []}).status_code == 200
        assert httpx.post(f"{server.base_url}/chat/completions", json={"messages": []}).status_code == 500
    assert isinstance(server.errors[0], ScriptExhausted)


def test_concurrent_requests_are_all_recorded() -> None:
    server = OpenAICompatServer(lambda b: Reply(message={"content": str(b["n"])}, delay_s=0.05), models=["m"])
    with server as url, httpx.Client() as http:
        results: dict[int, str] = {}

        def call(n: int) -> None:
            r = http.post(f"{url}/chat/completions", json={"n": n, "messages": []})
            results[n] = r.json()["choices"][0]["message"]["content"]

        threads = [threading.Thread(target=call, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {n: str(n) for n in range(8)}
    assert sorted(b["n"] for b in server.requests) == list(range(8))


def test_stop_does_not_wait_for_a_stalled_reply() -> None:
    stalling = threading.Event()

    def stall(body: dict) -> Reply:
        stalling.set()  # the reply's stall starts as this returns
        return Reply(message={"content": "x"}, hang_s=HANG_S)

    server = OpenAICompatServer(stall, models=["m"])
    url = server.start()

    def call() -> None:
        try:
            httpx.post(f"{url}/chat/completions", json={"messages": []}, timeout=HANG_S)
        except httpx.HTTPError:
            pass

    caller = threading.Thread(target=call)
    caller.start()
    assert stalling.wait(HANG_S), "the request never reached the server"
    t0 = time.monotonic()
    server.stop()
    caller.join(timeout=HANG_S)
    # Neither waited out the stall (HANG_S) nor the client's own timeout (HANG_S): stop() cut it short.
    assert time.monotonic() - t0 < HANG_S / 2 and not caller.is_alive()
