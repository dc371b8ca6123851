"""Flappy probes and refresh-rate on real Chromium, against fixture games of varied style.

Every probe has a fixture that must pass it and one that must fail it; timer-driven, fixed-step
and delta-time games must pass refresh-rate and a per-frame one must fail it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_asyncio
from _game_runs import FIXTURES, GameRuns, explain

from agentbench.checks.browser import BrowserHarness, ProbeContext, run_browser_checks_async
from agentbench.checks.browser._refresh import refresh_rate_check

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

EXPECT = {
    # fixture: (flap-input, game-over, restart)
    "dt_class_canvas.html": ("pass", "pass", "pass"),        # class, delta time, start on Space, canvas text
    "fixed_func_overlay.html": ("pass", "pass", "pass"),     # functions, fixed step, starts at once, DOM overlay
    "timer_dom.html": ("pass", "pass", "pass"),              # DOM sprites, setInterval physics, restart with R
    "framelocked.html": ("pass", "pass", "pass"),            # per-frame physics (fails refresh-rate only)
    "no_flap.html": ("fail", "pass", "fail"),                # only ArrowUp flaps
    "no_gameover.html": ("pass", "fail", "skip"),            # the game never ends
    "hint_never_ends.html": ("pass", "fail", "skip"),        # never ends; "R: restart" drawn all along
    "no_restart.html": ("pass", "pass", "fail"),             # input ignored after game over
    "restart_dies.html": ("pass", "pass", "fail"),           # restart keeps the dead bird
    "restart_state_typo.html": ("pass", "pass", "fail"),     # input waits for a state never set; clouds drift on
    # Games as people write them: other start inputs, restart buttons, DOM/SVG, layered canvases.
    "click_start_layers.html": ("pass", "pass", "pass"),     # only a click starts; sky and game on two canvases
    "enter_dom_button.html": ("pass", "pass", "pass"),       # DOM + transform, Enter starts, "Play again" button
    "svg_framelocked_button.html": ("pass", "pass", "pass"), # SVG, Start and Restart <button>s
    "canvas_play_button_particles.html": ("pass", "pass", "pass"),  # PLAY/RETRY drawn on the canvas, off-centre
    "w_start_no_restart_button.html": ("pass", "pass", "fail"),     # W starts; the Restart button does nothing
    "shake_dt.html": ("pass", "pass", "pass"),               # random shake every frame
    # Found by their effect: sprites, DOM sprites, focus, title screens, sound, reloads.
    "sprite_title.html": ("pass", "pass", "pass"),           # image sprites; a bobbing, blinking title; Space starts
    "dom_sprite_framelocked.html": ("pass", "pass", "pass"), # a div with a background-image bird
    "corner_focus_canvas.html": ("pass", "pass", "pass"),    # small canvas in a corner, keys only when focused
    "autoplay_sound.html": ("pass", "pass", "pass"),         # play() before a gesture; a source that cannot play
    "quick_end_framelocked.html": ("pass", "pass", "pass"),  # crashes 0.3 s after the start, restarts by itself
    "hover_floor.html": ("pass", "fail", "pass"),            # falling never ends the game
    "hover_bob_pipe.html": ("pass", "fail", "pass"),         # the bird bobs on a floor until a low pipe hits it
    "reload_on_crash.html": ("pass", "fail", "skip"),        # a crash reloads the page: no game over
    "retry_reloads.html": ("pass", "pass", "fail"),          # only a Retry button that reloads
    "no_score.html": ("pass", "pass", "pass"),               # fails score only
    # The end as a person sees it: play stops and something new stays (issue 27).
    "end_panel_no_words.html": ("pass", "pass", "pass"),     # a drawn panel, no words; a hint blinks on
    "freeze_nothing_new.html": ("pass", "fail", "fail"),     # a crash only stops the screen; nothing restarts
    "ready_state_bob.html": ("pass", "pass", "pass"),        # the start shows Get Ready until the first flap
    "score_dom_one_line.html": ("pass", "pass", "pass"),     # "Score: N | Best: N" in one DOM line
    "score_counts_time.html": ("pass", "pass", "pass"),      # fails score only
    "hint_gone_on_flap.html": ("pass", "pass", "pass"),      # a big hint vanishes as the bird rises
    "key_state_fixed_step.html": ("pass", "pass", "pass"),   # key state read once per 50 ms step (a person's press)
    # The top pipe, tried as a person tries it: the bird kept high as pipes arrive.
    "top_pipe_passthrough.html": ("pass", "fail", "pass"),   # the top pipe never collides: the bird flies through
    "high_gap_open_top.html": ("pass", "pass", "pass"),      # high gaps, no ceiling: the bird may leave the screen
    # A person waits out a countdown before flapping (flap-input failed: the taps fell inside it).
    "countdown_start.html": ("pass", "pass", "pass"),        # a click starts 3-2-1; the bird hangs still till then
}
SCORE = {"dt_class_canvas.html": "pass", "sprite_title.html": "pass", "dom_sprite_framelocked.html": "pass",
         "corner_focus_canvas.html": "pass", "no_score.html": "fail", "score_dom_one_line.html": "pass",
         "score_counts_time.html": "fail",
         "score_symbol_label.html": "pass",  # a clover and N drawn in play; "Puntos: N \u00b7 Mejor: N"
         "score_pixels.html": "pass"}        # digits drawn with fillRect, no text: seen counting the pipes
REFRESH = {"dt_class_canvas.html": "pass", "fixed_func_overlay.html": "pass", "timer_dom.html": "pass",
           "framelocked.html": "fail", "framelocked_autostart.html": "fail",
           "click_start_layers.html": "pass", "enter_dom_button.html": "pass", "svg_framelocked_button.html": "fail",
           "canvas_play_button_particles.html": "pass", "w_start_no_restart_button.html": "pass",
           "shake_dt.html": "pass", "shake_framelocked.html": "fail",
           "sprite_title.html": "pass", "dom_sprite_framelocked.html": "fail", "corner_focus_canvas.html": "pass",
           "quick_end_framelocked.html": "fail", "quick_end_dt.html": "pass"}
# How each game is started, as the probes found it (a click on the game is tried first, then keys).
STARTS = {
    "dt_class_canvas.html": "a click",
    "sprite_title.html": "Space",
    "corner_focus_canvas.html": "Space",
    "click_start_layers.html": "a click",
    "enter_dom_button.html": "Enter",
    "svg_framelocked_button.html": "a Start button",
    "canvas_play_button_particles.html": "a Start button",
    "w_start_no_restart_button.html": "W",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield GameRuns(harness, "flappy", tmp_path_factory.mktemp("flappy"))


@pytest.mark.parametrize("name", list(EXPECT))
async def test_flappy_probes(runs: GameRuns, name: str) -> None:
    results = await runs.probes(name)
    got = tuple(results[c].status for c in ("flap-input", "game-over", "restart"))
    assert got == EXPECT[name], explain(results)


async def test_flap_input_evidence_and_detail(runs: GameRuns) -> None:
    results = await runs.probes("dt_class_canvas.html")
    flap = results["flap-input"]
    assert "Space lifts the bird" in flap.detail, flap.detail
    paths = [e.path for e in flap.evidence]
    assert paths == ["evidence/flap-none.png", "evidence/flap-input.png"]
    root = runs.root / "dt_class_canvas"
    assert all((root / p).read_bytes().startswith(b"\x89PNG") for p in paths)


@pytest.mark.parametrize("name", list(REFRESH))
async def test_flappy_refresh_rate(runs: GameRuns, name: str) -> None:
    result = await runs.refresh(name)
    assert result.status == REFRESH[name], explain(result)
    if result.status == "fail":  # the factor, read from the pixels or from when the game ends
        assert "4.0x faster" in result.detail or "4.0x sooner" in result.detail, result.detail
    assert [e.label.split()[0] for e in result.evidence if e.kind == "file"] == ["60", "240"]
    started = (await runs.probes(name))["flap-input"].data["start"]  # as the game probes found it
    assert f"after {started}" in result.detail or f"(started with {started})" in result.detail, result.detail


# Seeds (Math.random and the document's start time) under which the frames were matched one by one
# and a short window gave a good fixed-step game "1.6x faster" (5-6 samples): the bird at one height
# on the way up and on the way down matched either frame.
@pytest.mark.parametrize("seed", [129824439, 614869175])
async def test_refresh_rate_matches_frames_in_time_order(runs: GameRuns, tmp_path: Path, seed: int) -> None:
    shutil.copy(FIXTURES / "flappy" / "fixed_func_overlay.html", tmp_path / "index.html")
    runs.harness.begin_check(tmp_path, seed=seed)
    ctx = ProbeContext(harness=runs.harness, artefact_dir=tmp_path, entry="index.html",
                       evidence_dir=tmp_path / "evidence")
    plan = runs.registered.refresh
    result = await refresh_rate_check(ctx, list(plan.steps), plan.adapt, plan.script)
    assert result.status == "pass", explain(result)
    assert result.data["s"] == pytest.approx(1.0, abs=0.05) and result.data["n"] >= 50, explain(result)


@pytest.mark.parametrize("name", list(STARTS))
async def test_flappy_start_input_found(runs: GameRuns, name: str) -> None:
    over = (await runs.probes(name))["game-over"]
    assert over.data.get("start") == STARTS[name], explain(over)
    assert over.detail.startswith(f"{STARTS[name]} starts the game")


async def test_restart_names_every_input_tried(runs: GameRuns) -> None:
    restart = (await runs.probes("w_start_no_restart_button.html"))["restart"]
    for what in ("Space", "a click", "a Restart button", "Enter", "R", "W"):
        assert f"{what}: nothing moved" in restart.detail, restart.detail


async def test_restart_by_button(runs: GameRuns) -> None:
    restart = (await runs.probes("enter_dom_button.html"))["restart"]
    assert restart.detail.startswith("a Restart button starts a new game"), restart.detail


async def test_a_game_over_screen_that_only_moves_on_is_no_restart(runs: GameRuns) -> None:
    # Clouds drifting behind the end panel keep the screen moving after every input: the panel,
    # the pipes and the bird staying put tell that no new game started.
    restart = (await runs.probes("restart_state_typo.html"))["restart"]
    assert restart.status == "fail" and "Space: the game-over screen stays" in restart.detail, explain(restart)
    shown = (await runs.probes("dt_class_canvas.html"))["restart"]
    assert shown.status == "pass" and shown.data["end_screen"]["still_changed"] > 0.2, explain(shown)


async def test_refresh_rate_times_the_crash_when_pixels_cannot_tell(runs: GameRuns) -> None:
    # Random shake drawn every frame: the start screen alone looks 4x faster at 240 Hz. The game
    # itself decides, by pixels after the start or by the time it takes to crash.
    good, bad = await runs.refresh("shake_dt.html"), await runs.refresh("shake_framelocked.html")
    assert good.status == "pass" and good.data["crash_ratio"] == pytest.approx(1.0, abs=0.15), explain(good)
    assert bad.status == "fail" and ("4.0x faster" in bad.detail or "4.0x sooner" in bad.detail), explain(bad)


@pytest.mark.parametrize("name", list(SCORE))
async def test_score_is_shown(runs: GameRuns, name: str) -> None:
    score = (await runs.probes(name))["score"]
    assert score.status == SCORE[name], explain(score)


async def test_a_score_with_no_text_is_seen_by_what_it_does(runs: GameRuns) -> None:
    # No text anywhere: pixel digits are seen changing, once per pipe the bird flew through, at one
    # place; the same game with no score at all fails, saying that nothing changed as pipes passed.
    pixels = (await runs.probes("score_pixels.html"))["score"]
    assert pixels.status == "pass" and "drawn as pictures" in pixels.detail, explain(pixels)
    none = (await runs.probes("no_score.html"))["score"]
    assert none.status == "fail" and "no score" in none.detail, explain(none)
    shown = (await runs.probes("score_symbol_label.html"))["score"]
    assert shown.status == "pass" and 0 in shown.data["values"], explain(shown)


async def test_sound_before_a_gesture_is_no_page_error(runs: GameRuns) -> None:
    await runs.probes("autoplay_sound.html")
    assert not runs.harness.page_errors or not any("play" in e.lower() or "NotSupported" in e
                                                    for e in runs.harness.page_errors), runs.harness.page_errors


async def test_reloading_is_no_game_over_and_no_restart(runs: GameRuns) -> None:
    over = (await runs.probes("reload_on_crash.html"))["game-over"]
    assert "reloads itself" in over.detail, explain(over)
    restart = (await runs.probes("retry_reloads.html"))["restart"]
    assert "reloads the page" in restart.detail, explain(restart)


async def test_game_over_is_an_effect_not_words(runs: GameRuns) -> None:
    # A panel with no words at all is an end; a screen that only stops is none, said as a person sees it.
    shown = (await runs.probes("end_panel_no_words.html"))["game-over"]
    assert "new picture" in shown.detail, explain(shown)
    frozen = (await runs.probes("freeze_nothing_new.html"))["game-over"]
    assert "nothing new is shown" in frozen.detail, explain(frozen)


async def test_ready_state_is_left_by_one_flap(runs: GameRuns) -> None:
    over = (await runs.probes("ready_state_bob.html"))["game-over"]
    assert over.data.get("ready_until") == "Space" and "waits" in over.detail, explain(over)


async def test_flying_through_the_top_pipe_is_said_as_seen(runs: GameRuns) -> None:
    over = (await runs.probes("top_pipe_passthrough.html"))["game-over"]
    assert "flew into the top pipe" in over.detail and "play went on" in over.detail, explain(over)
    assert over.data["pipe_passed_at_s"] > over.data["inside_top_pipe_at_s"] > 0, explain(over)


async def test_score_counting_time_is_named(runs: GameRuns) -> None:
    score = (await runs.probes("score_counts_time.html"))["score"]
    assert "counts time" in score.detail, explain(score)


@pytest.mark.parametrize("limit", ["usual", "every"])
@pytest.mark.parametrize("cut", ["flap run at its load", "base run in play"])
async def test_a_run_cut_by_the_time_limit_is_played_again(runs: GameRuns, cut: str, limit: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # On a busy machine a step can outlast the harness's time limit (5 s), which ends that run where
    # it was. The corpus game canvas-raf-hold-space-particles-reload-retry flipped so under load:
    # its flap run cut at load "made no visible difference" (flap-input fail) and game-over passed;
    # its base run cut in play left the end to the flap run ("ready" state, game-over pass). The
    # limit is made 0 s for the run named (the real limit path, outlasted by any step). Cut under
    # the usual limit only (a starved machine), the probes are played again with the long limit and
    # give the quiet verdict; cut under the long one too (a page that hangs there): could not tell.
    from agentbench.checks.browser._page import REPLAY_LIMIT_S
    from agentbench.checks.flappy import _probes

    def cuts(limit_s: float | None) -> bool:
        return limit == "every" or limit_s != REPLAY_LIMIT_S

    if cut == "flap run at its load":
        flapping = []
        open_session = BrowserHarness.open

        async def open_cut(self, *args, **kwargs):
            if flapping and cuts(kwargs.get("step_timeout_s")):
                kwargs["step_timeout_s"] = 0.0
            return await open_session(self, *args, **kwargs)

        flap_run = _probes._flap_run

        async def flap_run_cut(*args, **kwargs):
            flapping.append(1)
            try:
                return await flap_run(*args, **kwargs)
            finally:
                flapping.clear()

        monkeypatch.setattr(BrowserHarness, "open", open_cut)
        monkeypatch.setattr(_probes, "_flap_run", flap_run_cut)
    else:
        watch_over = _probes.watch_over
        watched: set[float] = set()  # the first run watched under each limit: the base run

        async def watch_over_cut(run, t0, limit_s):
            was = run.session.step_timeout_s
            if was not in watched and cuts(was):
                watched.add(was)
                await run.to(t0 + 1.0)
                run.session.step_timeout_s = 0.0
                await run.advance(0.05)  # the step that outlasts the limit: the run ends here
            return await watch_over(run, t0, limit_s)

        monkeypatch.setattr(_probes, "watch_over", watch_over_cut)
    fresh = GameRuns(runs.harness, "flappy", runs.root / f"{cut.replace(' ', '-')}-{limit}")
    results = await fresh.probes("hover_bob_pipe.html")
    if limit == "every":
        for check in ("flap-input", "game-over", "restart"):
            assert results[check].status == "error", explain(results)
            assert "could not tell" in results[check].detail and "did not finish within 0 s" in results[check].detail
    else:
        got = tuple(results[c].status for c in ("flap-input", "game-over", "restart"))
        assert got == EXPECT["hover_bob_pipe.html"], explain(results)
        assert "played again with 20 s per step" in results["flap-input"].data["replayed"], explain(results)


@pytest.mark.parametrize("name", ["dt_class_canvas.html", "enter_dom_button.html"])
async def test_a_start_search_cut_by_the_time_limit_is_played_again(runs: GameRuns, name: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Every try of the start search under the usual limit is cut at once (the busiest machine). The
    # search's first try (the page with no input) then "broke" and every probe failed ("the game
    # could not be played"); a person's start is found by the search played again with the long limit.
    from agentbench.checks.browser import _start

    searching: list[int] = []
    cut: list[int] = []
    open_session = BrowserHarness.open

    async def open_cut(self, *args, **kwargs):
        if searching and kwargs.get("step_timeout_s") is None:
            kwargs["step_timeout_s"] = 0.0
            cut.append(1)
        return await open_session(self, *args, **kwargs)

    search = _start._search

    async def search_cut(*args, **kwargs):
        searching.append(0)
        try:
            return await search(*args, **kwargs)
        finally:
            searching.clear()

    monkeypatch.setattr(BrowserHarness, "open", open_cut)
    monkeypatch.setattr(_start, "_search", search_cut)
    fresh = GameRuns(runs.harness, "flappy", runs.root / f"start-cut-{name}")
    results = await fresh.probes(name)
    assert cut, "no try of the search was cut"
    assert results["flap-input"].data.get("start") == STARTS[name], explain(results)
    got = tuple(results[c].status for c in ("flap-input", "game-over", "restart"))
    assert got == EXPECT[name], explain(results)


async def test_a_tap_shorter_than_a_persons_misses_a_fixed_step_game(runs: GameRuns,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The game reads which keys are down once per 50 ms update step, as game frameworks do. A
    # person's press (HOLD: ~0.1 s down) spans a step and flaps; a tap with no time between down and
    # up, as the probes once pressed, falls between two steps and is never seen (not even to start): the fixture's pass
    # above is owed to the press being a person's, and this shows it.
    from agentbench.checks.browser import _play

    assert (await runs.probes("key_state_fixed_step.html"))["flap-input"].status == "pass"
    monkeypatch.setattr(_play, "HOLD", 0.0)
    fresh = GameRuns(runs.harness, "flappy", runs.root / "instant-tap")
    results = await fresh.probes("key_state_fixed_step.html")
    flap = results["flap-input"]
    assert flap.status == "fail" and "Space made no visible difference" in flap.detail, explain(results)


@pytest.mark.parametrize("name", ["dt_class_canvas.html", "framelocked.html"])
async def test_a_refresh_rate_run_cut_by_the_time_limit_is_played_again(runs: GameRuns, name: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The 240 Hz run's every step outlasts the limit (made 0 s: the busiest machine). It was "fail: the
    # page could not be run"; played again with the long limit it gives a quiet machine's verdict.
    open_session = BrowserHarness.open
    cut: list[int] = []

    async def open_cut(self, *args, **kwargs):
        if kwargs.get("fps") == 240 and kwargs.get("step_timeout_s") is None:
            kwargs["step_timeout_s"] = 0.0
            cut.append(1)
        return await open_session(self, *args, **kwargs)

    monkeypatch.setattr(BrowserHarness, "open", open_cut)
    fresh = GameRuns(runs.harness, "flappy", runs.root / f"cut-240-{name}")
    result = await fresh.refresh(name)
    assert cut, "no 240 Hz run was opened"
    assert result.status == REFRESH[name], explain(result)
    if result.status == "fail":
        assert "4.0x faster" in result.detail, explain(result)


# countdown_start.html's loop, and two that tie play to drawn frames: after a countdown on the clock (3 s at
# either rate, so nothing but its digits moved in the first 2 s the pixel runs covered: refresh-rate was
# `skip` and the verdict `pass` for a game 4x as fast at 240 Hz), and with the countdown tied to frames too.
_COUNTDOWN_LOOP = "const dt = Math.min(0.05, (t - last) / 1000); last = t; step(dt);"
COUNTDOWNS = {"good": _COUNTDOWN_LOOP,
              "frames after a timed countdown": ("const dt = Math.min(0.05, (t - last) / 1000); last = t; "
                                                 "step(state === 'count' ? dt : 1 / 60);"),
              "frames throughout": "last = t; step(1 / 60);"}


@pytest.mark.parametrize("kind", list(COUNTDOWNS))
async def test_refresh_rate_after_a_countdown_judges_the_play(runs: GameRuns, tmp_path: Path, kind: str) -> None:
    """The pixel runs are played as much longer as the countdown lasted, and judged from where play got
    under way (and from the start input, for a countdown tied to frames). Written to tmp_path: a fixture
    added to fixtures/flappy/ would re-seed every other fixture there."""
    page = (FIXTURES / "flappy" / "countdown_start.html").read_text()
    assert _COUNTDOWN_LOOP in page
    (tmp_path / "index.html").write_text(page.replace(_COUNTDOWN_LOOP, COUNTDOWNS[kind]))
    results = {r.id: r for r in await run_browser_checks_async("flappy", tmp_path, tmp_path / "ev",
                                                                harness=runs.harness)}
    refresh = results["refresh-rate"]
    assert refresh.status == ("pass" if kind == "good" else "fail"), explain(results)
    if kind != "good":
        assert "4.0x faster" in refresh.detail, explain(refresh)
    if kind != "frames throughout":  # a countdown tied to frames: play was under way at once at 240 Hz
        assert "play under way 2.9 s later" in refresh.detail, explain(refresh)
        assert refresh.data["lead_s"] == pytest.approx(2.85, abs=0.1), explain(refresh)


async def test_a_countdown_after_the_start_is_waited_out(runs: GameRuns) -> None:
    """The start is where play got under way, 3 s after the click (a 3-2-1 countdown, input ignored;
    the start input is over 0.1 s after the click); a game that moves at once keeps the start input's time."""
    results = await runs.probes("countdown_start.html")
    flap = results["flap-input"]
    assert flap.data.get("waited_after_start_s") == pytest.approx(2.9, abs=0.1), explain(results)
    assert "(started with a click, play under way 2.9 s later)" in flap.detail, explain(results)
    assert "waited_after_start_s" not in (await runs.probes("dt_class_canvas.html"))["flap-input"].data
