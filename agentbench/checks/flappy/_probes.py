"""Flappy Bird probes: flap-input, game-over, restart and score, by differential play.

The game is started the way a person finds (``_start``); its run with no further input is the
baseline B. A flap run F replays the same start and taps Space (else clicks) a few times: the
bird is what diverges from B after the first tap, and it must rise. B is then played on to its end
(``_flappy_over``): play stops and something new stays (a panel, a sprite, text in any language),
or the page reloads, or play stops with nothing new. A B that never stops may be a ready state
("Get Ready", the bird bobbing until the first flap): F, one flap and then no input, shows the
end. Restart is tried wherever play ended. When F falls back
onto exactly B's course after its taps while B still plays, the bird's fall was stopped short of
the ground without ending the game: falling does not end it. Where play ended and was shown, the
passing flap run is played on with the bird kept high as pipes arrive (``_top``): a bird
seen inside a top pipe while the pipe slides past and play goes on fails game-over. Where it
does not, the flap run is played again with the bird kept low, just over where the no-input bird
came to rest, and the bottom pipe is tried the same way. All input is
real (keyboard and mouse, held as a person holds them); the bird is never looked up in game variables.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

import structlog

from .._model import CheckResult, Evidence
from ..browser._imaging import Image, blobs, diff_mask, encode_png, filmstrip
from ..browser._page import REPLAY_LIMIT_S
from ..browser._play import CAP, Run, Step, close_all, diverged, moving
from ..browser._refresh import InputStep
from ..browser._registry import LoadRun, ProbeContext
from ..browser._start import START_AT, Start, release_start, shared_start
from ._again import judge_new_game
from ._over import Over, frozen_for, restart, watch_over
from ._passes import score_run
from ._score import score_check, score_texts
from ._score_counts import Played
from ._top import Learnt, PipeRun, learn, through_pipe

__all__ = ["CHECK_IDS", "FLAP_RUNS_KEY", "FLAP_SCRIPT", "LOAD_RUN", "TAPS", "flappy_probes", "locate_shift"]

CHECK_IDS = ("flap-input", "game-over", "restart", "score")
COMPARED = ("flap-input", "game-over", "restart")  # the checks that compare runs (score reads drawn text)

TAPS = (0.25, 0.65, 1.05)   # flap times after the start (virtual s)
FLAP_WATCH = 6.0            # a flap run is played this long after the start (to see it rejoin B)
RESPONSE_S = 1.0   # a flap's response is looked for this long after the runs first differ
RESPONSE_ROWS = 8  # ... in at most this many captures where the bird was found in both runs
STILL_STEPS = 3    # a difference unchanged this many captures later in both runs is no moving bird
OVER_WATCH = 10.0           # B is watched this long after the start for the game's end
FLAP_INPUTS = [("Space", "press:Space"), ("a click", "click:0.5,0.5")]
# The refresh-rate script (times from load); flappy's start input replaces the first step.
FLAP_SCRIPT = [InputStep(START_AT, "press:Space")] + [InputStep(1.0 + 0.45 * k, "press:Space") for k in range(40)]
_log = structlog.get_logger(__name__)
LOAD_RUN = LoadRun(every=CAP)  # the probes start from the load check's run (find_start)
# ctx.shared: (the no-input run B, {flap action: its flap run}) once flap-input has judged them, or None;
# refresh-rate reads a flap's rise at 60 Hz from them (``_refresh.flap_rise``) instead of playing them again.
FLAP_RUNS_KEY = "flappy-flap-runs"


def _offer_flap_runs(ctx: ProbeContext, got: tuple[Run, dict[str, Run]] | None) -> None:
    """Hand B and the flap runs on to refresh-rate, once. Runs cut or broken are not handed on (a replay of
    the probes may offer its own); None, once the probes are done, tells refresh-rate to play its own."""
    fut = ctx.shared_future(FLAP_RUNS_KEY)
    if fut.done() or (got is not None and any(r.broken or r.session.hung for r in (got[0], *got[1].values()))):
        return
    fut.set_result(got)


def locate_shift(base: Image, other: Image, *, later: tuple[Image, Image] | None = None,
                 ) -> tuple[float, float, int] | None:
    """Where the two runs differ, which pixels show something in each: (row in base, row in other, n).

    Each differing pixel belongs to the run whose colour is farther from the local background
    (the median colour of a ring around its blob, identical in both runs). Rows are means.
    ``later``: the same two runs a moment later; a difference that stays put in both (a hint one
    run no longer draws) is no bird and is left out: a person follows what moves.
    """
    w, h = base.width, base.height
    mask = diff_mask(base, other, threshold=60)
    if later is not None and (later[0].width, later[0].height) == (w, h) == (later[1].width, later[1].height):
        still_a, still_b = diff_mask(base, later[0], threshold=60), diff_mask(other, later[1], threshold=60)
        after = diff_mask(later[0], later[1], threshold=60)
        mask = bytearray(m and (a or b or not d) for m, a, b, d in zip(mask, still_a, still_b, after, strict=True))
    found = blobs(mask, w, h, min_size=2)[:4]
    if not found:
        return None
    rows_a, rows_b = [], []
    for blob in found:
        ring = []
        for y in range(max(0, blob.y0 - 2), min(h, blob.y1 + 3)):
            for x in range(max(0, blob.x0 - 2), min(w, blob.x1 + 3)):
                if not mask[y * w + x]:
                    ring.append(base.pixel(x, y))
        if not ring:
            continue
        bg = tuple(statistics.median(c[k] for c in ring) for k in range(3))
        for p in blob.pixels:
            y, x = divmod(p, w)
            pa, pb = base.pixel(x, y), other.pixel(x, y)
            da = sum(abs(pa[k] - bg[k]) for k in range(3))
            db = sum(abs(pb[k] - bg[k]) for k in range(3))
            (rows_a if da > db else rows_b).append(y)
    if not rows_a or not rows_b:
        return None
    return statistics.fmean(rows_a), statistics.fmean(rows_b), len(rows_a) + len(rows_b)


def _first_lift(base: Run, flap: Run, t0: float) -> int | None:
    """The capture where the flap run first differed from the no-input run."""
    return next((i for i, d in diverged(flap, base, t0 + TAPS[0], t0 + TAPS[0] + 1.5) if d), None)


def _strip(ctx: ProbeContext, name: str, run: Run, lo: float, hi: float, label: str) -> Evidence | None:
    idx = [i for i in sorted(run.frames) if run.index(lo) <= i <= run.index(hi)]
    if not idx:
        return None
    picks = [idx[round(k * (len(idx) - 1) / 7)] for k in range(8)] if len(idx) >= 8 else idx
    path, rel = ctx.evidence_path(name)
    path.write_bytes(encode_png(filmstrip([run.frames[i].image for i in picks])))
    times = ", ".join(f"{i * run.every:.2f}" for i in picks)
    return Evidence(kind="file", label=f"{label} (t = {times} s)", path=rel)


def judge_flap(name: str, base: Run, flap: Run, t_first: float) -> tuple[str, str, dict[str, object]]:
    """(status, detail, data) for one flap input: the region that diverges first must rise."""
    marks = diverged(flap, base, t_first, t_first + 1.5)
    first = next((i for i, d in marks if d), None)
    if first is None:
        return "fail", f"{name} made no visible difference compared with no input", {}
    first_try: tuple[str, str, dict[str, object]] | None = None
    for moving_only in (False, True):
        # Then, what moves only: a hint one run no longer draws may differ first and most.
        rows = _response(base, flap, first, moving_only)
        data: dict[str, object] = {"rows_higher_than_no_input": [round(d, 2) for d in rows],
                                   "diverges_at_s": round(first * base.every, 2)}
        higher = [d for d in rows if d > 0.75]
        if len(rows) < 3:
            got = ("fail", f"{name} changed the screen but nothing was seen rising", data)
        elif len(higher) >= 0.6 * len(rows) and statistics.median(rows) > 1.0:
            lift = statistics.median(rows)
            return "pass", f"{name} lifts the bird ({lift:.1f} px above the no-input run)", data
        else:
            got = ("fail", f"{name} changes the game but the bird does not rise compared with no input", data)
        first_try = first_try or got
    return first_try  # type: ignore[return-value]


def _response(base: Run, flap: Run, first: int, moving_only: bool) -> list[float]:
    """How much higher the flap run's differing things are than the no-input run's, capture by capture.

    The whole response, not its first frames: the bird shows its lift over the next second.
    """
    rows: list[float] = []
    for i in range(first, first + round(RESPONSE_S / base.every) + 1):
        fa, fb = base.frames.get(i), flap.frames.get(i)
        if fa is None or fb is None or (fa.width, fa.height) != (fb.width, fb.height):
            continue
        la, lb = base.frames.get(i + STILL_STEPS), flap.frames.get(i + STILL_STEPS)
        later = (la.image, lb.image) if moving_only and la and lb else None
        got = locate_shift(fa.image, fb.image, later=later)
        if got:
            rows.append(got[0] - got[1])  # > 0: higher with the input than without
        if len(rows) >= RESPONSE_ROWS:
            break
    return rows


def _score_back_after_scoring(ctx: ProbeContext, again: CheckResult, played: Played,
                              score_play: Run | None) -> CheckResult:
    """``again`` (restart, passed where the first game ended at its start score), with what a restart
    after the score's run (``score_play``) showed of the score: failed where that new game kept the old
    score, with what the person saw there (the scored game's end, the restart input, the new game)."""
    later = played.again
    if later is None or not isinstance(later.data.get("score_back"), dict):
        return again
    back = {**later.data["score_back"], "after": "the score's run"}
    if later.status != "fail" or score_play is None:
        return again.model_copy(update={"data": {**again.data, "score_back": back}})
    ev = _strip(ctx, "restart-score.png", score_play, float(later.data["at_s"]) - 1.0,
                float(later.data["until_s"]), "the score's run: its end, then restart inputs")
    return again.model_copy(update={
        "status": "fail", "data": {**again.data, "score_back": back, "restart_after_scoring": later.data},
        "detail": f"{later.detail} (a restart after a game that scored {back['ended']}; the no-input "
                  f"game's restart: {again.detail})",
        "evidence": [*again.evidence, *([ev] if ev else [])]})


def rejoins(flap: Run, base: Run, after: float, until: float) -> float | None:
    """The virtual time from which ``flap`` is identical to ``base`` again (for >= 0.5 s), if it is."""
    marks = diverged(flap, base, after, until)
    for k, (i, d) in enumerate(marks):
        if d:
            continue
        same = [dd for _, dd in marks[k:k + 10]]
        if len(same) >= 10 and not any(same):
            return i * base.every
    return None


HOVER_S = 1.0  # the no-input bird resting this long in mid-fall while the game goes on: a floor that does not kill


def fall_stops(base: Run, flap: Run, lo: float, hi: float) -> tuple[float, float] | None:
    """(when, row) from which the no-input bird stopped falling for HOVER_S s while the game went on.

    The bird of ``base`` is found where ``flap`` differs from it (``locate_shift``: the pixels that
    show something in the base run), every 0.1 s in [lo, hi]. Without input a Flappy bird falls
    until something ends the game; one that stays at a height (bobbing a little) while the scene
    still moves rests on a floor that does not end the game.
    """
    track: list[tuple[float, float, int]] = []  # (t, the base bird's row, the capture's height)
    step = max(1, round(0.1 / base.every))
    for i in range(base.index(lo), base.index(hi) + 1, step):
        fa, fb = base.frames.get(i), flap.frames.get(i)
        if fa is None or fb is None or (fa.width, fa.height) != (fb.width, fb.height):
            continue
        got = locate_shift(fa.image, fb.image)
        if got is not None:
            track.append((i * base.every, got[0], fa.height))
    for k, (t, row, tall) in enumerate(track):
        window = [r for tt, r, _ in track[k:] if tt <= t + HOVER_S + 1e-9]
        if track[k + len(window) - 1][0] - t < HOVER_S - 0.15 or len(window) < 6:
            break
        if max(window) - min(window) <= 0.04 * tall and window[-1] - window[0] <= 0.02 * tall \
                and moving(base, t, t + HOVER_S) >= 0.5 * HOVER_S / base.every:
            return t, row
    return None


async def _flap_run(ctx: ProbeContext, start: Start, action: str, over: Over) -> Run:
    """The start, then taps; played until B's end (where F may rejoin B), at most FLAP_WATCH s."""
    extra = [Step(start.t0 + dt, action) for dt in TAPS]
    end = start.t0 + FLAP_WATCH
    if over.at is not None:
        end = min(end, max(start.t0 + TAPS[0] + 1.6, over.at + 0.2))
    return await start.replay(ctx, extra, end)


def _game_over(start: Start, base: Run, over: Over, flap: Run | None, lifted: bool,
               ready: str | None = None, pipe: PipeRun | None = None) -> CheckResult:
    t0 = start.t0
    began = f"after {start.name}" if start.name else "with no input"
    if pipe is not None and pipe.inside_at is not None and pipe.passed_at is not None:  # pipe.went_on
        side, kept = pipe.side, "high" if pipe.side == "top" else "low (over where it came to rest without input)"
        return CheckResult(id="game-over", status="fail",
                           data={f"inside_{side}_pipe_at_s": round(pipe.inside_at - t0, 2),
                                 "pipe_passed_at_s": round(pipe.passed_at - t0, 2), "depth_px": round(pipe.depth, 1),
                                 "taps": pipe.taps},
                           detail=f"hitting the {side} pipe does not end the game: {began}, keeping the bird {kept} "
                           f"({pipe.taps} flaps), the bird flew into the {side} pipe at {pipe.inside_at - t0:.1f} s "
                           f"and play went on (the pipe slid on past the bird by {pipe.passed_at - t0:.1f} s and the "
                           "game did not end)")
    if over.at is not None and ready is not None:
        return CheckResult(id="game-over", status="pass", data={"over_after_s": round(over.at - t0, 2),
                                                                 "start": start.name, "ready_until": ready,
                                                                 "shown": over.how},
                           detail=f"{start.name or 'The game'} shows the game ready and waits; {ready} starts play "
                           f"and without more input it ends and shows it at {over.at - t0:.1f} s ({over.how})")
    if over.at is not None:
        back = rejoins(flap, base, t0 + TAPS[-1] + 0.3, over.at - 0.1) if flap is not None and lifted else None
        if back is not None:
            return CheckResult(id="game-over", status="fail", data={"rejoined_at_s": round(back, 2)},
                               detail=f"the bird's fall stops without ending the game: {began}, a flapped bird "
                               f"fell back onto exactly the no-input course at {back - t0:.1f} s while the game "
                               f"went on (only hitting a pipe ended it, at {over.at - t0:.1f} s)")
        rest = fall_stops(base, flap, t0 + TAPS[0], over.at - 0.1) if flap is not None and lifted else None
        if rest is not None:
            return CheckResult(id="game-over", status="fail", data={"rests_from_s": round(rest[0] - t0, 2)},
                               detail=f"the bird's fall stops without ending the game: {began}, the bird without "
                               f"input stops falling at {rest[0] - t0:.1f} s and stays at that height while the "
                               f"game goes on (only hitting a pipe ended it, at {over.at - t0:.1f} s)")
        return CheckResult(id="game-over", status="pass", data={"over_after_s": round(over.at - t0, 2),
                                                                 "start": start.name, "shown": over.how},
                           detail=f"{start.name or 'The game'} starts the game; without input it ends and "
                           f"shows it at {over.at - t0:.1f} s ({over.how})")
    if over.reloaded_at is not None:
        return CheckResult(id="game-over", status="fail", data={"reloaded_after_s": round(over.reloaded_at - t0, 2)},
                           detail=f"{began}, the page reloads itself at {over.reloaded_at - t0:.1f} s (when the bird "
                           "crashes): no game-over screen is shown, the game silently starts over")
    if over.still_at is not None:
        return CheckResult(id="game-over", status="fail", data={"stopped_after_s": round(over.still_at - t0, 2)},
                           detail=f"{began}, the game stops at {over.still_at - t0:.1f} s but nothing new is shown: "
                           "the screen just stays as it was when play stopped (no game-over screen, message or "
                           "panel, in the game or the page)")
    frozen = frozen_for(base)
    if frozen >= 1.0:
        return CheckResult(id="game-over", status="fail",
                           detail=f"{began}, the screen froze (for {frozen:.1f} s) but nothing new was shown")
    return CheckResult(id="game-over", status="fail",
                       detail=f"{began}, the game still runs after {OVER_WATCH:.0f} s without input and never ends")


async def _play_base(ctx: ProbeContext, start: Start, base: Run) -> tuple[Over, CheckResult | None, bool]:
    """B to its end, then restart tried on it (only B's frames are needed after): one session held."""
    t0 = start.t0
    over = await watch_over(base, t0, OVER_WATCH)
    alive = moving(base, t0 + 0.2, min(base.now, t0 + 2.0)) >= 2 or over.at is not None or bool(over.reloaded_at)
    if not alive or (over.at is None and over.still_at is None):
        return over, None, alive
    # Play that stopped with nothing shown is an end too: a person tries to play again there.
    end = base.now
    again = await restart(base, start.by(), "press:Space")
    if over.at is None:
        again.detail = f"play stopped at {over.still_at - t0:.1f} s with no game-over screen; " + again.detail
    ev = _strip(ctx, "restart.png", base, end, base.now, "after play ended, restart inputs")
    again.evidence = [ev] if ev else []
    return over, again, alive


async def _play_ready(ctx: ProbeContext, start: Start, flap: Run, flap_name: str) -> tuple[Over, CheckResult | None]:
    """The flap run watched for the game's end after its last tap, and restart tried there."""
    t_after = start.t0 + TAPS[-1] + 0.15
    over = await watch_over(flap, t_after, start.t0 + OVER_WATCH - t_after)
    if over.at is None:
        return over, None
    end = flap.now
    action = dict((n, a) for n, a in FLAP_INPUTS)[flap_name]
    again = await restart(flap, start.by(), action)
    ev = _strip(ctx, "restart.png", flap, end, flap.now, "after game over, restart inputs")
    again.evidence = [ev] if ev else []
    return over, again


def _unless_cut(runs: list[Run], t0: float, results: list[CheckResult]) -> list[CheckResult]:
    """``results``, unless a run they rest on was cut by the harness's time limit again: then could not tell.

    A step that outlasts the limit (``PageSession.run_limited``) ends its run: on a busy machine a
    good page's load or frames can take that long. The run then stops where it was cut, and what
    it did not show (a flap's lift, the game's end) would read as the game's doing: a flap run cut
    at its load "made no visible difference", a base run cut in play "never ended". flap-input,
    game-over and restart compare the runs, so they say ``error`` (score reads drawn text: kept).
    """
    cut = next((r for r in runs if r.session.hung), None)
    if cut is None:
        return results
    why = (f"could not tell: a run of the game was cut at {max(0.0, cut.now - t0):.1f} s after the start "
           f"({cut.session.broken}), on a busy machine or by a hung page, so the runs cannot be compared")
    return [CheckResult(id=r.id, status="error", detail=why, evidence=r.evidence, duration_s=r.duration_s)
            if r.id in COMPARED else r for r in results]


async def flappy_probes(ctx: ProbeContext) -> list[CheckResult]:
    """flap-input, game-over, restart and score for a Flappy Bird artefact.

    A run cut by the harness's real-time step limit (a busy machine, or a page that hangs) is no
    evidence: the probes are played again with ``REPLAY_LIMIT_S`` per step (on the virtual clock
    the same runs, frame for frame), and only a run cut there too makes them say could not tell.
    """
    started = time.monotonic()
    ctx.shared["flappy-probes"] = True  # refresh-rate leaves the start's base run to us (see _flappy_refresh)
    try:
        return await _play_probes(ctx, started)
    finally:
        _offer_flap_runs(ctx, None)  # nothing offered (the page broke, a probe raised): refresh-rate plays its own


async def _play_probes(ctx: ProbeContext, started: float) -> list[CheckResult]:
    start = await shared_start(ctx)
    if start is None:
        why = "the game could not be played (the page broke while trying to start it)"
        return [CheckResult(id=c, status="fail", detail=why) for c in ("flap-input", "game-over", "restart", "score")]
    try:
        results, runs, t0 = await _probes(ctx, start, started)
    finally:
        await release_start(start)
    cut = next((r for r in runs if r.session.hung), None)
    if cut is None:
        return results
    first = f"a run was cut at {max(0.0, cut.now - t0):.1f} s after the start ({cut.session.broken})"
    _log.info("flappy run cut by the step limit, played again", detail=first)
    results, runs, t0 = await _probes(replace(ctx, step_timeout_s=REPLAY_LIMIT_S), start, started)
    for r in results:
        if r.id in COMPARED:
            r.data["replayed"] = (f"{first} the first time; played again with {REPLAY_LIMIT_S:g} s per step")
    return _unless_cut(runs, t0, results)


async def _probes(ctx: ProbeContext, start: Start, started: float) -> tuple[list[CheckResult], list[Run], float]:
    """One play of the probes from ``start``: (results, the runs they rest on, the start's end).

    Sessions are used one after the other (B to its end and its restart, then the flap runs),
    never one held while waiting for another.
    """
    runs: list[Run] = []
    t0 = start.t0
    try:
        base = start.claim() or await start.replay(ctx, [], start.t0 + 1.5)
        runs.append(base)
        over, again, alive = await _play_base(ctx, start, base)
        texts = await score_texts(base, t0)
        end_run = base  # the run whose end the game-over check judged
        await base.close()
        flap = await _flap_run(ctx, start, FLAP_INPUTS[0][1], over)
        runs.append(flap)
        status, detail, data = judge_flap("Space", base, flap, t0 + TAPS[0])
        flap_name = "Space"
        flaps = {FLAP_INPUTS[0][1]: flap}
        if status != "pass":
            texts.add(await score_texts(flap, t0))
            await flap.close()
            click = await _flap_run(ctx, start, FLAP_INPUTS[1][1], over)
            runs.append(click)
            flaps[FLAP_INPUTS[1][1]] = click
            s2, d2, data2 = judge_flap("a click", base, click, t0 + TAPS[0])
            if s2 == "pass":
                status, detail, data, flap_name, flap = s2, f"{d2} ({detail})", data2, "a click", click
            else:
                detail = f"{detail}; {d2}"
        _offer_flap_runs(ctx, (base, flaps))  # their frames to the first tap's hop are kept as they are
        pipe: PipeRun | None = None
        first, played = None, flap  # the run the pipe was tried in
        tried: list[PipeRun] = []
        learnt: Learnt | None = None
        if status == "pass" and over.at is not None and not flap.broken:
            # Play ended and was shown: a person who doubts the top pipe keeps the bird high as one arrives.
            first = _first_lift(base, flap, t0)
            if first is not None:
                played_until = min(over.at, over.still_at or over.at) - 0.1
                learnt = learn(base, flap, first, t0, played_until)
                pipe = await through_pipe(base, flap, first, t0, played_until, dict(FLAP_INPUTS)[flap_name],
                                          learnt=learnt)
                tried.append(pipe)
        ready: str | None = None
        if over.at is None and over.reloaded_at is None and over.still_at is None and status == "pass":
            # B played on without ending: a game that waits in a ready state (the bird bobbing)
            # until the first flap. A person flaps once and lets go: the flap run shows the end.
            over_f, again_f = await _play_ready(ctx, start, flap, flap_name)
            if over_f.at is not None:
                over, again, ready, end_run = over_f, again_f, flap_name, flap
        texts.add(await score_texts(flap, t0))
        await flap.close()
        if pipe is not None and not pipe.went_on and pipe.seen and first is not None and over.at is not None:
            # ... and one who doubts the bottom pipe keeps it low: the same flap run, played again.
            low = await _flap_run(ctx, start, dict(FLAP_INPUTS)[flap_name], over)
            runs.append(low)
            if not low.broken:  # a replay of the flap run: the bird and the empty scene learnt from it hold
                bottom = await through_pipe(base, low, first, t0, min(over.at, over.still_at or over.at) - 0.1,
                                            dict(FLAP_INPUTS)[flap_name], rested_by=over.at + 0.5, learnt=learnt)
                tried.append(bottom)
                pipe, played = (bottom, low) if bottom.went_on else (pipe, played)
            await low.close()
        if again is not None and status == "pass":  # the new game against the first: as fast as it (_again)
            again = judge_new_game(again, end_run, base, flap, t0, [t0 + dt for dt in TAPS], over.at, learnt)
        began = f"({start.said()}) " if start.name else "(no input started anything; the page as it runs) "
        evidence = [e for e in (_strip(ctx, "flap-none.png", base, t0, t0 + 1.6, "no input after the start"),
                                _strip(ctx, "flap-input.png", flap, t0, t0 + 1.6, f"{flap_name} at +{TAPS[0]} s"))
                    if e is not None]
        flap_result = CheckResult(id="flap-input", status=status, detail=began + detail, evidence=evidence,
                                  data={**data, "start": start.name, "tried_start": start.tried,
                                        **({"waited_after_start_s": start.waited} if start.waited else {})},
                                  duration_s=time.monotonic() - started)
        if not alive:
            if start.name is None:
                why = "nothing on the page moved, with or without input (" + ", ".join(start.tried) + \
                    "): the game could not be started"
                over_result = CheckResult(id="game-over", status="fail", detail=why)
            else:
                why = f"the game stopped moving right after {start.name} started it: there is no play to end"
                over_result = CheckResult(id="game-over", status="skip", detail=why)
            rest = [CheckResult(id="restart", status="skip", detail="no game over to restart from"),
                    CheckResult(id="score", status="skip", detail="the game does not run: no score to watch")]
            return [flap_result, over_result, *rest], runs, t0
        over_result = _game_over(start, base, over, flap, status == "pass", ready, pipe)
        if over_result.status == "pass" and tried:
            over_result.data["pipes_tried"] = {p.side: p.why for p in tried}  # what a person trying them saw
        if pipe is not None and pipe.passed_at is not None and pipe.went_on:  # what game-over says first
            ev = _strip(ctx, "game-over.png", played, pipe.passed_at - 2.0, pipe.passed_at,
                        f"{flap_name} whenever the bird sank: into the {pipe.side} pipe, and play goes on")
        else:
            ev = _strip(ctx, "game-over.png", end_run, t0, over.at + 0.5 if over.at else end_run.now,
                        f"{ready} once after the start, then no input" if ready else "no input after the start")
        over_result.evidence = [ev] if ev else []
        over_result.duration_s = time.monotonic() - started
        if again is None:
            again = CheckResult(id="restart", status="skip", detail="no game over to restart from")
        again.duration_s = time.monotonic() - started
        played = Played(why="the flap did not lift the bird, so it could not be flown through the pipes")
        if status == "pass" and not flap.broken:  # a person plays well for a few pipes and watches the score
            if learnt is None and (first := _first_lift(base, flap, t0)) is not None:
                ends = [t for t in (over.at, over.still_at) if t is not None]
                learnt = learn(base, flap, first, t0, (min(ends) if ends else min(base.now, flap.now)) - 0.1)
            # A restart whose first game ended at its start score could not show a kept score: the
            # score's run, once it scored, is left to end and restarted too (``_again_after_scoring``).
            unread = again.status == "pass" and not isinstance(again.data.get("score_back"), dict)
            played, score_play = await score_run(ctx, start, dict(FLAP_INPUTS)[flap_name], learnt,
                                                 restart_after=unread)
            runs += [score_play] if score_play is not None else []
            again = _score_back_after_scoring(ctx, again, played, score_play)
        score = score_check(texts, played)
        score.duration_s = time.monotonic() - started
        return [flap_result, over_result, again, score], runs, t0
    finally:
        await close_all(*runs)
