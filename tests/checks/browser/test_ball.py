"""Ball probes and refresh-rate on real Chromium, against fixture animations of varied style."""

from __future__ import annotations

import pytest
import pytest_asyncio
from _game_runs import GameRuns, explain

from agentbench.checks.browser import BrowserHarness

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

EXPECT = {
    # fixture: (motion, bounds, energy-loss, ball-count)
    "dt_class.html": ("pass", "pass", "pass", "pass"),      # classes, delta time, rAF
    "timer_fixed.html": ("pass", "pass", "pass", "pass"),   # functions, setInterval physics, a static sun
    "framelocked.html": ("pass", "pass", "pass", "pass"),   # per-frame physics (fails refresh-rate only)
    "escape.html": ("pass", "fail", "skip", "pass"),        # no floor: balls fall out (no bounce to measure)
    "sink.html": ("pass", "fail", "pass", "pass"),          # floor test on the centre: balls sink halfway
    "gain.html": ("pass", "pass", "fail", "pass"),          # bounces gain height
    "static.html": ("fail", "skip", "skip", "skip"),        # nothing moves, whatever a person tries
    "decorated_layers.html": ("pass", "pass", "pass", "pass"),  # glow, shadow, trail, outline; two canvases + a buffer
    "dom_balls.html": ("pass", "pass", "pass", "pass"),          # divs moved by transform in a box
    "svg_framelocked_escape.html": ("pass", "fail", "skip", "pass"),  # SVG circles fall out of the <svg>
    # Balls as people draw and start them.
    "shaded_highlight.html": ("pass", "pass", "pass", "pass"),  # gradient, a highlight inside, a floor shadow
    "sprite_balls.html": ("pass", "pass", "pass", "pass"),      # round images (drawImage), not arcs
    "click_to_drop.html": ("pass", "pass", "pass", "pass"),     # empty until clicked: each click drops a ball
    "hold_spawn_framelocked.html": ("pass", "pass", "pass", "pass"),  # press and hold spawns; per-frame motion
    "slow_sink.html": ("pass", "fail", "pass", "pass"),         # settled balls creep through the floor (seen > 20 s)
    "single_ball.html": ("pass", "pass", "pass", "fail"),       # one ball only
}
REFRESH = {"dt_class.html": "pass", "timer_fixed.html": "pass", "framelocked.html": "fail", "static.html": "skip",
           "decorated_layers.html": "pass", "dom_balls.html": "pass", "svg_framelocked_escape.html": "fail",
           "shaded_highlight.html": "pass", "click_to_drop.html": "pass", "hold_spawn_framelocked.html": "fail"}
BALLS = {"decorated_layers.html": 3, "dom_balls.html": 4, "timer_fixed.html": 5, "shaded_highlight.html": 5,
         "sprite_balls.html": 5}
SPAWNED = {"click_to_drop.html": "clicks on the arena", "hold_spawn_framelocked.html": "clicks on the arena"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield GameRuns(harness, "ball", tmp_path_factory.mktemp("ball"))


@pytest.mark.parametrize("name", list(EXPECT))
async def test_ball_probes(runs: GameRuns, name: str) -> None:
    results = await runs.probes(name)
    got = tuple(results[c].status for c in ("motion", "bounds", "energy-loss", "ball-count"))
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


async def test_highlight_is_not_a_ball(runs: GameRuns) -> None:
    """A shaded ball's highlight rides on it: five bodies, judged by the balls' own edges."""
    results = await runs.probes("shaded_highlight.html")
    assert results["ball-count"].data["balls_at_once"] == 5, explain(results)
    assert sorted(results["ball-count"].data["radii"]) == [10, 14, 18, 22, 26]


@pytest.mark.parametrize("name", list(SPAWNED))
async def test_balls_that_need_a_click_are_clicked(runs: GameRuns, name: str) -> None:
    motion = (await runs.probes(name))["motion"]
    assert motion.data["spawn"] == SPAWNED[name], explain(motion)


async def test_slow_sinking_is_seen_after_twenty_seconds(runs: GameRuns) -> None:
    bounds = (await runs.probes("slow_sink.html"))["bounds"]
    assert "past the floor" in bounds.detail
    at = float(bounds.detail.split(" s ", 1)[0].removeprefix("at "))
    assert at > 20.0, bounds.detail  # a 20 s look would have passed it


async def test_watch_ends_once_the_balls_rest(runs: GameRuns) -> None:
    bounds = (await runs.probes("dt_class.html"))["bounds"]
    assert bounds.data["watched_s"] < 40, explain(bounds)
