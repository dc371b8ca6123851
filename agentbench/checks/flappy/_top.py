"""Flappy: does hitting a pipe end the game? Played the way a person tries it, top pipe and bottom pipe.

A person who doubts the top pipe keeps the bird high as a pipe arrives, flapping whenever it sinks
below the upper part of the play area, and watches: the bird meets the pipe's body and the game
ends, or the pipe slides over the bird and play goes on. One who doubts the bottom pipe keeps the
bird low instead, just above the ground (where the bird without input came to rest: a bird on the
ground ends most games, so it hovers there and never falls), flapping whenever it sinks that low.
These runs do the same with real input (the flap the other probes found, held like theirs) and
judge them by pixels only:

- the bird is what the flap run and the no-input run showed differently (its columns, its size and
  its colours); it is followed in its columns as the pixels of its colours that the empty scene
  (the no-input runs' captures, mode per pixel) does not show;
- a pipe's top body is, in those columns, what differs from the empty scene from the top of the
  play area down without a break; a bottom body what differs from the ground up without a break
  (begun at or under the no-input bird's resting line: a ground drawn over it is skipped); both slid
  in from the right (a moving obstacle, not a banner). Where it reaches past the bird's near edge
  by a visible depth (half the bird's height, and ``_perception.SEEN_PX``) beside and over the
  bird's columns, the bird is inside the pipe;
- play went on when, with the bird seen inside for at least ``SEEN_S``, the same pipe then slid on
  past the bird (left its columns) while the bird was still seen flying.

The bottom run reads every row from the resting line up (``_Side``): the rest is the top run's
logic unchanged. Nothing is said where the evidence is weak: a bird that leaves the screen, a gap
that happens to be high (or low), a graze of a frame or two, a scene whose background itself moves
in the bird's columns (the empty scene is not stable there), a bird the run cannot follow, a
no-input bird never seen coming to rest.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

from ..browser._frames import Frame
from ..browser._imaging import Image, blobs, diff_mask
from ..browser._perception import SEEN_PX, SEEN_S
from ..browser._play import CAP, Run, differs
from ._over import over_since

__all__ = ["Bird", "Learnt", "PipeRun", "learn_bird", "pipe_run", "through_pipe"]

TARGET = 0.25      # the bird's centre is kept at about this share of the play area's height from the top
# (half as high again after each pipe that passed with the bird in its gap: random gaps may sit that high)
TAP_GAP = 0.2      # s between two taps at least (a press is held HOLD s)
FAR = 60           # colour distance (sum over channels) that counts as another thing
STABLE = 0.7       # a pixel of the empty scene shows its usual colour at least this share of the time
STABLE_SHARE = 0.9  # ... and this share of the bird's columns must be such pixels to judge anything
DEPTH_SHARE = 0.5  # the pipe must reach this share of the bird's height below its top (and SEEN_PX)
ON_AFTER = 0.5     # s: the pipe must have slid past the bird within this long after ...
PASS_WITHIN = 3.0  # ... at most this many s after the bird was first seen inside
LOST_S = 1.5       # the bird unseen this long: stop (it died, fell or left the screen)
STOPPED_S = 0.6    # nothing on the screen changed this long: the game ended
LOOK = 2 * CAP     # the bird is looked at this often (virtual s): two looks inside last SEEN_S or more
UPPER = 0.6        # the upper part of the play area, judged for a stable empty scene
ALIVE = 0.55       # the bird's centre stays above this share of the height while the pipe slides past
TELEPORT = 0.2     # the bird's centre jumping this share of the height in one look: the game started over
STILL_S = 1.0      # the bird not moving at all this long: it no longer flies (the game ended)
ANSWER_S = 0.6     # a tap the bird does not rise after within this long is unanswered; three in a row: ended
WORDS_EVERY = 5    # looks between two reads of the page's words (a game-over message ends the run)
PIPES = 2          # pipes that passed the bird in their gap before the run gives up
WATCH = 13.0       # s after the start, at most: a slow first pipe still comes (a person waits for it)
# The bottom pipe: the bird is kept low, over its resting line (the floor), never on it.
LOW = 2.5          # bird heights between the floor and the bird's bottom where a person flaps, at least ...
CLEAR = 1.0        # ... and this many more than the bird was seen to sink after a flap (it must not land)
LANDED = 0.25      # bird heights: the bird's bottom this near the floor after it was inside: it fell (died)
FLOOR_TOL = 0.3    # bird heights: a bottom body begins at most this far above the floor (a ground drawn over)
FLOOR_SEEN = 3     # captures of the no-input bird needed to tell where it came to rest


@dataclass
class Bird:
    """What the flap showed of the bird: its columns, its size in pixels and its colours."""

    x0: int
    x1: int
    height: int
    pixels: int
    colours: frozenset[tuple[int, int, int]]


def _q(p: tuple[int, int, int]) -> tuple[int, int, int]:
    return p[0] >> 5, p[1] >> 5, p[2] >> 6


def learn_bird(base: Run, flap: Run, first: int, last: int) -> Bird | None:
    """The bird as the flap run shows it where it differs from the no-input run (see locate_shift),
    from capture ``first`` to ``last`` (both runs still in play)."""
    boxes: list[tuple[int, int, int, int, int]] = []
    colours: Counter[tuple[int, int, int]] = Counter()
    for i in range(first, min(last, first + 20) + 1):
        fa, fb = base.frames.get(i), flap.frames.get(i)
        if fa is None or fb is None or (fa.width, fa.height) != (fb.width, fb.height):
            continue
        a, b = fa.image, fb.image
        w, h = a.width, a.height
        mask = diff_mask(a, b, threshold=FAR)
        mine: list[int] = []
        for blob in blobs(mask, w, h, min_size=2)[:4]:
            ring = [a.pixel(x, y) for y in range(max(0, blob.y0 - 2), min(h, blob.y1 + 3))
                    for x in range(max(0, blob.x0 - 2), min(w, blob.x1 + 3)) if not mask[y * w + x]]
            if not ring:
                continue
            bg = tuple(statistics.median(c[k] for c in ring) for k in range(3))
            for p in blob.pixels:
                y, x = divmod(p, w)
                pa, pb = a.pixel(x, y), b.pixel(x, y)
                if sum(abs(pb[k] - bg[k]) for k in range(3)) > sum(abs(pa[k] - bg[k]) for k in range(3)):
                    mine.append(p)
                    colours[_q(pb)] += 1
        if len(mine) >= 4:
            xs, ys = [p % w for p in mine], [p // w for p in mine]
            boxes.append((min(xs), max(xs), min(ys), max(ys), len(mine)))
    if len(boxes) < 3:
        return None
    # The capture where the flapped bird stood clear of the other one shows all of it.
    whole = max(boxes, key=lambda b: b[4])
    total = sum(colours.values())
    keep = frozenset(c for c, n in colours.items() if n >= 0.03 * total)
    return Bird(whole[0], whole[1], whole[3] - whole[2] + 1, whole[4], keep)


@dataclass(frozen=True)
class _Side:
    """Which pipe a run tries: the top one (``floor`` None) or the bottom one, whose rows are read
    from ``floor`` (the capture row the no-input bird's bottom came to rest on) up: a row's place
    is then its height over the floor, so a bottom body is handled as a top one is."""

    floor: int | None = None
    tol: int = 0  # a bottom body begins at most this many rows over the floor

    @property
    def name(self) -> str:
        return "top" if self.floor is None else "bottom"

    def box(self, box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        """The bird's box with rows counted from this side's edge (the top, or the floor up)."""
        if self.floor is None:
            return box
        x0, y0, x1, y1 = box
        return x0, self.floor - y1, x1, self.floor - y0


TOP = _Side()


@dataclass
class _Scene:
    """The empty scene in the bird's columns: each pixel's usual colour, from captures of play."""

    x0: int
    x1: int
    width: int
    height: int
    rows: list[bytes] = field(default_factory=list)       # per row: the usual colours (RGB bytes)
    unstable: list[bytes] = field(default_factory=list)   # per row: 1 where a pixel has no usual colour
    memo: dict[frozenset[tuple[int, int, int]], dict[tuple[bytes, bytes, bytes], tuple[bytes, bytes]]] = \
        field(default_factory=dict, repr=False)  # per bird's colours: a row's marks (``_marks``)

    def row(self, img: Image, y: int) -> bytes:
        o = (y * self.width + self.x0) * 3
        return img.rgb[o:o + (self.x1 - self.x0) * 3]

    def stable(self, side: _Side) -> float:
        """The share of the part the run plays in (the upper part for top pipes and a high bird, the
        lower part down to the floor for bottom ones) that has a usual colour."""
        part = round(UPPER * self.height)
        rows = self.unstable[:max(1, part)] if side.floor is None else \
            self.unstable[min(side.floor, self.height - part):side.floor + 1]
        n = sum(len(u) for u in rows)
        return 1 - sum(sum(u) for u in rows) / max(1, n)


def _scene(images: list[Image], x0: int, x1: int) -> _Scene | None:
    if len(images) < 8:
        return None
    w, h = images[0].width, images[0].height
    sc = _Scene(x0, x1, w, h)
    images = [img for img in images if (img.width, img.height) == (w, h)]
    n = len(images)
    if n < 8:
        return None
    for y in range(h):
        segs = [sc.row(img, y) for img in images]
        common, m = Counter(segs).most_common(1)[0]
        if m >= STABLE * n:  # the whole row is usually the same (a flat sky): at C speed
            sc.rows.append(common)
            sc.unstable.append(bytes(x1 - x0))
            continue
        usual, bad = bytearray(common), bytearray(x1 - x0)
        for k in range(x1 - x0):
            px = [seg[3 * k:3 * k + 3] for seg in segs]
            counts = Counter(_q((p[0], p[1], p[2])) for p in px)
            q, c = counts.most_common(1)[0]
            if c >= STABLE * n:
                usual[3 * k:3 * k + 3] = next(p for p in px if _q((p[0], p[1], p[2])) == q)
            else:
                bad[k] = 1
        sc.rows.append(bytes(usual))
        sc.unstable.append(bytes(bad))
    return sc


@dataclass
class PipeRun:
    """What the run saw: when the bird was first inside a pipe of its side, and when the pipe had passed it."""

    inside_at: float | None = None
    passed_at: float | None = None
    depth: float = 0.0       # px (capture) the pipe reached below the bird's top, at most
    taps: int = 0
    seen: int = 0            # captures in which the bird was followed
    why: str = ""            # why nothing could be judged
    side: str = "top"        # which pipe was tried: "top" or "bottom"

    @property
    def went_on(self) -> bool:
        """The bird was seen inside the pipe and play went on: hitting it does not end the game."""
        return self.inside_at is not None and self.passed_at is not None


ROWS_MEMO = 4096  # rows of marks a scene remembers (a pipe's body and the sky repeat row after row, look after look)


_CHANGED = re.compile(rb"[^\x00]+")


def _row_marks(seg: bytes, ref: bytes, bad: bytes, colours: frozenset[tuple[int, int, int]],
               kin: dict[bytes, bool]) -> tuple[bytes, bytes]:
    """One row's marks: 1 where a pixel is another thing than the empty scene (or the scene has no usual
    colour there), and 1 where such a pixel has one of the bird's colours (``kin``: pixel -> that, so far)."""
    n = len(bad)
    foreign, birdy = bytearray(n), bytearray(n)
    # Only the pixels not exactly as in the empty scene (found at C speed), and those it has no usual colour for.
    xor = (int.from_bytes(seg, "little") ^ int.from_bytes(ref, "little")).to_bytes(len(seg), "little")
    spans = [range(m.start() // 3, (m.end() + 2) // 3) for m in _CHANGED.finditer(xor)]
    if any(bad):
        spans.append(range(n))
    for span in spans:
        for k in span:
            if foreign[k]:
                continue
            i = 3 * k
            px = seg[i:i + 3]
            if not bad[k] and abs(px[0] - ref[i]) + abs(px[1] - ref[i + 1]) + abs(px[2] - ref[i + 2]) <= FAR:
                continue
            foreign[k] = 1
            c = kin.get(px)
            if c is None:
                c = kin[px] = _q((px[0], px[1], px[2])) in colours
            if c:
                birdy[k] = 1
    return bytes(foreign), bytes(birdy)


def _marks(sc: _Scene, bird: Bird, img: Image) -> tuple[bytearray, bytearray]:
    """(foreign, birdy) masks over the band: see ``_row_marks``. A row is worked out once per scene and
    bird: the same row of pixels over the same row of the empty scene gives the same marks."""
    bw = sc.x1 - sc.x0
    foreign = bytearray(bw * sc.height)
    birdy = bytearray(bw * sc.height)
    colours = bird.colours
    memo = sc.memo.setdefault(colours, {})
    if len(memo) > ROWS_MEMO:
        memo.clear()
    kin: dict[bytes, bool] = {}
    for y in range(sc.height):
        seg, ref, bad = sc.row(img, y), sc.rows[y], sc.unstable[y]
        if seg == ref and not any(bad):
            continue
        key = (seg, ref, bad)
        got = memo.get(key)
        if got is None:
            got = memo[key] = _row_marks(seg, ref, bad, colours, kin)
        o = y * bw
        foreign[o:o + bw], birdy[o:o + bw] = got
    return foreign, birdy


def _bird_box(sc: _Scene, bird: Bird, birdy: bytearray) -> tuple[tuple[int, int, int, int] | None, set[int]]:
    """(the bird's box in band columns, the columns holding it), from the pixels of its colours."""
    bw = sc.x1 - sc.x0
    found = blobs(birdy, bw, sc.height, min_size=2) if any(birdy) else []
    box = None
    if found:
        big = found[0]
        near = [b for b in found if b.x0 <= big.x1 + 2 and b.x1 >= big.x0 - 2
                and b.y0 <= big.y1 + bird.height and b.y1 >= big.y0 - bird.height]
        size = sum(b.size for b in near)
        box = (min(b.x0 for b in near), min(b.y0 for b in near), max(b.x1 for b in near), max(b.y1 for b in near))
        if not (0.25 * bird.pixels <= size <= 2.5 * bird.pixels and box[3] - box[1] + 1 <= 2.5 * bird.height + 2):
            box = None
    return box, ({p % bw for b in found for p in b.pixels} if box else set())


def _depths(sc: _Scene, foreign: bytearray, side: _Side = TOP) -> list[int]:
    """Each band column's body depth from ``side``'s edge (see ``_look``)."""
    bw, h = sc.x1 - sc.x0, sc.height
    floor = side.floor
    depth = []
    for x in range(bw):
        col = foreign[x::bw]
        if floor is None:  # from the top down without a break
            d = col.find(0)
            d = h if d < 0 else d
        else:
            # From the bottom up: the empty scene under the floor (a ground drawn over the pipe) is
            # skipped; a body begins there and reaches up without a break.
            y = col.rfind(1, max(0, floor - side.tol))
            # rows over the floor the body covers (its top row is the first unmarked one above, + 1)
            d = 0 if y < 0 else max(0, floor - col.rfind(0, 0, y + 1))
        depth.append(d)
    return depth


def _look(sc: _Scene, bird: Bird, img: Image, side: _Side = TOP,
          ) -> tuple[tuple[int, int, int, int] | None, list[int], set[int], int]:
    """(the bird's box in band columns, each column's body depth from ``side``'s edge, the columns
    holding the bird, for the bottom side the columns whose body has a top body over it too, from the
    top of the play area down: a pipe's top piece)."""
    bw = sc.x1 - sc.x0
    foreign, birdy = _marks(sc, bird, img)
    box, cols_bird = _bird_box(sc, bird, birdy)
    depth = _depths(sc, foreign, side)
    paired = 0
    if side.floor is not None and box is not None:  # the top of each column differs from the empty scene
        paired = sum(1 for x in range(bw) if depth[x] >= 3 and all(foreign[y * bw + x] for y in range(3)))
    return box, depth, cols_bird, paired


def _inside(box: tuple[int, int, int, int], depth: list[int], cols_bird: set[int], need: float) -> float:
    """How far (px) below the bird's top the pipe's top body reaches beside the bird and over it; 0: not
    inside (``need``: the least depth a person sees as inside)."""
    x0, top, x1, _ = box
    # The pipe's body beside the bird (columns without bird colours) gives its lower end ...
    beside = [depth[x] for x in range(max(0, x0 - 3), min(len(depth), x1 + 4)) if x not in cols_bird]
    reach = [d for d in beside if d >= top + need]
    if len(reach) < 2:
        return 0.0
    # ... and over the bird's columns it covers everything above the bird (it is at the bird's place).
    over = [x for x in range(x0, x1 + 1) if depth[x] >= top]
    if len(over) < max(2, (x1 - x0 + 1) // 3):
        return 0.0
    return statistics.median(reach) - top


def _scale(frame: Frame) -> float:
    """Capture px per page px (SEEN_PX is in page px)."""
    return frame.width / frame.rect[2] if frame.rect and frame.rect[2] > 0 else 0.2


def _flew_on(rows: list[tuple[float, float]], since: float, low: float) -> bool:
    """The bird kept flying from ``since``: never sank below ``low`` and rose at least once (a flap took)."""
    after = [r for t, r in rows if t >= since - 1e-9]
    rose = any(b <= a - 2 for a, b in zip(after, after[1:], strict=False))
    return bool(after) and max(after) <= low and rose


def _floor(sc: _Scene, bird: Bird, rest: list[Image]) -> int | None:
    """The capture row the no-input bird's bottom came to rest on (its lowest seen in ``rest``, the
    captures of its fall to the end), if it was seen often enough to tell."""
    bottoms = [box[3] for img in rest if (img.width, img.height) == (sc.width, sc.height)
               for box in [_look(sc, bird, img)[0]] if box is not None]
    return max(bottoms) if len(bottoms) >= FLOOR_SEEN else None


async def pipe_run(run: Run, t0: float, action: str, bird: Bird, empty: list[Image], until: float,
                   rest: list[Image] | None = None, scenes: dict[tuple[int, int], _Scene | None] | None = None,
                   ) -> PipeRun:
    """Keep the bird high from ``t0`` (``run`` is at the start, no input since) and watch the top pipes;
    with ``rest`` (the no-input run's captures to its end) keep it low over where that bird came to
    rest and watch the bottom pipes. ``scenes``: empty scenes already learnt from ``empty``, by columns."""
    out = PipeRun(side="top" if rest is None else "bottom")
    margin = max(4, bird.x1 - bird.x0 + 1)
    if not empty:
        out.why = "no captures of play to learn the empty scene from"
        return out
    w = empty[0].width
    cols = max(0, bird.x0 - margin), min(w, bird.x1 + margin + 1)
    scenes = {} if scenes is None else scenes
    if cols not in scenes:
        scenes[cols] = _scene(empty, *cols)
    sc = scenes[cols]
    if sc is None:
        out.why = "too few captures of play to learn the empty scene from"
        return out
    side = TOP
    if rest is not None:
        floor = _floor(sc, bird, rest)
        if floor is None or floor < sc.height / 2:
            out.why = "where the bird without input came to rest could not be told"
            return out
        side = _Side(floor, max(1, round(FLOOR_TOL * bird.height)))
    stable = sc.stable(side)
    if stable < STABLE_SHARE:
        out.why = f"the scene moves in the bird's columns by itself ({stable:.0%} of it stable)"
        return out
    last_tap = -1.0
    began = last_seen = run.now
    rows: list[tuple[float, float]] = []
    inside: list[float] = []
    changes: list[float] = []
    prev: int | None = None
    covered, passed, met = False, 0, False
    edges: list[tuple[float, int]] = []  # (t, the leftmost column a top body reaches down in): it slides in
    taps: list[float] = []
    deaf = looks = 0
    sank, tap_bottom = 0, None  # how far the bird was seen to sink after a flap, at most; its bottom at the last tap
    dom_before = run.dom_first or ""
    while run.now < until - 1e-9 and not run.broken:
        await run.advance(LOOK)
        i = run.last_index()
        frame = run.frames.get(i)
        if frame is None or (frame.width, frame.height) != (sc.width, sc.height):
            out.why = "the game's picture changed size"
            break
        code = run.code(i)
        if prev is not None and code is not None and differs(prev, code):
            changes.append(run.now)
        prev = code
        if run.now - (changes[-1] if changes else began) >= STOPPED_S:
            out.why = "the screen stopped (the game ended)"
            break
        looks += 1
        if looks % WORDS_EVERY == 0 and await over_since(run, began, dom_before) is not None:
            out.why = "a game-over message showed (the game ended)"
            break
        box, depth, cols, paired = _look(sc, bird, frame.image, side)
        if box is None:
            if run.now - last_seen >= LOST_S:
                out.why = "the bird was no longer seen (it died, fell or left the screen)"
                break
            continue
        last_seen = run.now
        out.seen += 1
        centre = (box[1] + box[3]) / 2
        if rows and abs(centre - rows[-1][1]) > TELEPORT * sc.height:
            out.why = "the bird jumped back to a start (the game started over)"
            break
        rows.append((run.now, centre))
        recent = [r for t, r in rows if t >= run.now - STILL_S - 1e-9]
        if run.now - began >= STILL_S and len(recent) >= 5 and max(recent) - min(recent) <= 1:
            out.why = "the bird stopped moving (the game ended)"
            break
        if taps and run.now >= taps[-1] + ANSWER_S - 1e-9 and taps[-1] > 0:
            before = [r for t, r in rows if t <= taps[-1] + 1e-9]
            after = [r for t, r in rows if taps[-1] < t <= taps[-1] + ANSWER_S + 1e-9]
            deaf = deaf + 1 if before and after and min(after) > before[-1] - 1 else 0
            taps[-1] = -taps[-1]  # answered or not: judged once
            if deaf >= 3:
                out.why = "the bird no longer rose when flapped (the game ended)"
                break
        near = side.box(box)  # rows counted from the pipe's side: the top, or the floor up
        d = _inside(near, depth, cols, max(DEPTH_SHARE * bird.height, SEEN_PX * _scale(frame), 2.0))
        body = [x for x, dd in enumerate(depth) if dd >= 3]
        if body:
            edges.append((run.now, min(body)))
        if d > 0 and side.floor is not None and paired < 2:
            d = 0.0  # no top piece over it: scenery rising from the ground (a tree, a building), no pipe
        if d > 0 and out.inside_at is None and not any(
                x >= edges[-1][1] + 2 for t, x in edges if t >= run.now - 1.5):
            d = 0.0  # nothing slid in from the right: no moving obstacle (a HUD line, a banner)
        if d > 0:
            inside.append(run.now)
            out.depth = max(out.depth, d)
            if out.inside_at is None and inside[-1] - inside[0] >= SEEN_S - 1e-6:
                out.inside_at = inside[0]
        elif out.inside_at is None:
            inside = []  # a graze of one look: not seen
        # A pipe's body at the bird (over its columns or touching them) reaching to its near edge.
        met = any(depth[x] >= near[1] for x in range(max(0, box[0] - 1), min(len(depth), box[2] + 2)))
        # A pipe's body over the bird's columns (a bird touching its edge cannot tell: as before).
        over = [x for x in range(box[0], box[2] + 1) if depth[x] >= 3]
        if near[1] > 2:
            if covered and not over:
                passed += 1
            covered = len(over) >= 2
        if out.inside_at is not None and d == 0:
            if not covered and run.now - inside[-1] >= ON_AFTER - 1e-6:
                low = ALIVE * sc.height if side.floor is None else side.floor - (0.5 + LANDED) * bird.height
                if _flew_on(rows, out.inside_at, low):
                    out.passed_at = run.now
                else:
                    out.why = "the bird sank after meeting the pipe (it may have died while the scene scrolled on)"
                break
            if run.now - out.inside_at > PASS_WITHIN:
                out.why = "the pipe did not slide on past the bird"
                break
        if passed >= PIPES and out.inside_at is None:
            out.why = f"{passed} pipes passed the bird with the bird in their gap"
            break
        # A person flaps when the bird sinks below the upper part (or near the floor) and is not still rising.
        falling = len(rows) < 2 or rows[-1][1] >= rows[-2][1]
        if tap_bottom is not None:
            sank = max(sank, box[3] - tap_bottom)
        if side.floor is None:  # a pipe passed with the bird in its gap: a person aims higher at the next
            sunk = centre > TARGET / 2 ** passed * sc.height
        else:  # where it will be at the next look, falling as fast as since the last one: a person flaps early
            level = max(sc.height / 2, side.floor - max(LOW * bird.height, sank + CLEAR * bird.height))
            sunk = box[3] + max(0.0, rows[-1][1] - rows[-2][1] if len(rows) >= 2 else 0.0) > level
        if sunk and falling and run.now - last_tap >= TAP_GAP:
            last_tap, tap_bottom = run.now, box[3]
            out.taps += 1
            if not taps or taps[-1] < 0:
                taps.append(run.now)  # the next tap is judged once the last one was
            await run.do(action)
    if out.why.endswith("(the game ended)") and met:
        out.why += f" with a {out.side} pipe at the bird"  # it met the pipe: the try was made
    if not out.why and not out.went_on:
        out.why = f"the game went on {run.now - t0:.1f} s after the start and no pipe met the bird"
    return out


@dataclass
class Learnt:
    """What a try learnt from the no-input run and the flap run up to ``played_until``: the bird, the
    captures of play and the empty scenes. A later try on a replay of the same flap run (the same
    frames on the virtual clock) uses them as they are instead of learning them again."""

    bird: Bird | None
    empty: list[Image]
    scenes: dict[tuple[int, int], _Scene | None] = field(default_factory=dict)


def learn(base: Run, flap: Run, first: int, t0: float, played_until: float) -> Learnt:
    return Learnt(learn_bird(base, flap, first, base.index(played_until)),
                  [r.frames[i].image for r in (base, flap) for i in sorted(r.frames)
                   if t0 + 0.1 <= i * r.every <= played_until])


async def through_pipe(base: Run, flap: Run, first: int, t0: float, played_until: float, action: str,
                       rested_by: float | None = None, learnt: Learnt | None = None) -> PipeRun:
    """Play the passing flap run on, keeping its bird high (or, given ``rested_by``, low); see the
    module docstring.

    ``first``: the capture where the flap run first differed from the no-input run ``base``;
    ``played_until``: captures of both runs before this show play (the empty scene is learnt there);
    ``rested_by``: the no-input bird had come to rest by then (the game's end, and a little more);
    ``learnt``: what ``learn`` gave for these runs (or for the run ``flap`` replays), else learnt here.
    """
    learnt = learnt or learn(base, flap, first, t0, played_until)
    if learnt.bird is None:
        return PipeRun(why="the bird could not be told from the scene", side="top" if rested_by is None else "bottom")
    rest = None if rested_by is None else \
        [base.frames[i].image for i in sorted(base.frames) if t0 + 0.1 <= i * base.every <= rested_by]
    return await pipe_run(flap, t0, action, learnt.bird, learnt.empty, t0 + WATCH, rest, learnt.scenes)
