"""How a game starts, found the way a person finds it: try what a person tries, keep what lasts.

A person opens the page, clicks on the game, then tries Space, Enter, ArrowUp and W (keys reach a
canvas that wants focus once it was clicked, as in a real browser), then an on-screen Start/Play
button. Each try is played from load with the same seed and clock as the run without it; the try
*started* the game when the scene left that run's course for good (title gone, falling begun,
score shown), not when something moved (title screens animate by themselves, identically in both
runs). The first try that lasts wins. Its run, with no further input, is handed on open: it is the
no-input baseline every later comparison (flap, game over) is made against.

A game may make a person wait after the start: a 3-2-1 countdown, a "Ready... Go!", while the bird
hangs still and input does nothing. A person waits until play is under way before flapping. Where
the first second after the start input is nearly still (a countdown's digits change once a second)
and the scene then moves in every capture for a while (the bird falls, the pipes come), play began
there: ``t0`` is that moment and ``waited`` says how long after the input it came. A game in which
nothing moves until the first flap (a ready state) keeps its ``t0``.

One discovery per check run: the flappy probes and refresh-rate share it (``ctx.shared``). A try cut
by the harness's real-time step limit (a busy machine, or a page that hangs) showed nothing about
the game: the whole search is played again with ``REPLAY_LIMIT_S`` per step (on the virtual clock
the same runs), so a starved machine finds the start a quiet one finds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ._page import REPLAY_LIMIT_S
from ._play import Run, Step, close_all, differs, lasting, moving
from ._registry import ProbeContext

__all__ = ["START_AT", "Start", "find_start", "shared_start"]

START_AT = 0.5   # virtual s after load when a person first acts
KEY_AFTER = 0.2  # a key is pressed this long after the click on the game
WATCH = 1.8      # each try is watched until this virtual time
CLICK = "click:0.5,0.5"
KEYS = [("Space", "press:Space"), ("Enter", "press:Enter"), ("ArrowUp", "press:ArrowUp"), ("W", "press:w")]
BUTTON = ("a Start button", r"target:\b(start|play|begin|go)\b")
STILL_S = 1.0        # the first second after the start input nearly still: the game may be counting down
STILL_CHANGES = 3    # ... changing in at most this many captures (a countdown's digits, once a second)
COUNTDOWN_MAX = 5.0  # virtual s after the start input within which play must begin to be waited for
PLAY_RUN = 6         # captures in a row, each unlike the one before: play is under way


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
    waited: float = 0.0             # virtual s from the start input to play under way (a countdown), else 0
    _claimed: bool = field(default=False, repr=False)

    def said(self) -> str:
        """How the game was started, as the details say it ("started with a click, play under way 2.9 s
        later"); '' when no input started anything."""
        if not self.name:
            return ""
        waited = f", play under way {self.waited:.1f} s later" if self.waited else ""
        return f"started with {self.name}{waited}"

    def by(self) -> tuple[str, str] | None:
        """(its name, its action) of the input that started the game, to try again at a game over; None
        when no input started anything."""
        return (self.name, self.steps[-1].action) if self.name else None

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


def _play_from(run: Run, lo: float, hi: float) -> float | None:
    """The first capture time in [lo, hi] from which the picture changes ``PLAY_RUN`` captures in a row."""
    streak = 0
    for i in range(run.index(lo) + 1, run.index(hi) + 1):
        a, b = run.code(i - 1), run.code(i)
        streak = streak + 1 if a is not None and b is not None and differs(a, b) else 0
        if streak >= PLAY_RUN:
            return (i - PLAY_RUN) * run.every
    return None


async def _after_countdown(start: Start) -> Start:
    """``start`` with ``t0`` moved to where play began, when the game made a person wait (module doc)."""
    run, t0 = start.base, start.t0
    if start.name is None or run.closed or moving(run, t0, t0 + STILL_S) > STILL_CHANGES:
        return start  # (at most STILL_CHANGES changes there: no PLAY_RUN of them in a row either)
    await run.to(t0 + COUNTDOWN_MAX)
    began = _play_from(run, t0 + STILL_S, run.now)
    if began is None or run.broken:
        return start  # nothing under way (a ready state waiting for the first flap): as it was
    return replace(start, t0=began, waited=round(began - t0, 2))


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
        return await _after_countdown(Start("a click", click, START_AT + 0.1, tried, clicked, auto))
    for name, action in KEYS:
        steps = [*click, Step(START_AT + KEY_AFTER, action)]
        run, won = await _trial(ctx, steps, clicked, START_AT + KEY_AFTER + 0.1)
        tried.append(name)
        if won:
            return await _after_countdown(Start(name, steps, START_AT + KEY_AFTER + 0.1, tried, run, auto))
    steps = [Step(START_AT, BUTTON[1])]
    run, won = await _trial(ctx, steps, none, START_AT + 0.1)
    if run.inputs and run.inputs[0][2]:
        tried.append(BUTTON[0])
    if won:
        return await _after_countdown(Start(BUTTON[0], steps, START_AT + 0.1, tried, run, auto))
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
