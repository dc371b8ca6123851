"""Balls as bodies: follow what the page draws from sample to sample and judge it as a person would.

The clock script logs bodies every few frames (``PageSession.bodies``): circles drawn over each
other (a highlight, an outline, a drop shadow) are already one body there, the largest of them.
Here bodies are followed across samples (draw order first: pages redraw their balls in the same
order every frame; else the nearest body of similar size to where each was heading) into tracks;
``_tracks.py`` judges them. A track that never moves is decoration (a sun), not a ball; nor are
circles drawn rigidly into each other (a cloud's puffs). Pure functions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

__all__ = ["Body", "Track", "balls", "follow", "parts", "riders"]

Body = tuple[float, float, float, int]  # x, y, r (arena px), colour id


@dataclass
class Track:
    """One ball over time: (t_ms, x, y) points, its radius and colour ids as drawn."""

    pts: list[tuple[float, float, float]] = field(default_factory=list)
    rs: list[float] = field(default_factory=list)  # the radius drawn at each point
    order: list[int] = field(default_factory=list)  # where in the frame's drawing it came
    r: float = 0.0
    colours: set[int] = field(default_factory=set)
    miss: int = 0

    def predict(self, t: float) -> tuple[float, float]:
        t1, x1, y1 = self.pts[-1]
        if len(self.pts) < 2:
            return x1, y1
        t0, x0, y0 = self.pts[-2]
        k = (t - t1) / max(1e-6, t1 - t0)
        return x1 + (x1 - x0) * k, y1 + (y1 - y0) * k

    @property
    def travel(self) -> float:
        """Largest distance from where the ball was first seen (px)."""
        _, x0, y0 = self.pts[0]
        return max(abs(x - x0) + abs(y - y0) for _, x, y in self.pts)


def _fit(r: float, at: tuple[float, float], b: Body, gate: float) -> float | None:
    """How far body ``b`` is from where a track of radius ``r`` was heading (``at``), if it may be that track."""
    if abs(b[2] - r) > 0.12 * r + 1.5:
        return None
    d = abs(b[0] - at[0]) + abs(b[1] - at[1])
    return d if d <= gate else None


def _in_order(live: list[Track], heads: list[tuple[float, float]], bodies: list[Body],
              near: float) -> dict[int, int]:
    """Tracks matched to bodies in draw order, read as a diff of the two samples.

    Pages redraw their balls in the same order, dropping some (the oldest, the gone) and adding
    others between two samples: walking both lists, a track takes the next body when that body
    is within ``near`` of where the track was heading; else a few bodies ahead (some were added)
    or tracks ahead (some were dropped) are tried. What is left goes to ``_nearest``. Linear in
    the number of bodies, so a fountain of hundreds of balls is followed as fast as a few.
    """
    taken: dict[int, int] = {}
    i = j = 0
    nl, nb = len(live), len(bodies)
    while i < nl and j < nb:
        if _fit(live[i].r, heads[i], bodies[j], near) is not None:
            taken[i] = j
            i, j = i + 1, j + 1
            continue
        skip_b = next((k for k in range(j + 1, min(j + _AHEAD, nb))
                       if _fit(live[i].r, heads[i], bodies[k], near) is not None), None)
        skip_t = next((k for k in range(i + 1, min(i + _AHEAD, nl))
                       if _fit(live[k].r, heads[k], bodies[j], near) is not None), None)
        if skip_b is not None and (skip_t is None or skip_b - j <= skip_t - i):
            j = skip_b
        elif skip_t is not None:
            i = skip_t
        else:
            i, j = i + 1, j + 1
    return taken


_AHEAD = 7  # how many bodies (tracks) a diff step looks ahead for ones added (dropped)


def _nearest(live: list[Track], heads: list[tuple[float, float]], bodies: list[Body], gate: float,
             near: float, taken: dict[int, int] | None = None) -> dict[int, int]:
    """Tracks matched to bodies nearest first (each pair within ``gate`` of where the track was heading).

    The same matching as sorting every pair, made fast for hundreds of balls: the pairs closer
    than ``near`` (they come first in that order) are found through a grid of ``near``-sized cells;
    only what they leave is paired with everything.
    """
    taken = dict(taken or {})
    used: set[int] = set(taken.values())
    grid: dict[tuple[int, int], list[int]] = {}
    for j, b in enumerate(bodies):
        if j in used:
            continue
        grid.setdefault((int(b[0] // near), int(b[1] // near)), []).append(j)
    close: list[tuple[float, int, int]] = []
    for i, tr in enumerate(live):
        if i in taken:
            continue
        at = heads[i]
        cx, cy = int(at[0] // near), int(at[1] // near)
        for gx in (cx - 1, cx, cx + 1):
            for gy in (cy - 1, cy, cy + 1):
                for j in grid.get((gx, gy), ()):
                    if (d := _fit(tr.r, at, bodies[j], near)) is not None:
                        close.append((d, i, j))
    def pick(pairs: list[tuple[float, int, int]]) -> None:
        for _d, i, j in sorted(pairs):
            if i not in taken and j not in used:
                taken[i] = j
                used.add(j)

    pick(close)
    rest_b = [j for j in range(len(bodies)) if j not in used]
    pick([(d, i, j) for i in range(len(live)) if i not in taken for j in rest_b
          if (d := _fit(live[i].r, heads[i], bodies[j], gate)) is not None and d > near])
    return taken


def follow(log: list[tuple[float, list[Body]]], size: tuple[int, int]) -> list[Track]:
    """Tracks of the bodies in ``log`` ([(t_ms, bodies)]), ``size`` the arena (w, h).

    Draw order first (``_in_order``); then each track left takes the nearest body left of similar
    size to where it was heading (``_nearest``), within a quarter of the arena.
    """
    gate = 0.25 * max(size)
    near = 0.04 * max(size)
    live: list[Track] = []  # kept in the order of the bodies they matched last (draw order)
    done: list[Track] = []
    for t, bodies in log:
        taken: dict[int, int] = {}  # index in live -> index in bodies
        if live and bodies:
            heads = [tr.predict(t) for tr in live]
            taken = _in_order(live, heads, bodies, near)
            if len(taken) < min(len(live), len(bodies)):
                taken = _nearest(live, heads, bodies, gate, near, taken)
        keyed: list[tuple[float, Track]] = []
        for i, tr in enumerate(live):
            j = taken.get(i)
            if j is None:
                tr.miss += 1
                if tr.miss > 3:
                    done.append(tr)
                else:
                    keyed.append((len(bodies) + i, tr))
                continue
            x, y, r, c = bodies[j]
            tr.pts.append((t, x, y))
            tr.rs.append(r)
            tr.order.append(j)
            tr.r, tr.miss = r, 0
            tr.colours.add(c)
            keyed.append((j, tr))
        matched = set(taken.values())
        for j, (x, y, r, c) in enumerate(bodies):
            if j not in matched:
                keyed.append((j, Track(pts=[(t, x, y)], rs=[r], order=[j], r=r, colours={c})))
        live = [tr for _, tr in sorted(keyed, key=lambda kt: kt[0])]
    return [tr for tr in done + live if len(tr.pts) >= 3]


def _drawn(tracks: list[Track]) -> tuple[list[dict[float, tuple[float, float, float, int]]],
                                         dict[float, list[tuple[float, int]]], float]:
    """Where each track is drawn: per track, t -> (x, y, r, drawing order); t -> (x, track) sorted by x;
    the widest radius drawn (``riders`` and ``parts`` read the same index)."""
    at = [{p[0]: (p[1], p[2], tr.rs[k] if k < len(tr.rs) else tr.r, tr.order[k] if k < len(tr.order) else 0)
           for k, p in enumerate(tr.pts)} for tr in tracks]
    drawn_at: dict[float, list[tuple[float, int]]] = {}
    for k, tr in enumerate(tracks):
        for p in tr.pts:
            drawn_at.setdefault(p[0], []).append((p[1], k))
    for row in drawn_at.values():
        row.sort()
    return at, drawn_at, max((r for tr in tracks for r in tr.rs), default=0.0)


def riders(tracks: list[Track]) -> set[int]:
    """Indices of tracks that ride on another: a highlight, an outline, a drop shadow drawn with a ball.

    A rider keeps the same offset from its ball (within a px or two) and stays inside it for all
    the time both are drawn; the ball is the larger one (of two alike, the one drawn on top).
    Balls that merely pass over each other change their offset and stay apart.
    """
    at, drawn_at, widest = _drawn(tracks)
    out: set[int] = set()
    for later_one, tr in enumerate(tracks):
        t0 = tr.pts[0][0]  # the first time the two are drawn together: when the later one starts
        xs, ys, rs_, _ = at[later_one][t0]
        row = drawn_at[t0]
        lo = bisect_left(row, (xs - widest - rs_, -1))
        hi = bisect_right(row, (xs + widest + rs_, len(tracks)))
        for _x, other in row[lo:hi]:
            if other == later_one or (tracks[other].pts[0][0] == t0 and other > later_one):
                continue  # the pair is looked at once, from its later-starting track
            xo, yo, ro, _ = at[other][t0]
            if (xo - xs) ** 2 + (yo - ys) ** 2 >= max(ro, rs_) ** 2:
                continue  # apart when first drawn together: not a rider
            a, b = min(other, later_one), max(other, later_one)
            ta, tb = tracks[a], tracks[b]
            common = [t for t in at[a] if t in at[b]]
            if len(common) < 3:
                continue
            picks = [common[round(k * (len(common) - 1) / 9)] for k in range(10)] if len(common) > 10 else common
            offs, inside, later = [], True, 0
            for t in picks:
                xa, ya, ra, oa = at[a][t]
                xb, yb, rb, ob = at[b][t]
                big = max(ra, rb)
                if (xa - xb) ** 2 + (ya - yb) ** 2 >= big * big:
                    inside = False
                    break
                offs.append((xa - xb, ya - yb))
                later += 1 if ob > oa else -1
            if not inside:
                continue
            big = max(ta.r, tb.r)
            if max(o[0] for o in offs) - min(o[0] for o in offs) > max(1.5, 0.1 * big) or \
                    max(o[1] for o in offs) - min(o[1] for o in offs) > max(1.5, 0.1 * big):
                continue
            if abs(ta.r - tb.r) <= 0.1 * big:
                out.add(a if later > 0 else b)  # alike: the one drawn on top is the ball
            else:
                out.add(a if ta.r < tb.r else b)
    return out


_PART_OVERLAP = 0.8  # circles of one figure: their centres closer than this share of their radii's sum


def parts(tracks: list[Track]) -> set[int]:
    """Indices of tracks that are parts of one figure with another: circles drawn well into each
    other, neither centre inside the other (riders are those), at the same offset all the time
    both are drawn. A cloud's puffs drifting across the sky, a caterpillar's segments: a person
    sees one shape, not balls. Balls that touch or pass through each other change their offset,
    and balls are not drawn half inside one another for as long as both are seen.
    """
    at, drawn_at, widest = _drawn(tracks)
    out: set[int] = set()
    for later_one, tr in enumerate(tracks):
        t0 = tr.pts[0][0]  # the first time the two are drawn together: when the later one starts
        xs, ys, rs_, _ = at[later_one][t0]
        row = drawn_at[t0]
        lo = bisect_left(row, (xs - widest - rs_, -1))
        hi = bisect_right(row, (xs + widest + rs_, len(tracks)))
        for _x, other in row[lo:hi]:
            if other == later_one or (tracks[other].pts[0][0] == t0 and other > later_one):
                continue  # the pair is looked at once, from its later-starting track
            xo, yo, ro, _ = at[other][t0]
            d2 = (xo - xs) ** 2 + (yo - ys) ** 2
            if d2 < max(ro, rs_) ** 2 or d2 >= (_PART_OVERLAP * (ro + rs_)) ** 2:
                continue  # not one figure when first drawn together
            a, b = min(other, later_one), max(other, later_one)
            common = [t for t in at[a] if t in at[b]]
            if len(common) < 5:
                continue
            picks = [common[round(k * (len(common) - 1) / 9)] for k in range(10)] if len(common) > 10 else common
            offs = []
            for t in picks:
                xa, ya, ra, _ = at[a][t]
                xb, yb, rb, _ = at[b][t]
                d2 = (xa - xb) ** 2 + (ya - yb) ** 2
                if d2 < max(ra, rb) ** 2 or d2 >= (_PART_OVERLAP * (ra + rb)) ** 2:
                    break  # a centre inside the other (a rider's case), or not well into each other
                offs.append((xa - xb, ya - yb))
            else:
                big = max(tracks[a].r, tracks[b].r)
                if max(o[0] for o in offs) - min(o[0] for o in offs) <= max(1.5, 0.1 * big) and \
                        max(o[1] for o in offs) - min(o[1] for o in offs) <= max(1.5, 0.1 * big):
                    out |= {a, b}
    return out


def balls(tracks: list[Track]) -> list[Track]:
    """The tracks that are balls: moving, not riding on another ball, and not part of a figure."""
    moving = [tr for tr in tracks if tr.travel > 2]
    left_out = riders(moving) | parts(moving)
    return [tr for k, tr in enumerate(moving) if k not in left_out]
