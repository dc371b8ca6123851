"""Bouncing-ball probes: motion, bounds, energy-loss (refresh-rate is declared with no input).

One 20-virtual-second run at 60 Hz. ``motion`` is judged from pixels; ``bounds`` and
``energy-loss`` from the circles the page draws (every filled or stroked arc/ellipse on the
canvas that draws them, transformed to canvas pixels, recorded each frame by the clock script;
on pages without a canvas, round elements and SVG circles in their container): where a ball is
drawn is where a person sees it. Circles that never move (a sun, a decoration) are ignored, and
what is drawn with a ball (a glow, a shadow, a faint trail) is not another ball.
"""

from __future__ import annotations

import time
from itertools import pairwise

from .._model import CheckResult, Evidence
from ._frames import Frame
from ._imaging import encode_png, filmstrip, thermo, thermo_distance
from ._page import PageBroken
from ._refresh import refresh_input
from ._registry import ProbeContext, task_probes

__all__ = ["ball_probes", "bounces", "merge_decorations", "out_of_bounds", "tracks"]

DURATION = 20.0
STILL = 0.002
refresh_input("ball", [])

Circle = tuple[float, float, float]


def merge_decorations(circles: list[Circle]) -> list[Circle]:
    """One circle per ball: circles drawn over each other (a glow, an outline, a shadow, a trail
    overlapping the ball) are one ball, seen where the last of them is drawn (the ball on top).

    Two circles belong together when the centre of one lies inside the other; balls that merely
    touch or collide keep apart. ``circles`` are in draw order.
    """
    n = len(circles)
    if n < 2:
        return list(circles)
    group = list(range(n))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i in range(n):
        xi, yi, ri = circles[i]
        for j in range(i + 1, n):
            xj, yj, rj = circles[j]
            if (xi - xj) ** 2 + (yi - yj) ** 2 < max(ri, rj) ** 2:
                group[root(i)] = root(j)
    last: dict[int, int] = {}
    for i in range(n):
        last[root(i)] = i
    return [circles[i] for i in sorted(last.values())]


def _moving_only(track: list[tuple[float, list[Circle]]]) -> list[tuple[float, list[Circle]]]:
    """Drop circles drawn at the same place in at least 90% of frames (decoration)."""
    counts: dict[Circle, int] = {}
    for _, circles in track:
        for c in {(round(x, 1), round(y, 1), round(r, 1)) for x, y, r in circles}:
            counts[c] = counts.get(c, 0) + 1
    static = {c for c, n in counts.items() if n >= 0.9 * len(track)}
    return [(t, [c for c in cs if (round(c[0], 1), round(c[1], 1), round(c[2], 1)) not in static])
            for t, cs in track]


def out_of_bounds(track: list[tuple[float, list[Circle]]], size: tuple[int, int]) -> list[str]:
    """Each circle that pokes out of the canvas (by more than a tolerance), first time per edge."""
    w, h = size
    found: dict[str, str] = {}
    for t, circles in track:
        for x, y, r in circles:
            tol = max(1.5, 0.1 * r)
            for edge, over in (("floor", y + r - h), ("left wall", -(x - r)), ("right wall", x + r - w),
                               ("top", -(y - r))):
                if over > tol and edge not in found:
                    what = "left the canvas" if over > 2 * r else f"went {over:.0f} px past the {edge}"
                    found[edge] = f"at {t / 1000:.2f} s a ball (r={r:.0f}) at ({x:.0f}, {y:.0f}) {what}"
    return list(found.values())


def tracks(track: list[tuple[float, list[Circle]]], size: tuple[int, int]) -> list[list[tuple[float, float, float]]]:
    """Follow each ball frame to frame (nearest circle of similar radius): lists of (t_ms, x, y)."""
    jump = 0.3 * max(size)
    live: list[dict[str, object]] = []
    done: list[list[tuple[float, float, float]]] = []
    for t, circles in track:
        free = list(circles)
        for tr in live:
            lx, ly, lr = tr["last"]  # type: ignore[misc]
            best, best_d = None, jump
            for c in free:
                if abs(c[2] - lr) > 0.15 * lr + 1:
                    continue
                d = abs(c[0] - lx) + abs(c[1] - ly)
                if d < best_d:
                    best, best_d = c, d
            if best is not None:
                free.remove(best)
                tr["last"] = best
                tr["pts"].append((t, best[0], best[1]))  # type: ignore[union-attr]
                tr["miss"] = 0
            else:
                tr["miss"] = int(tr["miss"]) + 1  # type: ignore[call-overload]
        for tr in [tr for tr in live if int(tr["miss"]) > 5]:  # type: ignore[call-overload]
            live.remove(tr)
            done.append(tr["pts"])  # type: ignore[arg-type]
        for c in free:
            live.append({"last": c, "pts": [(t, c[0], c[1])], "miss": 0})
    done += [tr["pts"] for tr in live]  # type: ignore[misc]
    return [p for p in done if len(p) > 60]


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


def _evidence(ctx: ProbeContext, frames: list[Frame]) -> Evidence:
    picks = [frames[round(k * (len(frames) - 1) / 7)] for k in range(8)]
    path, rel = ctx.evidence_path("ball.png")
    path.write_bytes(encode_png(filmstrip([f.image for f in picks])))
    return Evidence(kind="file", label="t = " + ", ".join(f"{f.t_ms / 1000:.1f}" for f in picks) + " s", path=rel)


def _motion(frames: list[Frame], moving_circles: bool, ev: Evidence) -> CheckResult:
    early = [f for f in frames if f.t_ms <= 3000]
    codes = [thermo(f.image) for f in early]
    px = early[0].width * early[0].height
    change = max((thermo_distance(codes[i], codes[i - 1], px) for i in range(2, len(codes))), default=0.0)
    if change > STILL or moving_circles:
        return CheckResult(id="motion", status="pass", evidence=[ev], detail="the balls move",
                           data={"max_change": round(change, 4)})
    return CheckResult(id="motion", status="fail", evidence=[ev], detail="nothing moves in the first 3 s",
                       data={"max_change": round(change, 4)})


def _energy(balls: list[list[tuple[float, float, float]]], size: tuple[int, int]) -> CheckResult:
    floor_band = size[1] * 0.5
    series = [b for b in (bounces(p, floor_band) for p in balls) if len(b) >= 2]
    if not series:
        return CheckResult(id="energy-loss", status="error",
                           detail="no ball was seen bouncing on the floor twice: bounce heights unknown")
    data = {"rebounds_px": [[round(h) for h in s[:12]] for s in series]}
    for k, s in enumerate(series):
        grows = sum(1 for a, b in pairwise(s) if b > a * 1.05 + 1.5)
        if grows >= 2 and s[-1] > s[0] * 1.05:
            return CheckResult(id="energy-loss", status="fail", data=data,
                               detail=f"ball {k + 1}'s bounces grow: " + " -> ".join(f"{h:.0f}" for h in s[:6]) + " px")
    first, last = sum(s[0] for s in series), sum(s[-1] for s in series)
    if last > 0.9 * first:
        return CheckResult(id="energy-loss", status="fail", data=data,
                           detail=f"bounces do not lose height (first rebounds {first:.0f} px in all, "
                           f"last {last:.0f} px)")
    return CheckResult(id="energy-loss", status="pass", data=data,
                       detail=f"bounces lose height (first rebounds {first:.0f} px in all, last {last:.0f} px)")


@task_probes("ball")
async def ball_probes(ctx: ProbeContext) -> list[CheckResult]:
    """motion, bounds and energy-loss for a bouncing-balls artefact."""
    started = time.monotonic()
    session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=60)
    try:
        if session.broken:
            raise PageBroken(session.broken)
        frames = await session.advance(DURATION, capture_every=0.5, include_start=True, track_circles=True)
        if session.broken:
            raise PageBroken(session.broken)
    except PageBroken as exc:
        why = f"the page broke: {exc}"
        return [CheckResult(id=c, status="fail", detail=why) for c in ("motion", "bounds", "energy-loss")]
    finally:
        await session.close()
    ev = _evidence(ctx, frames)
    size = session.track_size
    moving = _moving_only([(t, merge_decorations(cs)) for t, cs in session.circle_track])
    n_circles = max((len(cs) for _, cs in moving), default=0)
    moved = any(cs != moving[0][1] for _, cs in moving[1:]) if moving else False
    results = [_motion(frames, moved, ev)]
    if size is None or n_circles == 0:
        why = "no moving circles drawn (canvas arcs, round elements or SVG circles): the balls could not be located"
        results += [CheckResult(id="bounds", status="error", detail=why),
                    CheckResult(id="energy-loss", status="error", detail=why)]
    else:
        bad = out_of_bounds(moving, size)
        results.append(CheckResult(id="bounds", status="fail" if bad else "pass", evidence=[ev],
                                   detail="; ".join(bad) if bad else f"{n_circles} ball(s) stay inside the "
                                   f"{size[0]}x{size[1]} canvas for {DURATION:.0f} s",
                                   data={"canvas": list(size), "balls": n_circles}))
        results.append(_energy(tracks(moving, size), size))
    for r in results:
        r.duration_s = time.monotonic() - started
    return results
