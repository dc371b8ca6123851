"""Flappy `score`, played: a run that flies the bird through the pipes' gaps, as a person does to see the score count.

A person who wants to know whether the score counts plays well for a few pipes and watches it.
This run does the same with real input (the flap the other probes found) and pixels only, on what
``_top`` learnt of the game: the bird (the flap run's difference from the no-input run) and the
empty scene (the no-input runs' captures, mode per pixel) in a band of columns from just behind
the bird to well ahead of it. A pipe is, in a column, what differs from the empty scene from the
top of the play area down without a break (its top body) and from the bottom up (its bottom body,
or a ground drawn over it); its gap lies between. The nearest pipe ahead gives the gap; the bird is
flapped as it sinks to a line low in the gap, chosen so that a flap's lift (measured after each
flap) keeps it under the gap's upper edge. A pipe *passed* the bird when a top body that covered
the bird's columns has left them and the bird, flapped after, still rose: it flew on.

Where the bird cannot be told from the scene, or the scene itself moves in the band, no run is
played (``PassRun.why`` says so) and ``score`` reads only what the other runs showed. The run stops
as soon as it has its answer: a readable score that counted the pipes one by one for ``COUNTED``
pipes (``score_run``; a person who saw "1", "2" come as the first two pipes passed has seen it count).
"""

from __future__ import annotations

import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .._model import CheckResult
from ..browser._page import PageBroken
from ..browser._play import CAP, Run, differs
from ..browser._registry import ProbeContext
from ..browser._start import Start
from ._over import restart, watch_over
from ._score import NUMBER, readings
from ._score_counts import Pass, Place, Played, judge, places
from ._top import STABLE_SHARE, TOP, Bird, Learnt, _bird_box, _depths, _marks, _scene, _Side

__all__ = ["PASSES", "PassRun", "pass_run", "score_run"]

PASSES = 3          # pipes the run wants to see the bird pass
WATCH = 15.0        # s after the start, at most
LOOK = 2 * CAP      # the bird and the pipes are looked at this often (virtual s)
AHEAD = 0.45        # the band reaches this share of the game's width ahead of the bird
TAP_GAP = 0.2       # s between two taps at least
MARGIN = 0.7        # bird heights over the gap's lower edge where a person flaps ...
SOON = 1.5          # ... before the bird gets there, at its speed, this many captures on
ANSWER_S = 0.6      # a tap after a pipe left the bird, answered by a rise within this long: it flew on
GIVE_UP = 1.5       # s after a pipe left the bird without the bird seen flying on: it died there
LOST_S = 1.5        # the bird unseen this long: the run ends (it died, fell or left the screen)
STOPPED_S = 0.6     # nothing on the screen changed this long: the game ended
AFTER_LAST = 2.4    # s played on after the last pass wanted (its count may come late, and must then stay)
NO_PIPE_S = 6.0     # s without a pipe seen ahead of the bird: the run ends
FIRST_TAP = 0.2     # s after the start a person flaps once, whatever the bird does (a game may wait for it)
DOM_EVERY = 0.2     # s between two reads of the page's text (a score in the page's HTML)
COUNTED = 2         # pipes a readable score counted one by one: the run has its answer and stops


Answered = Callable[["PassRun"], Awaitable[str]]


@dataclass
class PassRun:
    """What the run saw. ``passes`` in order; play went on (the bird seen flying) until ``alive_until``."""

    passes: list[Pass] = field(default_factory=list)
    began: float = 0.0
    alive_until: float = 0.0
    lines: list[tuple[float, str]] = field(default_factory=list)  # (time, the page's text then)
    taps: int = 0
    why: str = ""


def _gap(depth: list[int], rise: list[int], height: int, lo: int, bird: Bird) -> tuple[float, float] | None:
    """(top, bottom) rows of the gap of the nearest pipe at or after band column ``lo``, if one is seen.

    ``depth``: each column's top body depth; ``rise``: each column's bottom body height (from the
    bottom of the game up)."""
    run: list[int] = []
    for x in range(lo, len(depth)):
        top, bottom = depth[x], height - rise[x]
        if 3 <= depth[x] and bottom - top >= 1.2 * bird.height and rise[x] > 0:
            run.append(x)
        elif run:
            break
    if len(run) < 2:
        return None
    return statistics.median(depth[x] for x in run), statistics.median(height - rise[x] for x in run)


async def pass_run(run: Run, t0: float, action: str, learnt: Learnt, *, until: float | None = None,
                   read_dom: bool = True, answered: Answered | None = None) -> PassRun:
    """Fly ``run`` (at the start, no input since) through the gaps from now on; see the module docstring.

    ``answered``: asked after each read of the page's text once two pipes were passed; a reason it
    returns ends the run (``PassRun.why``), play having shown what it was played for."""
    out = PassRun(began=run.now, alive_until=run.now)
    bird, empty = learnt.bird, learnt.empty
    if bird is None:
        out.why = "the bird could not be told from the scene"
        return out
    if not empty:
        out.why = "no captures of play to learn the empty scene from"
        return out
    w = empty[0].width
    bw = bird.x1 - bird.x0 + 1
    cols = max(0, bird.x0 - max(4, bw)), min(w, bird.x1 + max(4 * bw, round(AHEAD * w)) + 1)
    if cols not in learnt.scenes:
        learnt.scenes[cols] = _scene(empty, *cols)
    sc = learnt.scenes[cols]
    if sc is None:
        out.why = "too few captures of play to learn the empty scene from"
        return out
    if sc.stable(TOP) < STABLE_SHARE:
        out.why = "the scene moves by itself around the bird"
        return out
    from_bottom = _Side(floor=sc.height - 1, tol=sc.height)  # bodies read from the bottom up, any ground skipped
    b0, b1 = bird.x0 - sc.x0, bird.x1 - sc.x0  # the bird's columns in the band
    until = t0 + WATCH if until is None else until
    last_tap, last_seen, last_change = -1.0, run.now, run.now
    rows: list[tuple[float, float]] = []
    prev: int | None = None
    covered_since: float | None = None
    pending: list[Pass] = []  # pipes that left the bird's columns, the bird not yet seen flying on after
    open_tap: float | None = None  # a tap not yet answered by a rise
    gap: tuple[float, float] | None = None
    tops: list[tuple[float, int]] = []  # (t, the bird's top row)
    rises: list[float] = []  # how high each flap lifted the bird (px)
    tap_top = 0
    last_dom = -1.0
    step = LOOK
    while run.now < until - 1e-9 and not run.broken:
        await run.advance(step)
        step = LOOK
        i = run.last_index()
        frame = run.frames.get(i)
        if frame is None or (frame.width, frame.height) != (sc.width, sc.height):
            out.why = "the game's picture changed size"
            break
        code = run.code(i)
        if prev is not None and code is not None and differs(prev, code):
            last_change = run.now
        prev = code
        if run.now - last_change >= STOPPED_S:
            out.why = "the screen stopped (the game ended)"
            break
        if read_dom and run.now - last_dom >= DOM_EVERY - 1e-9:
            last_dom = run.now
            out.lines.append((run.now, await run.session.dom_text()))
            if answered is not None and len(out.passes) >= 2 and (enough := await answered(out)):
                out.why = enough
                break
        foreign, birdy = _marks(sc, bird, frame.image)  # one look, read from the top and from the bottom
        box = _bird_box(sc, bird, birdy)[0]
        depth, rise = _depths(sc, foreign, TOP), _depths(sc, foreign, from_bottom)
        covered = sum(1 for x in range(max(0, b0), min(len(depth), b1 + 1)) if depth[x] >= 3) >= 2 and \
            (box is None or box[1] > 2)
        if covered and covered_since is None:
            covered_since = run.now
        elif not covered and covered_since is not None:
            pending.append(Pass(covered_since, run.now))  # passed, once the bird is seen flying on
            covered_since = None
        ahead = _gap(depth, rise, sc.height, b1 + 2 if box is None else max(b1, box[2]) + 2, bird)
        over = _gap(depth, rise, sc.height, max(0, b0), bird) if covered else None
        gap = over or ahead or gap
        if box is None:
            if run.now - last_seen >= LOST_S:
                out.why = "the bird was no longer seen (it died, fell or left the screen)"
                break
            continue
        last_seen = run.now
        centre = (box[1] + box[3]) / 2
        rows.append((run.now, centre))
        if open_tap is not None:
            if any(r <= _row_at(rows, open_tap) - 2 for t, r in rows if open_tap < t <= open_tap + ANSWER_S + 1e-9):
                out.alive_until = run.now  # the bird rose when flapped: it flies
                out.passes += [p for p in pending if p.leave <= open_tap + 1e-9]
                pending = [p for p in pending if p.leave > open_tap + 1e-9]
                open_tap = None
            elif run.now > open_tap + ANSWER_S + 1e-9:
                open_tap = None
        if pending and run.now - pending[0].leave >= GIVE_UP:
            out.why = "the bird did not fly on after a pipe (it died there)"
            break
        if len(out.passes) >= PASSES and run.now >= out.passes[PASSES - 1].leave + AFTER_LAST:
            break
        if gap is None and run.now - out.began >= NO_PIPE_S:
            out.why = f"no pipe came to the bird in {NO_PIPE_S:.0f} s"
            break
        tops.append((run.now, box[1]))
        if last_tap > 0 and run.now - last_tap <= ANSWER_S + 1e-9:  # how high a flap lifts the bird
            lifted = tap_top - min(top for t, top in tops if t > last_tap)
            rises[-1] = max(rises[-1], lifted)
        falling = len(rows) < 2 or rows[-1][1] >= rows[-2][1]
        # Where its bottom will be by the time a flap takes, falling faster and faster: a person flaps
        # early, low enough in the gap that the flap's lift keeps the bird under the gap's upper edge.
        speed = max(0.0, (rows[-1][1] - rows[-2][1]) / (rows[-1][0] - rows[-2][0])) if len(rows) >= 2 else 0.0
        floor = gap[1] if gap is not None else 0.6 * sc.height
        line = floor - max(3.0, MARGIN * bird.height)
        if gap is not None:
            lift = statistics.median(rises[-3:]) if any(rises) else 2.0 * bird.height
            line = min(floor - 2.0, max(line, (gap[0] + floor + bird.height + lift) / 2))
        first = out.taps == 0 and run.now >= out.began + FIRST_TAP - 1e-9  # a game waiting for it starts
        if box[3] + speed * (LOOK + CAP) > line:
            step = CAP  # near the line: looked at every capture
        if (first or box[3] + speed * SOON * CAP > line and falling) and run.now - last_tap >= TAP_GAP - 1e-9:
            last_tap, tap_top = run.now, box[1]
            rises.append(0.0)
            out.taps += 1
            if open_tap is None:
                open_tap = run.now
            await run.do(action)
    if not out.passes and not out.why:
        out.why = f"no pipe was passed in {run.now - out.began:.1f} s of play"
    return out


def _row_at(rows: list[tuple[float, float]], t: float) -> float:
    """The bird's row last seen at or before ``t``."""
    return next((r for tt, r in reversed(rows) if tt <= t + 1e-9), rows[0][1])


SETTLED = 0.5  # s after the start before changes are read (a start screen's hint goes)


AGAIN_WATCH = 6.0  # s the run is watched for its game's end once the bird is no longer flown


async def score_run(ctx: ProbeContext, start: Start, action: str, learnt: Learnt | None, *,
                    restart_after: bool = False) -> tuple[Played, Run | None]:
    """A fresh run of the start, the bird flown through the gaps (``_passes``), and what it showed.

    ``restart_after``: where a readable score counted the pipes, the bird is then left to fall, and
    restart is tried where that game ends (``Played.again``): a new game must not begin at the old
    score. (The no-input game usually ends at its start score, where a kept score cannot show.)
    """
    if learnt is None or learnt.bird is None:
        return Played(why="the bird could not be told from the scene"), None
    run = await start.replay(ctx, [], start.t0)
    out = Played(lo=start.t0 + SETTLED)

    async def counted(got: PassRun) -> str:
        """Why the run may stop: a readable score counted the pipes passed so far one by one ('' if not)."""
        seen = judge(_text_places(await run.session.texts(), got.lines, out.lo), got.passes, got.alive_until, out.lo)
        if seen.how != "counts" or seen.passes < COUNTED or seen.place is None:
            return ""
        return (f"it had its answer: the readable score {seen.place.label!r} counted one per pipe as the bird "
                f"flew through {seen.passes} pipes, so play stopped there")

    try:
        if run.broken:
            out.why = f"the page broke ({run.broken})"
            return out, run
        got = await pass_run(run, start.t0, action, learnt, answered=counted)
        out.passes, out.seen_until, out.why = got.passes, got.alive_until, got.why
        if got.passes:
            out.texts = _text_places(await run.session.texts(), got.lines, out.lo)
            # A readable score that counts the pipes is the verdict (``score_check``): what changed on the
            # screen as pictures is read only where it may be the score.
            if judge(out.texts, out.passes, out.seen_until, out.lo).how != "counts":
                out.places = places({i: f.image for i, f in run.frames.items()}, run.every, out.lo, out.seen_until)
            elif restart_after and not run.broken:
                out.again = await _again_after_scoring(run, start, action)
    except PageBroken as exc:
        out.why = f"the page broke ({exc})"
    finally:
        await run.close()
    return out, run


async def _again_after_scoring(run: Run, start: Start, action: str) -> CheckResult | None:
    """No more input: the bird falls and the game ends; restart is tried there (None: it did not end, or
    the page broke meanwhile: the score's own answer, read before, stands)."""
    try:
        over = await watch_over(run, run.now, AGAIN_WATCH)
        if over.at is None or run.broken:
            return None
        return await restart(run, start.by(), action)
    except PageBroken:
        return None


def _text_places(drawn: list[tuple[str, float, float, int]], lines: list[tuple[float, str]], lo: float,
                 ) -> list[Place]:
    """Each readable score (by its label, "Score: #") as a place: when its value changed, and to what."""
    seen: dict[str, list[tuple[float, int]]] = {}
    for text, first, last, _n in drawn:
        if last / 1000 > lo:
            for part, v in readings(text):
                seen.setdefault(NUMBER.sub("#", part), []).append((first / 1000, v))
    for t, dom in lines:
        for line in dom.splitlines():
            for part, v in readings(line):
                seen.setdefault(NUMBER.sub("#", part), []).append((t, v))
    out = []
    for label, got in seen.items():
        got.sort()
        values, moments = [got[0][1]], []
        for t, v in got[1:]:
            if v != values[-1]:
                values.append(v)
                moments.append(max(t, lo))
        out.append(Place((0, 0, 0, 0), moments, values, label))
    return out
