"""The demo artefacts through the full browser checks: careful passes all, rushed fails refresh-rate.

One browser for the module, as `agentbench check` keeps one for all its artefacts (each check starts on a
pristine page: test_harness); launching one per check is covered by test_hostile."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from _game_runs import DEMO, explain

from agentbench.checks.browser import BrowserHarness, run_browser_checks_async

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


@pytest.mark.parametrize("task", ["flappy", "ball"])
async def test_careful_demo_passes_every_check(harness: BrowserHarness, tmp_path: Path, task: str) -> None:
    folder = DEMO / "careful" / task
    if not (folder / "index.html").is_file():
        pytest.fail(f"demo artefact {folder} is missing")
    results = await run_browser_checks_async(task, folder, tmp_path / "evidence", harness=harness)
    assert all(r.status == "pass" for r in results), explain({r.id: r for r in results})
    assert {"load", "refresh-rate", "runtime-errors"} <= {r.id for r in results}


@pytest.mark.parametrize("task", ["flappy", "ball"])
async def test_rushed_demo_fails_refresh_rate(harness: BrowserHarness, tmp_path: Path, task: str) -> None:
    results = {r.id: r for r in await run_browser_checks_async(task, DEMO / "rushed" / task, tmp_path / "ev",
                                                                harness=harness)}
    assert results["refresh-rate"].status == "fail", explain(results)
    assert "faster" in results["refresh-rate"].detail
    assert (tmp_path / "ev" / "refresh-rate-60hz.png").is_file()
