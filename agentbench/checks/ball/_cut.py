"""A ball run cut by the harness's step time limit: the page hangs there, or the machine was busy.

Every step of a run that runs page code has a real-time limit (``PageSession.run_limited``, 5 s):
past it the run ends where it was (``session.hung``). A page that hangs (``while (true) {}`` in
its loop, a click handler that never returns) is cut there; so is a good page on a busy machine,
where a step of a fountain of hundreds of balls can take that long. What the cut run did not
show (the balls to come, their later bounces, an escape) is then no evidence either way.

The two are told apart the way the virtual clock allows: a run is the same frame for frame
every time, so the page is replayed from load with the same input and a far longer limit per
step (``REPLAY_LIMIT_S``) to just past the moment it was cut. A page that hangs is cut again at
that moment (the verdict it always got stands); a page that goes on was cut by the machine's
load, and the checks resting on the run say ``error`` ("could not tell", ``cut_by_limit``).
"""

from __future__ import annotations

import asyncio

from ...errors import CheckError
from ..browser._page import REPLAY_LIMIT_S, PageBroken, PageSession
from ..browser._play import Run, Step
from ..browser._registry import ProbeContext

__all__ = ["REPLAY_LIMIT_S", "cut_by_limit", "unrepeated_break"]

REPLAY_WAIT_S = 90.0   # the longest the replay may take in all (a busy machine): then could not tell
SLACK = 0.6            # virtual s: a step plays at most 30 frames (0.5 s) or one held input (HOLD)
EVERY_S = 5.0          # the replay's pixel captures: few (it is read for where it was cut, not for pixels)


async def _replay(ctx: ProbeContext, steps: list[Step], until: float, fps: int, track: int) -> float | None:
    """Replay from load with ``steps`` (those up to ``until``) to ``until`` (virtual s) under ``REPLAY_LIMIT_S``
    per step.

    The virtual time at which the replay broke (cut again, crashed, left), or None when it played through.
    """
    session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=fps, step_timeout_s=REPLAY_LIMIT_S)
    run = Run(session, EVERY_S)
    run.check_reload()  # the document shown now: a later reload is noted as in any run
    try:
        if not session.broken:
            try:
                await session.reveal()  # as every run: the game scrolled into view, then played
                if track:
                    await session.track_bodies(track)
            except PageBroken:
                pass
        await run.play([s for s in steps if s.t <= until], until)
        return run.now if session.broken else None
    finally:
        await run.close()


async def cut_by_limit(ctx: ProbeContext, session: PageSession, steps: list[Step], what: str, *,
                       fps: int = 60, track: int = 0) -> str | None:
    """Why a run cut by the harness's time limit is no evidence ("could not tell"), else None.

    ``session``: the run's (closed or not), ``steps``: the input it was played with from load,
    ``what``: what the run was for ("the run with no input", "the watch of the balls"), said in
    the detail; ``fps``/``track``: how it was played (its frame rate, its body logging).
    None when the run was not cut by the limit (it ended another way, or did not end), or when a
    replay with the long limit is cut again at the same moment: the page itself hangs there.
    """
    if not session.hung:
        return None
    at = session.now_ms / 1000.0
    cut = session.broken or "cut"
    try:
        again = await asyncio.wait_for(_replay(ctx, steps, at + SLACK, fps, track), REPLAY_WAIT_S)
    except TimeoutError:
        seen = f"a replay with a {REPLAY_LIMIT_S:g} s limit per step did not get there within {REPLAY_WAIT_S:g} s"
    except CheckError as exc:  # the harness could not replay it: no more known than before
        seen = f"a replay to tell a hang from a busy machine could not be run ({exc})"
    else:
        if again is not None and abs(again - at) <= SLACK:
            return None  # broke again where it was: the page hangs there, whatever the limit
        seen = (f"replayed with a {REPLAY_LIMIT_S:g} s limit per step it went past that moment, so the page does "
                "not hang there: the machine was too busy" if again is None else
                f"replayed with a {REPLAY_LIMIT_S:g} s limit per step it broke at {again:.1f} s instead")
    return (f"could not tell: the harness's time limit cut {what} at {at:.1f} s ({cut}); {seen}; what the run "
            "did not show is no evidence")


async def unrepeated_break(ctx: ProbeContext, what: str, said: str, *, fps: int = 60, track: int = 0) -> str | None:
    """Why a run that broke before it was played (at its load, or scrolling the game into view) is no
    evidence ("could not tell"), else None.

    For a run whose session is not at hand (``said``: what its check said of the break). The same
    page replayed from load with the long limit breaks there again when the page does it (None:
    its verdict stands); one that plays on was cut by the harness's limit on a busy machine.
    """
    try:
        again = await asyncio.wait_for(_replay(ctx, [], SLACK, fps, track), REPLAY_WAIT_S)
    except (TimeoutError, CheckError):
        return None  # no more known than the check said
    if again is not None:
        return None
    return (f"could not tell: {what} broke before it was played ({said}); replayed with a {REPLAY_LIMIT_S:g} s "
            "limit per step it loaded and played on, so the page does not break there: the machine was too busy, "
            "and a run that was not played is no evidence")
