"""Engine faults through the whole runner: infra errors are told apart from model failures.

A real loopback OpenAI-compatible engine (OpenAICompatServer) answers by prompt shape, the real
client and agent drive a real Docker sandbox; nothing in agentbench is patched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentbench.config import ModelConfig
from agentbench.models import OpenAICompatServer, Reply
from agentbench.runner import RunOptions, run
from agentbench.stats import compute_stats
from agentbench.tasks import load_task

PAGE = "<!doctype html><title>t</title><p>hello</p>"


def _call(name: str, args: dict[str, Any]) -> Reply:
    return Reply(message={"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c-{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        finish_reason="tool_calls")


BROKEN = {"flappy": True}


def engine(body: dict[str, Any]) -> Reply:
    """Fails every request whose prompt is the Flappy task (a missing kernel variant for that shape)."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if "Flappy Bird" in user and BROKEN["flappy"]:
        return Reply(status=500, body={"error": {"message": "no kernel for this shape", "code": 500}})
    if "bouncing-ball" in user:  # the model writes until it hits max_tokens, mid tool call
        return Reply(message={"role": "assistant", "content": "Let me write the whole file: <!doctype html><canv"},
                     finish_reason="length")
    if turn == 0:
        return _call("write_file", {"path": "index.html", "content": PAGE})
    return _call("finish", {"summary": "done"})


def _model(url: str, **kw: Any) -> ModelConfig:
    return ModelConfig(name="engine", base_url=url, model="m1", max_retries=1, request_timeout_s=10, **kw)


async def test_prompt_shape_fault_is_infra_error_and_others_score(tmp_path: Path, docker_client) -> None:
    BROKEN["flappy"] = True
    with OpenAICompatServer(engine, models=["m1"]) as url:
        tasks = [load_task(t) for t in ("flappy", "todo", "ball")]
        summary = await run([_model(url)], tasks, RunOptions(out_dir=tmp_path, checks=False, preflight=False))
        stored = json.loads((summary.run_dir / "flappy/engine/r1/result.json").read_text())
        # The engine is fixed: --resume --retry infra reruns only the infra error.
        BROKEN["flappy"] = False
        todo_stamp = (summary.run_dir / "todo/engine/r1/result.json").stat().st_mtime_ns
        again = await run([_model(url)], tasks, RunOptions(out_dir=tmp_path, checks=False, preflight=False,
                                                           resume=summary.run_id, retry_infra=True))
    assert again.skipped == 2
    assert {r.task: r.outcome for r in again.results} == {"flappy": "scored", "todo": "scored", "ball": "budget"}
    assert (summary.run_dir / "todo/engine/r1/result.json").stat().st_mtime_ns == todo_stamp
    by_task = {r.task: r for r in summary.results}
    flappy, todo, ball = by_task["flappy"], by_task["todo"], by_task["ball"]
    assert flappy.outcome == "infra-error"
    assert flappy.error is not None and flappy.error.kind == "model-endpoint" and flappy.error.status == 500
    assert "no kernel for this shape" in (flappy.error.body or "")
    assert flappy.verdict is None
    assert todo.outcome == "scored" and (summary.run_dir / "todo/engine/r1/artefact/index.html").read_text() == PAGE
    # Running out of tokens mid-answer is the model's budget outcome, flagged, not an infra error.
    assert ball.outcome == "budget" and ball.agent.budget_hit == "length" and ball.error is None
    assert ball.limits["max_tokens"] == load_task("ball").limits.max_tokens
    stats = compute_stats(summary.results)
    assert [c.scored for c in stats.cells if c.task == "flappy"] == [0]
    assert len(stats.infra) == 1 and "flappy/engine/r1" in stats.infra[0]
    assert stored["outcome"] == "infra-error" and stored["error"]["status"] == 500


async def test_failed_preflight_stops_the_model_before_spending(tmp_path: Path, docker_client) -> None:
    seen: list[dict] = []

    def listed_wrong(body: dict[str, Any]) -> Reply:
        seen.append(body)
        return engine(body)

    with OpenAICompatServer(listed_wrong, models=["another-model"]) as url:
        summary = await run([_model(url)], [load_task("todo")], RunOptions(out_dir=tmp_path, checks=False))
    (result,) = summary.results
    assert result.outcome == "infra-error" and result.error is not None and result.error.kind == "preflight"
    assert "model-listed" in result.error.message and "m1" in result.error.message
    assert not any("to-do" in json.dumps(b) for b in seen)  # no agent request was made
    assert (summary.run_dir / "todo/engine/r1/result.json").is_file()
