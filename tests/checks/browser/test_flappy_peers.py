"""Flappy games written as peers of the corpus's, each showing a mis-verdict the checks once gave.

- ``panel_slides_in_late.html`` (good): DOM game moved by CSS transforms; 0.7 s after the crash a
  Game Over panel slides down from above the game (a transition). Its slide was taken for play
  still going on, so game-over said "nothing new is shown".
"""

from __future__ import annotations

import pytest
import pytest_asyncio
from _game_runs import GameRuns, explain

from agentbench.checks.browser import BrowserHarness


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield GameRuns(harness, "flappy", tmp_path_factory.mktemp("flappy_peers"))


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="module")
async def test_a_panel_that_slides_in_after_the_crash_is_a_game_over(runs: GameRuns) -> None:
    got = await runs.probes("panel_slides_in_late.html")
    assert got["game-over"].status == "pass", explain(got)
    assert got["game-over"].data["shown"].startswith("a new picture"), explain(got)
    assert got["restart"].status == "pass", explain(got)
