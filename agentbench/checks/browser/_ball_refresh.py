"""refresh-rate for bouncing balls: played with the input that makes the balls come (``find_spawn``).

When pixels cannot decide (balls spawned per frame while the button is held come in different
numbers at each rate, random colours per frame), the check compares what a person sees: how fast
the balls move. Both rates play the same input with the bodies logged; the balls' mean speed in
px per virtual second is about the same when motion follows time, and about 4x at 240 Hz when it
follows frames.
"""

from __future__ import annotations

import asyncio
import statistics

from .._model import CheckResult, Evidence
from ._ball import EVERY, Spawn, shared_spawn
from ._bodies import balls, follow, speeds
from ._play import Run
from ._refresh import REFRESH_ADAPT, REFRESH_SCRIPT, InputStep, Rerun
from ._registry import ProbeContext

__all__ = ["ball_script", "speed_ratio"]

PASS_RATIO = (0.75, 1.35)
FAIL_RATIO = 1.8
SPAN = 2.0  # virtual s of motion compared, from the end of the input


async def ball_script(ctx: ProbeContext) -> tuple[list[InputStep], str] | None:
    spawn = await shared_spawn(ctx)
    if spawn is None or spawn.name is None:
        return None
    return [InputStep(s.t, s.action) for s in spawn.steps], f"(after {spawn.name})"


async def _speed(ctx: ProbeContext, fps: int, spawn: Spawn) -> float | None:
    run = await Run.open(ctx, fps=fps, every=1.0)
    try:
        await run.session.track_bodies(EVERY)  # as many frames apart at both rates: tracks hold at 4x speed
        await run.play(spawn.steps, spawn.t0 + SPAN)
        if run.broken:
            return None
        log, _ = await run.session.bodies()
    finally:
        await run.close()
    size = next((s for _, _, s in reversed(log) if s), None) or (800, 600)
    got = speeds(balls(follow([(t, b) for t, b, _ in log], size)), spawn.t0 * 1000 - 100, (spawn.t0 + SPAN) * 1000)
    return statistics.median(got) if got else None


async def speed_ratio(ctx: ProbeContext, spawn: Spawn) -> tuple[float | None, float | None]:
    """The balls' median speed (px per virtual s) at 60 and at 240 Hz."""
    v60, v240 = await asyncio.gather(_speed(ctx, 60, spawn), _speed(ctx, 240, spawn))
    return v60, v240


async def adapt_refresh(ctx: ProbeContext, steps: list[InputStep], result: CheckResult, rerun: Rerun) -> CheckResult:
    """When pixels could not decide, or the balls come from input, compare how fast the balls move.

    Balls spawned while a button is held come in different numbers (and random looks) at each
    rate, so the pixel match is not to be trusted there: their speed decides when it is clear.
    """
    spawn = await shared_spawn(ctx)
    if spawn is None or (result.status in ("pass", "fail", "skip") and spawn.name is None):
        return result
    v60, v240 = await speed_ratio(ctx, spawn)
    data = {**result.data, "speed_60hz": v60, "speed_240hz": v240}
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


REFRESH_ADAPT["ball"] = adapt_refresh
REFRESH_SCRIPT["ball"] = ball_script
