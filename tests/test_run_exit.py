"""`agentbench run` exits non-zero when nothing was measured (every cell an infra error), 0 otherwise."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.docker


def _closed_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there afterwards
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "models.toml").write_text(
        f'[models.dead]\nbase_url = "http://127.0.0.1:{_closed_port()}/v1"\nmodel = "m"\n'
        "max_retries = 0\nrequest_timeout_s = 5\n")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "AGENTBENCH_ROOT": str(ROOT), "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-m", "agentbench.cli", "run", "--no-checks", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("preflight", ["--preflight", "--no-preflight"])
def test_every_cell_an_infra_error_exits_non_zero_in_one_line(tmp_path: Path, preflight: str, docker_client) -> None:
    proc = _run(tmp_path, "--model", "dead", "--task", "flappy,todo", preflight)
    assert proc.returncode == 1, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "Nothing was measured" in ln]
    assert len(lines) == 1 and "all 2 cell(s) ended in infra-error" in lines[0], proc.stderr
    assert "--retry infra" in lines[0]
    kinds = {json.loads(p.read_text())["error"]["kind"] for p in tmp_path.glob("artefacts/*/*/dead/r1/result.json")}
    assert kinds == ({"preflight"} if preflight == "--preflight" else {"model-endpoint"})


def test_a_run_with_some_scored_cells_exits_zero(tmp_path: Path, docker_client) -> None:
    proc = _run(tmp_path, "--model", "dead,demo", "--task", "flappy", "--json")
    assert proc.returncode == 0, proc.stderr
    outcomes = {r["model"]: r["outcome"] for r in json.loads(proc.stdout)["results"]}
    assert outcomes == {"dead": "infra-error", "demo": "scored"}
    assert "Nothing was measured" not in proc.stderr
