"""The builtin agent end to end: real loopback HTTP model server, real ChatClient, real Docker sandbox.

Each test scripts the model's replies, runs a whole session and checks what the agent did, what
it sent back to the model (the next request's messages) and what the transcript kept.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from agentbench.agents import AgentLimits, AgentOutcome, BuiltinAgent, Transcript
from agentbench.errors import ModelHTTPError, ModelTimeout, SandboxError
from agentbench.models import ChatClient, Reply
from agentbench.sandbox import DockerSandbox
from tests.helpers.scripted import ScriptedServer

pytestmark = pytest.mark.docker

PROMPT = "Build a small web page that says hello."
PAGE = "<!doctype html>\n<title>hi</title>\n<p>Hello</p>\n"
LIMITS = AgentLimits(max_turns=10, max_tokens=100_000, wall_s=60)
_ids = itertools.count(1)


@pytest.fixture
def scripted():
    """The shared scripted server; leaving it fails the test if a request found no reply left."""
    server = ScriptedServer()
    server.start()
    with server:
        yield server


@pytest.fixture
async def sandbox(docker_client):
    sb = await DockerSandbox.create(client=docker_client)
    try:
        yield sb
    finally:
        await sb.close()


def calls(*pairs: tuple[str, Any], content: str | None = None, usage: tuple[int, int] = (100, 20),
          finish_reason: str | None = None) -> Reply:
    """An assistant reply with tool calls; dict arguments are dumped, strings sent verbatim."""
    tool_calls = [
        {"id": f"call_{next(_ids)}", "type": "function",
         "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
        for name, args in pairs
    ]
    return Reply(message={"role": "assistant", "content": content, "tool_calls": tool_calls},
                 usage={"prompt_tokens": usage[0], "completion_tokens": usage[1]}, finish_reason=finish_reason)


def say(text: str, *, usage: tuple[int, int] = (100, 20), finish_reason: str | None = None) -> Reply:
    return Reply(message={"role": "assistant", "content": text},
                 usage={"prompt_tokens": usage[0], "completion_tokens": usage[1]}, finish_reason=finish_reason)


async def run_agent(scripted: ScriptedServer, sandbox: DockerSandbox, tmp_path: Path, *,
                    limits: AgentLimits = LIMITS, **config: Any) -> AgentOutcome:
    cfg = scripted.config(**{"request_timeout_s": 10.0, **config})
    async with ChatClient(cfg, backoff_s=0.05, backoff_max_s=0.1) as client:
        with Transcript(tmp_path / "transcript.jsonl") as transcript:
            return await BuiltinAgent().run(prompt=PROMPT, sandbox=sandbox, client=client, limits=limits,
                                            entry="index.html", transcript=transcript)


def records(tmp_path: Path) -> list[dict[str, Any]]:
    return Transcript.read(tmp_path / "transcript.jsonl")


def tool_messages(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def ids(reply: Reply) -> list[str]:
    return [c["id"] for c in reply.message["tool_calls"]]


@pytest.mark.parametrize("stream", [True, False])
async def test_session_writes_runs_and_finishes(scripted, sandbox, tmp_path, stream: bool) -> None:
    write = calls(("write_file", {"path": "index.html", "content": PAGE}), usage=(120, 40))
    run = calls(("run", {"command": "wc -c < index.html; node -e 'console.log(6*7)'", "timeout_s": 1000}))
    scripted.enqueue(write, run, calls(("finish", {"summary": "made it"}), usage=(200, 10)))

    outcome = await run_agent(scripted, sandbox, tmp_path, stream=stream)
    log = records(tmp_path)

    assert (outcome.status, outcome.stop_reason, outcome.budget_hit) == ("finished", "finish", None)
    assert (outcome.turns, outcome.tool_calls, outcome.tool_errors, outcome.text_tool_calls) == (3, 3, 0, 0)
    assert (outcome.usage.prompt_tokens, outcome.usage.completion_tokens) == (420, 70)
    assert len(outcome.requests) == 3 and all(r.streamed == stream for r in outcome.requests)
    assert outcome.summary == "made it" and outcome.entry_exists
    assert await sandbox.read_file("index.html") == PAGE.encode()

    first = scripted.requests[0]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert "/workspace" in first["messages"][0]["content"] and "index.html" in first["messages"][0]["content"]
    assert first["messages"][1]["content"] == PROMPT
    assert [t["function"]["name"] for t in first["tools"]] == ["write_file", "read_file", "list_files", "run",
                                                               "finish"]
    assert tool_messages(scripted.requests[1]) == {ids(write)[0]: f"Wrote {len(PAGE)} bytes to index.html."}
    ran = tool_messages(scripted.requests[2])[ids(run)[0]]
    assert ran.startswith("exit code: 0") and f"{len(PAGE)}\n42\n" in ran
    assert "timeout lowered from 1000 s" in ran  # capped at 300 s and by the remaining wall time

    roles = [r["message"]["role"] for r in log if r["kind"] == "message"]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    assert [r["kind"] for r in log].count("request") == 3
    assert log[0]["event"] == "start" and log[-1]["event"] == "stop"
    assert log[-1]["status"] == "finished" and all("ts" in r for r in log)


async def test_invalid_arguments_get_a_tool_error_and_the_retry_works(scripted, sandbox, tmp_path) -> None:
    bad = calls(("write_file", '{"path": "index.html", "content": "<html>'),
                ("write_file", {"path": "guess.html", "content": 42}))
    scripted.enqueue(bad, calls(("write_file", {"path": "index.html", "content": PAGE})),
                     calls(("finish", {"summary": "fixed"})))

    outcome = await run_agent(scripted, sandbox, tmp_path)

    errors = tool_messages(scripted.requests[1])
    assert list(errors) == ids(bad)
    assert "not valid JSON" in errors[ids(bad)[0]]
    assert "field 'content' must be a string, got 42" in errors[ids(bad)[1]]
    assert all('write_file expects a JSON object {"path": string, "content": string}' in e for e in errors.values())
    assert (outcome.status, outcome.tool_calls, outcome.tool_errors) == ("finished", 4, 2)
    # Nothing was run on guessed arguments: only the valid call wrote a file.
    assert await sandbox.list_files() == ["index.html"]
    assert await sandbox.read_file("index.html") == PAGE.encode()


async def test_tool_call_written_as_text_is_reported_and_not_executed(scripted, sandbox, tmp_path) -> None:
    text_call = '<tool_call>\n{"name": "write_file", "arguments": {"path": "text.html", "content": "x"}}\n</tool_call>'
    scripted.enqueue(say(text_call), calls(("write_file", {"path": "index.html", "content": PAGE})),
                     calls(("finish", {"summary": "ok"})))

    outcome = await run_agent(scripted, sandbox, tmp_path)

    reply = scripted.requests[1]["messages"][-1]
    assert reply["role"] == "user"
    assert "NOT executed" in reply["content"] and "<tool_call> tag" in reply["content"]
    assert (outcome.text_tool_calls, outcome.tool_calls, outcome.nudges, outcome.status) == (1, 2, 0, "finished")
    assert await sandbox.list_files() == ["index.html"]
    assert any(r.get("event") == "text-tool-calls" for r in records(tmp_path))


async def test_path_escape_is_a_tool_error_and_finish_needs_the_entry(scripted, sandbox, tmp_path) -> None:
    escape = calls(("write_file", {"path": "../escape.html", "content": "x"}), ("read_file", {"path": "/etc/passwd"}),
                   ("read_file", {"path": "missing.html"}))
    scripted.enqueue(escape, calls(("finish", {"summary": "a"})), calls(("finish", {"summary": "b"})))

    outcome = await run_agent(scripted, sandbox, tmp_path)

    escaped, absolute, missing = tool_messages(scripted.requests[1]).values()
    for text in (escaped, absolute):
        assert text.startswith("Error:") and "outside the workspace" in text
    assert missing.startswith("Error: read_file failed") and "No such file" in missing
    assert "finish was refused" in scripted.requests[2]["messages"][-1]["content"]
    assert (outcome.status, outcome.stop_reason, outcome.entry_exists) == ("no-artefact", "finish", False)
    assert (outcome.tool_calls, outcome.tool_errors) == (5, 4)
    assert (await sandbox.exec("test ! -e /escape.html && test ! -e /workspace/../escape.html")).ok


async def test_plain_answers_get_one_nudge_then_end_without_artefact(scripted, sandbox, tmp_path) -> None:
    scripted.enqueue(say("Here is the page: <html>...</html>"), say("As I said, the page is above."))

    outcome = await run_agent(scripted, sandbox, tmp_path)

    nudge = scripted.requests[1]["messages"][-1]
    assert nudge["role"] == "user" and "No tool was called" in nudge["content"]
    assert (outcome.status, outcome.stop_reason, outcome.nudges, outcome.turns) == ("no-artefact", "answer", 1, 2)


async def test_a_sandbox_that_does_not_answer_whether_the_entry_exists_is_no_model_outcome(
        scripted, sandbox, tmp_path) -> None:
    """Under heavy load a demo run ended `no-artefact` although its page was written: the sandbox's
    answer to `test -f index.html` did not come within the bound, and "no answer" read as "missing".
    The test holds that exec past its bound (a command that cannot end in it); the rest run for real."""
    real_exec = sandbox.exec

    async def test_never_answers(command: str, **kwargs: Any):
        if command.startswith("test -"):
            return await real_exec("sleep 30", timeout_s=0.5)
        return await real_exec(command, **kwargs)

    sandbox.exec = test_never_answers
    scripted.enqueue(calls(("write_file", {"path": "index.html", "content": PAGE})), say("Done: index.html."))

    with pytest.raises(SandboxError, match="could not tell whether index.html exists"):
        await run_agent(scripted, sandbox, tmp_path)
    assert records(tmp_path)[-1]["event"] == "error"  # said in the transcript, then raised: an infra error


async def test_plain_answer_after_writing_the_entry_ends_the_session(scripted, sandbox, tmp_path) -> None:
    scripted.enqueue(calls(("write_file", {"path": "index.html", "content": PAGE})), say("Done: index.html."))

    outcome = await run_agent(scripted, sandbox, tmp_path)

    assert (outcome.status, outcome.stop_reason, outcome.nudges, outcome.summary) == (
        "finished", "answer", 0, "Done: index.html.")


async def test_turn_limit_is_a_budget_outcome(scripted, sandbox, tmp_path) -> None:
    scripted.enqueue(*(calls(("list_files", {})) for _ in range(3)))

    limits = AgentLimits(max_turns=2, max_tokens=10**6, wall_s=60)
    outcome = await run_agent(scripted, sandbox, tmp_path, limits=limits)

    assert (outcome.status, outcome.budget_hit, outcome.turns) == ("budget", "max_turns", 2)
    assert not outcome.entry_exists
    assert len(scripted.requests) == 2


async def test_token_limit_is_a_budget_outcome(scripted, sandbox, tmp_path) -> None:
    scripted.enqueue(calls(("list_files", {}), usage=(600, 100)),
                     calls(("write_file", {"path": "index.html", "content": PAGE}), usage=(650, 100)),
                     calls(("finish", {"summary": "never asked for"})))

    outcome = await run_agent(scripted, sandbox, tmp_path,
                                       limits=AgentLimits(max_turns=10, max_tokens=1000, wall_s=60))

    # 700 tokens after one request (under 1000), 1450 after two: no third request.
    assert (outcome.status, outcome.stop_reason, outcome.budget_hit) == ("budget", "max_tokens", "max_tokens")
    assert outcome.turns == 2 and len(scripted.requests) == 2
    assert outcome.entry_exists  # the write of the last reply was still carried out
    assert records(tmp_path)[-1]["budget_hit"] == "max_tokens"


async def test_reply_cut_at_the_length_limit_is_a_budget_outcome(scripted, sandbox, tmp_path) -> None:
    cut = calls(("write_file", '{"path": "index.html", "content": "<!doctype html><body><script>let a = ['),
                finish_reason="length")
    scripted.enqueue(cut)

    outcome = await run_agent(scripted, sandbox, tmp_path)

    assert (outcome.status, outcome.budget_hit, outcome.turns, outcome.entry_exists) == ("budget", "length", 1, False)
    assert await sandbox.list_files() == []


async def test_wall_clock_limit_is_a_budget_outcome(scripted, sandbox, tmp_path) -> None:
    # The second answer comes far past the wall limit (the scripted server's stop cuts its delay short);
    # the limit leaves the first turn (one scripted answer, one list_files) ample time on a busy machine.
    scripted.enqueue(calls(("list_files", {})), Reply(message={"role": "assistant", "content": "late"}, delay_s=120))

    outcome = await run_agent(scripted, sandbox, tmp_path,
                                       limits=AgentLimits(max_turns=10, max_tokens=10**6, wall_s=5))

    assert (outcome.status, outcome.budget_hit, outcome.turns) == ("budget", "wall", 1)
    assert 4.9 < outcome.wall_s < 60  # stopped at its limit, not when the late answer came
    assert records(tmp_path)[-1]["event"] == "stop" and records(tmp_path)[-1]["stop_reason"] == "wall"


async def test_server_error_is_retried_then_the_session_goes_on(scripted, sandbox, tmp_path) -> None:
    scripted.enqueue(Reply(status=500), calls(("write_file", {"path": "index.html", "content": PAGE})),
                     calls(("finish", {"summary": "ok"})))

    outcome = await run_agent(scripted, sandbox, tmp_path)

    assert outcome.status == "finished" and outcome.turns == 2
    assert [r.attempts for r in outcome.requests] == [2, 1]
    assert len(scripted.requests) == 3


async def test_rate_limit_honours_retry_after(scripted, sandbox, tmp_path) -> None:
    scripted.enqueue(Reply(status=429, headers={"Retry-After": "1"}),
                     calls(("write_file", {"path": "index.html", "content": PAGE})),
                     calls(("finish", {"summary": "ok"})))

    outcome = await run_agent(scripted, sandbox, tmp_path)

    assert outcome.status == "finished"
    assert outcome.requests[0].attempts == 2
    assert outcome.requests[0].wall_s >= 1.0  # the client's own backoff here is 0.05-0.1 s


async def test_hanging_request_past_the_deadline_propagates_and_keeps_the_transcript(scripted, sandbox,
                                                                                     tmp_path) -> None:
    write = calls(("write_file", {"path": "index.html", "content": PAGE}))
    hang = Reply(message={"role": "assistant", "content": "never"}, hang_s=30)  # keep-alives only
    scripted.enqueue(write, hang)

    with pytest.raises(ModelTimeout):
        await run_agent(scripted, sandbox, tmp_path, request_timeout_s=1.0, max_retries=0)

    log = records(tmp_path)
    messages = [r["message"] for r in log if r["kind"] == "message"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["id"] == ids(write)[0]
    assert log[-1]["event"] == "error" and log[-1]["error_type"] == "ModelTimeout"
    assert await sandbox.read_file("index.html") == PAGE.encode()


async def test_unauthorised_is_not_retried(scripted, sandbox, tmp_path) -> None:
    scripted.enqueue(Reply(status=401, body={"error": {"message": "bad key"}}), calls(("finish", {"summary": "x"})))

    with pytest.raises(ModelHTTPError) as info:
        await run_agent(scripted, sandbox, tmp_path)

    assert info.value.status == 401 and info.value.attempts == 1
    assert len(scripted.requests) == 1
    assert records(tmp_path)[-1]["event"] == "error"
