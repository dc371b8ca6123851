"""Flappy `score` by effect: what changes at a fixed place, and does it change once per pipe passed?

A person who cannot read a score (digits drawn as pictures, blocks, a sprite sheet) still sees it
count: something at one place on the screen changes each time the bird passes a pipe, and stays as
it is between passes. Read from a run's captures (``Place``):

- a pixel *changes for good* at a capture when it had not changed for ``BEFORE`` s, then changed
  (within ``EPISODE`` s: a digit that pops in as it changes), then stayed as it became for
  ``STAYS`` s, and what it became was not seen there in the ``AGO`` s before. A pipe moving over a
  pixel covers it for less than that and leaves it as it was before the pipe came; the bird, a
  scrolling ground, a blinking hint never stay; a number counting frames changes too often;
- such pixels, grouped by where they are, are places; each place's *moments* are when it changed.

``judge`` then lays each place's moments (or a readable score's values) against the pipes passed
(``_passes``): one change per pipe, each at the same delay after its pipe, and none before the
first, is a score that counts; a change at every second pipe counts one per two pipes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._model import CheckResult
from ..browser._imaging import Image, blobs
from ._screen import Coder, code_of, mask_bytes

__all__ = ["Counted", "Pass", "Place", "Played", "judge", "places"]

BEFORE = 0.3     # s a pixel was unchanged before it changed for good ...
AGO = 1.2        # ... and what it became was not seen there in this many s before (a pipe's trailing edge
                 # leaves the sky as it was before the pipe came; a digit changed just before a pipe
                 # passed behind it changed then, not when the pipe left it)
EPISODE = 0.2    # s a change may take (a digit popping in)
STAYS = 0.9      # s it then stays as it became
MIN_PX = 3       # capture pixels a place changes by at least, at a moment
MERGE = 0.3      # s: changes of one place this close are one moment
EARLY = 0.2      # s before a pipe reaches the bird that its count may come (a game counting at the pipe's centre)
LATE = 1.2       # s after a pipe left the bird that its count may come, at most (a game counting it off screen)
LAG_SPREAD = 0.3  # s: a score's delays after the pipes it counts differ by at most this much
MAX_PLACES = 24


@dataclass
class Place:
    """A place on the screen (box in capture px) and the moments (virtual s) it changed for good."""

    box: tuple[int, int, int, int]
    moments: list[float] = field(default_factory=list)
    values: list[int] | None = None  # for a readable score: its value after each moment (first: before any)
    label: str = ""


@dataclass
class Pass:
    """A pipe the bird flew through: when its body first covered the bird's columns, when it left them."""

    enter: float
    leave: float


@dataclass
class Played:
    """What the score's own run saw: the pipes the bird flew through, and what changed meanwhile."""

    passes: list[Pass] = field(default_factory=list)
    lo: float = 0.0           # play is read from here (virtual s) ...
    seen_until: float = 0.0   # ... to here (the bird last seen flying)
    places: list[Place] = field(default_factory=list)  # what changed for good, by place
    texts: list[Place] = field(default_factory=list)   # readable scores, by label
    why: str = ""             # why no pipe was passed
    again: CheckResult | None = None  # restart, tried where this run's game (which scored) ended (``score_run``)



def places(frames: dict[int, Image], every: float, lo: float, hi: float) -> list[Place]:
    """The places that changed for good between ``lo`` and ``hi`` (virtual s), most moments first."""
    idx = [i for i in range(round(lo / every), round(hi / every) + 1) if i in frames]
    if len(idx) < 4:
        return []
    w, h = frames[idx[-1]].width, frames[idx[-1]].height
    idx = [i for i in idx if (frames[i].width, frames[i].height) == (w, h)]
    coder = Coder(w, h)
    codes = {i: code_of(frames[i]) for i in idx}
    change = {i: coder.differ(codes[i - 1], codes[i]) for i in idx if i - 1 in codes}
    k1, ep, k2 = round(BEFORE / every), round(EPISODE / every), round(STAYS / every)
    ago = round(AGO / every)
    good: dict[int, int] = {}
    for i in sorted(change):
        if any(j not in codes for j in range(i - ago, i + ep + k2 + 1)) or \
                any(j not in change for j in range(i - k1, i + ep + k2 + 1)):
            continue
        q = change[i] & coder.differ(codes[i - 1], codes[i + ep])
        for j in (*range(i - k1, i), *range(i + ep + 1, i + ep + k2 + 1)):
            if q.bit_count() < MIN_PX:
                break
            q &= ~change[j]
        new = codes[i + ep]
        for j in range(i - k1 - 1, i - ago - 1, -1):  # (after BEFORE s unchanged, it was as at i - 1 then)
            if q.bit_count() < MIN_PX:
                break
            q &= coder.differ(codes[j], new)
        if q.bit_count() >= MIN_PX:
            good[i] = q
    if not good:
        return []
    union = 0
    for q in good.values():
        union |= q
    found = blobs(mask_bytes(coder.widen(union, 2), coder.n), w, h, min_size=MIN_PX)[:MAX_PLACES]
    out = []
    for blob in found:
        area = bytearray(coder.n)
        for p in blob.pixels:
            area[p] = 0x80
        region = int.from_bytes(area, "little")
        times = [i * every for i, q in sorted(good.items()) if (q & region).bit_count() >= MIN_PX]
        moments: list[float] = []
        last = -1e9
        for t in times:  # a run of changes each close to the one before is one moment
            if t - last > MERGE + 1e-9:
                moments.append(t)
            last = t
        if moments:
            out.append(Place((blob.x0, blob.y0, blob.x1, blob.y1), moments))
    out.sort(key=lambda p: -len(p.moments))
    return out


@dataclass
class Counted:
    """How a place's changes (or a score's values) went with the pipes passed."""

    how: str                 # "counts", "half", "double", "time", "none"
    place: Place | None
    passes: int              # pipes passed whose count could be seen (the run went on long enough after)
    per_pass: list[int]      # changes (or value steps) seen for each of them
    lags: list[float]        # s from each pipe leaving the bird to its change
    extra: int = 0           # changes before the first pipe reached the bird


def _slots(passes: list[Pass], until: float, settle: float) -> list[tuple[float, float]]:
    """For each pipe passed whose count the run could see (a change ``settle`` s before ``until`` at the
    latest), the time a count of it may come in."""
    out = []
    for k, p in enumerate(passes):
        end = passes[k + 1].enter - EARLY if k + 1 < len(passes) else p.leave + LATE
        end = min(end, p.leave + LATE)
        if end + settle > until + 1e-9:
            break
        out.append((p.enter - EARLY, end))
    return out


def _count(place: Place, passes: list[Pass], seen_until: float, lo: float) -> Counted:
    values = place.values
    slots = _slots(passes, seen_until, 0.0 if values is not None else EPISODE + STAYS)
    steps: list[int] = []
    lags: list[float] = []
    for k, (a, b) in enumerate(slots):
        inside = [j for j, t in enumerate(place.moments) if a <= t < b]
        if values is None:
            steps.append(len(inside))
        else:  # a readable score: what it went up by within the slot
            steps.append(sum(values[j + 1] - values[j] for j in inside))
        if len(inside) == 1:
            lags.append(place.moments[inside[0]] - passes[k].leave)
    # Changes before the first pipe reached the bird, and between a pipe's slot and the next one's.
    gaps = [(lo, slots[0][0])] if slots else []
    gaps += [(a[1], b[0]) for a, b in zip(slots, slots[1:], strict=False) if b[0] > a[1]]
    extra = sum(1 for t in place.moments for a, b in gaps if a <= t < b)
    n = len(slots)
    if n == 0:
        how = "none"
    elif extra == 0 and all(s == 1 for s in steps) and \
            (max(lags) - min(lags) <= LAG_SPREAD if len(lags) == n else False):
        how = "counts"
    elif extra == 0 and n >= 2 and all(s in (0, 1) for s in steps) and any(steps) and \
            all(a != b for a, b in zip(steps, steps[1:], strict=False)):
        how = "half"
    elif values is not None and n >= 1 and all(s == 2 for s in steps):
        how = "double"
    elif any(steps) or extra:
        how = "time"
    else:
        how = "none"
    return Counted(how, place, n, steps, [round(v, 2) for v in lags], extra)


ORDER = ("counts", "half", "double", "time", "none")


def judge(found: list[Place], passes: list[Pass], seen_until: float, lo: float) -> Counted:
    """The place that best goes with the pipes passed: one that counts them, else one per two, ..."""
    if not found:
        return Counted("none", None, len(_slots(passes, seen_until, EPISODE + STAYS)), [], [])
    results = [_count(p, passes, seen_until, lo) for p in found]
    return min(results, key=lambda c: (ORDER.index(c.how), -sum(c.per_pass)))
