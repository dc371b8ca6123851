"""How a game starts, found the way a person finds it: try what a person tries, keep what lasts.

A person opens the page, clicks on the game, then tries Space, Enter, ArrowUp and W (keys reach a
canvas that wants focus once it was clicked, as in a real browser), then an on-screen Start/Play
button. Each try is played from load with the same seed and clock as the run without it; the try
*started* the game when the scene left that run's course for good (title gone, falling begun,
score shown), not when something moved (title screens animate by themselves, identically in both
runs). The first try that lasts wins. Its run, with no further input, is handed on open: it is the
no-input baseline every later comparison (flap, game over) is made against.

One discovery per check run: the flappy probes and refresh-rate share it (``ctx.shared``). A try cut
by the harness's real-time step limit (a busy machine, or a page that hangs) showed nothing about
the game: the whole search is played again with ``REPLAY_LIMIT_S`` per step (on the virtual clock
the same runs), so a starved machine finds the start a quiet one finds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ._page import REPLAY_LIMIT_S
from ._play import Run, Step, close_all, lasting, moving
from ._registry import ProbeContext

__all__ = ["START_AT", "Start", "find_start", "shared_start"]

START_AT = 0.5   # virtual s after load when a person first acts
KEY_AFTER = 0.2  # a key is pressed this long after the click on the game
WATCH = 1.8      # each try is watched until this virtual time
CLICK = "click:0.5,0.5"
KEYS = [("Space", "press:Space"), ("Enter", "press:Enter"), ("ArrowUp", "press:ArrowUp"), ("W", "press:w")]
BUTTON = ("a Start button", r"target:\b(start|play|begin|go)\b")


@dataclass
class Start:
    """What started the game (``name`` None: no input changed its course) and how to replay it."""

    name: str | None
    steps: list[Step]
    t0: float                       # virtual s when the start input was over
    tried: list[str]
    base: Run                       # the run with the start and no further input (from load)
    auto_moving: bool               # the scene moved with no input at all (a game that runs at once)
    replayed: bool = False          # found by the search played again after a try was cut (see above)
    _claimed: bool = field(default=False, repr=False)

    def claim(self) -> Run | None:
        """The base run, still open, to the first caller (it continues and closes it); then None.

        A base run found closed (no input started the game: the no-input run was closed after
        its trial) is replayed by the caller with :meth:`replay`.
        """
        if self._claimed or self.base.closed:
            return None
        self._claimed = True
        return self.base

    async def replay(self, ctx: ProbeContext, extra: list[Step], until: float, *, fps: int = 60,
                     capture_width: int = 160) -> Run:
        """A fresh run of the start followed by ``extra`` inputs, played to ``until``."""
        run = await Run.open(ctx, fps=fps, capture_width=capture_width)
        await run.play([*self.steps, *extra], until)
        return run


class _Cut(Exception):
    """A try was cut by the real-time step limit: the search has no answer from it."""


async def _trial(ctx: ProbeContext, steps: list[Step], against: Run | None, after: float, *,
                 run: Run | None = None) -> tuple[Run, bool]:
    """Play ``steps``; (the run, it lasts against ``against``). Only a lasting run is left open.

    One trial at a time, each closed before the next opens: a check run holding one session
    while it waits for another could wait forever when few may be open at once. ``run``: a run
    from load already under way (the load check's, no input yet) to continue instead of a new one.
    """
    run = run or await Run.open(ctx)
    try:
        await run.play(steps, WATCH)
    except BaseException:
        await run.close()
        raise
    # A page that reloads itself after the input (a crash that restarts the page) left the course too.
    changed = lasting(run, against, after, WATCH) or (bool(run.reloads) and not against.reloads) \
        if against is not None else False
    won = against is not None and bool(run.inputs) and run.inputs[-1][2] and changed
    if not won:
        await run.close()
        if run.session.hung and ctx.step_timeout_s is None:
            raise _Cut(run.broken)
    return run, won


async def find_start(ctx: ProbeContext) -> Start:
    """Try each start input against the run without it; see the module docstring.

    A try cut by the usual step limit plays the search again with ``REPLAY_LIMIT_S`` per step; a
    page that hangs there too is judged as it hangs (its tries end where it hung).
    """
    try:
        return await _search(ctx)
    except _Cut:  # every try is closed by then: only a won one stays open, and it ends the search
        pass
    start = await _search(replace(ctx, step_timeout_s=REPLAY_LIMIT_S))
    start.replayed = True
    return start


async def _search(ctx: ProbeContext) -> Start:
    tried: list[str] = []
    loaded = await ctx.take_load_run()  # the load check's first second: the same frames as a fresh run
    none, _ = await _trial(ctx, [], None, 0.0, run=loaded if isinstance(loaded, Run) else None)
    if none.broken and len(none.frames) < 3:
        raise RuntimeError(f"the page broke: {none.broken}")
    auto = moving(none, 0.2, START_AT) >= 2 or moving(none, START_AT, WATCH) >= 4
    click = [Step(START_AT, CLICK)]
    clicked, won = await _trial(ctx, click, none, START_AT + 0.1)
    tried.append("a click")
    if won:
        return Start("a click", click, START_AT + 0.1, tried, clicked, auto)
    for name, action in KEYS:
        steps = [*click, Step(START_AT + KEY_AFTER, action)]
        run, won = await _trial(ctx, steps, clicked, START_AT + KEY_AFTER + 0.1)
        tried.append(name)
        if won:
            return Start(name, steps, START_AT + KEY_AFTER + 0.1, tried, run, auto)
    steps = [Step(START_AT, BUTTON[1])]
    run, won = await _trial(ctx, steps, none, START_AT + 0.1)
    if run.inputs and run.inputs[0][2]:
        tried.append(BUTTON[0])
    if won:
        return Start(BUTTON[0], steps, START_AT + 0.1, tried, run, auto)
    return Start(None, [], START_AT, tried, none, auto)


async def shared_start(ctx: ProbeContext, key: str = "game-start") -> Start | None:
    """The check run's one start discovery: the first caller runs it, the others wait for it.

    None when it failed (the page broke); a caller that does not claim the base run must not
    close it (the owner, the task's probes, does).
    """
    got = await ctx.discover(key, lambda: find_start(ctx))
    return got if isinstance(got, Start) else None


async def release_start(start: Start | None) -> None:
    """Close the start's base run if nobody claimed it (call once the checks are done)."""
    if start is not None:
        await close_all(start.base)
