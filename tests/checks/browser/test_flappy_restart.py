"""Flappy `restart`, judged on the new game a person sees: as fast as the first, its score back at the start.

Peer-shaped games (one index.html each): two restarts that start a second game loop without stopping
the first (setInterval and requestAnimationFrame), one that keeps the old score, and good controls: a
right restart, one that shows "Get Ready!" before play, and one whose pipes speed up with the score and
are back at the first speed after a restart. The broken ones passed `restart` before the new game was
compared with the first ("starts a new game that runs 1.2+ s with flapping").
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from _game_runs import GameRuns, explain

from agentbench.checks.browser import BrowserHarness, run_browser_checks_async
from agentbench.checks.flappy._again import SPEED_OFF, time_scale

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

DOUBLED = ["restart_doubles_interval/index.html", "restart_doubles_raf/index.html"]
GOOD = ["restart_good/index.html", "restart_get_ready/index.html", "restart_speeds_up/index.html"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield GameRuns(harness, "flappy", tmp_path_factory.mktemp("flappy_restart"))


@pytest.mark.parametrize("name", DOUBLED)
async def test_a_restart_that_doubles_the_loop_fails_saying_how_much_faster(runs: GameRuns, name: str) -> None:
    results = await runs.probes(name)
    restart = results["restart"]
    assert results["flap-input"].status == "pass" and results["game-over"].status == "pass", explain(results)
    assert restart.status == "fail", explain(restart)
    assert "x as fast as the first game" in restart.detail, explain(restart)
    assert restart.data["speed"] >= SPEED_OFF and restart.data["speed"] == pytest.approx(2.0, abs=0.3), explain(restart)


async def test_a_restart_that_keeps_the_old_score_fails_saying_what_was_shown(runs: GameRuns) -> None:
    restart = (await runs.probes("restart_keeps_score/index.html"))["restart"]
    assert restart.status == "fail", explain(restart)
    assert "keeps the old score" in restart.detail and "ended at 1 and started at 0" in restart.detail, explain(restart)
    assert restart.data["score_back"]["new_game"][0] == 1, explain(restart)


KEPT = Path(__file__).parent / "fixtures" / "flappy" / "restart_keeps_score" / "index.html"
# No pipe at the bird when a game starts: the first comes 2 s later, so a game without input ends at 0.
_FIRST_PIPE = "pipes = [{ x: 60, top: 200, passed: false }];"


_STARTS = "frames = 0;\n  state = 'playing';"
_DRAWS = "ctx.fillText(String(score), 200, 60);"
_ENDS = "state = 'over';"


@pytest.mark.parametrize("kind", ["keeps-score", "resets-score", "resets-and-shows-the-last"])
async def test_a_kept_score_is_seen_where_the_no_input_game_ends_at_zero(runs: GameRuns, tmp_path: Path,
                                                                         kind: str) -> None:
    """The no-input game ends at 0, where a kept score cannot show: the score's run, once it scored, is
    left to end and restarted, and the new game must begin at 0. A game that also shows the last game's
    score ("Last: 3", from its end on) is right. Written to tmp_path (a page of its own)."""
    page = KEPT.read_text()
    assert page.count(_FIRST_PIPE) == 2 and _STARTS in page and _DRAWS in page
    page = page.replace(_FIRST_PIPE, "pipes = [];")
    keeps = kind == "keeps-score"
    if kind == "resets-score":
        page = page.replace(_STARTS, "frames = 0; score = 0;\n  state = 'playing';")
    if kind == "resets-and-shows-the-last":
        assert page.count(_ENDS) == 2
        page = page.replace(_STARTS, "frames = 0; score = 0;\n  state = 'playing';")
        page = page.replace(_ENDS, "{ state = 'over'; last = score; }")
        page = page.replace(_DRAWS, _DRAWS + " ctx.font = '20px Arial'; ctx.fillText('Last: ' + last, 200, 580);")
        page = page.replace("let bird,", "let last = 0, bird,")
    (tmp_path / "index.html").write_text(page)
    results = {r.id: r for r in await run_browser_checks_async("flappy", tmp_path, tmp_path / "ev",
                                                                harness=runs.harness)}
    restart = results["restart"]
    assert results["score"].status == "pass", explain(results)
    back = restart.data["score_back"]
    assert back["after"] == "the score's run" and back["started"] == 0 and back["ended"] >= 1, explain(restart)
    if keeps:
        assert restart.status == "fail", explain(restart)
        assert "keeps the old score" in restart.detail and f"a restart after a game that scored {back['ended']}" \
            in restart.detail, explain(restart)
        shown = [e for e in restart.evidence if e.path and e.path.endswith("restart-score.png")]
        assert len(shown) == 1 and (tmp_path / shown[0].path).is_file(), restart.evidence
    else:
        assert restart.status == "pass" and 0 in back["new_game"], explain(restart)


@pytest.mark.parametrize("name", GOOD)
async def test_a_right_restart_passes_and_plays_as_fast_as_the_first_game(runs: GameRuns, name: str) -> None:
    restart = (await runs.probes(name))["restart"]
    assert restart.status == "pass", explain(restart)
    assert restart.data["speed"] == pytest.approx(1.0, abs=0.15), explain(restart)  # measured, not skipped


async def test_a_score_back_at_zero_after_a_scored_game_is_read(runs: GameRuns) -> None:
    # The first game scored (its first pipe passes at once): the new game shows 0 again, then counts.
    restart = (await runs.probes("restart_speeds_up/index.html"))["restart"]
    back = restart.data["score_back"]
    assert back["started"] == 0 and back["ended"] >= 1 and 0 in back["new_game"], explain(restart)


async def test_time_scale_reads_an_arc_played_twice_as_fast() -> None:
    # A flap's arc (rows below the flap point, every 0.05 s): up, then down under gravity.
    def arc(k: float) -> list[tuple[float, float]]:
        return [(t, -60 * (k * t) + 150 * (k * t) ** 2) for t in (0.05 * i for i in range(1, 9))]

    assert time_scale(arc(1.0), [arc(1.0)]) == (1.0, 0.0)
    k, miss = time_scale(arc(2.0), [arc(1.0)])
    assert k == pytest.approx(2.0, abs=0.02) and miss < 0.01
    k, _ = time_scale(arc(0.5), [arc(1.0)])
    assert k == pytest.approx(0.5, abs=0.02)


async def test_a_game_over_panel_left_over_the_new_game_fails(runs: GameRuns) -> None:
    # The new game runs under the panel: a person sees the game-over screen stay. Its "Game Over" still
    # drawn after the input reads as the game over again at once (the detail says "nothing moved").
    restart = (await runs.probes("restart_panel_stays/index.html"))["restart"]
    assert restart.status == "fail" and "Space: " in restart.detail, explain(restart)
