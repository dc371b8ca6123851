"""refresh-rate: does motion depend on the display's frame rate?

The same artefact runs with the same input script at 60 Hz and at 240 Hz. For every 240 Hz
sample at virtual time t the best-matching 60 Hz frame (time tau) is found by pixels, and
tau = s * t + b is fitted robustly (Theil-Sen). s ~ 1: motion follows virtual time (timer-driven,
fixed-step and delta-time loops pass); s ~ 4: motion follows frames (per-frame physics fails).
Samples where the 240 Hz screen is frozen (game over) or unchanged are left out; a page where
nothing moves cannot be judged and is skipped with the reason.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import pairwise

import structlog

from .._model import CheckResult, Evidence
from ._frames import Frame
from ._imaging import Image, encode_png, filmstrip, thermo, thermo_distance
from ._page import REPLAY_LIMIT_S, PageBroken, PageSession
from ._registry import Adapt, InputStep, ProbeContext, Rerun, ScriptFn

log = structlog.get_logger()

__all__ = ["CAP60", "CAPTURE_WIDTH", "LEAD_KEY", "OBSERVE_KEY", "RUNS_KEY", "Adapt", "InputStep", "Observe", "Rerun",
           "Runs", "ScriptFn", "play", "play_rate", "refresh_rate_check"]

CHECK_ID = "refresh-rate"
T240 = 2.0          # virtual seconds simulated at 240 Hz
T60 = 4 * T240 + 0.5  # the 60 Hz run must cover a 4x faster 240 Hz run
CAP240 = 1 / 120    # dense at 240 Hz: a frame-locked game's first input-free window is short there
CAP60 = 1 / 30
CAPTURE_WIDTH = 64
STILL = 0.002       # mean distance (quantisation steps) under which two frames are "the same"
PASS_RANGE = (0.75, 1.35)
OBSERVE_KEY = "refresh-observe"  # ctx.shared: an Observe the pixel runs call (set by a task's script hook)
RUNS_KEY = "refresh-runs"  # ctx.shared: the last pixel check's Runs, for a task's adapt to read what they showed
# ctx.shared: (lead, play_from) for a game that waits after its start input before play gets under way (a
# 3-2-1 countdown), set by a task's script: lead, the virtual s it waits; play_from, when play is under way.
# Both runs are played ``lead`` longer and a window starts at play_from, so the windows judged hold play
# alone: else a game whose countdown outlasts T240 showed nothing moving at 240 Hz (refresh-rate skipped).
LEAD_KEY = "refresh-lead"


@dataclass(frozen=True)
class Observe:
    """What a task watches in both runs beside the pixels (ball: the bodies drawn), read by its adapt.

    ``start(session)`` once the page is shown, before the script plays; ``finish(session, fps)``
    after it, before the session closes. A task's ``RefreshPlan.script`` puts one in
    ``ctx.shared[OBSERVE_KEY]``: the runs are not replayed to watch them twice.
    """

    start: Callable[[PageSession], Awaitable[None]]
    finish: Callable[[PageSession, int], Awaitable[None]]


async def act(session: PageSession, action: str) -> bool:
    """Perform one scripted input with real keyboard/mouse events; False if it had no target.

    ``press:<Key>``, ``click:<fx>,<fy>`` (fractions of the main canvas, else the viewport) or
    ``target:<regex>``: a click on the visible control (button, link, canvas-drawn text) whose
    text matches, as a person clicks "Start" or "Play again".
    """
    kind, _, arg = action.partition(":")
    if kind == "press":
        await session.press(arg)
    elif kind == "click":
        fx, fy = (float(v) for v in arg.split(","))
        await session.click_canvas(fx, fy)
    elif kind == "target":
        found = await session.find_target(arg)
        if found is None:
            return False
        await session.click(found[0], found[1])
    else:
        raise ValueError(f"unknown input action {action!r}")
    return True


async def play(session: PageSession, steps: list[InputStep], duration: float, capture_every: float,
               *, include_start: bool = True) -> list[Frame]:
    """Play ``steps`` (times relative to now) for ``duration`` virtual s, capturing on a fixed grid.

    Keys and mouse buttons are held as a person holds them (see ``_play.perform``); the clock
    plays on meanwhile, captures included.
    """
    from ._play import perform  # _play imports this module's neighbours; keep the import local

    origin = session.now_ms / 1000.0
    frames: list[Frame] = []

    async def advance(seconds: float) -> None:
        frames.extend(await session.advance(seconds, capture_every=capture_every, capture_origin=origin))

    if include_start and not session.broken:
        try:
            frames.append(await session.capture())
        except PageBroken:
            return frames
    for step in [s for s in steps if s.t < duration] + [InputStep(duration, "")]:
        wait = origin + step.t - session.now_ms / 1000.0
        if wait > 1e-9:
            await advance(wait)
        if session.broken or not step.action:
            break
        try:
            await perform(session, step.action, advance)
        except PageBroken:
            break
    return frames


def _changes(frames: list[Frame], codes: list[int]) -> list[float]:
    px = frames[0].width * frames[0].height if frames else 1
    return [0.0] + [thermo_distance(codes[i], codes[i - 1], px) for i in range(1, len(codes))]


def theil_sen(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Robust line fit: the median of pairwise slopes, then the median intercept."""
    slopes = [(y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for x2, y2 in points[i + 1:]
              if abs(x2 - x1) > 1e-9]
    s = statistics.median(slopes)
    b = statistics.median(y - s * x for x, y in points)
    return s, b


class Runs:
    """Both runs' frames with their thermometer codes and per-sample change, computed once."""

    def __init__(self, f60: list[Frame], f240: list[Frame]) -> None:
        self.f60, self.f240 = f60, f240
        self.px = f60[0].width * f60[0].height
        self.c60, self.c240 = [thermo(f.image) for f in f60], [thermo(f.image) for f in f240]
        self.ch60, self.ch240 = _changes(f60, self.c60), _changes(f240, self.c240)
        self.t60 = [f.t_ms / 1000.0 for f in f60]
        self.t240 = [f.t_ms / 1000.0 for f in f240]
        self._dist: dict[tuple[int, int], float] = {}
        # i >= 2: the change from the capture at load to the first painted frame is not motion.
        moving = [i for i in range(2, len(f240)) if self.ch240[i] > STILL]
        if len(moving) < 3:  # a title that disappears once is not motion to judge
            moving = []
        # The fit stops where the 240 Hz screen last changed (a frozen game-over screen after it).
        self.last_moving = moving[-1] if moving else -1


def _distance(self: Runs, i: int, j: int) -> float:
    """Distance between 240 Hz sample i and 60 Hz frame j (cached: windows reuse the full search)."""
    key = (i, j)
    d = self._dist.get(key)
    if d is None:
        d = self._dist[key] = thermo_distance(self.c240[i], self.c60[j], self.px)
    return d


Runs.distance = _distance  # type: ignore[attr-defined]


def _monotone_matches(runs: Runs, samples: list[int], cand: list[int]) -> list[int]:
    """The 60 Hz frame matched to each 240 Hz sample (-1: none may match), in time order in both runs.

    Time moves forward in both runs, so a later sample never matches an earlier frame: the
    matches are the order-keeping assignment with the least summed distance (dynamic
    programming over samples x frames). Matched one by one, a bird at the same height on
    the way up and on the way down, or a ball rising and falling, matched either frame, and a
    short window fitted a slope from those swaps (a good game judged "1.6x faster" for some seeds).
    A sample may match a 60 Hz frame up to 4.5 t + 0.5 (a 4x faster game, and a margin).
    """
    if not samples:
        return []
    far = 9.0  # above any distance: a frame the sample may not match
    prev: list[float] | None = None
    back: list[list[int]] = []
    for i in samples:
        limit = 4.5 * runs.t240[i] + 0.5
        row: list[float] = []
        ptr: list[int] = []
        best, best_at = float("inf"), -1
        for p, j in enumerate(cand):
            d = runs.distance(i, j) if runs.t60[j] <= limit else far
            if prev is None:
                row.append(d)
                ptr.append(-1)
                continue
            if prev[p] < best:
                best, best_at = prev[p], p
            row.append(best + d)
            ptr.append(best_at)
        back.append(ptr)
        prev = row
    assert prev is not None
    p = min(range(len(cand)), key=prev.__getitem__)
    out: list[int] = []
    for k in range(len(samples) - 1, -1, -1):
        i = samples[k]
        j = cand[p]
        out.append(j if runs.t60[j] <= 4.5 * runs.t240[i] + 0.5 else -1)
        p = back[k][p]
    out.reverse()
    return out


def fit_rate(runs: Runs, window: tuple[float, float] | None = None) -> dict[str, object]:
    """Match moving 240 Hz samples to their best 60 Hz frame and fit tau = s * t + b.

    With ``window`` only samples and frames with times inside it are used: between two inputs
    the game is input-free in both runs, so any rate relation holds there (for a frame-locked
    game the runs diverge after the first input at identical virtual times).
    """
    if runs.last_moving < 0:
        return {"ok": False, "static": True, "reason": "nothing on the screen moves at 240 Hz"}
    lo, hi = window if window else (-1.0, 1e9)
    cand = [j for j, t in enumerate(runs.t60) if lo - 1e-6 <= t <= hi + 1e-6]
    if len(cand) < 3:
        return {"ok": False, "reason": "too few 60 Hz frames in the window"}
    edge = runs.t60[cand[-1]] - 2 * CAP60 + 1e-6  # a best match at the window's end is ambiguous
    points, dists = [], []
    samples = [i for i in range(1, runs.last_moving + 1)
               if runs.ch240[i] > STILL and lo - 1e-6 <= runs.t240[i] < hi - 1e-6]
    for i, best_j in zip(samples, _monotone_matches(runs, samples, cand), strict=True):
        t = runs.t240[i]
        if best_j < 0:
            continue
        best_d = runs.distance(i, best_j)
        frozen = (best_j == 0 or runs.ch60[best_j] <= STILL) and \
            (best_j + 1 >= len(runs.f60) or runs.ch60[best_j + 1] <= STILL)
        if runs.t60[best_j] > edge and window is not None:
            break  # the 240 Hz run has left the 60 Hz window: later samples have no true match
        if frozen or runs.t60[best_j] > edge:
            continue
        points.append((t, runs.t60[best_j]))
        dists.append(best_d)
    if len(points) < 5:
        return {"ok": False, "reason": f"only {len(points)} moving 240 Hz samples could be matched "
                "(the screen froze or stopped changing too soon)", "n": len(points)}
    if len({round(tau, 4) for _, tau in points}) < 4:
        return {"ok": False, "reason": "the moving 240 Hz samples all match the same few 60 Hz frames",
                "n": len(points)}
    s, b = theil_sen(points)
    tol = 0.05 + 0.04 * max(abs(s), 1.0)
    inliers = [p for p in points if abs(p[1] - (s * p[0] + b)) <= tol]
    return {"ok": True, "s": s, "b": b, "points": points, "inliers": len(inliers), "n": len(points),
            "mean_match": statistics.fmean(dists), "moving_until": runs.t240[runs.last_moving],
            "window": list(window) if window else None}


def _consistent(fit: dict[str, object]) -> bool:
    return bool(fit.get("ok")) and int(fit["inliers"]) >= 0.6 * int(fit["n"])  # type: ignore[call-overload]


def _in_range(fit: dict[str, object]) -> bool:
    return PASS_RANGE[0] <= float(fit["s"]) <= PASS_RANGE[1]  # type: ignore[arg-type]


def judge_after(runs: Runs, steps: list[InputStep], lead: float, play_from: float) -> dict[str, object]:
    """``judge`` for a game whose play got under way at ``play_from``, after a countdown of ``lead`` s
    measured at 60 Hz. A countdown on the clock lasts as long at 240 Hz: the window from play_from
    holds play at both rates (a game tied to frames there fails). A countdown tied to frames ends four
    times as soon at 240 Hz, where that window is long past play: the windows from the start input
    show it. So both are judged, and a rate dependence either shows is the verdict."""
    full = fit_rate(runs)  # the whole-run fit, the same for both
    from_start, from_play = judge(runs, steps, lead, full=full), judge(runs, steps, lead, play_from, full=full)
    for fit in (from_play, from_start):
        if fit.get("window") and _consistent(fit) and not _in_range(fit):
            return fit
    for fit in (from_start, from_play):
        if _consistent(fit) and not _in_range(fit):
            return fit
    return from_start


def judge(runs: Runs, steps: list[InputStep], lead: float = 0.0, play_from: float = 0.0,
          full: dict[str, object] | None = None) -> dict[str, object]:
    """Decide from the first input-free window with motion (after the first input), and the whole run.

    Inputs at identical virtual times keep a rate-independent game identical in both runs, so
    the whole-run fit finds s ~ 1 for it. A frame-locked game diverges at its first input after
    motion began, so only the first input-free window with motion holds its s ~ 4; that window
    wins when it shows a rate dependence. ``lead``: the 240 Hz run is ``T240 + lead`` long, and
    ``play_from`` (play under way after a countdown) starts a window (see ``LEAD_KEY``); ``full``: the
    whole-run fit, when already made.
    """
    full = fit_rate(runs) if full is None else full
    if full.get("static"):
        return full
    span = T240 + lead
    cuts = sorted({0.0, *(t for t in (*(st.t for st in steps), play_from) if 0 < t < span), span})
    first: dict[str, object] | None = None
    # A start screen can animate by the clock while the game, once started by the first input,
    # moves per frame: the first window with motion after the first input decides; a window
    # before it that already shows a rate dependence is a defect too. ``play_from``: the first window
    # from where play got under way decides (a countdown's digits are no play).
    begin = play_from if 0 < play_from < span else (cuts[1] if len(cuts) > 2 else 0.0)
    for lo, hi in pairwise(cuts):
        changed = sum(1 for i, t in enumerate(runs.t240) if i > 1 and lo + 1e-6 < t < hi - 1e-6
                      and runs.ch240[i] > STILL)  # i > 1: the first paint after load is not motion
        if changed >= 3:
            fit = fit_rate(runs, (lo, hi)) if (lo, hi) != (0.0, span) else full
            if _consistent(fit) and not _in_range(fit):
                return fit
            first = fit
            if lo >= begin - 1e-9:
                break
    if _consistent(full) and _in_range(full):
        return full
    if first is not None and _consistent(first):
        return first
    if _consistent(full):
        return full
    return full if full.get("ok") or first is None else first


def _strips(ctx: ProbeContext, f60: list[Frame], f240: list[Frame], until: float) -> list[Evidence]:
    """Filmstrips of both runs at the same 8 virtual times."""
    by60 = {round(f.t_ms): f for f in f60}
    by240 = {round(f.t_ms): f for f in f240}
    common = sorted(set(by60) & set(by240))
    usable = [t for t in common if t <= until * 1000 + 1] or common
    if not usable:
        return []
    n = min(8, len(usable))
    picks = [usable[round(k * (len(usable) - 1) / max(1, n - 1))] for k in range(n)]
    out = []
    for rate, frames in (("60hz", by60), ("240hz", by240)):
        path, rel = ctx.evidence_path(f"refresh-rate-{rate}.png")
        strip: Image = filmstrip([frames[t].image for t in picks])
        path.write_bytes(encode_png(strip))
        label = f"{rate[:-2]} Hz run at t = " + ", ".join(f"{t / 1000:.2f}" for t in picks) + " s"
        out.append(Evidence(kind="file", label=label, path=rel))
    return out


def duration_60(steps: list[InputStep], lead: float = 0.0) -> float:
    """The 60 Hz run must reach 4x as far as the 240 Hz run's part that can be compared.

    Without input that is the whole 240 Hz run; with input, the whole-run fit only needs s ~ 1
    (T240) and a frame-locked game is judged in its first input-free window with motion (the
    window ends at the second input at the latest). With a ``lead`` (a countdown before play),
    the same from where play got under way.
    """
    times = sorted(st.t - lead for st in steps if lead < st.t < lead + T240)
    if len(times) < 2:
        return lead + T60
    return lead + min(T60, max(T240 + 0.5, 4 * times[1] + 0.3))


async def _run(ctx: ProbeContext, fps: int, steps: list[InputStep], duration: float, every: float) -> \
        tuple[list[Frame], str | None]:
    """One rate's run: its frames, and why it broke (None when it played through).

    A run cut by the harness's real-time step limit is played again with ``REPLAY_LIMIT_S`` per step
    (issue 29): the same frame for frame on the virtual clock, so a page that hangs is cut again and
    one starved by a busy machine gives the frames a quiet machine gives. A task that watches the
    runs itself (an ``Observe``: ball) tells its cuts apart on its own.
    """
    frames, broken, hung = await _run_once(ctx, fps, steps, duration, every, None)
    if hung and not isinstance(ctx.shared.get(OBSERVE_KEY), Observe):
        log.info("refresh-rate run cut by the step limit, played again", fps=fps, broken=(broken or "")[:200])
        frames, broken, _ = await _run_once(ctx, fps, steps, duration, every, REPLAY_LIMIT_S)
    return frames, broken


async def play_rate(ctx: ProbeContext, fps: int, steps: list[InputStep], duration: float,
                    every: float = CAP60) -> tuple[list[Frame], str | None]:
    """One more run of ``steps`` at ``fps`` to ``duration`` (virtual s), captured as the pixel runs are
    (``CAPTURE_WIDTH`` wide, every ``every`` s), replayed when cut as they are: (frames, why it broke)."""
    return await _run(ctx, fps, steps, duration, every)


async def _run_once(ctx: ProbeContext, fps: int, steps: list[InputStep], duration: float, every: float,
                    step_timeout_s: float | None) -> tuple[list[Frame], str | None, bool]:
    session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=fps, capture_width=CAPTURE_WIDTH,
                                     step_timeout_s=step_timeout_s)
    try:
        observe = ctx.shared.get(OBSERVE_KEY)
        if not session.broken:
            try:
                await session.reveal()
                if isinstance(observe, Observe):
                    await observe.start(session)
            except PageBroken:
                pass
        frames = await play(session, steps, duration, every)
        if isinstance(observe, Observe) and not session.broken:
            try:
                await observe.finish(session, fps)
            except PageBroken:
                pass
        return frames, session.broken, session.hung
    finally:
        await session.close()


async def refresh_rate_check(ctx: ProbeContext, steps: list[InputStep], adapt: Adapt | None = None,
                             script: ScriptFn | None = None) -> CheckResult:
    """Run the artefact at 60 and 240 Hz with ``steps`` and decide from pixels (then ``adapt``).

    ``script`` may replace ``steps`` first (the inputs the task's probes found the game needs).
    """
    note = ""
    if script is not None:
        found = await script(ctx)
        if found is not None:
            steps, note = sorted(found[0], key=lambda s: s.t), found[1]
    result = await _pixel_check(ctx, steps)
    if note:
        result.detail = f"{note} {result.detail}"
    if adapt is None:
        return result

    async def rerun(other: list[InputStep]) -> CheckResult:
        return await _pixel_check(ctx, sorted(other, key=lambda s: s.t))

    started = time.monotonic()
    final = await adapt(ctx, steps, result, rerun)
    final.duration_s = (result.duration_s or 0.0) + time.monotonic() - started
    return final


async def _pixel_check(ctx: ProbeContext, steps: list[InputStep]) -> CheckResult:
    started = time.monotonic()
    lead, play_from = ctx.shared.get(LEAD_KEY, (0.0, 0.0))
    (f60, broken60), (f240, broken240) = await asyncio.gather(
        _run(ctx, 60, steps, duration_60(steps, lead), CAP60), _run(ctx, 240, steps, T240 + lead, CAP240))

    def took() -> float:
        return time.monotonic() - started

    broken = broken240 or broken60
    if broken and (len(f240) < 10 or len(f60) < 10):
        return CheckResult(id=CHECK_ID, status="fail", detail=f"the page could not be run: {broken}",
                           duration_s=took())
    if len(f60) < 3 or len(f240) < 3 or (f60[0].width, f60[0].height) != (f240[0].width, f240[0].height):
        return CheckResult(id=CHECK_ID, status="error", detail="the two runs could not be captured alike",
                           duration_s=took())
    runs = Runs(f60, f240)
    ctx.shared[RUNS_KEY] = runs
    fit = judge_after(runs, steps, lead, play_from) if play_from > 0 else judge(runs, steps)
    until = float(fit.get("moving_until", T240 + lead))  # type: ignore[arg-type]
    evidence = _strips(ctx, f60, f240, until)
    data = {k: v for k, v in fit.items() if k in ("s", "b", "n", "inliers", "mean_match", "moving_until", "window")}
    if lead:
        data["lead_s"] = round(lead, 3)  # the runs were played this much longer: play began after a countdown
    if not fit["ok"]:
        status = "skip" if fit.get("static") else "error"
        return CheckResult(id=CHECK_ID, status=status, detail=f"cannot judge: {fit['reason']}",
                           evidence=evidence, data=data, duration_s=took())
    s = float(fit["s"])  # type: ignore[arg-type]
    inliers, n = int(fit["inliers"]), int(fit["n"])  # type: ignore[call-overload]
    evidence.insert(0, Evidence(kind="value", label="speed factor 240 Hz vs 60 Hz", value=round(s, 2)))
    if inliers < 0.6 * n:
        return CheckResult(id=CHECK_ID, status="error", evidence=evidence, data=data, duration_s=took(),
                           detail=f"the two runs could not be matched consistently ({inliers}/{n} samples "
                           f"fit tau = {s:.2f} t); motion may be random or input-driven")
    if PASS_RANGE[0] <= s <= PASS_RANGE[1]:
        return CheckResult(id=CHECK_ID, status="pass", evidence=evidence, data=data, duration_s=took(),
                           detail=f"motion is the same at 60 and 240 Hz (speed factor {s:.2f}, {n} samples)")
    how = f"{s:.1f}x faster" if s > 1 else (f"{1 / s:.1f}x slower" if s > 0.05 else "differently")
    return CheckResult(id=CHECK_ID, status="fail", evidence=evidence, data=data, duration_s=took(),
                       detail=f"at 240 Hz everything moves {how} than at 60 Hz: motion is tied to the "
                       f"frame rate ({n} samples)")
