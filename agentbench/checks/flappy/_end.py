"""The end of a game as a person sees it: play stops, and something new appears and stays.

Read from the captures of a run (no game variables, no words needed): the screen has *settled*
when, for ``SETTLE`` s up to now, hardly anything changes any more compared with how much changed
while the game was played (a blinking hint or a flapping sprite may go on). Something *new* is on
the settled screen when a region of it differs from every capture of the play before the stop, at
the same place (a Game Over panel, a sprite, text in any language, a greyed screen). A page's own
text (DOM lines, canvas text) that first shows at the stop counts as new too: an overlay of HTML
over a canvas is not in the canvas's captures.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..browser._imaging import Blob, Image, blobs
from ._screen import Coder, code_of, mask_bytes

__all__ = ["SETTLE", "Screen", "Settled", "busy", "calm", "settled"]

SETTLE = 1.0          # virtual s the screen must stay settled
QUIET = 0.2           # a change this share of play's busiest change (or less) is no play
QUIET_FLOOR = 0.004   # ... and never less than this share of the screen
NEW_MIN = 0.004       # share of the screen a new thing covers at least (a short word, a sprite)
NEW_MIN_PX = 16
MOTION_MAX = 0.3      # last steps' motion covering more of the screen than this: the scene scrolled
WIDEN = 4             # px the last steps' motion is widened by (a pipe's edge moves a few px a step)
CUTS = (0.5, 1.0, 1.5, 2.0)  # s before the stop to compare with, for a thing that slid or faded in
SAMPLE = 2            # play captures compared, every this many grid steps


@dataclass
class Settled:
    """A settled screen: since when (``quiet_from``), what is new on it and since when."""

    quiet_from: float
    new_share: float          # share of the screen that is new
    new_at: float | None      # when the new region first showed as it is at the end (None: nothing new)
    box: tuple[int, int, int, int] | None = None  # the largest new region (x0, y0, x1, y1) in capture px


class Screen:
    """Codes of a run's captures, computed once each (frames are kept by grid index)."""

    def __init__(self) -> None:
        self._codes: dict[int, tuple[int, int]] = {}  # grid index -> (id of the image, code)
        self.coder: Coder | None = None
        self.size: tuple[int, int] | None = None

    def code(self, i: int, img: Image) -> int | None:
        if self.size != (img.width, img.height):
            self.size, self.coder, self._codes = (img.width, img.height), Coder(img.width, img.height), {}
        got = self._codes.get(i)
        if got is not None and got[0] == id(img):
            return got[1]
        c = code_of(img)
        self._codes[i] = (id(img), c)
        return c


def _steps(frames: dict[int, Image], idx: list[int], screen: Screen) -> tuple[list[int], dict[int, int],
                                                                              dict[int, int], Coder]:
    """Of the captures ``idx`` (grid indices), those of the last one's size, their codes, and the change
    of each step from the capture before it."""
    size = (frames[idx[-1]].width, frames[idx[-1]].height)
    idx = [i for i in idx if (frames[i].width, frames[i].height) == size]
    codes = {i: screen.code(i, frames[i]) for i in idx}
    coder = screen.coder
    assert coder is not None
    change = {i: coder.differ(codes[i - 1], codes[i]) for i in idx if i - 1 in codes}
    return idx, codes, change, coder


def settled(frames: dict[int, Image], every: float, t0: float, now: float, screen: Screen, *,
            quiet: float = 0.0) -> Settled | None:
    """The settled end of a run's captures up to ``now``, or None while the screen is still in play.

    ``quiet``: the share of play's busiest change that still counts as stopped (default QUIET).
    """
    last = max((i for i in frames if i * every <= now + 1e-9), default=None)
    if last is None:
        return None
    end = frames[last]
    lo = round((t0 + 0.1) / every)
    idx = [i for i in range(lo, last + 1) if i in frames]
    if len(idx) < round((SETTLE + 0.5) / every):
        return None
    idx, codes, change, coder = _steps(frames, idx, screen)
    if len(idx) < round((SETTLE + 0.5) / every):
        return None
    if not change:
        return None
    # How much of the screen play changes within SETTLE s at its busiest, and the trailing stretch
    # in which far less of it changed (a falling bird sweeps a band; a blinking hint stays put).
    busiest = _busiest(change, round(SETTLE / every))
    quiet = max(QUIET_FLOOR * coder.n, (quiet or QUIET) * busiest)
    k, u = last, 0
    while k in change:
        u |= change[k]
        if u.bit_count() > quiet:
            break
        k -= 1
    # The stretch may begin with the last steps of play (a bird still falling): it starts after the
    # last step that changed far more than its typical step (a blink or a wing beat repeats).
    k0 = k  # the step into the stretch: where something new may have appeared
    steps = sorted(change[i].bit_count() for i in range(k + 1, last + 1) if i in change)
    if steps:
        most = max(QUIET_FLOOR * coder.n, 2 * steps[len(steps) // 2])
        while k + 1 < last and k + 1 in change and change[k + 1].bit_count() > most:
            k += 1
    quiet_from = k * every
    if (last - k) * every < SETTLE - 1e-9 or busiest <= QUIET_FLOOR * coder.n:
        return None
    s = codes[last]
    min_new = max(NEW_MIN * coder.n, NEW_MIN_PX)
    new, left, found = _novel(coder, codes, change, idx, s, k0, k, end)
    if left < min_new:
        # Something that slid or faded in before the screen settled was partly there in the last
        # captures: compare with play from before it came, when nothing but it moved since.
        for back in CUTS:
            c = k0 - round(back / every)
            if c <= idx[0] + 2:
                break
            new, left, found = _novel(coder, codes, change, idx, s, c, c, end)
            if left < min_new:
                continue
            near = coder.widen(new, 2)
            other = 0
            for i in range(c + 1, k0 + 1):
                if i in change:
                    other |= change[i] & ~near
            if other.bit_count() <= quiet or _slid_in(coder, other, found, end.width, end.height, quiet):
                break
            left = 0
    share = coder.share(new)
    if left < min_new:
        return Settled(quiet_from, share, None)
    box = (found[0].x0, found[0].y0, found[0].x1, found[0].y1) if found else None
    # When the new region first showed as it is now: the earliest capture from which, to the end,
    # at most a fifth of it differs from the end.
    limit = new.bit_count() // 5
    at = last
    for i in range(last - 1, idx[0] - 1, -1):
        c = codes.get(i)
        if c is None or (coder.differ(s, c) & new).bit_count() > limit:
            break
        at = i
    return Settled(quiet_from, share, at * every, box)


def _slid_in(coder: Coder, other: int, found: list[Blob], w: int, h: int, quiet: float) -> bool:
    """Whether what else moved since the cut is the new thing itself sliding in from an edge.

    A panel that slides down from the top (or in from a side) sweeps the strip between that edge and
    where it comes to rest, and nothing else moves: all but ``quiet`` pixels of ``other`` lie in one
    such strip (the new regions' box, widened by ``WIDEN``, stretched to one edge of the capture).
    """
    if not found or not other:
        return False
    x0 = max(0, min(b.x0 for b in found) - WIDEN)
    y0 = max(0, min(b.y0 for b in found) - WIDEN)
    x1 = min(w - 1, max(b.x1 for b in found) + WIDEN)
    y1 = min(h - 1, max(b.y1 for b in found) + WIDEN)
    sweeps = ((x0, 0, x1, y1), (x0, y0, x1, h - 1), (0, y0, x1, y1), (x0, y0, w - 1, y1))
    return any((other & ~_box(coder, w, box)).bit_count() <= quiet for box in sweeps)


def _box(coder: Coder, w: int, box: tuple[int, int, int, int]) -> int:
    """The mask of a box (x0, y0, x1, y1), inclusive, in ``coder``'s lanes."""
    x0, y0, x1, y1 = box
    row = bytearray(w)
    row[x0:x1 + 1] = b"\x80" * (x1 - x0 + 1)
    rows = bytes(w * y0) + bytes(row) * (y1 - y0 + 1)
    return int.from_bytes(rows + bytes(coder.n - len(rows)), "little")


def _busiest(change: dict[int, int], span: int) -> int:
    """The most pixels changed within ``span`` consecutive captures (masks by grid index)."""
    keys = sorted(change)
    most = 0
    for j in range(0, len(keys), max(1, span // 4)):
        u = 0
        for i in keys[j:j + span]:
            u |= change[i]
        most = max(most, u.bit_count())
    return most


def busy(frames: dict[int, Image], every: float, lo: float, hi: float, screen: Screen) -> float:
    """The share of the screen that changes within SETTLE s at the busiest, between ``lo`` and ``hi``."""
    idx = [i for i in range(round(lo / every), round(hi / every) + 1) if i in frames]
    if len(idx) < 2:
        return 0.0
    _idx, _codes, change, coder = _steps(frames, idx, screen)
    return _busiest(change, round(SETTLE / every)) / coder.n if change else 0.0


def _novel(coder: Coder, codes: dict[int, int], change: dict[int, int], idx: list[int], s: int, cut: int,
           k: int, end: Image) -> tuple[int, int, list[Blob]]:
    """(mask, size, regions) of what ``s`` shows that no capture of play before ``cut`` showed there.

    The last steps of play before ``cut`` and those from ``cut`` to ``k`` (a bird still falling)
    moved things on (a pipe's leading edge covers pixels it never covered before): their change,
    widened a little, is motion, not something new; so is a line one pixel thin.
    """
    new = coder.everything
    for i in idx:
        if i >= cut:
            break
        if (i - idx[0]) % SAMPLE and i != cut - 1:
            continue
        new &= coder.differ(s, codes[i])
        if not new:
            break
    motion = 0
    for i in [*range(cut - 3, cut), *range(cut + 1, k + 1)]:
        if i in change:
            motion |= change[i]
    motion = coder.widen(motion, WIDEN)
    if coder.share(motion) < MOTION_MAX:
        new &= ~motion
        left = -1
    else:  # the whole scene scrolled: about half of one step's change is motion
        step = change[cut - 1].bit_count() if cut - 1 in change else 0
        left = new.bit_count() - round(0.6 * step)
    found = [b for b in blobs(mask_bytes(new, coder.n), end.width, end.height, min_size=4)
             if b.x1 > b.x0 and b.y1 > b.y0]
    if left < 0:
        left = sum(b.size for b in found)
    return new, left, found


def calm(frames: dict[int, Image], every: float, t0: float, lo: float, hi: float, screen: Screen,
         share: float) -> bool:
    """Whether, from ``lo`` to ``hi``, far less changed than in play at its busiest (``share`` of it)."""
    idx = [i for i in range(round((t0 + 0.1) / every), round(hi / every) + 1) if i in frames]
    if len(idx) < 4:
        return False
    _idx, _codes, change, coder = _steps(frames, idx, screen)
    busiest = _busiest(change, round(SETTLE / every))
    u = 0
    for i in range(round(lo / every) + 1, round(hi / every) + 1):
        u |= change.get(i, 0)
    return busiest > 0 and u.bit_count() <= max(QUIET_FLOOR * coder.n, share * busiest)
