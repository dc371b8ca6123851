"""refresh-rate for Flappy Bird, as a person judges it: does the game run faster at 240 Hz?

The pixel comparison (``_refresh``) is played with the start the game probes found (``_start``),
then flaps. When pixels cannot decide (random effects drawn per frame, a screen dominated by
scenery, a game that ends or reloads quickly), or only the start screen's animation differed, the
check times what a person times: with no input after the start, the game ends (a game-over
message, or the page reloading itself) after t60 at 60 Hz and after t240 at 240 Hz. Physics per
frame ends about 4x sooner at 240 Hz; physics per time about as soon.
"""

from __future__ import annotations

import asyncio

from .._model import CheckResult, Evidence
from ..browser._play import Run
from ..browser._refresh import InputStep, Rerun
from ..browser._registry import ProbeContext
from ..browser._start import START_AT, Start, release_start, shared_start
from ._over import HINT_S, over_since

__all__ = ["adapt_refresh", "crash_time", "flappy_script"]

POLL = 0.05           # virtual s between looks for the game-over message
PASS_RATIO = (0.75, 1.35)
FAIL_RATIO = 1.8      # ending this many times sooner (or later) is plain to see
PROBES_KEY = "flappy-probes"


async def _start(ctx: ProbeContext) -> Start | None:
    start = await shared_start(ctx)
    if start is not None and PROBES_KEY not in ctx.shared:
        await release_start(start)  # no game probes in this run to continue its base run
    return start


async def flappy_script(ctx: ProbeContext) -> tuple[list[InputStep], str] | None:
    """The start found by the game probes, then a flap every 0.45 s."""
    start = await _start(ctx)
    if start is None:
        return None
    first = start.t0 + 0.5
    taps = [InputStep(first + 0.45 * k, "press:Space") for k in range(40)]
    pre = [InputStep(s.t, s.action) for s in start.steps]
    return pre + taps, f"(started with {start.name})" if start.name else "(the game runs without a start input)"


async def crash_time(ctx: ProbeContext, fps: int, start: Start, limit: float) -> float | None:
    """Virtual s from the start to the game's end (message or reload), no other input; None if none."""
    run = await Run.open(ctx, fps=fps, every=1.0)  # captures are not needed: texts and reloads are read
    try:
        await run.play(start.steps, start.t0)
        dom_before = run.dom_first if run.dom_first is not None else await run.session.dom_text()
        while run.now < start.t0 + limit and not run.broken:
            await run.advance(POLL)
            if run.reloads:
                return run.reloads[0] - start.t0
            at = await over_since(run, start.t0, dom_before, hint_until=start.t0 + HINT_S)
            if run.reloads:
                return run.reloads[0] - start.t0
            if at is not None:
                return at - start.t0
        return None
    finally:
        await run.close()


async def adapt_refresh(ctx: ProbeContext, steps: list[InputStep], result: CheckResult, rerun: Rerun) -> CheckResult:
    """Fall back on the time the game takes to end when pixels cannot tell."""
    start = await _start(ctx)
    if start is None:
        return result
    window = result.data.get("window")
    # A rate dependence seen only before the start input is the start screen's animation (random
    # twinkles or shake drawn per frame look alike at any rate): the game itself decides.
    before_start = result.status == "fail" and isinstance(window, list) and window[1] <= start.t0 + 1e-6
    if result.status in ("pass", "fail", "skip") and not before_start:
        return result
    limit = 10.0
    t60, t240 = await asyncio.gather(crash_time(ctx, 60, start, limit), crash_time(ctx, 240, start, limit))
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
        return CheckResult(id=result.id, status="pass", detail=f"{seen}: the game runs at the same speed{note}",
                           evidence=evidence, data=data)
    if ratio >= FAIL_RATIO or ratio <= 1 / FAIL_RATIO:
        how_much = f"{ratio:.1f}x sooner" if ratio > 1 else f"{1 / ratio:.1f}x later"
        return CheckResult(id=result.id, status="fail", evidence=evidence, data=data,
                           detail=f"{seen}: at 240 Hz the game ends {how_much}, motion is tied to the frame rate")
    result.detail += f"; {seen} (ratio {ratio:.2f}: not clear either way)"
    result.data = data
    return result


assert START_AT > 0
