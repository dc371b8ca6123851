"""Balls' tracks judged as a person would: a ball stays inside the arena (``out_of_bounds``), its
rebounds lose height (``bounces``), balls that collide trade height (``Contacts``), the balls come to
rest (``at_rest``) or go on as lively as ever (``unsettled``), how fast they fly (``speeds``) and how
much they still move later on (``motion``).
Pure functions over ``_bodies``' tracks.
"""

from __future__ import annotations

from ..browser._perception import SEEN_PX, SEEN_S, STILL_PX, lasts, overlap_seen, spells
from ._bodies import Body, Track

__all__ = ["Contacts", "at_rest", "bounces", "flight_speeds", "motion", "out_of_bounds", "rebounds", "roll_slowing",
           "speeds", "thinned", "unsettled"]

_EDGES = (("floor", lambda x, y, r, w, h: y + r - h), ("left wall", lambda x, y, r, w, h: r - x),
          ("right wall", lambda x, y, r, w, h: x + r - w), ("top", lambda x, y, r, w, h: r - y))


def out_of_bounds(tracks: list[Track], size: tuple[int, int], end_ms: float | None = None) -> list[str]:
    """Each edge a ball visibly crosses (first time per edge), as a person would see it.

    Seen means far enough (``overlap_seen``: a few px, a third of a big ball) for long enough
    (``SEEN_S``: a ball drawn past the floor for a frame or two as it bounces, or spawned over
    an edge and pushed in at once, flashes by). A ball last drawn past an edge that is never drawn
    again before ``end_ms`` (the end of the watch) left the arena: that is seen however short.
    """
    w, h = size
    found: dict[str, tuple[float, str]] = {}
    for tr in tracks:
        rs = tr.rs if len(tr.rs) == len(tr.pts) else [tr.r] * len(tr.pts)
        times = [p[0] for p in tr.pts]
        gone = end_ms is not None and times[-1] < end_ms - 1e-6
        for edge, past in _EDGES:
            overs = [past(x, y, r, w, h) for (_, x, y), r in zip(tr.pts, rs, strict=True)]
            wrong = [o > overlap_seen(r, size) for o, r in zip(overs, rs, strict=True)]
            for start, dur, k0, k1 in spells(times, wrong):
                left = gone and k1 == len(times) - 1
                if not (lasts(dur) or left) or (edge in found and start >= found[edge][0]):
                    continue
                k = max(range(k0, k1 + 1), key=lambda i: overs[i])
                _, x, y = tr.pts[k]
                r, over = rs[k], overs[k]
                what = "left the arena" if over > 2 * r else f"went {over:.0f} px past the {edge}"
                if left:
                    how = "and was not drawn again"
                elif k1 == len(times) - 1 and end_ms is not None:
                    how = f"and stayed there ({dur / 1000:.1f} s, to the end of the watch)"
                else:
                    how = f"for {max(dur, SEEN_S * 1000) / 1000:.2f} s"
                found[edge] = (start, f"at {start / 1000:.2f} s a ball (r={r:.0f}) at ({x:.0f}, {y:.0f}) "
                               f"{what} {how}")
                break
    return [msg for _, msg in sorted(found.values())]


def rebounds(pts: list[tuple[float, float, float]], floor_band: float) -> list[tuple[float, float, float]]:
    """(t of the bounce, t of the apex after it, rebound height px) for each floor bounce.

    A bounce is a bottom turnaround below ``floor_band`` (y down); its rebound height is how far
    above that point the ball turns back down next.
    """
    out, low = [], None
    for i in range(1, len(pts) - 1):
        y0, y, y1 = pts[i - 1][2], pts[i][2], pts[i + 1][2]
        if y >= y0 and y > y1 and y >= floor_band:  # bottom turnaround
            low = (pts[i][0], y)
        elif low is not None and y <= y0 and y < y1:  # top turnaround
            out.append((low[0], pts[i][0], low[1] - y))
            low = None
    return [r for r in out if r[2] > 2.0]


def bounces(pts: list[tuple[float, float, float]], floor_band: float) -> list[float]:
    """Rebound heights (px) after each floor bounce: apex height above the bounce point."""
    return [h for _, _, h in rebounds(pts, floor_band)]


class Contacts:
    """Which balls hit another one when: balls that collide trade height, which is no gain.

    A hit is two balls drawn touching (within ``SEEN_PX`` of the sum of their radii) on a page
    whose balls are solid: where balls are seen passing through each other (one sunk more than
    the smaller's radius into another for ``SEEN_S``), touching exchanges nothing.
    """

    def __init__(self, tracks: list[Track]) -> None:
        self.tracks = tracks
        self.at: list[dict[float, tuple[float, float, float]]] = []
        self.drawn: dict[float, list[int]] = {}
        for k, tr in enumerate(tracks):
            rs = tr.rs if len(tr.rs) == len(tr.pts) else [tr.r] * len(tr.pts)
            self.at.append({t: (x, y, r) for (t, x, y), r in zip(tr.pts, rs, strict=True)})
            for t, _, _ in tr.pts:
                self.drawn.setdefault(t, []).append(k)
        self._solid: bool | None = None

    @property
    def solid(self) -> bool:
        """Whether no two balls are ever seen passing through each other."""
        if self._solid is None:
            self._solid = True
            widest = max((r for a in self.at for _, _, r in a.values()), default=0.0)
            before: dict[tuple[int, int], float] = {}  # deep pairs -> since when
            for t in sorted(self.drawn):
                row = sorted((self.at[k][t][0], k) for k in self.drawn[t])
                now: dict[tuple[int, int], float] = {}
                for n, (xa, a) in enumerate(row):
                    _, ya, ra = self.at[a][t]
                    for xb, b in row[n + 1:]:
                        if xb - xa > widest:
                            break
                        _, yb, rb = self.at[b][t]
                        if ra + rb - ((xa - xb) ** 2 + (ya - yb) ** 2) ** 0.5 > min(ra, rb):
                            key = (min(a, b), max(a, b))
                            now[key] = before.get(key, t)
                            if lasts(t - now[key]):
                                self._solid = False
                                return False
                before = now
        return self._solid

    def touched(self, k: int, t_from: float, t_to: float) -> bool:
        """Whether ball ``k`` hit another between ``t_from`` and ``t_to`` (ms).

        Samples are frames apart and a fast hit lasts one frame: balls drawn within their
        relative step since the previous sample of touching (the step is how far the gap can
        have closed in between) count as a hit.
        """
        if not self.solid:
            return False
        prev: float | None = None
        for t, (x, y, r) in self.at[k].items():
            if t_from <= t <= t_to:
                for other in self.drawn.get(t, ()):
                    if other == k:
                        continue
                    xo, yo, ro = self.at[other][t]
                    step = 0.0
                    if prev is not None and prev in self.at[other]:
                        px, py, _ = self.at[k][prev]
                        qx, qy, _ = self.at[other][prev]
                        step = (((x - xo) - (px - qx)) ** 2 + ((y - yo) - (py - qy)) ** 2) ** 0.5
                    if (xo - x) ** 2 + (yo - y) ** 2 <= (r + ro + SEEN_PX + step) ** 2:
                        return True
            prev = t
        return False


def at_rest(log: list[tuple[float, list[Body]]], since_ms: float, tol: float = STILL_PX) -> bool:
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


SPEED_WINDOW_MS = 50.0  # a ball's speed is its displacement over this span (virtual ms), at both rates


def speeds(tracks: list[Track], t_from: float, t_to: float) -> list[float]:
    """Each ball's speed while it moves (px per virtual s) between ``t_from`` and ``t_to`` (ms).

    Its fastest displacement over ``SPEED_WINDOW_MS`` (from three such spans or more): how fast it
    flies, not how long it then rests (a ball that settles sooner covers the same path in a fixed
    window). The span is the same at both rates: sample to sample, a ball a timer moves 60 times a
    second moved once in some 12.5 ms spans at 240 Hz and not in others, and its fastest span read
    1.3x to 2.7x its speed (a good page failed refresh-rate for one seed in three).
    """
    out = []
    for tr in tracks:
        pts = [p for p in tr.pts if t_from <= p[0] <= t_to]
        vs = []
        j = 0
        for i, a in enumerate(pts):
            j = max(j, i + 1)
            while j < len(pts) and pts[j][0] - a[0] < SPEED_WINDOW_MS - 1e-6:
                j += 1
            if j >= len(pts):
                break
            b = pts[j]
            if b[0] - a[0] > 1.6 * SPEED_WINDOW_MS:
                continue  # a gap in the track: no span of the window's length here
            vs.append((abs(b[1] - a[1]) + abs(b[2] - a[2])) / ((b[0] - a[0]) / 1000))
        vs = sorted(v for v in vs if v > 5)
        if len(vs) >= 3:
            out.append(vs[-1])
    return out


def flight_speeds(tracks: list[Track], t_from: float, t_to: float) -> list[float]:
    """Each ball's speed (px per virtual s) from when it is first seen after ``t_from`` to its first contact.

    What a person compares between two displays: how fast the balls fly before anything hits
    them, which does not depend on where collisions later send them. A contact is where a ball
    turns back sideways (a wall, another ball) or turns up from falling (the floor, a ball
    below); the top of a throw is none. Path length over time, from three samples or more.
    """
    out = []
    for tr in tracks:
        pts = [p for p in tr.pts if t_from <= p[0] <= t_to]
        end = len(pts)
        for k in range(2, len(pts)):
            dx0, dx1 = pts[k - 1][1] - pts[k - 2][1], pts[k][1] - pts[k - 1][1]
            dy0, dy1 = pts[k - 1][2] - pts[k - 2][2], pts[k][2] - pts[k - 1][2]
            if (dx0 * dx1 < 0 and min(abs(dx0), abs(dx1)) > STILL_PX) or (dy0 > STILL_PX and dy1 < -STILL_PX):
                end = k
                break
        seg = pts[:end]
        if len(seg) < 3 or seg[-1][0] <= seg[0][0]:
            continue
        path = sum(((b[1] - a[1]) ** 2 + (b[2] - a[2]) ** 2) ** 0.5 for a, b in zip(seg, seg[1:], strict=False))
        v = path / ((seg[-1][0] - seg[0][0]) / 1000)
        if v > 5:
            out.append(v)
    return out


SETTLE_WINDOW_MS = 10_000.0  # the end of a watch and the span before it, compared (``unsettled``)
LIVELY_PX = 6.0  # a ball that stays within this many px a whole window looks settled (a pile's jiggle)


def _rate(pts: list[tuple[float, float, float]], axis: int) -> float:
    """How far a ball moves along ``axis`` (1: x, 2: y) per virtual s over ``pts``, turns included."""
    secs = (pts[-1][0] - pts[0][0]) / 1000
    return sum(abs(b[axis] - a[axis]) for a, b in zip(pts, pts[1:], strict=False)) / secs if secs > 0 else 0.0


def _landing(pts: list[tuple[float, float, float]], floor_y: float) -> list[tuple[float, float, float]]:
    """The first second a ball spends on the floor (within a few px of ``floor_y``), or []."""
    start = None
    for k, p in enumerate(pts):
        if abs(p[2] - floor_y) > LIVELY_PX / 2:
            start = None
            continue
        start = k if start is None else start
        if p[0] - pts[start][0] >= 1000:
            return pts[start:k + 1]
    return []


def _turns(vals: list[float]) -> int:
    """How many times ``vals`` turn back (by more than a pixel a step)."""
    steps = [b - a for a, b in zip(vals, vals[1:], strict=False) if abs(b - a) > STILL_PX]
    return sum(1 for a, b in zip(steps, steps[1:], strict=False) if a * b < 0)


def unsettled(tracks: list[Track], end_ms: float, size: tuple[int, int],
              window_ms: float = SETTLE_WINDOW_MS) -> str | None:
    """What shows that the balls never settle at the end of a watch that ran its full time, or None.

    A ball that still hops as much in the last ``window_ms`` as in the span before (a minimum
    bounce: energy given back every bounce), or rolls along the floor faster than when it landed
    and no slower than in the span before (rolling that gains energy). Visible motion only: a ball
    that moves less than ``LIVELY_PX`` in the last window (at rest, jiggling in a pile) is settled;
    one slowing down, however slowly, is settling; one rolling on at the speed it landed with (no
    friction) loses nothing but gains nothing either. A ball must be drawn in the arena (``size``)
    through both spans: one gone from it is ``out_of_bounds``' to judge, a fountain's short-lived
    balls are judged by their bounces.
    """
    w, h = size
    found: list[tuple[float, str]] = []
    for tr in tracks:
        shown = [p for p in tr.pts if -tr.r <= p[1] <= w + tr.r and -tr.r <= p[2] <= h + tr.r]
        early = [p for p in shown if end_ms - 2 * window_ms <= p[0] < end_ms - window_ms]
        late = [p for p in shown if p[0] >= end_ms - window_ms]
        if len(early) < 10 or len(late) < 10 or late[-1][0] < end_ms - 0.1 * window_ms \
                or early[0][0] > end_ms - 1.9 * window_ms:
            continue
        xs, ys = [p[1] for p in late], [p[2] for p in late]
        dx, dy = max(xs) - min(xs), max(ys) - min(ys)
        if dy >= LIVELY_PX and _turns(ys) >= 2:
            now, before = _rate(late, 2), _rate(early, 2)
            if now >= 0.9 * before:
                found.append((now, f"a ball (r={tr.r:.0f}) still hops {dy:.0f} px high at {end_ms / 1000:.0f} s, "
                              f"as lively as in the {window_ms / 1000:.0f} s before ({now:.0f} px/s up and down, "
                              f"{before:.0f} px/s before)"))
        elif dy < LIVELY_PX and dx >= LIVELY_PX:
            now, before = _rate(late, 1), _rate(early, 1)
            landed = _landing(tr.pts, sum(ys) / len(ys))
            first = _rate(landed, 1) if landed else now
            if now >= 0.9 * before and now >= 1.5 * first + 20:
                found.append((now, f"a ball (r={tr.r:.0f}) rolls faster and faster along the floor: "
                              f"{first:.0f} px/s when it landed at {landed[0][0] / 1000:.0f} s, {now:.0f} px/s "
                              f"at {end_ms / 1000:.0f} s"))
    if not found:
        return None
    found.sort(reverse=True)
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return found[0][1] + more


def thinned(log: list[tuple[float, list[Body]]], spacing_ms: float) -> list[tuple[float, list[Body]]]:
    """The samples of ``log`` at least ``spacing_ms`` apart: two rates' logs compared at one spacing."""
    out: list[tuple[float, list[Body]]] = []
    for t, bodies in log:
        if not out or t - out[-1][0] >= spacing_ms - 1.0:
            out.append((t, bodies))
    return out


def motion(tracks: list[Track], t_from: float, t_to: float) -> float:
    """How far the balls move together (px per virtual s) between ``t_from`` and ``t_to`` (ms).

    Every step of every ball in that span, a step of a pixel or less (a pile's jiggle) left out:
    balls that roll on keep adding to it, balls at rest add nothing.
    """
    secs = (t_to - t_from) / 1000
    if secs <= 0:
        return 0.0
    path = 0.0
    for tr in tracks:
        pts = [p for p in tr.pts if t_from <= p[0] <= t_to]
        for a, b in zip(pts, pts[1:], strict=False):
            step = ((b[1] - a[1]) ** 2 + (b[2] - a[2]) ** 2) ** 0.5
            if step > STILL_PX:
                path += step
    return path / secs


ROLL_STEP_MS = 100.0  # a rolling ball's speed is read over this span (two of ``thinned``'s 50 ms samples)
ROLL_MIN_V = 15.0     # px per virtual s: slower is at rest to a person


def roll_slowing(tracks: list[Track], t_to: float) -> list[tuple[float, float]]:
    """(speed px/s, share of its speed lost per virtual s) wherever a ball rolls along a flat floor, up to ``t_to``.

    Rolling: three samples ``ROLL_STEP_MS`` apart at one height (within a pixel), moving one way
    faster than ``ROLL_MIN_V``, slowing, and touching no other ball (a hit or a pile is no rolling;
    on a page whose balls pass through each other, touching is nothing). Friction that
    follows time takes the same share at the same speed on any display; one taken per frame takes
    four times the share at 240 Hz.
    """
    out = []
    drawn: dict[float, list[tuple[int, float, float, float]]] = {}
    for k, tr in enumerate(tracks):
        for (t, x, y), r in zip(tr.pts, tr.rs if len(tr.rs) == len(tr.pts) else [tr.r] * len(tr.pts), strict=True):
            drawn.setdefault(round(t, 1), []).append((k, x, y, r))

    solid = Contacts(tracks).solid  # balls that pass through each other exchange nothing when they touch

    def alone(k: int, t: float, x: float, y: float) -> bool:  # no other ball touching it (a hit, a pile)
        return not solid or all(j == k or (xo - x) ** 2 + (yo - y) ** 2 > (tracks[k].r + ro + 2 * SEEN_PX) ** 2
                   for j, xo, yo, ro in drawn.get(round(t, 1), ()))

    for k, tr in enumerate(tracks):
        pts = [p for p in tr.pts if p[0] <= t_to]
        at = {round(p[0], 1): p for p in pts}
        for p0 in pts:
            p1 = at.get(round(p0[0] + ROLL_STEP_MS, 1))
            p2 = at.get(round(p0[0] + 2 * ROLL_STEP_MS, 1))
            if p1 is None or p2 is None or max(abs(p1[2] - p0[2]), abs(p2[2] - p1[2])) > STILL_PX:
                continue
            if not all(alone(k, *p) for p in (p0, p1, p2)):
                continue
            d1, d2 = p1[1] - p0[1], p2[1] - p1[1]
            secs = ROLL_STEP_MS / 1000
            v1, v2 = abs(d1) / secs, abs(d2) / secs
            if d1 * d2 <= 0 or min(v1, v2) < ROLL_MIN_V or v2 > v1:
                continue
            v = (v1 + v2) / 2
            out.append((v, (v1 - v2) / secs / v))
    return out
