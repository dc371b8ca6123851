"""Flappy game-over, the bottom pipe tried as a person tries it: the bird kept low as pipes arrive.

A game whose bottom pipe never collides fails game-over with what was seen (the bird inside the
bottom pipe while it slid past and play went on); its twins, where both pipes end the game (gaps
anywhere, or all low, so the bird kept low meets the bottom pipe's top; or with tall scenery the
bird flies in front of, rising from the ground with nothing over it), pass, and say that the
bottom pipe was tried and what ended the try: the game's end (or pipes passed in their gap), never
a try that could not tell.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from _game_runs import GameRuns, explain

from agentbench.checks.browser import BrowserHarness, run_browser_checks_async

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = ["both_pipes_collide.html", "low_gaps_both_collide.html",
        "trees_behind_bird.html"]  # broad trees rise from the ground and scroll by behind the bird: no pipe


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield GameRuns(harness, "flappy", tmp_path_factory.mktemp("flappy-pipes"))


async def test_flying_through_the_bottom_pipe_fails_game_over(runs: GameRuns) -> None:
    results = await runs.probes("bottom_pipe_passthrough.html")
    over = results["game-over"]
    assert over.status == "fail", explain(results)
    assert over.data["pipe_passed_at_s"] > over.data["inside_bottom_pipe_at_s"] > 0, explain(over)
    assert "bottom pipe" in over.detail and over.data["depth_px"] > 0, explain(over)
    assert [e.label for e in over.evidence if "into the bottom pipe" in e.label], explain(over)
    # The rest of the game is fine: only game-over says it.
    assert (results["flap-input"].status, results["restart"].status) == ("pass", "pass"), explain(results)


@pytest.mark.parametrize("name", GOOD)
async def test_a_bottom_pipe_that_collides_passes(runs: GameRuns, name: str) -> None:
    results = await runs.probes(name)
    over = results["game-over"]
    assert over.status == "pass", explain(results)
    # Both pipes were tried with the bird followed: the bottom try ended with the game as a bottom pipe
    # reached the bird (or it passed pipes in their gap), never for want of evidence nor on the ground.
    tried = over.data["pipes_tried"]
    assert set(tried) == {"top", "bottom"}, explain(over)
    assert tried["bottom"].endswith("(the game ended) with a bottom pipe at the bird") \
        or "in their gap" in tried["bottom"], explain(over)


async def test_a_top_pipe_passthrough_is_found_where_the_gaps_sit_where_the_bird_is_kept(
        runs: GameRuns, tmp_path: Path) -> None:
    """top_pipe_passthrough.html with every gap around where the bird is first kept (a quarter of the way
    down): the bird flies through the first pipe's gap, so a person aims higher at the next one and flies
    into its top pipe, which never collides. Before, two pipes passed with the bird in their gap ended the
    try and game-over passed; the fixture folder's seed decided whether its random gaps sat that high."""
    page = (FIXTURES / "flappy" / "top_pipe_passthrough.html").read_text()
    assert "gap: 170 + Math.random() * 240" in page  # the fixture's gaps: anywhere from 170 to 410 px
    (tmp_path / "index.html").write_text(page.replace("gap: 170 + Math.random() * 240",
                                                      "gap: 150 + Math.random() * 30"))
    results = {r.id: r for r in await run_browser_checks_async("flappy", tmp_path, tmp_path / "ev",
                                                                harness=runs.harness)}
    over = results["game-over"]
    assert over.status == "fail" and "flew into the top pipe" in over.detail, explain(results)
