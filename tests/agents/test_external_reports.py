"""A real run under opencode and aider, then every command that reads runs: report, open, stats,
verdict, agreement, review (per attempt and pairwise, lane against lane).

One run, two lanes of one scripted peer on loopback: ``peer`` under opencode (models.toml's
``agent``) and ``peer2`` under aider. Each agent writes the converter in its own sandbox and the
run scores it; then the reading commands must open the run (they refused ``peer@aider`` as a model
name, so no external agent's run could be reported or reviewed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentbench.report import ReportServer
from tests.helpers.peer import PEER_MODEL, ScriptedPeer
from tests.helpers.scripted import ScriptedServer, text

pytestmark = [pytest.mark.docker, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[2]
CONVERTER = (ROOT / "agentbench/models/demo_data/careful/converter/index.html").read_text()
CRITERIA = ["correct-conversions", "units-offered", "updates-while-typing", "no-nonsense", "explains-bad-input",
            "readable-results"]
LANES = ["peer2@aider", "peer@opencode"]


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PEER_KEY": "sk-test", "AGENTBENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "agentbench.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def _review_answer(score: int) -> str:
    return json.dumps({"criteria": [{"id": c, "met": True, "reason": "it works"} for c in CRITERIA],
                       "score": score, "verdict": "Converts as asked."})


def test_report_and_review_open_an_opencode_and_an_aider_run(tmp_path: Path, docker_client, chromium_path) -> None:
    from agentbench.agents import ensure_agent_image, get_agent

    for name in ("opencode", "aider"):
        ensure_agent_image(get_agent(name).image(), docker_client)
    home = Path(os.environ["AGENTBENCH_HOME"])
    peer = ScriptedPeer("index.html", CONVERTER)
    with peer, ScriptedServer() as judge:
        models = "".join(
            f'[models.{name}]\nbase_url = "{peer.start()}"\nmodel = "{PEER_MODEL}"\napi_key_env = "PEER_KEY"\n'
            f'request_timeout_s = 120\nmax_retries = 1\nagent = "{agent}"\n'
            for name, agent in (("peer", "opencode"), ("peer2", "aider")))
        models += (f'[models.judge]\nbase_url = "{judge.base_url}"\nmodel = "scripted-model"\nmax_retries = 0\n'
                   'request_timeout_s = 10\n')
        (home / "models.toml").write_text(models)
        run = _cli(tmp_path, "run", "--model", "peer,peer2", "--task", "converter", "--out", "runs")
        assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-3000:]
        (run_dir,) = list((tmp_path / "runs").iterdir())
        for lane in LANES:
            result = json.loads((run_dir / "converter" / lane / "r1" / "result.json").read_text())
            assert result["outcome"] == "scored" and result["verdict"] == "pass", (lane, result)

        report = _cli(tmp_path, "report", run_dir.name, "--runs", "runs", "--out", "report.html")
        assert report.returncode == 0, report.stderr[-3000:]
        page = (tmp_path / "report.html").read_text()
        assert all(lane in page for lane in LANES) and page.count("srcdoc=") >= 2

        stats = _cli(tmp_path, "stats", str(run_dir), "--json")
        assert stats.returncode == 0, stats.stderr[-3000:]
        assert sorted(c["model"] for c in json.loads(stats.stdout)["cells"]) == LANES

        judge.enqueue(text(_review_answer(8)), text(_review_answer(7)))
        review = _cli(tmp_path, "review", str(run_dir), "--reviewer", "judge", "--json")
        assert review.returncode == 0, review.stderr[-3000:]
        paths = sorted(r["path"] for r in json.loads(review.stdout)["reviews"])
        assert paths == [str(run_dir / "converter" / lane / "r1" / "review-judge.json") for lane in LANES]

        judge.enqueue(text('{"winner": "A", "reason": "x"}'), text('{"winner": "B", "reason": "x"}'))
        pairwise = _cli(tmp_path, "review", str(run_dir), "--reviewer", "judge", "--pairwise", "--task", "converter",
                        "--json")
        assert pairwise.returncode == 0, pairwise.stderr[-3000:]
        assert sorted(json.loads(pairwise.stdout)["wins"]) == LANES

    verdict = _cli(tmp_path, "verdict", str(run_dir), "converter", "peer@opencode", "pass")
    assert verdict.returncode == 0, verdict.stderr[-3000:]
    agreement = _cli(tmp_path, "agreement", str(run_dir), "--json")
    assert agreement.returncode == 0 and json.loads(agreement.stdout)["judged"] == 1, agreement.stderr[-3000:]
    with ReportServer([run_dir]) as server, httpx.Client(timeout=10, follow_redirects=True) as client:
        served = client.get(server.open_url)
        assert served.status_code == 200 and all(lane in served.text for lane in LANES)
