"""Flappy refresh-rate: do the pipes scroll at the same pace at 60 and 240 Hz?

A game can move its bird by time and its pipes by frames (``x -= 2.5`` each animation frame):
the bird, the sky and the ground look alike at both rates and the whole-screen fit passes, while a
person at 240 Hz sees the pipes rush past four times as fast. The top pipes hang from the top
edge, so the game's top band (``top_columns``) shows each as a run of covered columns; each run's
edges are followed from capture to capture as they move left, and the pace of each edge is fitted
(capture px per virtual s). Compared at the same times at both rates: pipes that follow time
scroll at one pace whatever their heights or spacing; pipes that follow frames scroll
``OTHER_SPEED`` times faster (or more) at 240 Hz.

The pixel runs are read first (60 Hz to its end, 240 Hz to ``T240``); where the first pipe comes
later than that, one more 240 Hz run of the same script is played as long as the 60 Hz run.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..browser._frames import Frame
from ..browser._imaging import Image, diff_mask
from ..browser._perception import OTHER_SPEED
from ..browser._refresh import CAP60, InputStep, Runs, play_rate
from ..browser._registry import ProbeContext

__all__ = ["PIPE_BAND", "Pace", "edge_paces", "pipe_pace", "top_columns"]

PIPE_BAND = 0.15      # the top share of the game's rows, where its top pipes hang

EDGE_STEP = 8      # capture px an edge may move left between two captures (a 4x fast full-width game: ~3)
EDGE_BACK = 1      # ... or right (a pixel of rounding)
TRACK_MIN = 5      # captures an edge is followed in at least
MOVED_MIN = 3      # capture px it moved at least
FIT_PX = 1.5       # every point of a followed edge within this of its fitted line (no shake, no jumps)
TRACKS_MIN = 2     # edges with a pace at each rate, at least, to judge


@dataclass(frozen=True)
class Pace:
    """The pipes' pace at each rate (capture px per virtual s, leftward positive) over the same span."""

    p60: float
    p240: float
    n60: int
    n240: int
    until: float
    played: bool     # a 240 Hz run of its own was played (the pixel run ended before pipes came)

    @property
    def ratio(self) -> float:
        return self.p240 / self.p60

    @property
    def apart(self) -> bool:
        return self.ratio >= OTHER_SPEED or self.ratio <= 1 / OTHER_SPEED


def _edges(cols: list[bool], lo: int, hi: int) -> tuple[list[int], list[int]]:
    """Left edges of the covered runs that do not touch ``lo``, right edges of those that do not touch ``hi``."""
    lefts, rights = [], []
    x = lo
    while x <= hi:
        if not cols[x]:
            x += 1
            continue
        x0 = x
        while x + 1 <= hi and cols[x + 1]:
            x += 1
        if x0 > lo:
            lefts.append(x0)
        if x < hi:
            rights.append(x)
        x += 1
    return lefts, rights


def _follow(series: list[tuple[float, list[int]]]) -> list[list[tuple[float, int]]]:
    """Edges linked from capture to capture: each to the nearest one a step to its right before."""
    done: list[list[tuple[float, int]]] = []
    live: list[list[tuple[float, int]]] = []
    for t, xs in series:
        nxt: list[list[tuple[float, int]]] = []
        free = list(live)
        for x in sorted(xs):
            best = min((tr for tr in free if -EDGE_BACK <= tr[-1][1] - x <= EDGE_STEP),
                       key=lambda tr: abs(tr[-1][1] - x), default=None)
            if best is None:
                nxt.append([(t, x)])
            else:
                free.remove(best)
                best.append((t, x))
                nxt.append(best)
        done.extend(free)
        live = nxt
    return done + live


def _pace(track: list[tuple[float, int]]) -> float | None:
    """The leftward pace of one followed edge over its moving part, or None (too short, still, or jumpy)."""
    end = track[-1][1]
    k = len(track)
    while k > 1 and track[k - 2][1] == end:
        k -= 1  # the game stopped: the edge stands still from here
    start = track[0][1]
    j = 0
    while j < k - 1 and track[j + 1][1] == start:
        j += 1
    part = track[j:k]
    if len(part) < TRACK_MIN or part[0][1] - part[-1][1] < MOVED_MIN:
        return None
    ts, xs = [p[0] for p in part], [p[1] for p in part]
    mt, mx = statistics.fmean(ts), statistics.fmean(xs)
    var = sum((t - mt) ** 2 for t in ts)
    if var <= 0:
        return None
    slope = sum((t - mt) * (x - mx) for t, x in zip(ts, xs, strict=True)) / var
    if any(abs(x - (mx + slope * (t - mt))) > FIT_PX for t, x in part):
        return None
    return -slope if slope < 0 else None


def edge_paces(bands: list[tuple[float, list[bool]]], lo: int, hi: int) -> list[float]:
    """The pace of every edge of the top pipes followed in ``bands`` ((time, covered columns) in time order)."""
    lefts = [(t, _edges(cols, lo, hi)[0]) for t, cols in bands]
    rights = [(t, _edges(cols, lo, hi)[1]) for t, cols in bands]
    out = []
    for series in (lefts, rights):
        for track in _follow(series):
            p = _pace(track)
            if p is not None:
                out.append(p)
    return out


def top_columns(img: Image, ref: Image) -> list[bool]:
    """Per column: do its top rows (``PIPE_BAND``) mostly differ from ``ref`` (the screen before the start)?

    Flappy's top pipes hang from the top edge wherever their gap is, so the columns covered at
    the top count the pipes on screen whatever their random heights.
    """
    w, h = img.width, img.height
    rows = max(2, round(h * PIPE_BAND))
    mask = diff_mask(img.crop_rows(0, rows), ref.crop_rows(0, rows), 60)  # the band only
    return [sum(mask[y * w + x] for y in range(rows)) * 2 >= rows for x in range(w)]


def _bands(frames: list[Frame], ref: Image, t0: float, until: float) -> list[tuple[float, list[bool]]]:
    out = []
    for f in frames:
        t = f.t_ms / 1000.0
        if t0 - 1e-6 <= t <= until + 1e-6 and (f.image.width, f.image.height) == (ref.width, ref.height):
            out.append((t, top_columns(f.image, ref)))
    return out


def _ref(frames: list[Frame], before: float) -> Image | None:
    got = [f for f in frames if f.t_ms / 1000.0 <= before + 1e-6]
    return got[-1].image if len(got) > 1 else None


def _compare(f60: list[Frame], f240: list[Frame], t0: float, before: float, until: float,
             played: bool) -> Pace | None:
    ref60, ref240 = _ref(f60, before), _ref(f240, before)
    if ref60 is None or ref240 is None or (ref60.width, ref60.height) != (ref240.width, ref240.height):
        return None
    # the 240 Hz captures on the 60 Hz run's grid: the same number of looks at the same moments
    grid = {round(f.t_ms / 1000.0 / CAP60) for f in f60}
    f240 = [f for f in f240 if abs(f.t_ms / 1000.0 / CAP60 - round(f.t_ms / 1000.0 / CAP60)) < 0.01
            and round(f.t_ms / 1000.0 / CAP60) in grid]
    b60, b240 = _bands(f60, ref60, t0, until), _bands(f240, ref240, t0, until)
    if not b60 or not b240:
        return None
    width = ref60.width
    live = [x for x in range(width) if any(c[x] for _, c in (*b60, *b240))]
    if len(live) < 4:
        return None
    lo, hi = live[0], live[-1]
    p60, p240 = edge_paces(b60, lo, hi), edge_paces(b240, lo, hi)
    if len(p60) < TRACKS_MIN or len(p240) < TRACKS_MIN:
        return None
    return Pace(statistics.median(p60), statistics.median(p240), len(p60), len(p240), until, played)


async def pipe_pace(ctx: ProbeContext, runs: Runs, steps: list[InputStep], t0: float, before: float) -> Pace | None:
    """The pipes' pace at 60 and 240 Hz from ``t0`` (the start), the screen before the start read at
    ``before``; None where pipes are not followed at both rates."""
    until = runs.t240[-1]
    got = _compare(runs.f60, runs.f240, t0, before, until, played=False)
    if got is not None:
        return got
    end = runs.t60[-1]
    if end <= until + 0.5:
        return None
    f240, broken = await play_rate(ctx, 240, steps, end, CAP60)
    if broken and len(f240) < 10:
        return None
    last = f240[-1].t_ms / 1000.0 if f240 else 0.0
    return _compare(runs.f60, f240, t0, before, min(end, last), played=True)
