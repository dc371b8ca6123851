"""refresh-rate for Flappy Bird, as a person judges it: does the bird fall faster at 240 Hz?

The pixel comparison (``_refresh``) is played with Space as the start input. When the game
probes found that another input starts the game (a click, Enter, a Start button), the
comparison is played again with that input. When pixels cannot decide (random effects drawn per
frame, a screen dominated by scenery), or only the start screen's animation differed, the check
times what a person times: with no input after the start, the bird crashes after t60 at 60 Hz
and after t240 at 240 Hz. Physics per frame crashes about 4x sooner at 240 Hz; physics per time
about as soon.
"""

from __future__ import annotations

import asyncio

from .._model import CheckResult, Evidence
from ._flappy import FLAP_SCRIPT, GAME_OVER_RE, START_AT, Watch
from ._page import PageBroken
from ._refresh import REFRESH_ADAPT, InputStep, Rerun, act
from ._registry import ProbeContext

__all__ = ["adapt_refresh", "crash_time"]

WAIT_START_S = 120.0  # the game probes hand the start over within their own limits
POLL = 0.05           # virtual s between looks for the game-over message
PASS_RATIO = (0.75, 1.35)
FAIL_RATIO = 1.8      # crashing this many times sooner (or later) is plain to see


async def crash_time(ctx: ProbeContext, fps: int, action: str, limit: float) -> float | None:
    """Virtual s from the start input to the game-over message, no other input; None if none shows."""
    session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=fps)
    try:
        if session.broken:
            return None
        await session.advance(START_AT)
        watch = Watch(session)
        watch.dom_before = await session.dom_text()
        watch.ambient = {text for text, *_ in await session.texts()}
        if not await act(session, action):
            return None
        while session.now_ms / 1000 < START_AT + limit and not session.broken:
            await session.advance(POLL)
            for text, first, _last, _n in await session.texts():
                if text not in watch.ambient and first / 1000 > START_AT and _is_over(text):
                    return first / 1000 - START_AT  # the frame it was first drawn
            at = await watch.over_since(START_AT)
            if at is not None:
                return at - START_AT
        return None
    except PageBroken:
        return None
    finally:
        await session.close()


def _is_over(text: str) -> bool:
    return bool(GAME_OVER_RE.search(text))


async def adapt_refresh(ctx: ProbeContext, steps: list[InputStep], result: CheckResult, rerun: Rerun) -> CheckResult:
    """Replay with the game's own start input, then fall back on crash times if pixels cannot tell."""
    try:
        how = await asyncio.wait_for(asyncio.shield(ctx.shared_future("flappy-start")), WAIT_START_S)
    except TimeoutError:
        return result
    if not isinstance(how, dict):
        return result
    name, action = str(how["name"]), str(how["action"])
    if action != steps[0].action:
        result = await rerun([InputStep(START_AT, action), *steps[1:]])
        result.detail = f"(started with {name}) {result.detail}"
    window = result.data.get("window")
    # A rate dependence seen only before the start input is the start screen's animation (random
    # twinkles or shake drawn per frame look alike at any rate): the game itself decides.
    before_start = result.status == "fail" and isinstance(window, list) and window[1] <= START_AT + 1e-6
    if (result.status in ("pass", "fail") and not before_start) or how.get("over_after_s") is None:
        return result
    limit = min(10.0, 1.5 * float(how["over_after_s"]) + 1.0)
    t60, t240 = await asyncio.gather(crash_time(ctx, 60, action, limit), crash_time(ctx, 240, action, limit))
    data = {**result.data, "crash_60hz_s": t60, "crash_240hz_s": t240}
    if not t60 or not t240:
        result.detail += "; timing the crash without input did not work at both rates either"
        result.data = data
        return result
    ratio = t60 / t240
    data["crash_ratio"] = round(ratio, 2)
    evidence = [Evidence(kind="value", label="seconds to crash without input at 60 / 240 Hz",
                         value=[round(t60, 2), round(t240, 2)]), *result.evidence]
    seen = f"without input after {name} the bird crashes after {t60:.2f} s at 60 Hz and {t240:.2f} s at 240 Hz"
    if PASS_RATIO[0] <= ratio <= PASS_RATIO[1]:
        note = " (only the start screen's animation differed)" if before_start else ""
        return CheckResult(id=result.id, status="pass", detail=f"{seen}: the game runs at the same speed{note}",
                           evidence=evidence, data=data)
    if ratio >= FAIL_RATIO or ratio <= 1 / FAIL_RATIO:
        how_much = f"{ratio:.1f}x faster" if ratio > 1 else f"{1 / ratio:.1f}x slower"
        return CheckResult(id=result.id, status="fail", evidence=evidence, data=data,
                           detail=f"{seen}: at 240 Hz the game runs {how_much}, motion is tied to the frame rate")
    result.detail += f"; {seen} (ratio {ratio:.2f}: not clear either way)"
    result.data = data
    return result


assert FLAP_SCRIPT[0].action == "press:Space"  # adapt_refresh replaces this first step
REFRESH_ADAPT["flappy"] = adapt_refresh
