"""Outcomes decided honestly: ``infra-error`` only when the infrastructure failed.

Real parts throughout: a scripted model on loopback, the runner, Docker sandboxes. A hostile or
feeble model must end with a model outcome (``no-artefact``, with the reason), never with an
infrastructure error that is left out of pass rates and rerun by ``--retry infra``:

- a model whose command is ``kill -9 -1`` (it used to stop its own sandbox);
- a sandbox that stops mid-session while the engine answers and a fresh container starts (the
  agent's doing), against one that was removed from outside (the infrastructure's);
- a model that answers in prose where it should call tools (the preflight used to fail every cell
  of it without running one), against a server that cannot parse tool calls (infrastructure).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentbench.models import ChatClient, Reply, preflight
from agentbench.runner import RunOptions, run
from agentbench.store import AttemptResult
from agentbench.tasks import load_task
from tests.helpers.scripted import ScriptedServer, text, tool_call

PAGE = "<!doctype html><title>t</title><p>0</p>"


def _preflight_replies(tool_turn: Reply) -> list[Reply]:
    """completion, the tool-call turn given, streaming: what preflight asks before a tool round trip."""
    return [text("pong"), tool_turn, text("pong")]


def _by_name(items: list[Any]) -> dict[str, Any]:
    return {i.name: i for i in items}


async def test_preflight_tells_a_server_without_tool_parsing_from_a_model_that_writes_prose() -> None:
    cases = {
        "prose": text("Sure! I would ping, but let me just say hello instead."),
        "text-syntax": text('<tool_call>{"name": "ping", "arguments": {"message": "hello"}}</tool_call>'),
        "400-tools": Reply(status=400, body={"error": {"message": '"auto" tool choice requires '
                                                       "--enable-auto-tool-choice and --tool-call-parser"}}),
    }
    seen = {}
    for name, reply in cases.items():
        with ScriptedServer(*_preflight_replies(reply)) as server:
            async with ChatClient(server.config(max_retries=0), backoff_s=0.01) as client:
                seen[name] = _by_name(await preflight(client))["tool-call"]
    assert not seen["prose"].ok and not seen["prose"].blocks, seen["prose"]  # the model's: its cells run
    assert "prose" in seen["prose"].detail
    for name in ("text-syntax", "400-tools"):  # the server's: infrastructure
        assert not seen[name].ok and seen[name].blocks, seen[name]
        assert "cannot" in seen[name].detail and "--enable-auto-tool-choice" in seen[name].detail


def _run(server: ScriptedServer, tmp_path: Path, **model: Any) -> AttemptResult:
    cfg = server.config(request_timeout_s=20.0, max_retries=0, **model)
    options = RunOptions(out_dir=tmp_path / "runs", checks=False)
    summary = asyncio.run(run([cfg], [load_task("todo")], options))
    (result,) = summary.results
    return result


@pytest.mark.docker
def test_a_model_that_answers_in_prose_runs_its_cells_and_fails_on_its_own(tmp_path: Path, docker_client) -> None:
    prose = text("I am a language model; here is how you could write a to-do list: use HTML.")
    with ScriptedServer(*_preflight_replies(prose), text("A to-do list needs an input."), text("Good luck!")) as server:
        result = _run(server, tmp_path)
    assert result.outcome == "no-artefact" and result.error is None, result
    assert result.agent.turns == 2  # its cell ran: it was asked, and answered in prose twice


@pytest.mark.docker
def test_a_server_that_cannot_parse_tool_calls_is_an_infrastructure_error(tmp_path: Path, docker_client) -> None:
    syntax = text('<tool_call>{"name": "ping", "arguments": {"message": "hello"}}</tool_call>')
    with ScriptedServer(*_preflight_replies(syntax)) as server:
        result = _run(server, tmp_path)
    assert result.outcome == "infra-error" and result.error is not None and result.error.kind == "preflight"
    assert "cannot parse tool calls" in result.error.message


def _ping() -> list[Reply]:
    return _preflight_replies(tool_call("ping", {"message": "hello"})) + [text("pong again")]


@pytest.mark.docker
def test_kill_minus_nine_minus_one_is_the_models_doing(tmp_path: Path, docker_client) -> None:
    """The init runs as a uid the agent cannot signal: the container survives, the session goes on."""
    uids = "id -u; for p in /proc/[0-9]*; do stat -c %u $p; done | sort -u | tr '\\n' ' '"
    with ScriptedServer(*_ping(),
                        tool_call("run", {"command": "kill -9 -1; echo still"}),
                        tool_call("run", {"command": uids}, id="c2"),
                        tool_call("write_file", {"path": "index.html", "content": PAGE}, id="c3"),
                        tool_call("finish", {"summary": "done"}, id="c4")) as server:
        result = _run(server, tmp_path)
        tools = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert result.outcome == "scored" and result.error is None, result
    assert tools[1].startswith("exit code: 0"), tools  # the sandbox still runs commands after the kill
    assert "60600" in tools[1] and "60601" in tools[1]  # the agent's uid, and its init's: another one


class _StopsTheSandbox(ScriptedServer):
    """Before answering request number ``at``, stops (or removes) the cell's sandbox container."""

    def __init__(self, docker_client: Any, at: int, remove: bool, *replies: Reply) -> None:
        super().__init__(*replies)
        self.docker, self.at, self.remove = docker_client, at, remove

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if len(self.requests) == self.at:
            (box,) = self.docker.containers.list(filters={"label": "agentbench.cell=todo/scripted/r1"})
            box.remove(force=True) if self.remove else box.kill()
        return super()._next_reply(body)


@pytest.mark.docker
@pytest.mark.parametrize("remove", [False, True], ids=["stopped", "removed"])
def test_a_sandbox_lost_mid_session(tmp_path: Path, docker_client, remove: bool) -> None:
    """Stopped (what an agent's command can do) while the engine is sound: the model's outcome.
    Removed from outside (what no agent can do): an infrastructure error."""
    replies = [*_ping(), tool_call("run", {"command": "echo hi > note.txt"}),
               tool_call("run", {"command": "cat note.txt"}, id="c2")]
    with _StopsTheSandbox(docker_client, len(replies), remove, *replies) as server:
        result = _run(server, tmp_path)
    if remove:
        assert result.outcome == "infra-error" and result.error is not None and result.error.kind == "sandbox"
    else:
        assert result.outcome == "no-artefact" and result.error is None, result
        assert result.agent.stop_reason == "sandbox-ended"
        assert "engine answered and a fresh container started" in (result.agent.detail or "")
    assert not docker_client.containers.list(all=True, filters={"label": "agentbench.probe"})  # probes removed

