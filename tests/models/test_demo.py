"""The offline demo models: recorded sessions replayed over real loopback HTTP.

End to end through the same path as a real model: DemoServer -> ChatClient -> BuiltinAgent ->
real Docker sandbox; the artefact must be byte-for-byte the recorded demo page.
"""

from __future__ import annotations

import json

import httpx
import pytest

from agentbench.agents import TOOL_NAMES, AgentLimits, BuiltinAgent, Transcript
from agentbench.agents._tools import parse_arguments
from agentbench.config import DEMO_MODELS
from agentbench.errors import ModelHTTPError
from agentbench.models import ChatClient, DemoServer
from agentbench.models._demo import DEMO_DATA, load_sessions
from agentbench.sandbox import DockerSandbox
from agentbench.tasks import load_task

TASKS = ("flappy", "ball", "todo", "converter")
LIMITS = AgentLimits(max_turns=10, max_tokens=300_000, wall_s=120)


@pytest.fixture(scope="module")
def prompts() -> dict[str, str]:
    return {task: load_task(task).prompt for task in TASKS}


@pytest.fixture
def demo(prompts):
    with DemoServer(prompts) as server:
        yield server


def test_every_recorded_session_is_a_valid_tool_session() -> None:
    sessions = load_sessions()
    assert sorted(sessions) == ["careful", "rushed"]
    for variant, tasks in sessions.items():
        assert sorted(tasks) == sorted(TASKS), variant
        for task, turns in tasks.items():
            names = []
            for turn in turns:
                for call in turn["tool_calls"]:
                    args = {k: (DEMO_DATA / v["$demo_file"]).read_text(encoding="utf-8") if isinstance(v, dict) else v
                            for k, v in call["arguments"].items()}
                    assert call["name"] in TOOL_NAMES
                    assert parse_arguments(call["name"], json.dumps(args)) == (args, None), (variant, task)
                    names.append(call["name"])
            assert names[-1] == "finish", (variant, task)
            assert "write_file" in names, (variant, task)


@pytest.mark.docker
async def test_careful_flappy_replays_end_to_end_into_a_real_sandbox(demo, prompts, docker_client, tmp_path) -> None:
    async with ChatClient(DEMO_MODELS["demo-careful"], base_url=demo.base_url) as client:
        sandbox = await DockerSandbox.create(client=docker_client)
        try:
            with Transcript(tmp_path / "t.jsonl") as transcript:
                outcome = await BuiltinAgent().run(prompt=prompts["flappy"], sandbox=sandbox, client=client,
                                                   limits=LIMITS, entry="index.html", transcript=transcript)
            artefact = await sandbox.read_file("index.html")
            files = await sandbox.list_files()
        finally:
            await sandbox.close()

    assert artefact == (DEMO_DATA / "careful/flappy/index.html").read_bytes()
    assert files == ["index.html"]
    assert (outcome.status, outcome.stop_reason, outcome.turns) == ("finished", "finish", 4)
    assert (outcome.tool_calls, outcome.tool_errors, outcome.text_tool_calls) == (4, 0, 0)
    assert "Flappy Bird" in outcome.summary
    assert all(r.streamed for r in outcome.requests)  # the demo config streams, like most real ones

    records = Transcript.read(tmp_path / "t.jsonl")
    tool_results = [r["message"]["content"] for r in records if r["kind"] == "message"
                    and r["message"]["role"] == "tool"]
    assert tool_results[0] == "No files under /workspace."
    assert "1 inline script(s) parse OK" in tool_results[2]  # node really ran it in the sandbox
    prompt_tokens = [r["usage"]["prompt_tokens"] for r in records if r["kind"] == "request"]
    assert prompt_tokens == sorted(prompt_tokens) and prompt_tokens[-1] > 2000  # grows with the history
    assert outcome.usage.reasoning_tokens > 1000
    assert any("fixed 1/240 s step" in (r.get("reasoning") or "") for r in records if r["kind"] == "message")


@pytest.mark.docker
async def test_rushed_ball_writes_and_finishes_in_one_turn(demo, prompts, docker_client, tmp_path) -> None:
    async with ChatClient(DEMO_MODELS["demo"], base_url=demo.base_url) as client:
        sandbox = await DockerSandbox.create(client=docker_client)
        try:
            with Transcript(tmp_path / "t.jsonl") as transcript:
                outcome = await BuiltinAgent().run(prompt=prompts["ball"], sandbox=sandbox, client=client,
                                                   limits=LIMITS, entry="index.html", transcript=transcript)
            artefact = await sandbox.read_file("index.html")
        finally:
            await sandbox.close()

    assert artefact == (DEMO_DATA / "rushed/ball/index.html").read_bytes()
    assert (outcome.status, outcome.turns, outcome.tool_calls) == ("finished", 1, 2)


def _ask(base_url: str, body: dict) -> httpx.Response:
    return httpx.post(f"{base_url}/chat/completions", json=body, timeout=10)


def test_turns_follow_the_number_of_assistant_messages(demo, prompts) -> None:
    history = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Task:\n" + prompts["todo"]}]
    first = _ask(demo.base_url, {"model": "agentbench-demo-careful", "messages": history}).json()
    call = first["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "list_files" and json.loads(call["function"]["arguments"]) == {}
    history += [first["choices"][0]["message"], {"role": "tool", "tool_call_id": call["id"], "content": ""}]
    second = _ask(demo.base_url, {"model": "agentbench-demo-careful", "messages": history}).json()
    args = json.loads(second["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert args == {"path": "index.html", "content": (DEMO_DATA / "careful/todo/index.html").read_text()}
    assert second["usage"]["prompt_tokens"] > first["usage"]["prompt_tokens"]
    # Past the recording the model answers in prose, which ends a session.
    late = history + [{"role": "assistant", "content": "x"}] * 5
    third = _ask(demo.base_url, {"model": "agentbench-demo-careful", "messages": late}).json()
    assert third["choices"][0]["message"].get("tool_calls") is None
    assert third["choices"][0]["finish_reason"] == "stop"


def test_unknown_model_or_task_is_a_clear_400(demo, prompts) -> None:
    known = [{"role": "user", "content": prompts["ball"]}]
    wrong_model = _ask(demo.base_url, {"model": "gpt-4o", "messages": known})
    assert wrong_model.status_code == 400
    assert "agentbench-demo-careful" in wrong_model.json()["error"]["message"]
    wrong_task = _ask(demo.base_url, {"model": "agentbench-demo-rushed",
                                      "messages": [{"role": "user", "content": "Write a chess engine."}]})
    assert wrong_task.status_code == 400
    assert "does not recognise this task" in wrong_task.json()["error"]["message"]


async def test_a_400_reaches_the_client_unretried(prompts) -> None:
    with DemoServer({"flappy": prompts["flappy"]}) as server:
        async with ChatClient(DEMO_MODELS["demo"], base_url=server.base_url) as client:
            with pytest.raises(ModelHTTPError) as info:
                await client.chat([{"role": "user", "content": prompts["ball"]}])
        assert len(server.requests) == 1
    assert info.value.status == 400 and "it was started for (flappy)" in str(info.value)

