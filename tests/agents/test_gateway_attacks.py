"""The issue's attacks on the model gateway, from inside a real sandbox, beside an honest cell.

20 parallel 60 MB bodies, ~20,000 half-open connections and three 60 MB chat requests took the
host process from 58 MB to 1.55 GB, exhausted its descriptors, failed another model's cell and
wrote 189 MB of records. Now the host process stays small, the honest session beside it finishes,
nothing of the attacks reaches the model, and the records stay small. The test runs
bench/gateway_attacks.py, which prints these measurements.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]


def test_the_gateway_holds_under_the_attacks_and_the_run_completes(tmp_path: Path, docker_client) -> None:
    # In a fresh process, as the gateway runs in a user's `agentbench run`: this test process's own
    # memory is whatever the tests before it (on this worker) left, no measure of the gateway's.
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "gateway_attacks.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    print({k: v for k, v in report.items() if k != "agent_log"})
    assert report["rss_peak_mb"] < 300 and report["rss_peak_mb"] - report["rss_before_mb"] < 120, report
    assert report["honest"] is not None and report["honest"]["status"] == "finished", report  # the other cell
    assert report["hostile"]["status"] == "finished"  # the attacker's own session ran to its end too
    assert report["upstream_requests"] == report["honest"]["turns"]  # nothing of the attacks reached the model
    assert report["exchanges_bytes"] < 256 * 1024 and report["rejected"] >= 3  # refused, and recorded small
    assert report["connections_refused"] > 1000
    log = report["agent_log"]
    answers = [line.rsplit("answered ", 1)[1] for line in log if "60 MB request answered" in line]
    assert len(answers) == 3 and all(a in ("413", "error ECONNRESET", "error EPIPE") for a in answers), log
