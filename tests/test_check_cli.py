"""`agentbench check` contract: one JSON object, stable check ids, exit 0 pass / 1 fail / 2 cannot check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "agentbench" / "models" / "demo_data"


def _check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentbench.cli", "check", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "AGENTBENCH_ROOT": str(ROOT)})


def test_rushed_converter_fails_length_and_weight_json(tmp_path: Path, docker_client, checker_image,
                                                       chromium_path) -> None:
    proc = _check("--task", "converter", str(DEMO / "rushed" / "converter"), "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert set(report) >= {"task", "verdict", "score", "checks", "checklist"}
    assert report["task"] == "converter" and report["verdict"] == "fail" and 0 <= report["score"] < 1
    status = {c["id"]: c["status"] for c in report["checks"]}
    assert {"syntax", "load", "runtime-errors", "length", "weight", "temperature", "live-update",
            "bad-input"} <= set(status)
    assert status["length"] == "fail" and status["weight"] == "fail"
    assert status["temperature"] == "pass" and status["syntax"] == "pass"
    for c in report["checks"]:
        assert set(c) >= {"id", "status", "detail", "evidence"}
    length = next(c for c in report["checks"] if c["id"] == "length")
    assert "TypeError" in json.dumps(length)


def test_careful_todo_file_passes_with_table_output(tmp_path: Path, docker_client, checker_image,
                                                    chromium_path) -> None:
    proc = _check("--task", "todo", str(DEMO / "careful" / "todo" / "index.html"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "verdict: pass" in proc.stdout
    for cid in ("add", "complete", "delete", "filter", "persistence", "escaping", "empty-input"):
        assert cid in proc.stdout


def test_missing_artefact_or_task_cannot_be_checked(tmp_path: Path) -> None:
    proc = _check("--task", "todo", str(tmp_path / "nothing-here"), cwd=tmp_path)
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr
    proc = _check("--task", "tetris", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2 and "Valid tasks: ball, converter, flappy, todo" in proc.stderr
