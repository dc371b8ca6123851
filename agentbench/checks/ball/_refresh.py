"""refresh-rate for bouncing balls: played with the input that makes the balls come (``find_spawn``).

Balls that collide make two correct runs at different step sizes drift apart (chaos): after a
few collisions no 60 Hz frame looks like the 240 Hz one, though nothing runs faster. So the
pixel runs also log the balls (``Observe``), and a person's comparison decides where the
pixels cannot or disagree: how fast the balls fly before their first contact, at each rate.

When pixels cannot decide (balls spawned per frame while the button is held come in different
numbers at each rate, random colours per frame), the check compares what a person sees: how fast
the balls move. Both rates play the same input with the bodies logged; the balls' mean speed in
px per virtual second is about the same when motion follows time, and about 4x at 240 Hz when it
follows frames. Both speeds are read from the pixel runs' bodies where those runs (played on)
reached the speed window's end: the same input from load at the same rate, logged on the same
frames, so a run of its own is played only where a pixel run was cut short (``_logged_speed``).

Damping taken once per frame (a floor's grip on rolling balls) shows only once the balls roll,
after the 2 s the 240 Hz pixel run lasts. So each pixel run is played on, bodies only, to ``LATE``
while its balls still move, and how much the balls move after ``T240`` is compared between the
rates (``_by_late_motion``), and how fast rolling balls slow down at like speeds (``_by_rolling``):
balls that stop rolling several times sooner at 240 Hz fail. Nothing reads that for a page whose
spawned balls' speed already fails it: its play-on stops there, and the check's data says so.

A run cut by the harness's time limit on a busy machine (``_cut``: a pixel run in play, a speed
run) makes the check ``error``, as does a spawn search that was cut: what it did not show is no
evidence. A page that hangs there keeps the verdict it always got.
"""

from __future__ import annotations

import asyncio
import math
import statistics

from .._model import CheckResult, Evidence
from ..browser._page import PageBroken, PageSession
from ..browser._perception import OTHER_SPEED, SAME_SPEED, speed_verdict
from ..browser._play import Run, Step
from ..browser._refresh import OBSERVE_KEY, T240, InputStep, Observe, Rerun
from ..browser._registry import ProbeContext
from ._bodies import balls, follow
from ._cut import REPLAY_LIMIT_S, cut_by_limit, unrepeated_break
from ._probes import EVERY, Spawn, shared_spawn
from ._tracks import at_rest, flight_speeds, motion, roll_slowing, speeds, thinned

__all__ = ["ball_script", "speed_ratio"]

PASS_RATIO = SAME_SPEED
FAIL_RATIO = OTHER_SPEED
SPAN = 2.0  # virtual s of motion compared, from the end of the input
BODIES_KEY = "ball-refresh-bodies"  # ctx.shared: fps -> the bodies logged in that pixel run
SESSIONS_KEY = "ball-refresh-sessions"  # ctx.shared: the pixel runs' sessions (to see one cut by the limit)
PLAYED_ON_KEY = "ball-refresh-played-on"  # ctx.shared: the sessions whose pixel run was over and played on
REACHED_KEY = "ball-refresh-reached"  # ctx.shared: fps -> the virtual ms its pixel run's bodies are logged to
SPAWN_KEY = "ball-refresh-spawn"  # ctx.shared: the spawn the pixel runs play (``ball_script``)
LOGGED_SPEED_KEY = "ball-refresh-logged-speed"  # ctx.shared: fps -> the speed read from its pixel run's bodies
PLAY_ON_KEY = "ball-refresh-play-on"  # ctx.shared: where and why a play-on stopped once the speed told
LATE = 6.0         # virtual s the pixel runs' bodies are logged to, while the balls still move (``late_motion``)
LATE_CHUNK = 1.0   # virtual s played at a time there
LATE_STILL_S = 1.0  # every ball still this long: the run is not played on further
LATE_SPACING_MS = 50.0  # both rates' bodies compared this far apart (every 3rd frame at 60 Hz)
LATE_RATIO = 3.0   # the balls move this many times as much (or as little) after T240 at 240 Hz: plainly different
LATE_MIN = 30.0    # px per virtual s (all balls together) the livelier run must move for a difference to be seen
ROLL_SAMPLES = 4   # rolling samples a speed bin needs at each rate to be compared (``roll_ratio``)
ROLL_MIN_N = 40    # rolling samples at like speeds, both rates together, for a verdict
ROLL_SEEN_PX = 40.0  # a ball at the rolling balls' median speed must roll out this much further at 60 Hz to be seen
ROLL_MIN_LOSS = 0.3  # share of their speed per virtual s rolling balls must lose at one rate for a difference to show


def _observer(ctx: ProbeContext) -> Observe:
    logs: dict[int, list] = ctx.shared.setdefault(BODIES_KEY, {})  # type: ignore[assignment]
    sessions: list[PageSession] = ctx.shared.setdefault(SESSIONS_KEY, [])  # type: ignore[assignment]
    reached: dict[int, float] = ctx.shared.setdefault(REACHED_KEY, {})  # type: ignore[assignment]

    played_on: list[PageSession] = ctx.shared.setdefault(PLAYED_ON_KEY, [])  # type: ignore[assignment]

    async def start(session: PageSession) -> None:
        sessions.append(session)
        await session.track_bodies(EVERY)  # as many frames apart at both rates

    async def finish(session: PageSession, fps: int) -> None:
        log = logs[fps] = (await session.bodies())[0]  # grows in place as it is played on
        reached[fps] = session.now_ms
        played_on.append(session)  # what happens from here on is no part of the pixel run
        await _play_on(ctx, session, log)

    return Observe(start, finish)


async def _play_on(ctx: ProbeContext, session: PageSession, log: list) -> None:
    """Log the bodies (into ``log``) as the run is played on to ``LATE`` virtual s, while any ball still moves.

    Bodies only, no pixels: cheap. Stops where the balls have been still for ``LATE_STILL_S``, or
    where the page breaks or the run is cut by the time limit (what was logged so far is kept).
    Balls that came from input are played on at least to the end of their speed window (the speed
    runs read this log there, ``_logged_speed``), and no further once their speed at both rates
    fails the page: nothing reads the late motion of a page that fails (``_by_late_motion``); the
    check's data says where and why (``PLAY_ON_KEY``).
    """
    reached: dict[int, float] = ctx.shared.setdefault(REACHED_KEY, {})  # type: ignore[assignment]
    spawn = ctx.shared.get(SPAWN_KEY)
    speed_end = (spawn.t0 + SPAN) * 1000 if isinstance(spawn, Spawn) and spawn.name is not None else 0.0
    while session.now_ms < LATE * 1000 - 1e-6 and not session.broken:
        if log and session.now_ms >= speed_end - 1e-6 and at_rest([(t, b) for t, b, _ in log],
                                                                   log[-1][0] - LATE_STILL_S * 1000):
            break
        if speed_end and (told := _speed_told(ctx, spawn)):  # type: ignore[arg-type]
            ctx.shared[PLAY_ON_KEY] = {"stopped_s": round(session.now_ms / 1000, 2), "fps": session.fps,
                                       "why": told}
            break
        try:
            await session.advance(min(LATE_CHUNK, LATE - session.now_ms / 1000))
            log += (await session.bodies())[0]
            reached[session.fps] = session.now_ms
        except PageBroken:
            break


async def ball_script(ctx: ProbeContext) -> tuple[list[InputStep], str] | None:
    ctx.shared[OBSERVE_KEY] = _observer(ctx)
    spawn = ctx.shared[SPAWN_KEY] = await shared_spawn(ctx)
    if spawn is None or spawn.name is None:
        return None
    return [InputStep(s.t, s.action) for s in spawn.steps], f"(after {spawn.name})"


def _median_speed(log: list, spawn: Spawn) -> float | None:
    """The balls' median speed (px per virtual s) in the speed window, from a run's bodies."""
    size = next((s for _, _, s in reversed(log) if s), None) or (800, 600)
    got = speeds(balls(follow([(t, b) for t, b, _ in log], size)), spawn.t0 * 1000 - 100, (spawn.t0 + SPAN) * 1000)
    return statistics.median(got) if got else None


def _logged_speed(ctx: ProbeContext, fps: int, spawn: Spawn) -> tuple[bool, float | None]:
    """The speed at ``fps`` from the pixel run's bodies, if that run (played on) reached the speed window's end.

    The pixel run plays the same input from load at the same rate as a speed run would, its bodies
    logged on the same frames: up to the window's end its log is the speed run's, frame for frame
    (the virtual clock), so no second run is played. (False, None) when the log stops short.
    """
    logs = ctx.shared.get(BODIES_KEY)
    reached = ctx.shared.get(REACHED_KEY)
    end = (spawn.t0 + SPAN) * 1000
    if not isinstance(logs, dict) or not isinstance(reached, dict) or fps not in logs or \
            reached.get(fps, 0.0) < end - 1e-6:
        return False, None
    known: dict[int, float | None] = ctx.shared.setdefault(LOGGED_SPEED_KEY, {})  # type: ignore[assignment]
    if fps not in known:  # fixed once the log reaches the window's end: read once
        known[fps] = _median_speed([e for e in logs[fps] if e[0] <= end + 1e-6], spawn)
    return True, known[fps]


def _speed_told(ctx: ProbeContext, spawn: Spawn) -> str | None:
    """Why the balls' speed at both rates already fails the page (see ``_decide``), from the pixel runs' logs."""
    got = [_logged_speed(ctx, fps, spawn) for fps in (60, 240)]
    (ok60, v60), (ok240, v240) = got
    if not ok60 or not ok240 or not v60 or not v240:
        return None
    ratio = v240 / v60
    if ratio >= FAIL_RATIO or ratio <= 1 / FAIL_RATIO:
        return (f"the balls' speed at 60 / 240 Hz ({v60:.0f} / {v240:.0f} px/s) fails the page: "
                "what they do later is not read")
    return None


async def _speed(ctx: ProbeContext, fps: int, spawn: Spawn) -> float | None:
    """The balls' median speed at ``fps`` (None when not measured).

    Read from the pixel run's bodies where that run reached the window's end (``_logged_speed``),
    else from a speed run of its own. A run cut by the harness's step limit is played again with
    ``REPLAY_LIMIT_S`` per step and
    measured there: on the virtual clock it is the same run frame for frame (a heavy page at 240 Hz
    can take over 5 s of real time for a step in a container that is not busy at all). A page that
    hangs is cut again: no speed, as it always was.
    """
    logged, v = _logged_speed(ctx, fps, spawn)
    if logged:
        return v
    log, run = await _speed_run(ctx, fps, spawn, None)
    if log is None and run.session.hung:
        log, run = await _speed_run(ctx, fps, spawn, REPLAY_LIMIT_S)
    if log is None:
        return None  # the page broke (or hangs there): no speed, as it always was
    return _median_speed(log, spawn)


async def _speed_run(ctx: ProbeContext, fps: int, spawn: Spawn, step_timeout_s: float | None
                     ) -> tuple[list | None, Run]:
    """One speed run: the bodies it logged (None when it broke or was cut) and the run."""
    run = await Run.open(ctx, fps=fps, every=1.0, step_timeout_s=step_timeout_s)
    log = None
    try:
        if not run.session.hung:
            await run.session.track_bodies(EVERY)  # as many frames apart at both rates: tracks hold at 4x speed
        await run.play(spawn.steps, spawn.t0 + SPAN)
        if not run.broken:
            log, _ = await run.session.bodies()
    except PageBroken:
        if not run.session.hung:
            raise
    finally:
        await run.close()
    return log, run


async def speed_ratio(ctx: ProbeContext, spawn: Spawn) -> tuple[float | None, float | None]:
    """The balls' median speed (px per virtual s) at 60 and at 240 Hz (see ``_speed``)."""
    v60, v240 = await asyncio.gather(_speed(ctx, 60, spawn), _speed(ctx, 240, spawn))
    return v60, v240


async def _pixel_cut(ctx: ProbeContext, steps: list[InputStep], result: CheckResult) -> str | None:
    """Why the pixel runs are no evidence, if one was cut by the time limit (see ``_cut``).

    A run cut in play is a session the observer started; one that broke before it was played (at
    its load, or scrolling the game into view) never got there, and its check said why.
    """
    sessions: list[PageSession] = ctx.shared.get(SESSIONS_KEY) or []  # type: ignore[assignment]
    played_on: list[PageSession] = ctx.shared.get(PLAYED_ON_KEY) or []  # type: ignore[assignment]
    for session in [s for s in sessions if s.hung and not any(s is p for p in played_on)]:
        why = await cut_by_limit(ctx, session, [Step(s.t, s.action) for s in steps],
                                 f"the {session.fps} Hz run of refresh-rate", fps=session.fps, track=EVERY)
        if why:
            return why
    for fps in [f for f in (60, 240) if f not in {s.fps for s in sessions}]:
        why = await unrepeated_break(ctx, f"the {fps} Hz run of refresh-rate", result.detail, fps=fps, track=EVERY)
        if why:
            return why
    return None


def _counts(log: list) -> list[int]:
    """How many bodies a run drew at 0.5, 1, 1.5 and 2 virtual s (0 before its first sample)."""
    out = []
    for t in (0.5, 1.0, 1.5, 2.0):
        drawn = [len(b) for tm, b, _ in log if tm <= t * 1000]
        out.append(drawn[-1] if drawn else 0)
    return out


def flight_ratio(ctx: ProbeContext, t_from: float) -> tuple[float, float, int, int] | None:
    """The balls' median speed before their first contact (px per virtual s) at 60 and 240 Hz,
    and how many bodies each run drew where the two runs differ most in that (0.5 s to 2 s).

    From the bodies the pixel runs logged, from ``t_from`` (virtual s) to the end of the 240 Hz run.
    """
    logs = ctx.shared.get(BODIES_KEY)
    if not isinstance(logs, dict) or 60 not in logs or 240 not in logs:
        return None
    got = []
    for fps in (60, 240):
        log = [e for e in logs[fps] if e[0] <= T240 * 1000]
        size = next((s for _, _, s in reversed(log) if s), None) or (800, 600)
        v = flight_speeds(balls(follow([(t, b) for t, b, _ in log], size)), t_from * 1000 - 1, T240 * 1000)
        if not v:
            return None
        got.append(statistics.median(v))
    pairs = [(a, b) for a, b in zip(_counts(logs[60]), _counts(logs[240]), strict=True) if a and b]
    n60, n240 = max(pairs, key=lambda p: max(p) / min(p), default=(0, 0))
    return got[0], got[1], n60, n240


def _by_flight(ctx: ProbeContext, result: CheckResult) -> CheckResult:
    """A pixel verdict checked against how fast the balls fly before their first contact.

    The pixels can fail a page whose colliding balls drift apart (chaos) and can fail to match
    at all; the balls' free flight tells then. A pixel pass stays (the frames matched in time).
    """
    if result.status not in ("fail", "error"):
        return result
    speeds_ = flight_ratio(ctx, 0.0)
    if speeds_ is None:
        return result
    v60, v240, n60, n240 = speeds_
    ratio = v240 / v60
    data = {**result.data, "flight_60hz": round(v60), "flight_240hz": round(v240), "flight_ratio": round(ratio, 2),
            "balls_60hz": n60, "balls_240hz": n240}
    seen = f"before their first contact the balls fly at {v60:.0f} px/s at 60 Hz and {v240:.0f} px/s at 240 Hz"
    evidence = [Evidence(kind="value", label="balls' median speed before their first contact at 60 / 240 Hz (px/s)",
                         value=[round(v60), round(v240)]), *result.evidence]
    verdict = speed_verdict(ratio)
    if verdict == "same" and speed_verdict(max(n60, 1) / max(n240, 1)) == "different":
        return CheckResult(id=result.id, status="fail", evidence=evidence, data=data,
                           detail=f"{seen}, but at the same moment the 240 Hz display shows {n240} balls where "
                           f"60 Hz shows {n60}: balls are added per frame, not per second")
    if verdict == "same":
        return CheckResult(id=result.id, status="pass", evidence=evidence, data=data,
                           detail=f"{seen}: the same speed on both displays (the pictures drift apart later, "
                           f"as colliding balls do at any two step sizes)")
    if verdict == "different" and result.status == "error":
        how = f"{ratio:.1f}x faster" if ratio > 1 else f"{1 / ratio:.1f}x slower"
        return CheckResult(id=result.id, status="fail", evidence=evidence, data=data,
                           detail=f"{seen}: at 240 Hz they fly {how}, motion is tied to the frame rate")
    result.data = data
    return result


def late_motion(ctx: ProbeContext) -> tuple[float, float, float, float] | None:
    """How far the balls move together (px per virtual s) at 60 and at 240 Hz after ``T240``, and that span (ms).

    From the bodies the pixel runs logged and played on (``_play_on``), compared at one spacing,
    from the end of the 240 Hz pixel run to where both logs reach (at most ``LATE``). None when
    either log stops short of a virtual second past ``T240``.
    """
    logs = ctx.shared.get(BODIES_KEY)
    if not isinstance(logs, dict) or 60 not in logs or 240 not in logs or not logs[60] or not logs[240]:
        return None
    t_from = T240 * 1000
    t_to = min(logs[60][-1][0], logs[240][-1][0], LATE * 1000)
    if t_to < t_from + 1000:
        return None
    got = []
    for fps in (60, 240):
        log = thinned([(t, b) for t, b, _ in logs[fps]], LATE_SPACING_MS)
        size = next((s for _, _, s in reversed(logs[fps]) if s), None) or (800, 600)
        got.append(motion(balls(follow(log, size)), t_from, t_to))
    return got[0], got[1], t_from, t_to


def roll_ratio(ctx: ProbeContext) -> tuple[float, float, float, int] | None:
    """The share of their speed rolling balls lose per virtual s at 60 and at 240 Hz, at the same speeds.

    From both logs up to where both reach (``roll_slowing``): the speeds are put in bins (each 1.5x
    the last) and each rate's median share per bin compared where both rates have ``ROLL_SAMPLES``
    samples; the medians over those bins, the rolling balls' median speed there and how many samples
    they rest on (at least ``ROLL_MIN_N``). Friction that slows a
    fast ball less than a slow one (a constant deceleration) is compared at like speeds, so two runs
    whose balls roll at other speeds (colliding balls drift apart) still compare alike. None: too
    few rolling samples at like speeds.
    """
    logs = ctx.shared.get(BODIES_KEY)
    if not isinstance(logs, dict) or 60 not in logs or 240 not in logs or not logs[60] or not logs[240]:
        return None
    t_to = min(logs[60][-1][0], logs[240][-1][0])
    bins: list[dict[int, list[tuple[float, float]]]] = []
    for fps in (60, 240):
        log = thinned([(t, b) for t, b, _ in logs[fps]], LATE_SPACING_MS)
        size = next((s for _, _, s in reversed(logs[fps]) if s), None) or (800, 600)
        by: dict[int, list[tuple[float, float]]] = {}
        for v, k in roll_slowing(balls(follow(log, size)), t_to):
            by.setdefault(int(math.log(v) / math.log(1.5)), []).append((v, k))
        bins.append(by)
    shared = [b for b in bins[0] if len(bins[0][b]) >= ROLL_SAMPLES and len(bins[1].get(b, ())) >= ROLL_SAMPLES]
    n = sum(len(bins[0][b]) + len(bins[1][b]) for b in shared)
    if n < ROLL_MIN_N:
        return None
    k60 = statistics.median(statistics.median(k for _, k in bins[0][b]) for b in shared)
    k240 = statistics.median(statistics.median(k for _, k in bins[1][b]) for b in shared)
    v = statistics.median(v for b in shared for v, _ in bins[0][b] + bins[1][b])
    return k60, k240, v, n


def _by_rolling(ctx: ProbeContext, result: CheckResult) -> CheckResult:
    """A verdict that is not a fail, checked against how fast rolling balls slow down at each rate.

    A floor's grip taken once per frame takes four times the share of a ball's speed per second
    at 240 Hz: the balls stop rolling much sooner. Told at like speeds (``roll_ratio``).
    """
    if result.status not in ("pass", "error"):
        return result
    got = roll_ratio(ctx)
    if got is None:
        return result
    k60, k240, v, n = got
    further = v / k60 - v / k240 if k60 > 0 and k240 > 0 else 0.0  # how much further a ball rolls out at 60 Hz
    result.data = {**result.data, "roll_loss_60hz": round(k60, 2), "roll_loss_240hz": round(k240, 2), "roll_samples": n,
                   "roll_speed": round(v), "roll_further_px": round(further)}
    if k240 < ROLL_MIN_LOSS or k240 < LATE_RATIO * k60 or further < ROLL_SEEN_PX:  # per frame takes more at 240 Hz
        return result
    how = f"{k240 / k60:.1f}x" if k60 > 0 else "far"
    return CheckResult(
        id=result.id, status="fail", data=result.data,
        evidence=[Evidence(kind="value", label="share of speed rolling balls lose per s at 60 / 240 Hz",
                           value=[round(k60, 2), round(k240, 2)]), *result.evidence],
        detail=f"rolling balls lose {k60:.0%} of their speed per second at 60 Hz and {k240:.0%} at 240 Hz, at the "
        f"same speeds ({n} samples): at 240 Hz they slow {how} as fast, and a ball rolling at {v:.0f} px/s "
        f"stops {further:.0f} px sooner; their friction "
        f"is tied to the frame rate; earlier: {result.detail}")


def _by_late_motion(ctx: ProbeContext, result: CheckResult) -> CheckResult:
    """A verdict that is not a fail, checked against how much the balls still move after ``T240``.

    Friction or damping applied once per frame shows only once the balls roll: at 240 Hz they stop
    rolling several times sooner. A person sees that at once; the 2 s pixel runs end before it.
    """
    if result.status not in ("pass", "error"):
        return result
    got = late_motion(ctx)
    if got is None:
        return result
    m60, m240, t_from, t_to = got
    result.data = {**result.data, "late_60hz": round(m60), "late_240hz": round(m240),
                   "late_window": [round(t_from / 1000, 2), round(t_to / 1000, 2)]}
    if max(m60, m240) < LATE_MIN or min(m60, m240) * LATE_RATIO > max(m60, m240):
        return result
    how = "much less" if m240 < m60 else "much more"
    return CheckResult(
        id=result.id, status="fail", data=result.data,
        evidence=[Evidence(kind="value", label=f"balls' motion from {t_from / 1000:.0f} to {t_to / 1000:.1f} s "
                           "at 60 / 240 Hz (px/s, all balls)", value=[round(m60), round(m240)]), *result.evidence],
        detail=f"from {t_from / 1000:.0f} to {t_to / 1000:.1f} s the balls move {m60:.0f} px/s at 60 Hz and "
        f"{m240:.0f} px/s at 240 Hz: at 240 Hz they move {how} later on (they come to rest at another time), "
        f"their slowing is tied to the frame rate; earlier: {result.detail}")


async def adapt_refresh(ctx: ProbeContext, steps: list[InputStep], result: CheckResult, rerun: Rerun) -> CheckResult:
    """When pixels could not decide, or the balls come from input, compare how fast the balls move;
    then how much they still move once the pixel runs are over (``_by_late_motion``) and how fast
    rolling balls slow down (``_by_rolling``).

    Balls spawned while a button is held come in different numbers (and random looks) at each
    rate, so the pixel match is not to be trusted there: their speed decides when it is clear.
    Balls there from the start are judged by their free flight where the pixels fail or cannot
    tell (``_by_flight``).
    """
    spawn = await shared_spawn(ctx)
    why = (spawn.cut if spawn is not None else None) or await _pixel_cut(ctx, steps, result)
    if why:
        return CheckResult(id=result.id, status="error", detail=why, evidence=result.evidence, data=result.data)
    return _by_rolling(ctx, _by_late_motion(ctx, await _decide(ctx, spawn, result)))


async def _decide(ctx: ProbeContext, spawn: Spawn | None, result: CheckResult) -> CheckResult:
    """The verdict from pixels, free flight and speed runs (see ``adapt_refresh``)."""
    if spawn is not None and spawn.name is None:
        result = _by_flight(ctx, result)
    if spawn is None or (result.status in ("pass", "fail", "skip") and spawn.name is None):
        return result
    v60, v240 = await speed_ratio(ctx, spawn)
    data = {**result.data, "speed_60hz": v60, "speed_240hz": v240,
            "speed_from": {str(f): "pixel run" if _logged_speed(ctx, f, spawn)[0] else "speed run" for f in (60, 240)}}
    if isinstance(stopped := ctx.shared.get(PLAY_ON_KEY), dict):
        data["play_on_stopped"] = stopped
    if (not v60 or not v240) and result.status in ("pass", "fail", "skip"):
        return result
    if not v60 or not v240:
        result.detail += "; the balls' speed could not be measured at both rates either"
        result.data = data
        return result
    ratio = v240 / v60
    data["speed_ratio"] = round(ratio, 2)
    evidence = [Evidence(kind="value", label="balls' median speed at 60 / 240 Hz (px/s)",
                         value=[round(v60), round(v240)]), *result.evidence]
    seen = f"the balls move at {v60:.0f} px/s at 60 Hz and {v240:.0f} px/s at 240 Hz"
    if PASS_RATIO[0] <= ratio <= PASS_RATIO[1]:
        return CheckResult(id=result.id, status="pass", evidence=evidence, data=data,
                           detail=f"{seen}: the same speed on both displays")
    if ratio >= FAIL_RATIO or ratio <= 1 / FAIL_RATIO:
        how = f"{ratio:.1f}x faster" if ratio > 1 else f"{1 / ratio:.1f}x slower"
        return CheckResult(id=result.id, status="fail", evidence=evidence, data=data,
                           detail=f"{seen}: at 240 Hz they move {how}, motion is tied to the frame rate")
    if result.status in ("pass", "fail"):
        return result
    result.detail += f"; {seen} (ratio {ratio:.2f}: not clear either way)"
    result.data = data
    return result

