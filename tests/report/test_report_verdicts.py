"""Human verdicts on disk and the ledger that holds every scorer to them."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentbench.cli import app
from agentbench.errors import AgentbenchError, StoreError
from agentbench.report import compute_ledger, load_runs, load_verdicts, record_verdict, verdicts_path
from tests.report._runs import build_run, plant_verdicts


def _tally(ledger, scorer):
    (t,) = [s for s in ledger.scorers if s.scorer == scorer]
    return t


def test_record_verdict_writes_and_replaces(run_dir: Path) -> None:
    record_verdict(run_dir, "flappy", "alpha", 2, "fail", "  pipes never come  ")
    record_verdict(run_dir, "flappy", "alpha", 2, "pass", "on second look it works")
    data = json.loads(verdicts_path(run_dir).read_text())
    assert data["run_id"] == "run-a"
    assert list(data["verdicts"]) == ["flappy/alpha/r2"]
    assert data["verdicts"]["flappy/alpha/r2"]["verdict"] == "pass"
    assert data["verdicts"]["flappy/alpha/r2"]["note"] == "on second look it works"
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith(".verdicts.json")) == []  # no temp left


def test_record_verdict_refuses_unknown_cells_and_bad_verdicts(run_dir: Path) -> None:
    with pytest.raises(AgentbenchError, match="no attempt flappy/gamma/r1.*flappy/alpha/r1"):
        record_verdict(run_dir, "flappy", "gamma", 1, "pass")
    with pytest.raises(AgentbenchError, match="'pass' or 'fail'"):
        record_verdict(run_dir, "flappy", "alpha", 1, "maybe")
    assert not verdicts_path(run_dir).exists()


def test_concurrent_verdicts_all_kept(run_dir: Path) -> None:
    cells = [("flappy", "alpha", 1), ("flappy", "alpha", 2), ("flappy", "beta", 1), ("todo", "alpha", 1),
             ("todo", "beta", 1), ("converter", "alpha", 1), ("converter", "beta", 1)]
    threads = [threading.Thread(target=record_verdict, args=(run_dir, t, m, r, "pass")) for t, m, r in cells]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(load_verdicts(run_dir).verdicts) == len(cells)


def test_corrupt_verdicts_file_says_what_to_do(run_dir: Path) -> None:
    verdicts_path(run_dir).write_text("{oops")
    with pytest.raises(StoreError, match="Fix or delete it"):
        load_verdicts(run_dir)


def test_ledger_counts_planted_disagreements(run_dir: Path) -> None:
    plant_verdicts(run_dir)
    ledger = compute_ledger(load_runs([run_dir]))
    assert ledger.judged == 3
    overall = _tally(ledger, "verdict")
    assert (overall.compared, overall.agree) == (3, 1)
    assert [r.uid for r in overall.too_strict] == ["run-a/flappy/beta/r1"]  # scorer fail, person pass
    assert [r.uid for r in overall.too_generous] == ["run-a/flappy/alpha/r1"]  # scorer pass, person fail
    assert overall.too_generous[0].note == "bird falls through pipes"
    rr = _tally(ledger, "check:refresh-rate")
    assert (rr.compared, rr.agree, len(rr.too_strict), len(rr.too_generous)) == (2, 0, 1, 1)
    persistence = _tally(ledger, "check:persistence")  # fail, and the person failed it too
    assert (persistence.compared, persistence.agree, persistence.too_strict, persistence.too_generous) == (1, 1, [], [])
    assert _tally(ledger, "check:filter").undecided == 1  # a harness error is not a verdict
    assert _tally(ledger, "check:filter").compared == 0
    checklist = _tally(ledger, "checklist")  # a required item failed on beta; all passed on alpha
    assert [r.uid for r in checklist.too_strict] == ["run-a/flappy/beta/r1"]
    assert [r.uid for r in checklist.too_generous] == ["run-a/flappy/alpha/r1"]
    static = _tally(ledger, "checklist:static")  # reading the source alone passed both
    assert (static.compared, static.agree, static.too_strict) == (2, 1, [])
    assert [r.uid for r in static.too_generous] == ["run-a/flappy/alpha/r1"]
    reviewer = _tally(ledger, "reviewer:gpt")  # said pass on flappy/beta/r1, as the person did
    assert (reviewer.compared, reviewer.agree) == (1, 1)
    assert next(s.scorer for s in ledger.scorers) == "verdict"


def test_ledger_without_verdicts_is_empty(run_dir: Path) -> None:
    ledger = compute_ledger(load_runs([run_dir]))
    assert ledger.judged == 0 and ledger.scorers == []


def test_ledger_across_runs_keeps_runs_apart(tmp_path: Path) -> None:
    a = build_run(tmp_path, "run-a")
    b = build_run(tmp_path, "run-b")
    plant_verdicts(a)
    record_verdict(b, "flappy", "alpha", 1, "pass")
    ledger = compute_ledger(load_runs([a, b]))
    assert ledger.judged == 4
    overall = _tally(ledger, "verdict")
    assert (overall.compared, overall.agree, len(overall.too_strict), len(overall.too_generous)) == (4, 2, 1, 1)


def test_cli_verdict_and_agreement(run_dir: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["verdict", str(run_dir), "flappy", "alpha", "2", "fail", "--note", "too fast"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["verdict", "run-a", "flappy", "beta", "pass", "--runs", str(run_dir.parent)])
    assert res.exit_code == 0, res.output  # REPEAT defaults to 1; a run id resolves under --runs
    book = load_verdicts(run_dir)
    assert book.get("flappy", "alpha", 2).note == "too fast"
    assert book.get("flappy", "beta", 1).verdict == "pass"
    res = runner.invoke(app, ["verdict", str(run_dir), "flappy", "alpha", "x", "pass"])
    assert res.exit_code == 2 and "[REPEAT] pass|fail" in res.output

    res = runner.invoke(app, ["agreement", str(run_dir), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    overall = next(s for s in data["scorers"] if s["scorer"] == "verdict")
    assert overall["agree"] == 0
    assert [r["model"] for r in overall["too_strict"]] == ["beta"]
    assert [(r["model"], r["repeat"]) for r in overall["too_generous"]] == [("alpha", 2)]
    res = runner.invoke(app, ["agreement", str(run_dir)])
    assert res.exit_code == 0 and "too strict: verdict on run-a/flappy/beta/r1" in res.output.replace("\n", " ")
