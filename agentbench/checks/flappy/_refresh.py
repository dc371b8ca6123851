"""refresh-rate for Flappy Bird, as a person judges it: does the game run faster at 240 Hz?

The pixel comparison (``_refresh``) is played with the start the game probes found (``_start``),
then flaps. When pixels cannot decide (random effects drawn per frame, a screen dominated by
scenery, a game that ends or reloads quickly), or only the start screen's animation differed, the
check times what a person times: with no input after the start, the game ends (a game-over
message, or the page reloading itself) after t60 at 60 Hz and after t240 at 240 Hz. Physics per
frame ends about 4x sooner at 240 Hz; physics per time about as soon.

A game can follow time in what fills the screen (scrolling pipes, sky) and still tie a part to
frames; the fit over the whole screen passes it. So a pass is looked at again where a person
looks: the pipes (``more_pipes``: at the same moment, the top of the game covered by far more
at one rate than at the other, as pipes spawned every N frames come four times as often at
240 Hz) and the flap (``flap_rise``: one flap after the start, against the run without it, at
both rates: a lift applied for N frames lifts the bird a quarter as far at 240 Hz). At 60 Hz the
game probes already played both runs (B and the flap run, first tap at the same time): their
captures up to the second tap are read; only the 240 Hz pair is played here.
"""

from __future__ import annotations

import asyncio
import math

from .._model import CheckResult, Evidence
from ..browser._page import REPLAY_LIMIT_S, PageBroken
from ..browser._perception import OTHER_SPEED, spells
from ..browser._play import Run, Step, close_all
from ..browser._refresh import LEAD_KEY, RUNS_KEY, InputStep, Rerun, Runs
from ..browser._registry import ProbeContext
from ..browser._start import START_AT, Start, release_start, shared_start
from ._over import HINT_S, over_since
from ._pace import pipe_pace, top_columns
from ._probes import FLAP_INPUTS, FLAP_RUNS_KEY, TAPS, locate_shift

__all__ = ["adapt_refresh", "crash_time", "flap_rise", "flappy_script", "more_pipes", "top_columns"]

POLL = 0.05           # virtual s between looks for the game-over message
PASS_RATIO = (0.75, 1.35)
FAIL_RATIO = 1.8      # ending this many times sooner (or later) is plain to see
PROBES_KEY = "flappy-probes"
PIPE_MORE = 0.25      # more of the top's width covered at one rate than at the other: more than a pipe's width
PIPE_LASTS = 0.2      # ... for this long (virtual s): a screen full of pipes, not a pipe's early arrival
SCREEN_OVER = 0.9     # the whole top changed (a panel or a dimmed screen over the game): no pipes to count
LIFT_AFTER = TAPS[0]  # the measured flap, virtual s after the start: the game probes' first tap ...
LIFT_WATCH = TAPS[1] - TAPS[0]  # ... its rise watched until their second (the captures before it)
LIFT_SEEN = 0.025     # rises differing by this share of the game's height are seen (about a bird's size)
HOP_TOP_ROWS = 1.0    # a bird this many capture rows below its highest point so far is falling again


async def _start(ctx: ProbeContext) -> Start | None:
    start = await shared_start(ctx)
    if start is not None and PROBES_KEY not in ctx.shared:
        await release_start(start)  # no game probes in this run to continue its base run
    return start


async def flappy_script(ctx: ProbeContext) -> tuple[list[InputStep], str] | None:
    """The start found by the game probes, then a flap every 0.45 s (from play under way, after a countdown)."""
    start = await _start(ctx)
    if start is None:
        return None
    if start.waited > 0:
        ctx.shared[LEAD_KEY] = (start.waited, start.t0)  # the pixel runs cover the countdown, then as much play
    first = start.t0 + 0.5
    taps = [InputStep(first + 0.45 * k, "press:Space") for k in range(40)]
    pre = [InputStep(s.t, s.action) for s in start.steps]
    return pre + taps, f"({start.said()})" if start.name else "(the game runs without a start input)"


async def crash_time(ctx: ProbeContext, fps: int, start: Start, limit: float,
                     step_timeout_s: float | None = None, *, hint_s: float = HINT_S,
                     hints: list[str] | None = None) -> float | None:
    """Virtual s from the start to the game's end (message or reload), no other input; None if none.

    A game-over text first drawn within ``hint_s`` of the start is a hint ("R: restart"), not the
    end (added to ``hints``, when given).

    A run cut by the step limit (a busy machine starving the page) is played again with
    ``REPLAY_LIMIT_S``, as the pixel runs are (issue 29): the same frame for frame, so a page that
    hangs is cut again (None: timing did not work) and a starved one gives a quiet machine's time.
    """
    run = await Run.open(ctx, fps=fps, every=1.0, step_timeout_s=step_timeout_s)  # texts and reloads are read
    # Timed from the start input (the game's clock starts there), not from when the input was over:
    # an offset common to both rates would skew their ratio (1.1 and 0.2 s read 5.5x for a game 4x as fast).
    origin = start.steps[-1].t if start.steps else start.t0
    try:
        await run.play(start.steps, start.t0)
        dom_before = run.dom_first if run.dom_first is not None else await run.session.dom_text()
        while run.now < start.t0 + limit and not run.broken:
            await run.advance(POLL)
            if run.reloads:
                return run.reloads[0] - origin
            at = await over_since(run, start.t0, dom_before, hint_until=start.t0 + hint_s, hints=hints)
            if run.reloads:
                return run.reloads[0] - origin
            if at is not None:
                return at - origin
        if not run.session.hung:
            return None
    except PageBroken:
        if not run.session.hung:
            return None
    finally:
        await run.close()
    if step_timeout_s is not None and step_timeout_s >= REPLAY_LIMIT_S:
        return None
    return await crash_time(ctx, fps, start, limit, REPLAY_LIMIT_S, hint_s=hint_s, hints=hints)


def _at(frames_t: list[float], t: float) -> int | None:
    """The index of the capture at virtual time ``t`` (to the ms), if there is one."""
    for k, ft in enumerate(frames_t):
        if abs(ft - t) < 0.0015:
            return k
    return None


def more_pipes(runs: Runs, start: Start) -> dict[str, object] | None:
    """The spell where one rate's game shows far more pipes than the other's at the same moments, if any.

    The two runs play the same inputs at the same virtual times; a game whose pipes follow time
    shows them at the same places at both rates (at other heights, when it draws random numbers
    every frame, and a pipe early or late, when their spacing is random too). Pipes spawned
    every N frames come four times as often at 240 Hz: a wall of pipes a person sees at once.
    Compared every 1/30 s from the start to where the 240 Hz screen last moved: the top covered
    more by ``PIPE_MORE`` of its width and ``OTHER_SPEED`` times as much, for ``PIPE_LASTS`` s.
    """
    before = (start.steps[0].t if start.steps else START_AT) - 0.05
    j0 = max((j for j, t in enumerate(runs.t60) if t <= before + 1e-6), default=None)
    if j0 is None or j0 < 1:
        return None
    i0 = _at(runs.t240, runs.t60[j0])
    if i0 is None:
        return None
    ref60, ref240 = runs.f60[j0].image, runs.f240[i0].image
    if (ref60.width, ref60.height) != (ref240.width, ref240.height):
        return None
    until = runs.t240[runs.last_moving] if runs.last_moving >= 0 else runs.t240[-1]
    # The game's width at the top: the columns anything there ever changed in, at either rate (a page
    # around a smaller game never changes). The 60 Hz run plays on to 4.7 s: pipes cross the game by then.
    cols60 = {t: top_columns(f.image, ref60) for t, f in zip(runs.t60, runs.f60, strict=True) if t >= start.t0 - 1e-6}
    cols240 = {t: top_columns(runs.f240[i].image, ref240) for t in cols60 if t <= until + 1e-6
               and (i := _at(runs.t240, t)) is not None}
    live = [x for x in range(ref60.width) if any(c[x] for c in (*cols60.values(), *cols240.values()))]
    if len(live) < 4:
        return None
    span = range(live[0], live[-1] + 1)
    times, wrong, covers = [], [], []
    for t, c240 in cols240.items():
        c60 = sum(cols60[t][x] for x in span) / len(span)
        c24 = sum(c240[x] for x in span) / len(span)
        lo, hi = sorted((c60, c24))
        times.append(t * 1000)
        covers.append((round(t, 3), round(c60, 3), round(c24, 3)))
        wrong.append(hi < SCREEN_OVER and hi - lo >= PIPE_MORE and hi >= OTHER_SPEED * lo)
    for first, ms, k0, k1 in spells(times, wrong):
        if ms >= PIPE_LASTS * 1000 - 1e-6:
            worst = max(covers[k0:k1 + 1], key=lambda c: abs(c[2] - c[1]))
            return {"from_s": round(first / 1000, 2), "lasted_s": round(ms / 1000, 2), "worst": worst}
    return None


def _rise(base: Run, flap: Run, tap: float) -> float | None:
    """How far (share of the height) the flapped bird rose above where it was first seen after the tap.

    The bird is what differs from the run without the flap (``locate_shift``); its row is followed
    up to the top of its hop: the first capture where it is lower again ends the hop (what differs
    later may be something else: the run without the flap crashing, a pipe). None when nothing differed.
    """
    rows: list[float] = []
    height = 0
    last = math.floor((tap + LIFT_WATCH) / flap.every + 1e-6)  # the capture at or before the next tap
    for i in range(flap.index(tap), last + 1):
        fa, fb = base.frames.get(i), flap.frames.get(i)
        if fa is None or fb is None or (fa.width, fa.height) != (fb.width, fb.height):
            continue
        got = locate_shift(fa.image, fb.image)
        if got is None:
            if rows:
                break
            continue
        height = fb.height
        if len(rows) > 1 and got[1] > min(rows) + HOP_TOP_ROWS:
            break  # on its way down again: the hop is over
        rows.append(got[1])
    if len(rows) < 2 or not height:
        return None
    return max(0.0, rows[0] - min(rows)) / height


async def _probe_runs(ctx: ProbeContext) -> tuple[Run, dict[str, Run]] | None:
    """The game probes' no-input run and flap runs (60 Hz, first tap at ``LIFT_AFTER``), when they play in
    this check run and could hand them on; else None."""
    if PROBES_KEY not in ctx.shared:
        return None
    got = await asyncio.shield(ctx.shared_future(FLAP_RUNS_KEY))
    return got if isinstance(got, tuple) else None  # type: ignore[return-value]


async def _flap_once(ctx: ProbeContext, start: Start, fps: int, action: str,
                     given: tuple[Run, dict[str, Run]] | None = None) -> float | None:
    """The rise of one flap ``action`` at ``fps`` (see ``_rise``): read from ``given`` (the game probes'
    runs, 60 Hz) where they hold it, else from two runs played one after the other, each closed."""
    tap = start.t0 + LIFT_AFTER
    if fps == 60 and given is not None and action in given[1]:
        return _rise(given[0], given[1][action], tap)
    base = flap = None
    try:
        base = await start.replay(ctx, [], tap + LIFT_WATCH, fps=fps)
        await base.close()
        flap = await start.replay(ctx, [Step(tap, action)], tap + LIFT_WATCH, fps=fps)
        await flap.close()
        if base.broken or flap.broken:
            return None
        return _rise(base, flap, tap)
    finally:
        await close_all(base, flap)


async def flap_rise(ctx: ProbeContext, start: Start, *, own: bool = False) -> tuple[str, float, float] | None:
    """(the flap input, rise at 60 Hz, rise at 240 Hz) of one flap after the start; None if none was seen.

    Space first, then a click (the flap-input probe's order): the first that lifts the bird a seen
    amount at 60 Hz is measured at 240 Hz too (else the first that changed anything). ``own``: from
    runs of its own at both rates, never the game probes'.
    """
    given = None if own else await _probe_runs(ctx)
    tried: tuple[str, str, float] | None = None
    for name, action in FLAP_INPUTS:
        r60 = await _flap_once(ctx, start, 60, action, given)
        if r60 is None:
            continue
        tried = tried or (name, action, r60)
        if r60 >= LIFT_SEEN:
            tried = (name, action, r60)
            break
    if tried is None:
        return None
    name, action, r60 = tried
    r240 = await _flap_once(ctx, start, 240, action)
    return None if r240 is None else (name, r60, r240)


async def _second_look(ctx: ProbeContext, start: Start, steps: list[InputStep], result: CheckResult,
                      pixels_passed: bool) -> CheckResult:
    """A pass looked at again where a person looks: the pipes, then the flap (see the module docstring)."""
    runs = ctx.shared.get(RUNS_KEY)
    if pixels_passed and isinstance(runs, Runs):
        pipes = more_pipes(runs, start)
        if pipes is not None:
            t, c60, c240 = pipes["worst"]  # type: ignore[misc]
            more = "240" if c240 > c60 else "60"
            return CheckResult(
                id=result.id, status="fail", evidence=result.evidence, data={**result.data, "more_pipes": pipes},
                detail=f"the scenery moves alike at 60 and 240 Hz, but at {more} Hz far more pipes come: at "
                f"{t:.2f} s they cover {c240:.0%} of the top at 240 Hz and {c60:.0%} at 60 Hz "
                f"(for {pipes['lasted_s']:.2f} s): pipes come per frame, not per second")
    if isinstance(runs, Runs):
        before = (start.steps[0].t if start.steps else START_AT) - 0.05
        pace = await pipe_pace(ctx, runs, steps, start.t0, before)
        if pace is not None:
            result.data = {**result.data, "pipe_pace": [round(pace.p60, 1), round(pace.p240, 1)]}
            if pace.apart:
                how = f"{pace.ratio:.1f}x faster" if pace.ratio > 1 else f"{1 / pace.ratio:.1f}x slower"
                return CheckResult(
                    id=result.id, status="fail", evidence=result.evidence, data=result.data,
                    detail=f"the scenery moves alike at 60 and 240 Hz, but the pipes scroll {how} at 240 Hz "
                    f"({pace.p240:.0f} against {pace.p60:.0f} capture px per s, {pace.n240} and {pace.n60} pipe "
                    f"edges followed to {pace.until:.1f} s): the pipes move per frame, not per second")
    lift = await flap_rise(ctx, start)
    if lift is None:
        return result
    name, r60, r240 = lift
    data = {**result.data, "flap_rise_60hz": round(r60, 3), "flap_rise_240hz": round(r240, 3)}
    if _lifts_apart(r60, r240):
        # A fail is measured once more, on runs of its own at both rates, and stands only where that
        # agrees: a DOM game's CSS scenery moves on in real time between frames, so on a busy machine one
        # capture can take scenery for the bird (a good jQuery game read 0% or 17% for its 4% hop).
        again = await flap_rise(ctx, start, own=True)
        if again is not None:
            data["flap_rise_again"] = [round(again[1], 3), round(again[2], 3)]
        if again is not None and _lifts_apart(again[1], again[2]) and (again[2] < again[1]) == (r240 < r60):
            how = "less" if r240 < r60 else "more"
            return CheckResult(
                id=result.id, status="fail", evidence=result.evidence, data=data,
                detail=f"the scenery moves alike at 60 and 240 Hz, but a flap ({name}) lifts the bird {how} at "
                f"240 Hz: it rises {r60:.0%} of the game's height at 60 Hz and {r240:.0%} at 240 Hz (measured "
                f"again: {again[1]:.0%} and {again[2]:.0%}): the flap is tied to the frame rate")
    result.data = data
    return result


def _lifts_apart(r60: float, r240: float) -> bool:
    """One flap's rises at 60 and 240 Hz differ by a seen amount and a rate's factor."""
    lo, hi = sorted((r60, r240))
    return hi - lo >= LIFT_SEEN and hi >= OTHER_SPEED * lo


async def adapt_refresh(ctx: ProbeContext, steps: list[InputStep], result: CheckResult, rerun: Rerun) -> CheckResult:
    """Fall back on the time the game takes to end when pixels cannot tell."""
    start = await _start(ctx)
    if start is None:
        return result
    window = result.data.get("window")
    # A rate dependence seen only before the start input is the start screen's animation (random
    # twinkles or shake drawn per frame look alike at any rate): the game itself decides.
    before_start = result.status == "fail" and isinstance(window, list) and window[1] <= start.t0 + 1e-6
    if result.status == "pass":
        return await _second_look(ctx, start, steps, result, pixels_passed=True)
    if result.status in ("fail", "skip") and not before_start:
        return result
    limit = 10.0
    hints60: list[str] = []
    t60, t240 = await asyncio.gather(crash_time(ctx, 60, start, limit, hints=hints60),
                                     crash_time(ctx, 240, start, limit))
    if t60 is not None and t60 >= HINT_S and t240 is None and not hints60:
        # A game tied to frames ends four times as soon at 240 Hz: within the hint window, where a
        # "Game Over" drawn is taken for a hint. It is none where the 60 Hz game drew no such text
        # there (a hint is drawn as play starts, at either rate): read the 240 Hz end without it.
        t240 = await crash_time(ctx, 240, start, limit, hint_s=0.0)
    data = {**result.data, "crash_60hz_s": t60, "crash_240hz_s": t240}
    seen = (f"without input after {start.name or 'loading'} the game ends after {t60 or 0:.2f} s at 60 Hz and "
            f"{t240 or 0:.2f} s at 240 Hz")
    if t240 and t60 is None:
        data["crash_ratio"] = round(limit / t240, 2)
        if limit / t240 >= FAIL_RATIO:
            return CheckResult(id=result.id, status="fail", data=data, evidence=result.evidence,
                               detail=f"without input after {start.name or 'loading'} the game ends after "
                               f"{t240:.2f} s at 240 Hz but runs on past {limit:.0f} s at 60 Hz: motion is "
                               "tied to the frame rate")
    if not t60 or not t240:
        result.detail += "; timing the game's end without input did not work at both rates either"
        result.data = data
        return result
    ratio = t60 / t240
    data["crash_ratio"] = round(ratio, 2)
    evidence = [Evidence(kind="value", label="seconds to the end without input at 60 / 240 Hz",
                         value=[round(t60, 2), round(t240, 2)]), *result.evidence]
    if PASS_RATIO[0] <= ratio <= PASS_RATIO[1]:
        note = " (only the start screen's animation differed)" if before_start else ""
        timed = CheckResult(id=result.id, status="pass", detail=f"{seen}: the game runs at the same speed{note}",
                            evidence=evidence, data=data)
        return await _second_look(ctx, start, steps, timed, pixels_passed=False)
    if ratio >= FAIL_RATIO or ratio <= 1 / FAIL_RATIO:
        how_much = f"{ratio:.1f}x sooner" if ratio > 1 else f"{1 / ratio:.1f}x later"
        return CheckResult(id=result.id, status="fail", evidence=evidence, data=data,
                           detail=f"{seen}: at 240 Hz the game ends {how_much}, motion is tied to the frame rate")
    result.detail += f"; {seen} (ratio {ratio:.2f}: not clear either way)"
    result.data = data
    return result


assert START_AT > 0
