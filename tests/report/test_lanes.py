"""Runs made under external agents (lanes ``model@agent``) open in every reading command.

The run is built from the store's own models, the way the runner stores an opencode and an aider
attempt of one model next to its builtin one: ``<task>/peer/``, ``<task>/peer@opencode/``,
``<task>/peer@aider/``. `report`, `open`, `verdict`, `agreement`, `stats` and `review` must all
read it (they refused ``peer@aider`` as a model name), and a lane folder whose parts break the name
rule must never be read as an attempt.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
import structlog
from pydantic import ValidationError
from typer.testing import CliRunner

from agentbench.cli import app
from agentbench.errors import NameInvalid
from agentbench.names import is_valid_lane, lane, split_lane
from agentbench.report import ReportServer, load_run
from agentbench.store import AgentSummary, AttemptResult, CellRef, RunManifest, attempt_dir, write_json
from tests.helpers.scripted import ScriptedServer, text
from tests.review._runs import answer, source

runner = CliRunner()
LANES = {"peer": "builtin", "peer@opencode": "opencode", "peer@aider": "aider"}


@pytest.fixture(autouse=True)
def _reset_logging():
    yield
    structlog.reset_defaults()


def _build(root: Path) -> Path:
    run_dir = root / "run-x"
    cells = [CellRef(task="flappy", model="peer", repeat=1, agent=a) for a in LANES.values()]
    config = {"name": "peer", "base_url": "http://127.0.0.1:9/v1", "model": "peer-model"}
    write_json(run_dir / "run.json", RunManifest(run_id="run-x", models={"peer": config}, tasks=["flappy"],
                                                 cells=cells, agent="per-model", status="completed"))
    for i, cell in enumerate(cells):
        adir = attempt_dir(run_dir, cell)
        (adir / "artefact").mkdir(parents=True)
        (adir / "artefact" / "index.html").write_text(source(f"artefact of {cell.lane}"))
        write_json(adir / "result.json", AttemptResult(
            run_id="run-x", task="flappy", model="peer", repeat=1, outcome="scored",
            verdict="pass" if i else "fail", score=1.0 if i else 0.5, artefact_path="artefact",
            agent=AgentSummary(agent=cell.agent, status="finished")))
    return run_dir


def _invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_lanes_are_composed_and_split_from_valid_names() -> None:
    assert lane("peer") == "peer" and lane("peer", "aider") == "peer@aider"
    assert split_lane("peer@aider") == ("peer", "aider") and split_lane("peer") == ("peer", "builtin")
    for bad in ("../x@aider", "peer@../x", "peer@a@b", "peer@", "@aider", "peer@builtin", "a/b@aider", 3):
        assert not is_valid_lane(bad), bad
        with pytest.raises(NameInvalid):
            split_lane(bad)
    with pytest.raises(NameInvalid, match="agent name"):
        lane("peer", "../x")
    with pytest.raises(ValidationError, match="agent name"):
        CellRef(task="flappy", model="peer", repeat=1, agent="../../x")
    assert CellRef.of_lane("flappy", "peer@aider", 2) == CellRef(task="flappy", model="peer", repeat=2, agent="aider")


def test_every_reading_command_opens_a_run_with_external_agents(tmp_path: Path) -> None:
    run_dir = _build(tmp_path)
    # A folder that looks like an attempt but whose lane breaks the rule is not one.
    (run_dir / "flappy" / "peer@.." / "r1").mkdir(parents=True)
    (run_dir / "flappy" / "peer@.." / "r1" / "result.json").write_text("{}")

    run = load_run(run_dir)
    assert [a.model for a in run.attempts] == ["peer", "peer@aider", "peer@opencode"]
    assert {a.model: a.dir for a in run.attempts} == {name: run_dir / "flappy" / name / "r1" for name in LANES}
    assert all(a.result is not None and a.load_error is None for a in run.attempts)

    out = tmp_path / "report.html"
    res = _invoke("report", str(run_dir), "--out", str(out))
    assert res.exit_code == 0, res.output
    page = out.read_text()
    for name in LANES:
        assert f"artefact of {name}" in page  # each lane's artefact is in the page

    res = _invoke("stats", str(run_dir), "--json")
    assert res.exit_code == 0, res.output
    assert sorted(c["model"] for c in json.loads(res.stdout)["cells"]) == sorted(LANES)

    res = _invoke("verdict", str(run_dir), "flappy", "peer@aider", "fail", "--note", "broken")
    assert res.exit_code == 0, res.output
    res = _invoke("agreement", str(run_dir), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["judged"] == 1

    with ReportServer([run_dir]) as server, httpx.Client(timeout=10, follow_redirects=True) as client:
        page = client.get(server.open_url)
        assert page.status_code == 200 and "peer@opencode" in page.text


def test_review_and_pairwise_review_lanes(tmp_path: Path) -> None:
    run_dir = _build(tmp_path / "runs")
    home = Path(os.environ["AGENTBENCH_HOME"])
    with ScriptedServer(*[text(answer(score=s)) for s in (4, 7, 8)]) as server:
        (home / "models.toml").write_text(f'[models.judge]\nbase_url = "{server.base_url}"\nmodel = "scripted-model"\n'
                                          'max_retries = 0\nrequest_timeout_s = 5\n')
        res = _invoke("review", str(run_dir), "--reviewer", "judge", "--json")
        assert res.exit_code == 0, res.output
        reviewed = {r["path"]: r for r in json.loads(res.stdout)["reviews"]}
        assert sorted(reviewed) == sorted(str(run_dir / "flappy" / n / "r1" / "review-judge.json") for n in LANES)
        assert {(r["model_of_artefact"], r["agent_of_artefact"]) for r in reviewed.values()} == \
            {("peer", a) for a in LANES.values()}

        server.enqueue(text(answer(score=9)))
        res = _invoke("review", str(run_dir), "--reviewer", "judge", "--models", "peer@aider", "--json")
        assert res.exit_code == 0, res.output
        (only,) = json.loads(res.stdout)["reviews"]
        assert only["path"].endswith("peer@aider/r1/review-judge.json")

        server.enqueue(text('{"winner": "A", "reason": "a"}'), text('{"winner": "B", "reason": "b"}'))
        res = _invoke("review", str(run_dir), "--reviewer", "judge", "--pairwise", "--task", "flappy",
                      "--models", "peer@opencode,peer@aider", "--json")
        assert res.exit_code == 0, res.output
        record = json.loads(res.stdout)
        assert record["comparisons"][0]["models"] == ["peer@opencode", "peer@aider"]
        assert record["wins"] == {"peer@opencode": 1, "peer@aider": 0}
