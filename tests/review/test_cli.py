"""`agentbench review` and `agentbench run --review` through the real CLI and a loopback reviewer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import structlog
from typer.testing import CliRunner

from agentbench.cli import app
from tests.helpers.scripted import ScriptedServer, text
from tests.review._runs import answer, build_run

runner = CliRunner()


@pytest.fixture(autouse=True)
def _reset_logging():
    """The CLI points structlog at CliRunner's stderr, which is closed after each invoke."""
    yield
    structlog.reset_defaults()


def _models_toml(base_url: str, *names: str, vision: bool = False) -> None:
    home = Path(os.environ["AGENTBENCH_HOME"])
    tables = "".join(f'[models.{n}]\nbase_url = "{base_url}"\nmodel = "scripted-model"\nmax_retries = 0\n'
                     f'request_timeout_s = 5\nvision = {str(vision).lower()}\n' for n in names)
    (home / "models.toml").write_text(tables)


def _invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_review_command_stores_reviews_and_prints_a_table(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path / "runs", models={"alpha": "a", "beta": "b"})
    with ScriptedServer(text(answer(score=7)), text(answer(score=3))) as server:
        _models_toml(server.base_url, "judge")
        res = _invoke("review", "run-r", "--reviewer", "judge", "--out", str(tmp_path / "runs"))
    assert res.exit_code == 0, res.output
    assert "reviews by judge" in res.output and "Plays, but too fast" in res.output
    scores = {m: json.loads((run_dir / "flappy" / m / "r1" / "review-judge.json").read_text())["score"]
              for m in ("alpha", "beta")}
    assert scores == {"alpha": 7, "beta": 3}


def test_review_json_and_exit_1_on_reviewer_error(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path)
    with ScriptedServer(text("nope"), text("still nope")) as server:
        _models_toml(server.base_url, "judge")
        res = _invoke("review", str(run_dir), "--reviewer", "judge", "--json")
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    (review,) = data["reviews"]
    assert review["status"] == "reviewer-error" and review["raw_answers"] == ["nope", "still nope"]


def test_review_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = build_run(tmp_path)
    monkeypatch.delenv("AGENTBENCH_REVIEWER", raising=False)
    res = _invoke("review", str(run_dir))
    assert res.exit_code == 2 and "--reviewer NAME" in res.output
    res = _invoke("review", str(run_dir), "--reviewer", "demo")
    assert res.exit_code == 2 and "demo models cannot review; configure a model in models.toml" in res.output
    res = _invoke("review", str(run_dir), "--reviewer", "nobody")
    assert res.exit_code == 2 and "Unknown model 'nobody'" in res.output
    res = _invoke("review", str(run_dir), "--reviewer", "demo", "--pairwise")
    assert res.exit_code == 2


def test_self_review_is_warned(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path)  # written by "alpha"
    with ScriptedServer(text(answer())) as server:
        _models_toml(server.base_url, "alpha")
        res = _invoke("review", str(run_dir), "--reviewer", "alpha")
    assert res.exit_code == 0, res.output
    assert "also wrote artefacts in this run" in res.output
    assert "reviewed its own artefact flappy/alpha/r1" in res.output


def test_pairwise_command(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, models={"alpha": "a", "beta": "b"})
    pick_a = json.dumps({"winner": "A", "reason": "first one"})
    with ScriptedServer(text(pick_a), text(pick_a)) as server:
        _models_toml(server.base_url, "judge")
        res = _invoke("review", str(run_dir), "--reviewer", "judge", "--pairwise", "--task", "flappy")
    assert res.exit_code == 0, res.output
    assert "ties 1 (position bias 1)" in res.output
    assert json.loads((run_dir / "pairwise-flappy-judge.json").read_text())["position_bias"] == 1


@pytest.mark.slow
def test_run_with_review(tmp_path: Path, docker_client) -> None:
    """A real demo run (Docker sandbox, no browser checks) reviewed right after by the loopback reviewer."""
    converter_ids = ["correct-conversions", "units-offered", "updates-while-typing", "no-nonsense",
                     "explains-bad-input", "readable-results"]
    with ScriptedServer(text(answer(ids=converter_ids, score=8))) as server:
        _models_toml(server.base_url, "judge")
        res = _invoke("run", "--model", "demo-careful", "--task", "converter", "--no-checks", "--no-preflight",
                      "--review", "judge", "--out", str(tmp_path / "runs"))
    assert res.exit_code == 0, res.output
    (path,) = (tmp_path / "runs").glob("*/converter/demo-careful/r1/review-judge.json")
    review = json.loads(path.read_text())
    assert review["status"] == "ok" and review["score"] == 8 and review["model_of_artefact"] == "demo-careful"
    assert "reviews by judge" in res.output
    prompt = server.requests[0]["messages"][0]["content"]
    assert (path.parent / "artefact" / "index.html").read_text().strip()[:200] in prompt
