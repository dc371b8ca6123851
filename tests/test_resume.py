"""A run killed (SIGKILL) or interrupted (Ctrl-C) mid-run resumes with no lost, duplicated or half-written cell.

"Mid-run" is a state the test holds, not a moment it guesses: the run's second model is a gated
model (tests/helpers/gated.py) whose attempts wait, sandbox up, until the test opens the gate.
So the kill lands mid-run on a fast machine and on a busy one alike.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentbench.store import AttemptResult, RunManifest
from tests.helpers.gated import GatedModel
from tests.helpers.procs import interruptible
from tests.helpers.waiting import HANG_S, until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
# Cells in order (r1, flappy, demo), (r1, flappy, gated), (r1, todo, demo), ...; two at a time.
ARGS = ["run", "--model", "demo,gated", "--task", "flappy,todo", "--repeats", "2", "--no-checks",
        "--concurrency", "2"]


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentbench.cli", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "AGENTBENCH_ROOT": str(ROOT)}


def _check_run(run_dir: Path) -> list[AttemptResult]:
    manifest = RunManifest.model_validate_json((run_dir / "run.json").read_text())
    assert len(manifest.cells) == 8
    results = []
    for cell in manifest.cells:
        adir = run_dir / cell.task / cell.model / f"r{cell.repeat}"
        files = sorted(p.name for p in adir.iterdir())
        assert files.count("result.json") == 1, (cell.key, files)
        results.append(AttemptResult.model_validate_json((adir / "result.json").read_text()))
    leftovers = [p for p in run_dir.rglob("*.tmp")]
    assert leftovers == []
    assert {(r.task, r.model, r.repeat) for r in results} == {(c.task, c.model, c.repeat) for c in manifest.cells}
    # The resumed cells ran with the options the run was started with (--no-checks, concurrency 2).
    assert manifest.checks is False and manifest.concurrency == 2
    assert all(r.checks == [] for r in results)
    return results


def _done(out: Path) -> int:
    return len(list(out.glob("*/*/*/r*/result.json")))


def _start(tmp_path: Path, model: GatedModel, **popen) -> tuple[Path, subprocess.Popen]:
    (tmp_path / "models.toml").write_text(model.models_toml())  # read from the cwd; a resume reads run.json
    out = tmp_path / "runs"
    return out, interruptible(_cmd(*ARGS, "--out", str(out)), cwd=tmp_path, env=_env(), **popen)


def _resume(tmp_path: Path, run_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cmd("run", "--resume", run_dir.name, "--out", str(tmp_path / "runs"), *extra),
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)


# let_through: how many gated attempts finish before the gate holds the rest.
@pytest.mark.parametrize("let_through", [0, 1, 3], ids=["early", "some-done", "one-left"])
def test_sigkill_then_resume(tmp_path: Path, let_through: int, docker_client) -> None:
    model = GatedModel(let_through=let_through)
    model.start()
    try:
        out, proc = _start(tmp_path, model, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # Killed where nothing can move on: both slots wait at the gate, or the held attempt is the last.
            until(lambda: proc.poll() is not None or model.held == 2 or (model.held and _done(out) + model.held == 8),
                  "the run to be held at the gate")
            assert proc.poll() is None, f"the run ended ({proc.returncode}) before it reached the gate"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
        done_before = {str(p.parent) for p in run_dir.rglob("result.json")}
        stamps = {p: p.stat().st_mtime_ns for p in run_dir.rglob("result.json")}
        assert len(done_before) < 8  # the kill landed mid-run
        if let_through == 3:
            assert len(done_before) == 7  # every attempt but the held one was stored
        model.open()
        resumed = _resume(tmp_path, run_dir, "--json")
    finally:
        model.stop()
    assert resumed.returncode == 0, resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["run_id"] == run_dir.name
    results = _check_run(run_dir)
    assert all(r.outcome == "scored" for r in results), [r.outcome for r in results]
    # Cells finished before the kill were kept as they were, not rerun.
    for p, stamp in stamps.items():
        assert p.stat().st_mtime_ns == stamp
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "completed"
    # No container of this run is left behind.
    left = docker_client.containers.list(all=True, filters={"label": f"agentbench.run={run_dir.name}"})
    assert left == []


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path, docker_client) -> None:
    model = GatedModel()
    model.start()
    try:
        out, proc = _start(tmp_path, model, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # An attempt is mid-agent (its sandbox up, its model request open): Ctrl-C lands mid-run.
            until(lambda: proc.poll() is not None or model.held >= 1, "an attempt to wait at the gate")
            assert proc.poll() is None, f"the run ended ({proc.returncode}) before it reached the gate"
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=HANG_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 130, stderr
        assert "agentbench run --resume" in stderr
        (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
        assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
        assert _done(out) < 8
        assert not list(run_dir.rglob("*.tmp"))
        left = docker_client.containers.list(all=True, filters={"label": f"agentbench.run={run_dir.name}"})
        assert left == []
        model.open()
        resumed = _resume(tmp_path, run_dir)
    finally:
        model.stop()
    assert resumed.returncode == 0, resumed.stderr
    assert all(r.outcome == "scored" for r in _check_run(run_dir))
