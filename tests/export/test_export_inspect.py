"""`agentbench export RUN --format inspect`: written with Inspect's API, read back with Inspect's reader,
and checked against every result.json and transcript of the run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentbench.checks._model import CheckResult
from agentbench.cli import app
from agentbench.stats import compute_stats, wilson
from agentbench.store import (
    AgentSummary,
    AttemptResult,
    CellRef,
    RunManifest,
    SpeedStats,
    attempt_dir,
    load_manifest,
    load_result,
    write_json,
)
from tests.report._runs import build_run

try:
    import inspect_ai.log as inspect_log
except ImportError as exc:  # CI installs the test extra, which brings it: missing there is a failure
    from tests.conftest import IN_CI

    if IN_CI:
        raise RuntimeError(f"inspect_ai is missing in CI ({exc}): the test extra must install it") from exc
    pytest.skip("needs the inspect extra: pip install 'agentbench[inspect]'", allow_module_level=True)

TRANSCRIPT = [
    {"kind": "event", "event": "start", "agent": "builtin"},
    {"kind": "message", "turn": 0, "message": {"role": "system", "content": "You are a coding agent."}},
    {"kind": "message", "turn": 0, "message": {"role": "user", "content": "Build a to-do list."}},
    {"kind": "request", "turn": 1, "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    {"kind": "message", "turn": 1, "reasoning": "I will write the file.", "message": {
        "role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "write_file",
                                                          "arguments": '{"path": "index.html", "content": "<p>"}'}},
            {"id": "c2", "type": "function", "function": {"name": "run", "arguments": '{"command": "ls'}}]}},
    {"kind": "tool", "turn": 1, "call_id": "c1", "name": "write_file", "is_error": False, "duration_s": 0.1},
    {"kind": "message", "turn": 1, "message": {"role": "tool", "tool_call_id": "c1", "content": "wrote index.html"}},
    {"kind": "tool", "turn": 1, "call_id": "c2", "name": "run", "is_error": True, "duration_s": 0.0},
    {"kind": "message", "turn": 1, "message": {"role": "tool", "tool_call_id": "c2",
                                                "content": "error: arguments are not valid JSON"}},
    {"kind": "message", "turn": 2, "message": {"role": "assistant",
                                                "content": [{"type": "text", "text": "Done: index.html."}]}},
]


def _add(run_dir: Path, manifest: RunManifest, cell: CellRef, **kw) -> None:
    adir = attempt_dir(run_dir, cell)
    (adir / "artefact").mkdir(parents=True)
    (adir / "artefact" / "index.html").write_text("<p>hi</p>")
    write_json(adir / "result.json", AttemptResult(run_id=manifest.run_id, task=cell.task, model=cell.model,
                                                   repeat=cell.repeat, artefact_path="artefact",
                                                   agent=AgentSummary(agent=cell.agent), **kw))
    manifest.cells.append(cell)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """The report's run (pass, fail, no-artefact, infra error) plus a real transcript, a budget hit,
    a model under an external agent (its own lane) and a cell not run yet."""
    run_dir = build_run(tmp_path / "artefacts")
    manifest = load_manifest(run_dir)
    todo = attempt_dir(run_dir, CellRef(task="todo", model="alpha", repeat=1))
    (todo / "transcript.jsonl").write_text("\n".join(json.dumps(r) for r in TRANSCRIPT) + "\n{\"torn")
    budget = CellRef(task="todo", model="alpha", repeat=2)
    _add(run_dir, manifest, budget, outcome="budget", verdict="fail", score=0.5, limits={"max_tokens": 300000},
         speed=SpeedStats(requests=2, prompt_tokens=300, completion_tokens=200, reasoning_tokens=50),
         checks=[CheckResult(id="add", status="pass", detail="adds"),
                 CheckResult(id="persistence", status="fail", detail="lost on reload")])
    result = load_result(attempt_dir(run_dir, budget) / "result.json")
    result.agent.budget_hit = "max_tokens"
    write_json(attempt_dir(run_dir, budget) / "result.json", result)
    _add(run_dir, manifest, CellRef(task="flappy", model="alpha", repeat=1, agent="aider"), outcome="scored",
         verdict="pass", score=1.0, wall_s=61.5,
         speed=SpeedStats(requests=4, prompt_tokens=4000, completion_tokens=900),
         checks=[CheckResult(id="load", status="pass", detail="loads"),
                 CheckResult(id="refresh-rate", status="error", detail="could not tell")])
    aider = attempt_dir(run_dir, CellRef(task="flappy", model="alpha", repeat=1, agent="aider"))
    (aider / "transcript.jsonl").write_text("\n".join(json.dumps(r) for r in [  # as the gateway records it
        {"kind": "event", "event": "conversation", "turn": 1, "messages": 2},
        {"kind": "message", "turn": 1, "message": {"role": "user", "content": "Build Flappy Bird."}},
        {"kind": "message", "turn": 1, "message": {"role": "assistant", "content": "Here it is."}}]) + "\n")
    # A transcript that is a link out of the run is not followed (files in a run are data).
    outside = run_dir.parent / "secret.jsonl"
    outside.write_text(json.dumps({"kind": "message", "message": {"role": "user", "content": "SECRET"}}) + "\n")
    (attempt_dir(run_dir, budget) / "transcript.jsonl").symlink_to(outside)
    manifest.cells.append(CellRef(task="converter", model="alpha", repeat=2))  # planned, not run yet
    write_json(run_dir / "run.json", manifest)
    return run_dir


def _export(run_dir: Path) -> list[Path]:
    from agentbench.export import export_inspect

    return export_inspect(run_dir)


def test_every_attempt_round_trips_through_inspects_reader(run_dir: Path) -> None:
    paths = _export(run_dir)
    manifest = load_manifest(run_dir)
    lanes = {(c.task, c.lane) for c in manifest.cells}
    logs = {}
    for info in inspect_log.list_eval_logs(str(run_dir / "inspect")):  # Inspect's own listing finds them all
        log = inspect_log.read_eval_log(info.name)
        logs[(log.eval.dataset.name, log.eval.metadata["lane"])] = log
    assert set(logs) == lanes and len(paths) == len(lanes)
    checked = 0
    for cell in manifest.cells:
        log = logs[(cell.task, cell.lane)]
        assert log.eval.task == f"agentbench/{cell.task}" and log.eval.run_id == manifest.run_id
        assert log.eval.model == f"openai-api/{cell.model}/{cell.model}" and log.eval.config.epochs == 2
        assert log.eval.solver == f"agentbench/{cell.agent}"
        result = load_result(attempt_dir(run_dir, cell) / "result.json")
        samples = [s for s in log.samples if s.epoch == cell.repeat]
        if result is None:  # not run yet: no sample, and the log says it is unfinished
            assert samples == [] and log.status == "started"
            continue
        (sample,) = samples
        checked += 1
        assert sample.id == cell.task
        assert sample.metadata["outcome"] == result.outcome and sample.metadata["verdict"] == result.verdict
        assert sample.metadata["lane"] == cell.lane and sample.metadata["agent"] == cell.agent
        artefact = Path(sample.metadata["artefact_path"])
        assert artefact == (attempt_dir(run_dir, cell) / "artefact").resolve() and artefact.is_dir()
        assert sample.total_time == result.wall_s
        if result.speed.requests:
            (usage,) = sample.model_usage.values()
            assert (usage.input_tokens, usage.output_tokens) == (result.speed.prompt_tokens,
                                                                  result.speed.completion_tokens)
        if result.outcome == "infra-error":
            assert sample.error is not None and result.error.message in sample.error.message
            assert sample.scores is None
            continue
        assert sample.error is None
        assert list(sample.scores) == ["verdict", *[c.id for c in result.checks]]
        assert sample.scores["verdict"].value == ("C" if result.verdict == "pass" else "I")
        for c in result.checks:
            score = sample.scores[c.id]
            assert score.value == {"pass": "C", "fail": "I", "error": "N", "skip": "N"}[c.status]
            assert score.explanation == c.detail and score.metadata["status"] == c.status
            assert score.metadata["data"] == c.data
    assert checked == len([c for c in manifest.cells if c.task != "converter" or c.repeat == 1])


def test_transcript_becomes_inspect_messages(run_dir: Path) -> None:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    _export(run_dir)
    (info,) = [i for i in inspect_log.list_eval_logs(str(run_dir / "inspect")) if "_todo_alpha_" in i.name]
    sample = next(s for s in inspect_log.read_eval_log(info.name).samples if s.epoch == 1)
    assert sample.input == "Build a to-do list."
    assert [m.role for m in sample.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    first = sample.messages[2]
    assert isinstance(first, ChatMessageAssistant)
    assert first.content[0].reasoning == "I will write the file."
    good, bad = first.tool_calls
    assert (good.function, good.arguments, good.parse_error) == ("write_file", {"path": "index.html",
                                                                                "content": "<p>"}, None)
    assert bad.arguments == {} and "not valid JSON" in bad.parse_error  # kept as the agent sent it
    ok_tool, failed_tool = sample.messages[3], sample.messages[4]
    assert isinstance(ok_tool, ChatMessageTool) and ok_tool.function == "write_file" and ok_tool.error is None
    assert failed_tool.function == "run" and failed_tool.error is not None
    assert sample.output.completion == "Done: index.html."
    linked = next(s for s in inspect_log.read_eval_log(info.name).samples if s.epoch == 2)
    assert linked.messages == [] and "SECRET" not in json.dumps(linked.model_dump(mode="json"))
    (info,) = [i for i in inspect_log.list_eval_logs(str(run_dir / "inspect")) if "_flappy_alpha@aider_" in i.name]
    (aider,) = inspect_log.read_eval_log(info.name).samples
    assert [(m.role, m.text) for m in aider.messages] == [("user", "Build Flappy Bird."), ("assistant", "Here it is.")]


def test_metrics_are_our_pass_rates_and_budget_is_a_limit(run_dir: Path) -> None:
    _export(run_dir)
    results = [r for c in load_manifest(run_dir).cells
               if (r := load_result(attempt_dir(run_dir, c) / "result.json")) is not None]
    stats = {(c.task, c.model): c for c in compute_stats(results).cells}
    for info in inspect_log.list_eval_logs(str(run_dir / "inspect")):
        log = inspect_log.read_eval_log(info.name)
        key = (log.eval.dataset.name, log.eval.metadata["lane"])
        verdict = log.results.scores[0]
        assert verdict.name == "verdict"
        cell = stats[key]
        lo, hi = wilson(cell.passed, cell.scored)
        assert verdict.metrics["accuracy"].value == pytest.approx(cell.pass_rate or 0.0, abs=1e-4)
        assert (verdict.metrics["ci_low"].value, verdict.metrics["ci_high"].value) == (lo, hi)
        assert verdict.metadata["infra_errors"] == cell.infra_errors
        if key == ("todo", "alpha"):
            budget = next(s for s in log.samples if s.epoch == 2)
            assert budget.limit.type == "token" and budget.limit.limit == 300000
            persistence = next(s for s in log.results.scores if s.name == "persistence")
            assert persistence.metrics["accuracy"].value == 0.0 and persistence.scored_samples == 2
        if key == ("flappy", "alpha@aider"):
            rr = next(s for s in log.results.scores if s.name == "refresh-rate")
            assert rr.scored_samples == 0 and rr.metadata["undecided"] == 1  # an error is not a fail


def test_export_again_replaces_the_same_files(run_dir: Path) -> None:
    first = sorted(p.name for p in _export(run_dir))
    second = sorted(p.name for p in _export(run_dir))
    assert first == second == sorted(p.name for p in (run_dir / "inspect").iterdir())


def test_cli_export(run_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "logs"
    res = runner.invoke(app, ["export", str(run_dir), "--format", "inspect", "--to", str(out)])
    assert res.exit_code == 0, res.output
    assert f"inspect view --log-dir {out}" in res.output
    assert len(list(out.glob("*.eval"))) == 7
    res = runner.invoke(app, ["export", str(run_dir), "--format", "harbor"])
    assert res.exit_code == 2 and "Unknown export format 'harbor'" in res.output


def test_missing_extra_says_how_to_install(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "inspect_ai" or m.startswith("inspect_ai.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # what a missing package looks like to import
    res = CliRunner().invoke(app, ["export", str(run_dir)])
    assert res.exit_code == 2
    assert "pip install 'agentbench[inspect]'" in " ".join(res.output.split())
    assert not (run_dir / "inspect").exists()
