"""The checklist on real checks: syntax in a Docker sandbox, probes in Chromium, then the items.

These show the point of the feature with nothing faked: a source that *looks* right (saves and
loads, computes delta time) and a probe that finds it is not, and the result saying both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentbench.checks._run import run_checks
from agentbench.tasks import load_task

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "agentbench" / "models" / "demo_data"
FIXTURES = Path(__file__).parent / "fixtures_checklist"

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.browser]


async def check(task_id: str, artefact: Path, tmp_path: Path) -> tuple[dict, dict, Path]:
    work = tmp_path / artefact.name
    shutil.copytree(artefact, work / "artefact")
    report = await run_checks(load_task(task_id), work / "artefact", work)
    out = json.loads(json.dumps(report.to_json()))
    return {c["id"]: c for c in out["checks"]}, {i["id"]: i for i in out["checklist"]}, work


async def test_todo_saves_and_loads_in_source_but_forgets_on_reload(
    tmp_path: Path, docker_client, chromium_path: str
) -> None:
    checks, items, work = await check("todo", FIXTURES / "todo_wrong_key", tmp_path)
    assert checks["persistence"]["status"] == "fail", checks["persistence"]
    it = items["persistence"]
    assert (it["status"], it["static"], it["behaviour"]) == ("fail", "pass", "fail")
    assert it["disagreement"].startswith(
        "source saves to localStorage and reads it back at start; the persistence check failed: ")
    assert it["links"] and all((work / link).is_file() for link in it["links"])
    # The rest of the fixture works: only the disagreeing item fails among the decided features.
    assert items["add"]["status"] == "pass" and items["escapes-user-text"]["status"] == "pass"


def _flappy_probes_delivered() -> bool:
    from agentbench.checks._tasks import probe_module
    from agentbench.checks.browser import load_probes

    task = load_probes("flappy", probe_module("flappy"))
    return task is not None and task.refresh is not None


async def test_flappy_rushed_and_floored_dt(tmp_path: Path, docker_client, checker_image, chromium_path: str) -> None:
    """The rushed demo: source and probe agree (no delta time, 4x at 240 Hz). The floored-dt
    variant: the source uses delta time, the probe sees 4x, and the result says both."""
    if not _flappy_probes_delivered():
        pytest.skip("the flappy probes (refresh-rate input script) are not registered yet")
    checks, items, _ = await check("flappy", DEMO / "rushed" / "flappy", tmp_path)
    it = items["same-on-any-monitor"]
    assert checks["refresh-rate"]["status"] == "fail", checks["refresh-rate"]
    assert (it["status"], it["static"], it["behaviour"], it["disagreement"]) == ("fail", "fail", "fail", None)

    checks, items, work = await check("flappy", FIXTURES / "flappy_floored_dt", tmp_path)
    it = items["same-on-any-monitor"]
    assert checks["refresh-rate"]["status"] == "fail", checks["refresh-rate"]
    assert (it["status"], it["static"], it["behaviour"]) == ("fail", "pass", "fail")
    assert it["disagreement"].startswith("source uses delta time; at 240 Hz it moved ")
    assert it["disagreement"].endswith("x faster")
    factor = float(it["disagreement"].split("moved ")[1].split("x")[0])
    assert 3.0 <= factor <= 5.0
    assert it["links"] and all((work / link).is_file() for link in it["links"])
