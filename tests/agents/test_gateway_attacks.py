"""The issue's attacks on the model gateway, from inside a real sandbox, beside an honest cell.

20 parallel 60 MB bodies, ~20,000 half-open connections and three 60 MB chat requests took the
host process from 58 MB to 1.55 GB, exhausted its descriptors, failed another model's cell and
wrote 189 MB of records. Now the host process stays small, the honest session beside it finishes,
nothing of the attacks reaches the model, and the records stay small. (bench/gateway_attacks.py
prints the same measurements.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.hostile_gateway import attack_session
from tests.helpers.peer import ScriptedPeer

pytestmark = pytest.mark.docker
PAGE = "<!doctype html><title>honest</title><p>a page</p>"


def test_the_gateway_holds_under_the_attacks_and_the_run_completes(tmp_path: Path, docker_client) -> None:
    peer = ScriptedPeer("index.html", PAGE)
    with peer:
        report = attack_session(peer, tmp_path)
    print({k: v for k, v in vars(report).items() if k != "samples"})
    assert report.rss_peak_mb < 300 and report.rss_peak_mb - report.rss_before_mb < 120, report.rss_peak_mb
    assert report.honest is not None and report.honest.status == "finished", report.honest  # the other cell
    assert report.hostile.status == "finished"  # the attacker's own session ran to its end too
    assert report.upstream_requests == report.honest.turns  # nothing of the attacks reached the model
    assert report.exchanges_bytes < 256 * 1024 and report.rejected >= 3  # refused, and recorded small
    assert report.connections_refused > 1000
    answers = [line.rsplit("answered ", 1)[1] for line in report.log.splitlines() if "60 MB request answered" in line]
    assert len(answers) == 3 and all(a in ("413", "error ECONNRESET", "error EPIPE") for a in answers), report.log
