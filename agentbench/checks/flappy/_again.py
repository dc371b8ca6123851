"""Flappy restart, judged on what a person sees in the new game: it plays as fast as the first one.

A restart that starts a second game loop without stopping the first (``setInterval(loop, 16)`` or
``requestAnimationFrame(loop)`` called again) plays the new game twice per frame: the bird falls and
the pipes move twice as fast, which a person sees at once. ``restart`` (``_over``) finds that a new
game moves and can be flapped; this module compares how it moves with the first game.

The bird is followed in its columns by its colours over the empty scene, as the pipe tries do
(``_top``: what the flap run and the no-input run showed differently). After each flap the bird
draws an arc (up, then down) whose shape is the game's physics: the same in both games when the
restart is right, the first game's arc played k times as fast when it is not (a doubled loop: k = 2).
Each flap's arc in the new game is matched against the first game's arcs (the flap run's taps)
scaled in time; the k that fits best is how many times as fast the new game runs. Arcs that do not
move enough (a "Get ready" screen that ignores flaps, a bird that is not seen, an arc of a few rows
whose flat top fits many k) or that fit no k are left out; with none left, or with arcs that read
different k, we cannot tell and say so. Only the bird is compared: the pipes' speed is not measured
(in the 1.6 s played after the restart they may not have come on screen yet).
"""

from __future__ import annotations

import statistics

from .._model import CheckResult
from ..browser._play import Run, diverged
from ._top import Bird, Learnt, _look, _Scene, _scene, learn

__all__ = ["ARC_S", "SPEED_OFF", "arcs_of", "judge_new_game", "time_scale"]

ARC_S = 0.4          # a flap's arc is followed this long (virtual s), or to the next flap
ARC_MOVE = 0.04      # share of the game's height an arc must span to be compared (a bird's size or so) ...
ARC_ROWS = 12        # ... and capture rows (a smaller arc, read in whole rows, fits a k far from its own:
                     # a good DOM game's 10-row arcs with flat tops read 1.12-1.34x)
ARC_POINTS = 4       # captures an arc needs
FIT_MAX = 0.15       # the best scaled fit may miss by this share of the arc's span on average, at most
PLAIN_MISS = 0.1     # ... and at k = 1 (the first game's speed) an arc it fails on misses by 2x its best fit and this
AGREE = 1.3          # the arcs' k agree within this factor for a verdict (a second loop speeds up every arc alike)
SCALES = [round(0.4 + 0.02 * k, 2) for k in range(131)]  # k from 0.4 to 3.0
SPEED_OFF = 1.5      # the new game moving this many times as fast (or 1/this as fast) is plain to see
SPEED_SAME = 1.25    # ... within this factor it plays as the first did (a person does not notice)


def _track(run: Run, bird: Bird, scenes: dict[tuple[int, int], _Scene | None], empty: list,
           lo: float, hi: float) -> dict[int, float]:
    """The bird's centre row in each capture of ``run`` from ``lo`` to ``hi`` where it is seen."""
    out: dict[int, float] = {}
    if not empty:
        return out
    w = empty[0].width
    margin = max(4, bird.x1 - bird.x0 + 1)
    cols = max(0, bird.x0 - margin), min(w, bird.x1 + margin + 1)
    if cols not in scenes:
        scenes[cols] = _scene(empty, *cols)
    sc = scenes[cols]
    if sc is None:
        return out
    for i in range(run.index(lo), run.index(hi) + 1):
        frame = run.frames.get(i)
        if frame is None or (frame.width, frame.height) != (sc.width, sc.height):
            continue
        box = _look(sc, bird, frame.image)[0]
        if box is not None:
            out[i] = (box[1] + box[3]) / 2
    return out


def arcs_of(run: Run, rows: dict[int, float], taps: list[float], until: float, height: int,
            ) -> list[list[tuple[float, float]]]:
    """Each flap's arc: (s after the flap, rows below where the bird was at the flap), to the next flap
    or ARC_S s, not past ``until``; only arcs where the bird rose and that span ARC_MOVE of ``height``."""
    out = []
    for k, tap in enumerate(taps):
        end = min(tap + ARC_S, taps[k + 1] if k + 1 < len(taps) else tap + ARC_S, until)
        i0 = run.index(tap)
        if i0 not in rows:
            continue
        arc = [(round((i - i0) * run.every, 4), rows[i] - rows[i0])
               for i in range(i0 + 1, run.index(end) + 1) if i in rows]
        if len(arc) < ARC_POINTS:
            continue
        ds = [d for _, d in arc]
        if min(ds) > -1.0 or max(ds) - min(ds) < max(ARC_MOVE * height, ARC_ROWS):
            continue  # the flap did not lift the bird (ignored, a ready screen), or it hardly moved
        out.append(arc)
    return out


def _at(ref: list[tuple[float, float]], t: float) -> float | None:
    """The reference arc's row at ``t`` s after its flap (linear between captures; 0 at the flap)."""
    pts = [(0.0, 0.0), *ref]
    for (ta, da), (tb, db) in zip(pts, pts[1:], strict=False):
        if ta - 1e-9 <= t <= tb + 1e-9:
            return da if tb == ta else da + (db - da) * (t - ta) / (tb - ta)
    return None


def time_scale(arc: list[tuple[float, float]], refs: list[list[tuple[float, float]]]) -> tuple[float, float] | None:
    """(k, miss): the new arc is the first game's played k times as fast, missing it by ``miss`` (a share
    of the arc's span, averaged over its captures), for the k and reference arc that fit best."""
    best: tuple[float, float] | None = None
    for ref in refs:
        for k in SCALES:
            pairs = [(d, _at(ref, k * t)) for t, d in arc]
            used = [(d, r) for d, r in pairs if r is not None]
            if len(used) < 3:
                continue
            span = max(d for d, _ in used) - min(d for d, _ in used)
            if span <= 0:
                continue
            miss = statistics.fmean(abs(d - r) for d, r in used) / span
            if best is None or miss < best[1] - 1e-9:
                best = (k, miss)
    return best


def _miss_at(arc: list[tuple[float, float]], refs: list[list[tuple[float, float]]], k: float) -> float | None:
    """How far the arc misses the reference arcs played k times as fast, at best (share of its span)."""
    out = None
    for ref in refs:
        used = [(d, r) for t, d in arc for r in [_at(ref, k * t)] if r is not None]
        span = max((d for d, _ in used), default=0.0) - min((d for d, _ in used), default=0.0)
        if len(used) >= 3 and span > 0:
            miss = statistics.fmean(abs(d - r) for d, r in used) / span
            out = miss if out is None else min(out, miss)
    return out


def _taps(run: Run, lo: float, hi: float) -> list[float]:
    return sorted(t for t, _action, ok in run.inputs if lo - 1e-9 <= t <= hi + 1e-9 and ok)


def judge_new_game(again: CheckResult, again_run: Run, base: Run, flap: Run, t0: float, taps: list[float],
                   over_at: float | None, learnt: Learnt | None) -> CheckResult:
    """``again`` (a restart played on ``again_run``), failed where it passed and the new game plainly runs
    faster or slower than the first: the flap run's arcs after ``taps`` (virtual s; ``base`` is the no-input
    run from the start ``t0``, play ended at ``over_at``) against the arcs after the flaps that followed
    the restart input. ``learnt``: the bird and the empty scene, if the pipe tries learnt them. What it
    found goes to ``data`` (``speed``: the factor, or why it could not tell)."""
    if again.status != "pass" or "at_s" not in again.data:
        return again
    t_in, t_end = again.data["at_s"], again.data["until_s"]

    def unsure(why: str) -> CheckResult:
        again.data["speed"] = f"could not tell: {why}"
        return again

    first_end = taps[-1] + ARC_S if over_at is None else min(taps[-1] + ARC_S, over_at)
    if learnt is None:
        first = next((i for i, d in diverged(flap, base, taps[0], taps[0] + 1.5) if d), None)
        if first is not None and over_at is not None:
            learnt = learn(base, flap, first, t0, over_at - 0.1)
    if learnt is None or learnt.bird is None or not learnt.empty:
        return unsure("the bird could not be told from the scene")
    height = learnt.empty[0].height
    ref_taps = _taps(flap, taps[0], taps[-1])
    ref_rows = _track(flap, learnt.bird, learnt.scenes, learnt.empty, taps[0], first_end)
    refs = arcs_of(flap, ref_rows, ref_taps, first_end, height)
    if not refs:
        return unsure("the bird's arc after a flap was not seen in the first game")
    new_taps = _taps(again_run, t_in + 0.15, t_end)
    new_rows = _track(again_run, learnt.bird, learnt.scenes, learnt.empty, t_in, t_end)
    arcs = arcs_of(again_run, new_rows, new_taps, t_end, height)
    fits = [(f, _miss_at(arc, refs, 1.0)) for arc in arcs for f in [time_scale(arc, refs)] if f is not None]
    good = [k for (k, miss), _ in fits if miss <= FIT_MAX]
    # An arc says "plainly faster" only where the first game's own speed misses it plainly too.
    plain = [k for (k, miss), same in fits if miss <= FIT_MAX and (k >= SPEED_OFF or k <= 1 / SPEED_OFF)
             and (same is None or same >= 2 * miss + PLAIN_MISS)]
    again.data["speed_fits"] = [[k, round(miss, 3), None if same is None else round(same, 3)]
                                for (k, miss), same in fits]
    if not good:
        return unsure("no flap's arc in the new game was seen to match the first game's")
    k = statistics.median(good)
    again.data["speed"] = round(k, 2)
    agree = max(good) / min(good) <= AGREE
    if len(good) >= 2 and agree and len(plain) == len(good) and (k >= SPEED_OFF or k <= 1 / SPEED_OFF):
        how = f"{k:.1f}x as fast as the first game" if k > 1 else f"at {k:.0%} of the first game's speed"
        again.status = "fail"
        again.detail = (f"{again.data.get('input', 'the input')} starts a new game, but it runs {how}: after each "
                        f"flap the bird rises and falls {k:.1f}x as fast as in the first game "
                        f"({len(good)} flaps compared; a restart that starts a second game loop without "
                        "stopping the first does this)")
        return again
    if not agree:
        again.data["speed_spread"] = f"the flaps' arcs read {min(good):.2f}x to {max(good):.2f}x: no fail on them"
    if SPEED_SAME >= k >= 1 / SPEED_SAME:
        again.detail += f"; it plays as fast as the first game ({k:.2f}x)"
    return again
