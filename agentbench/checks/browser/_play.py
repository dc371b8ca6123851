"""Differential play: the same virtual-time script with and without an input, read by their difference.

Every game session runs on the virtual clock with the same seed, so two runs of the same script
are identical frame for frame; a run with one more input differs from its twin exactly where the
input had an effect. A :class:`Run` is one session played on a fixed capture grid (virtual time 0,
``CAP`` apart) so that two runs are compared at the same instants. Inputs are a person's: a key
or the mouse button is held for ``HOLD`` s (games that thrust while a key is down, or spawn balls
while the button is pressed, see a real press), clicks land on the game where it is on screen.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ._frames import Frame
from ._imaging import thermo
from ._page import PageBroken, PageSession
from ._registry import ProbeContext

__all__ = ["CAP", "HOLD", "Run", "Step", "differs", "perform"]

CAP = 0.05    # capture grid (virtual s)
HOLD = 0.1    # how long a person's key press or click lasts (virtual s)
DIFF_BITS = 6  # thermometer-code bits two captures must differ by to count as different


@dataclass(frozen=True)
class Step:
    """One input at virtual time ``t`` (s since load); see :func:`perform` for ``action``."""

    t: float
    action: str


def _hold_of(arg: str, default: float) -> tuple[str, float]:
    if "@" in arg:
        arg, _, secs = arg.rpartition("@")
        return arg, float(secs)
    return arg, default


async def perform(session: PageSession, action: str, advance: object = None) -> bool:
    """Do one input as a person does it; False when its target is not on the page.

    ``press:<Key>[@s]`` holds the key ``s`` s (default HOLD); ``click:<fx>,<fy>[@s]`` presses the
    mouse button on the game (fractions of the largest canvas, else of the viewport) for ``s`` s;
    ``target:<regex>`` clicks the visible control whose text matches (a Start or Play again
    button, also one drawn on a canvas). ``advance(seconds)`` plays the clock while the key or
    button is down (a Run passes its own, so captures stay on the grid).
    """
    kind, _, arg = action.partition(":")

    async def hold(secs: float) -> None:
        if secs <= 0:
            return
        if advance is None:
            await session.advance(secs)
        else:
            await advance(secs)  # type: ignore[operator]

    if kind == "press":
        key, secs = _hold_of(arg, HOLD)
        await session.key_down(key)
        try:
            await hold(secs)
        finally:
            if not session.broken:
                await session.key_up(key)
        return True
    if kind == "click":
        where, secs = _hold_of(arg, HOLD)
        fx, fy = (float(v) for v in where.split(","))
        (left, top, w, h), _ = await session.main_rect()
        x, y = left + fx * w, top + fy * h
    elif kind == "target":
        secs = HOLD
        found = await session.find_target(arg)
        if found is None:
            return False
        x, y = found[0], found[1]
    else:
        raise ValueError(f"unknown input action {action!r}")
    await session.mouse_down(x, y)
    try:
        await hold(secs)
    finally:
        if not session.broken:
            await session.mouse_up()
    return True


def differs(a: int, b: int) -> bool:
    """Whether two captures' thermometer codes differ by more than rounding noise."""
    return (a ^ b).bit_count() >= DIFF_BITS


@dataclass
class Run:
    """One session played on the capture grid; frames and their codes kept by grid index."""

    session: PageSession
    every: float = CAP
    frames: dict[int, Frame] = field(default_factory=dict)
    codes: dict[int, int] = field(default_factory=dict)
    inputs: list[tuple[float, str, bool]] = field(default_factory=list)  # (t, action, had a target)
    reloads: list[float] = field(default_factory=list)  # virtual times the page navigated (reloaded)
    dom_first: str | None = None  # the page's visible text just before the first input
    closed: bool = False
    _seen: tuple[int, str | None] | None = None

    @classmethod
    async def open(cls, ctx: ProbeContext, *, fps: int = 60, every: float = CAP, capture_width: int = 160,
                   step_timeout_s: float | None = None) -> Run:
        limit = ctx.step_timeout_s if step_timeout_s is None else step_timeout_s
        session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=fps, capture_width=capture_width,
                                         step_timeout_s=limit)
        run = cls(session, every)
        run._seen = (session.navigations, session.document)
        if not session.broken:
            try:
                await session.reveal()
                run._keep([await session.capture()])
            except PageBroken:
                pass
        return run

    @property
    def now(self) -> float:
        return self.session.now_ms / 1000.0

    @property
    def broken(self) -> str | None:
        return self.session.broken

    def index(self, t: float) -> int:
        return round(t / self.every)

    def _keep(self, frames: list[Frame]) -> None:
        for f in frames:
            i = round(f.t_ms / 1000.0 / self.every)
            self.frames[i] = f
            self.codes[i] = thermo(f.image)

    async def advance(self, seconds: float) -> None:
        """Play ``seconds`` on, capturing on the grid; a reload of the page is noted, not fatal."""
        if seconds <= 1e-9 or self.broken:
            return
        self._keep(await self.session.advance(seconds, capture_every=self.every, capture_origin=0.0))
        self.check_reload()

    def check_reload(self) -> None:
        """Note a reload (a new document) seen since the last look, whichever call ran into it."""
        seen = (self.session.navigations, self.session.document)
        if self._seen is not None and seen != self._seen:
            self.reloads.append(self.now)
        self._seen = seen

    async def to(self, t: float) -> None:
        """Play on until virtual time ``t``."""
        await self.advance(t - self.now)

    async def do(self, action: str) -> bool:
        """Perform one input now (held keys and buttons play the clock on the grid meanwhile)."""
        t = self.now
        try:
            if self.dom_first is None:
                self.dom_first = await self.session.dom_text()
            ok = await perform(self.session, action, self.advance)
        except PageBroken:
            ok = True
        self.inputs.append((t, action, ok))
        return ok

    async def play(self, steps: list[Step], until: float) -> None:
        """Perform ``steps`` at their times (those not yet passed) and play on to ``until``."""
        for step in sorted(steps, key=lambda s: s.t):
            if step.t < self.now - 1e-9:
                continue
            await self.to(step.t)
            if self.broken:
                return
            await self.do(step.action)
        await self.to(until)

    def code(self, i: int) -> int | None:
        return self.codes.get(i)

    def last_index(self) -> int:
        return max(self.frames) if self.frames else -1

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.session.close()


def diverged(a: Run, b: Run, lo: float, hi: float) -> list[tuple[int, bool]]:
    """(grid index, differ) for every capture both runs have in [lo, hi] (virtual s)."""
    out = []
    for i in range(a.index(lo), a.index(hi) + 1):
        ca, cb = a.code(i), b.code(i)
        if ca is not None and cb is not None:
            out.append((i, differs(ca, cb)))
    return out


def lasting(a: Run, b: Run, after: float, until: float) -> bool:
    """The runs differ from ``after`` + 0.3 s on, to the end: the scene left the other course for good."""
    marks = diverged(a, b, after + 0.3, until)
    if len(marks) < 4:
        return False
    share = sum(d for _, d in marks) / len(marks)
    return share >= 0.8 and all(d for _, d in marks[-3:])


def moving(run: Run, lo: float, hi: float) -> int:
    """How many captures in [lo, hi] differ from the capture before them."""
    n = 0
    for i in range(run.index(lo) + 1, run.index(hi) + 1):
        a, b = run.code(i - 1), run.code(i)
        if a is not None and b is not None and differs(a, b):
            n += 1
    return n


async def close_all(*runs: Run | None) -> None:
    await asyncio.gather(*(r.close() for r in runs if r is not None), return_exceptions=True)
