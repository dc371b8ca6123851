"""A run killed with SIGKILL at any moment resumes with no lost, duplicated or half-written cell."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbench.store import AttemptResult, RunManifest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
ARGS = ["run", "--model", "demo,demo-careful", "--task", "flappy,todo", "--repeats", "2", "--no-checks",
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


@pytest.mark.parametrize("kill_after_s", [0.8, 3.0, 6.0])
def test_sigkill_then_resume(tmp_path: Path, kill_after_s: float, docker_client) -> None:
    out = tmp_path / "runs"
    proc = subprocess.Popen(_cmd(*ARGS, "--out", str(out)), cwd=tmp_path, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not list(out.glob("*/run.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(kill_after_s)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    done_before = {str(p.parent) for p in run_dir.rglob("result.json")}
    stamps = {p: p.stat().st_mtime_ns for p in run_dir.rglob("result.json")}
    resumed = subprocess.run(_cmd("run", "--resume", run_dir.name, "--out", str(out), "--json"), cwd=tmp_path,
                             env=_env(), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["run_id"] == run_dir.name
    results = _check_run(run_dir)
    assert all(r.outcome == "scored" for r in results), [r.outcome for r in results]
    # Cells finished before the kill were kept as they were, not rerun.
    for p, stamp in stamps.items():
        assert p.stat().st_mtime_ns == stamp
    if kill_after_s < 1:
        assert len(done_before) < 8  # the kill really landed mid-run
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "completed"
    # No container of this run is left behind.
    left = docker_client.containers.list(all=True, filters={"label": f"agentbench.run={run_dir.name}"})
    assert left == []


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path, docker_client) -> None:
    out = tmp_path / "runs"
    proc = subprocess.Popen(_cmd(*ARGS, "--out", str(out)), cwd=tmp_path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not list(out.glob("*/*/*/r1/transcript.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "agentbench run --resume" in stderr
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    assert not list(run_dir.rglob("*.tmp"))
    left = docker_client.containers.list(all=True, filters={"label": f"agentbench.run={run_dir.name}"})
    assert left == []
    resumed = subprocess.run(_cmd("run", "--resume", run_dir.name, "--out", str(out)), cwd=tmp_path, env=_env(),
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert all(r.outcome == "scored" for r in _check_run(run_dir))
