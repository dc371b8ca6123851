"""Whether a person sees the balls where the page draws them: balls buried under what it paints after them.

A page can paint its floor (grass, sand, a ground strip) over its balls and bounce them on the
canvas's edge below it: the balls stay inside the canvas, but a person sees them sink into the
ground and lie buried there. What a person takes for the floor is where the balls are seen to
stop, so this is judged by sight, not by any painted band: a ball is hidden in a capture when the
inside of its disc looks just as that spot looks in a capture where no ball is near it (what is
painted there covers the ball), and seen when most of it differs. A band the balls are drawn over
(a skirting board behind them) hides nothing; grass tufts over a ball's lowest pixels hide little.

Only what can be told is judged: canvas captures of the arena the bodies are logged in, balls big
enough in the capture, a capture of the same spot with no ball near it, and a ball that was seen
before (a page that never shows its balls is no page a person calls buried). Pure functions.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from ..browser._frames import Frame
from ._bodies import Body, Track

__all__ = ["buried"]

INNER = 0.7          # the part of a ball's disc judged: its rim blends into what is around it in a capture
MIN_PIXELS = 4       # fewer capture pixels inside a ball: too small to tell
SAME_RGB = 24        # a pixel within this of the other capture on every channel looks the same
HIDDEN_SHARE = 0.85  # this share of the disc looks as with no ball there: the ball is hidden
SHOWN_SHARE = 0.5    # at most this share: the ball is seen
NEAR_PX = 2.0        # no body within this of the disc (canvas px): the spot shows what lies under a ball
MOST_BALLS = 24      # the largest this many balls drawn at the end are judged (a fountain's hundreds need not be)
LOOK_BACK = 40       # captures searched for a ball seen before it was hidden


def _disc(frame: Frame, size: tuple[int, int], x: float, y: float, r: float) -> list[int]:
    """The capture's pixel offsets inside the inner disc of a ball at (x, y) in arena px."""
    w, h = size
    sx, sy = frame.width / w, frame.height / h
    rr = INNER * r
    out = []
    for j in range(max(0, int((y - rr) * sy)), min(frame.height, int((y + rr) * sy) + 1)):
        cy = (j + 0.5) / sy
        for i in range(max(0, int((x - rr) * sx)), min(frame.width, int((x + rr) * sx) + 1)):
            cx = (i + 0.5) / sx
            if (cx - x) ** 2 + (cy - y) ** 2 <= rr * rr:
                out.append((j * frame.width + i) * 3)
    return out


def _same_share(a: Frame, b: Frame, pix: list[int]) -> float:
    pa, pb = a.pixels, b.pixels
    same = sum(1 for k in pix if max(abs(pa[k + c] - pb[k + c]) for c in range(3)) <= SAME_RGB)
    return same / len(pix)


class _Drawn:
    """The bodies logged at each capture, sorted by x: which are near a spot, found without a walk over all."""

    def __init__(self, bodies: list[list[Body]]) -> None:
        self.rows = [sorted(b) for b in bodies]
        self.xs = [[b[0] for b in row] for row in self.rows]
        self.widest = max((b[2] for row in self.rows for b in row), default=0.0)

    def clear(self, m: int, x: float, y: float, r: float) -> bool:
        """No body drawn over the inner disc of a ball at (x, y) in capture ``m``."""
        reach = INNER * r + self.widest + NEAR_PX
        row = self.rows[m]
        for bx, by, br, _ in row[bisect_left(self.xs[m], x - reach):bisect_right(self.xs[m], x + reach)]:
            if (bx - x) ** 2 + (by - y) ** 2 <= (INNER * r + br + NEAR_PX) ** 2:
                return False
        return True


def _hidden_share(frames: list[Frame], drawn: _Drawn, size: tuple[int, int], k: int,
                  x: float, y: float, r: float) -> float | None:
    """How much of a ball at (x, y) in capture ``k`` looks as that spot does with no ball near (None: cannot tell).

    The other capture is the nearest in time whose logged bodies leave the spot clear.
    """
    pix = _disc(frames[k], size, x, y, r)
    if len(pix) < MIN_PIXELS:
        return None
    for d in range(1, len(frames)):
        for m in (k - d, k + d):
            if 0 <= m < len(frames) and drawn.clear(m, x, y, r):
                return _same_share(frames[k], frames[m], pix)
    return None


def buried(tracks: list[Track], frames: list[Frame], log: list[tuple[float, list[Body]]],
           size: tuple[int, int]) -> str | None:
    """What shows that the balls lie hidden under what the page paints, at the end of the watch, or None.

    ``frames``: the run's captures in time order; ``log``: its bodies (t_ms, bodies). At the last
    capture with bodies logged at its moment, each ball drawn there is judged (see the module doc;
    the ``MOST_BALLS`` largest); at least half of those judged, and one or more, must be hidden, each
    seen at one of its ``LOOK_BACK`` captures before.
    """
    logged = {round(t, 1): b for t, b in log}
    shots = [f for f in frames if f.canvas_size == size and round(f.t_ms, 1) in logged]
    if len(shots) < 2:
        return None
    drawn = _Drawn([logged[round(f.t_ms, 1)] for f in shots])
    k_end = len(shots) - 1
    t_end = round(shots[k_end].t_ms, 1)
    judged, hidden, shown = 0, [], []
    for tr in tracks:
        at = {round(t, 1): (x, y, rs) for (t, x, y), rs in zip(tr.pts, tr.rs if len(tr.rs) == len(tr.pts)
                                                     else [tr.r] * len(tr.pts), strict=True)}
        if t_end in at:
            shown.append(at)
    for at in sorted(shown, key=lambda a: -a[t_end][2])[:MOST_BALLS]:
        x, y, r = at[t_end]
        end = _hidden_share(shots, drawn, size, k_end, x, y, r)
        if end is None:
            continue
        judged += 1
        if end < HIDDEN_SHARE:
            continue
        seen = None
        for k in [k for k in range(k_end - 1, -1, -1) if round(shots[k].t_ms, 1) in at][:LOOK_BACK]:
            t = round(shots[k].t_ms, 1)
            share = _hidden_share(shots, drawn, size, k, *at[t])
            if share is not None and share <= SHOWN_SHARE:
                seen = t
                break
        if seen is not None:
            hidden.append((r, x, y, seen, end))
    if not hidden or 2 * len(hidden) < judged:
        return None
    r, x, y, seen, end = max(hidden)
    more = f" ({len(hidden)} of the {judged} balls there)" if len(hidden) > 1 else ""
    return (f"at {t_end / 1000:.1f} s a ball (r={r:.0f}) at ({x:.0f}, {y:.0f}) is hidden under what the page paints "
            f"over it ({end:.0%} of it looks as the spot does with no ball), seen at {seen / 1000:.1f} s: the balls "
            f"sink into the floor a person sees{more}")
