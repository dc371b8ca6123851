"""Balls as bodies: follow what the page draws from sample to sample and judge it as a person would.

The clock script logs bodies every few frames (``PageSession.bodies``): circles drawn over each
other (a highlight, an outline, a drop shadow) are already one body there, the largest of them.
Here bodies are followed across samples (draw order first: pages redraw their balls in the same
order every frame; else the nearest body of similar size to where each was heading), and the
tracks are judged: a ball stays inside the arena (``out_of_bounds``), its rebounds lose height
(``bounces``). A track that never moves is decoration (a sun), not a ball. Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Body", "Track", "at_rest", "balls", "bounces", "follow", "out_of_bounds", "riders", "speeds"]

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


def _fits(tr: Track, b: Body, gate: float, t: float) -> float | None:
    if abs(b[2] - tr.r) > 0.12 * tr.r + 1.5:
        return None
    px, py = tr.predict(t)
    d = abs(b[0] - px) + abs(b[1] - py)
    return d if d <= gate else None


def follow(log: list[tuple[float, list[Body]]], size: tuple[int, int]) -> list[Track]:
    """Tracks of the bodies in ``log`` ([(t_ms, bodies)]), ``size`` the arena (w, h)."""
    gate = 0.25 * max(size)
    live: list[Track] = []  # kept in the order of the bodies they matched last (draw order)
    done: list[Track] = []
    for t, bodies in log:
        taken: dict[int, int] = {}  # index in live -> index in bodies
        if len(bodies) == len(live) and all(_fits(live[i], bodies[i], gate, t) is not None for i in range(len(live))):
            taken = {i: i for i in range(len(live))}
        elif live and bodies:
            pairs = sorted((d, i, j) for i, tr in enumerate(live) for j in range(len(bodies))
                           if (d := _fits(tr, bodies[j], gate, t)) is not None)
            used: set[int] = set()
            for _d, i, j in pairs:
                if i not in taken and j not in used:
                    taken[i] = j
                    used.add(j)
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


def riders(tracks: list[Track]) -> set[int]:
    """Indices of tracks that ride on another: a highlight, an outline, a drop shadow drawn with a ball.

    A rider keeps the same offset from its ball (within a px or two) and stays inside it for all
    the time both are drawn; the ball is the larger one (of two alike, the one drawn on top).
    Balls that merely pass over each other change their offset and stay apart.
    """
    at = [{p[0]: (p[1], p[2], tr.rs[k] if k < len(tr.rs) else tr.r, tr.order[k] if k < len(tr.order) else 0)
           for k, p in enumerate(tr.pts)} for tr in tracks]
    out: set[int] = set()
    for a in range(len(tracks)):
        for b in range(a + 1, len(tracks)):
            ta, tb = tracks[a], tracks[b]
            if ta.pts[-1][0] < tb.pts[0][0] or tb.pts[-1][0] < ta.pts[0][0]:
                continue
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


def balls(tracks: list[Track]) -> list[Track]:
    """The tracks that are balls: moving, and not riding on another ball."""
    moving = [tr for tr in tracks if tr.travel > 2]
    ride = riders(moving)
    return [tr for k, tr in enumerate(moving) if k not in ride]


def out_of_bounds(tracks: list[Track], size: tuple[int, int]) -> list[str]:
    """Each edge a ball visibly crosses (first time per edge): a few px of overlap are not seen."""
    w, h = size
    found: dict[str, tuple[float, str]] = {}
    slack = max(3.0, 0.006 * max(w, h))
    for tr in tracks:
        for (t, x, y), r in zip(tr.pts, tr.rs or [tr.r] * len(tr.pts), strict=False):
            tol = max(slack, 0.3 * r)
            for edge, over in (("floor", y + r - h), ("left wall", r - x), ("right wall", x + r - w), ("top", r - y)):
                if over > tol and (edge not in found or t < found[edge][0]):
                    what = "left the arena" if over > 2 * r else f"went {over:.0f} px past the {edge}"
                    found[edge] = (t, f"at {t / 1000:.2f} s a ball (r={r:.0f}) at ({x:.0f}, {y:.0f}) {what}")
    return [msg for _, msg in sorted(found.values())]


def bounces(pts: list[tuple[float, float, float]], floor_band: float) -> list[float]:
    """Rebound heights (px) after each floor bounce: apex height above the bounce point."""
    ys = [y for _, _, y in pts]
    heights, low = [], None
    for i in range(1, len(ys) - 1):
        if ys[i] >= ys[i - 1] and ys[i] > ys[i + 1] and ys[i] >= floor_band:  # bottom turnaround
            low = ys[i]
        elif low is not None and ys[i] <= ys[i - 1] and ys[i] < ys[i + 1]:  # top turnaround
            heights.append(low - ys[i])
            low = None
    return [h for h in heights if h > 2.0]


def at_rest(log: list[tuple[float, list[Body]]], since_ms: float, tol: float = 1.0) -> bool:
    """Whether every body drawn after ``since_ms`` stayed within ``tol`` px of where it was.

    Bodies are compared in draw order (the same count in every sample); a ball still jittering
    by under a pixel looks settled to a person; one sinking slowly moves more than that. No body at all is at rest too.
    """
    recent = [bodies for t, bodies in log if t >= since_ms]
    if len(recent) < 2:
        return False
    first = recent[0]
    for bodies in recent[1:]:
        if len(bodies) != len(first):
            return False
        for (x0, y0, _, _), (x, y, _, _) in zip(first, bodies, strict=True):
            if abs(x - x0) > tol or abs(y - y0) > tol:
                return False
    return True


def speeds(tracks: list[Track], t_from: float, t_to: float) -> list[float]:
    """Each ball's speed while it moves (px per virtual s) between ``t_from`` and ``t_to`` (ms).

    Its fastest sample-to-sample speed (of three or more): how fast it flies, not how long it
    then rests (a ball that settles sooner covers the same path in a fixed window).
    """
    out = []
    for tr in tracks:
        pts = [p for p in tr.pts if t_from <= p[0] <= t_to]
        vs = sorted((abs(b[1] - a[1]) + abs(b[2] - a[2])) / ((b[0] - a[0]) / 1000)
                    for a, b in zip(pts, pts[1:], strict=False) if b[0] > a[0])
        vs = [v for v in vs if v > 5]
        if len(vs) >= 3:
            out.append(vs[-1])
    return out
