"""Flappy `score` judged by effect, in any drawing method, against the pipes the bird flew through.

Peer games (fixtures/flappy/score_effect/<name>/index.html), alike but for their score: good ones
whose score is drawn as a pixel font (fillRect blocks) or from a sprite sheet of digit pictures
(drawImage) pass; broken ones fail with what was seen: a score that counts one per two pipes (text
or pixels), one that goes up by two per pipe, no score at all (a badge in a corner that never
changes), and a pixel number that counts seconds. The rest of each game is sound: only `score` differs.
The judgement itself (``_score_counts.judge``) is checked on made-up moments too, with no browser.
"""

from __future__ import annotations

import pytest
import pytest_asyncio
from _game_runs import GameRuns, explain

from agentbench.checks.browser import BrowserHarness
from agentbench.checks.flappy._score import Seen, score_check
from agentbench.checks.flappy._score_counts import Pass, Place, Played, judge

PEERS = {
    # fixture: (score status, words its detail says)
    "pixel_font_good": ("pass", "drawn as pictures"),
    "sprite_digits_good": ("pass", "drawn as pictures"),
    "text_score_half": ("fail", "one per two pipes"),
    "pixel_score_half": ("fail", "one per two pipes"),
    "text_score_double": ("fail", "up by 2 per pipe"),
    "no_score_badge": ("fail", "no score is shown"),
    "pixel_counts_seconds": ("fail", "no score counts the pipes passed"),
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield GameRuns(harness, "flappy", tmp_path_factory.mktemp("flappy-score"))


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("name", list(PEERS))
async def test_score_is_judged_by_what_it_does(runs: GameRuns, name: str) -> None:
    results = await runs.probes(f"score_effect/{name}/index.html")
    score = results["score"]
    status, words = PEERS[name]
    assert (score.status, words in score.detail) == (status, True), explain(results)
    # The bird was flown through pipes to see it: the verdict rests on pipes passed, never on luck.
    assert score.data["pipes_judged"] >= 2, explain(score)
    # Each peer is a sound game but for its score.
    assert [results[c].status for c in ("flap-input", "game-over", "restart")] == ["pass"] * 3, explain(results)


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="module")
async def test_a_pixel_score_is_found_where_it_is_drawn(runs: GameRuns) -> None:
    score = (await runs.probes("score_effect/pixel_font_good/index.html"))["score"]
    x0, y0, x1, y1 = score.data["place_px"]  # capture px (160 wide): the digits at the top centre
    assert 60 <= x0 <= x1 <= 100 and y1 <= 40, explain(score)
    assert score.data["changes_per_pipe"] == [1] * score.data["pipes_judged"], explain(score)


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="module")
async def test_the_pass_run_stops_once_a_readable_score_counted_two_pipes(runs: GameRuns) -> None:
    # A person who saw "Score: 1" and "Score: 2" come as the first two pipes passed has seen it count:
    # play stops there, and the evidence says why.
    score = (await runs.probes("score_dom_one_line.html"))["score"]
    assert (score.status, score.data["pipes_judged"]) == ("pass", 2), explain(score)
    assert "had its answer" in score.data["pass_run"], explain(score)
    # A score that counts one per two pipes has no such answer: it is watched on for three pipes.
    half = (await runs.probes("score_effect/text_score_half/index.html"))["score"]
    assert half.data["pipes_judged"] >= 3 and "had its answer" not in half.data.get("pass_run", ""), explain(half)


# ---- the judgement, on made-up runs -----------------------------------------------------------
PASSES = [Pass(2.0, 2.5), Pass(3.7, 4.2), Pass(5.4, 5.9), Pass(7.1, 7.6)]
UNTIL = 10.0


def _place(moments: list[float], values: list[int] | None = None) -> Place:
    return Place((70, 10, 80, 25), moments, values, "Score: #" if values is not None else "")


@pytest.mark.parametrize(("moments", "how"), [
    ([2.55, 4.25, 5.95, 7.65], "counts"),   # just after each pipe left the bird
    ([3.4, 5.1, 6.8, 8.5], "counts"),       # late (a game counting a pipe once it leaves the screen)
    ([4.25, 7.65], "half"),                 # every second pipe
    ([2.55, 5.95], "half"),
    ([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5], "time"),  # every second, whatever the pipes do
    ([2.2, 4.3, 5.8, 8.0], "time"),         # once per pipe, but at delays that wander: no count of them
    ([1.2, 2.55, 4.25, 5.95, 7.65], "time"),  # once before any pipe came, too
])
def test_changes_are_laid_against_the_pipes_passed(moments: list[float], how: str) -> None:
    assert judge([_place(moments)], PASSES, UNTIL, 1.0).how == how


def test_a_readable_score_must_go_up_by_one_per_pipe() -> None:
    moments = [2.55, 4.25, 5.95, 7.65]
    assert judge([_place(moments, [0, 1, 2, 3, 4])], PASSES, UNTIL, 1.0).how == "counts"
    assert judge([_place(moments, [0, 2, 4, 6, 8])], PASSES, UNTIL, 1.0).how == "double"
    half = judge([_place([4.25, 7.65], [0, 1, 2])], PASSES, UNTIL, 1.0)
    assert (half.how, half.per_pass) == ("half", [0, 1, 0, 1])


def test_a_pipe_whose_count_could_not_be_seen_is_left_out() -> None:
    # The run ended 0.5 s after the last pipe left the bird: a score drawn as pictures must be seen
    # to stay after it changes, so that pipe is not judged (nor held against the score).
    got = judge([_place([2.55, 4.25, 5.95])], PASSES, 8.1, 1.0)
    assert (got.how, got.passes) == ("counts", 3)


def test_no_pipe_passed_and_no_text_fails_saying_no_pipe_was_passed() -> None:
    # As before the pass run: no text at all is far more often no score (the corpus's no-score game,
    # whose drawn gap is not its collision gap, so no pipe is passed) than a score drawn as pictures.
    result = score_check(Seen(), Played(why="the bird could not be told from the scene"))
    assert result.status == "fail" and "no text at all" in result.detail, result.detail
    assert "passed none (the bird could not be told from the scene)" in result.detail, result.detail
    no_number = score_check(Seen(any_text=True), Played(why="the bird died at the first pipe"))
    assert no_number.status == "fail" and "no number" in no_number.detail, no_number.detail
    # A readable score with no pipe passed is judged by its values, as before.
    shown = Seen(scores=[("Score: 0", 0, 1.0, 3.0)], any_text=True)
    assert score_check(shown, Played()).status == "pass"


def test_nothing_changing_as_pipes_pass_fails_saying_so() -> None:
    played = Played(passes=PASSES, lo=1.0, seen_until=UNTIL, places=[_place([6.3])])
    result = score_check(Seen(any_text=True), played)
    assert result.status == "fail" and "no score is shown" in result.detail, result.detail


def test_a_page_text_score_read_at_moments_is_not_called_a_jump() -> None:
    # The page's text is read at a run's end: 0 in one run, 2 in another skips nothing a person saw.
    # The same values drawn on the canvas over time (every value it showed is logged) do jump by 2.
    dom = Seen(scores=[("Score: 0", 0, 2.0, 2.0), ("Score: 2", 2, 4.5, 4.5)], any_text=True)
    assert score_check(dom, Played()).status == "pass"
    drawn = Seen(scores=[("Score: 0", 0, 1.0, 2.0), ("Score: 2", 2, 2.1, 3.0), ("Score: 4", 4, 3.1, 4.0)],
                 any_text=True)
    result = score_check(drawn, Played())
    assert result.status == "fail" and "up by 2" in result.detail, result.detail
