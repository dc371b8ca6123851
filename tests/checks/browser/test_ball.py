"""Ball probes and refresh-rate on real Chromium, against fixture animations of varied style."""

from __future__ import annotations

import pytest
import pytest_asyncio
from _game_runs import GameRuns, explain

from agentbench.checks.browser import BrowserHarness

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

EXPECT = {
    # fixture: (motion, bounds, energy-loss)
    "dt_class.html": ("pass", "pass", "pass"),      # classes, delta time, rAF
    "timer_fixed.html": ("pass", "pass", "pass"),   # functions, setInterval physics, a static sun
    "framelocked.html": ("pass", "pass", "pass"),   # per-frame physics (fails refresh-rate only)
    "escape.html": ("pass", "fail", "error"),       # no floor: balls fall out
    "sink.html": ("pass", "fail", "pass"),          # floor test on the centre: balls sink halfway
    "gain.html": ("pass", "pass", "fail"),          # bounces gain height
    "static.html": ("fail", "error", "error"),      # nothing moves
    "decorated_layers.html": ("pass", "pass", "pass"),  # glow, shadow, trail, outline; two canvases + a buffer
    "dom_balls.html": ("pass", "pass", "pass"),          # divs moved by transform in a box
    "svg_framelocked_escape.html": ("pass", "fail", "error"),  # SVG circles fall out of the <svg>
}
REFRESH = {"dt_class.html": "pass", "timer_fixed.html": "pass", "framelocked.html": "fail", "static.html": "skip",
           "decorated_layers.html": "pass", "dom_balls.html": "pass", "svg_framelocked_escape.html": "fail"}
BALLS = {"decorated_layers.html": 3, "dom_balls.html": 4, "timer_fixed.html": 5}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield GameRuns(harness, "ball", tmp_path_factory.mktemp("ball"))


@pytest.mark.parametrize("name", list(EXPECT))
async def test_ball_probes(runs: GameRuns, name: str) -> None:
    results = await runs.probes(name)
    got = tuple(results[c].status for c in ("motion", "bounds", "energy-loss"))
    assert got == EXPECT[name], explain(results)


async def test_bounds_names_where_a_ball_left(runs: GameRuns) -> None:
    bounds = (await runs.probes("sink.html"))["bounds"]
    assert "past the floor" in bounds.detail


@pytest.mark.parametrize("name", list(REFRESH))
async def test_ball_refresh_rate(runs: GameRuns, name: str) -> None:
    result = await runs.refresh(name)
    assert result.status == REFRESH[name], explain(result)
    if name == "framelocked.html":
        assert "4.0x faster" in result.detail and result.evidence[0].value == pytest.approx(4.0, abs=0.1)


@pytest.mark.parametrize("name", list(BALLS))
async def test_ball_count_ignores_decorations(runs: GameRuns, name: str) -> None:
    bounds = (await runs.probes(name))["bounds"]
    assert bounds.data["balls"] == BALLS[name], explain(bounds)
