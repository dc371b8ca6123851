"""Flappy Bird probes: flap-input, game-over, restart (refresh-rate is declared with its script).

All input is real (page.keyboard / page.mouse). The bird is never looked up in game variables:
flap-input compares each input run with a no-input run from the same start and locates the
bird where the two runs' pixels differ; game-over and restart read what a person reads (canvas
text drawn, the page's visible text) and whether the screen still moves.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time

from .._model import CheckResult, Evidence
from ._frames import Frame
from ._imaging import Image, blobs, diff_mask, encode_png, filmstrip, thermo, thermo_distance
from ._page import PageBroken, PageSession
from ._refresh import InputStep, act, refresh_input
from ._registry import ProbeContext, task_probes

__all__ = ["FLAP_SCRIPT", "GAME_OVER_RE", "flappy_probes", "locate_shift"]

START_AT = 0.5     # Space starts games with a start screen (and flaps the others)
FLAP_AT = 0.8      # the probed input, 0.3 s into the game
FLAP_PERIOD = 0.45
GAME_OVER_RE = re.compile(r"game\s*-?\s*over|you\s+(died|lose|lost|crashed)|\bcrash(ed)?\b|try\s+again|"
                          r"play\s+again|final\s+score|\brestart", re.IGNORECASE)
FLAP_SCRIPT = [InputStep(START_AT, "press:Space")] + [InputStep(1.0 + FLAP_PERIOD * k, "press:Space")
                                                     for k in range(40)]
refresh_input("flappy", FLAP_SCRIPT)
STILL = 0.002
POLL = 0.25  # how often (virtual s) game-over text is looked for


def locate_shift(base: Image, other: Image) -> tuple[float, float, int] | None:
    """Where the two runs differ, which pixels show something in each: (row in base, row in other, n).

    Each differing pixel belongs to the run whose colour is farther from the local background
    (the median colour of a ring around its blob, identical in both runs). Rows are means.
    """
    w, h = base.width, base.height
    mask = diff_mask(base, other, threshold=60)
    found = blobs(mask, w, h, min_size=2)[:4]
    if not found:
        return None
    rows_a, rows_b = [], []
    for blob in found:
        ring = []
        for y in range(max(0, blob.y0 - 2), min(h, blob.y1 + 3)):
            for x in range(max(0, blob.x0 - 2), min(w, blob.x1 + 3)):
                if not mask[y * w + x]:
                    ring.append(base.pixel(x, y))
        if not ring:
            continue
        bg = tuple(statistics.median(c[k] for c in ring) for k in range(3))
        for p in blob.pixels:
            y, x = divmod(p, w)
            pa, pb = base.pixel(x, y), other.pixel(x, y)
            da = sum(abs(pa[k] - bg[k]) for k in range(3))
            db = sum(abs(pb[k] - bg[k]) for k in range(3))
            (rows_a if da > db else rows_b).append(y)
    if not rows_a or not rows_b:
        return None
    return statistics.fmean(rows_a), statistics.fmean(rows_b), len(rows_a) + len(rows_b)


async def _flap_run(ctx: ProbeContext, action: str | None, start: str = "press:Space") -> \
        tuple[list[Frame], str | None]:
    session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=60)
    try:
        frames: list[Frame] = []
        if not session.broken:
            await session.advance(START_AT)
            await act(session, start)
            await session.advance(FLAP_AT - START_AT)
            frames.append(await session.capture())
            if action:
                await act(session, action)
            frames += await session.advance(0.5, capture_every=1 / 30)
        return frames, session.broken
    except PageBroken:
        return [], session.broken
    finally:
        await session.close()


def _judge_flap(name: str, base: list[Frame], run: list[Frame], ctx: ProbeContext) -> CheckResult:
    rows = []
    for fa, fb in zip(base[2:10], run[2:10], strict=False):  # 0.07 to 0.3 s after the input
        got = locate_shift(fa.image, fb.image)
        if got:
            rows.append((fb.t_ms, got[0] - got[1]))  # > 0: higher with input than without
    if not any(fa.image.rgb != fb.image.rgb for fa, fb in zip(base, run, strict=False)):
        return CheckResult(id="flap-input", status="fail",
                           detail=f"{name} made no visible difference compared with no input")
    if len(rows) < 3:
        return CheckResult(id="flap-input", status="error",
                           detail=f"after {name} the screen changed but no moving sprite could be located")
    higher = [d for _, d in rows if d > 0.75]
    lift = statistics.median(d for _, d in rows)
    data = {"rows_higher_than_no_input": [round(d, 2) for _, d in rows]}
    if len(higher) >= 0.6 * len(rows) and lift > 1.0:
        return CheckResult(id="flap-input", status="pass", data=data,
                           detail=f"{name} lifts the bird ({lift:.1f} px above the no-input run)")
    return CheckResult(id="flap-input", status="fail", data=data,
                       detail=f"{name} does not make the bird rise compared with no input")


def _strip_evidence(ctx: ProbeContext, name: str, frames: list[Frame], label: str) -> Evidence:
    picks = [frames[round(k * (len(frames) - 1) / 7)] for k in range(8)] if len(frames) >= 8 else frames
    path, rel = ctx.evidence_path(name)
    path.write_bytes(encode_png(filmstrip([f.image for f in picks])))
    times = ", ".join(f"{f.t_ms / 1000:.1f}" for f in picks)
    return Evidence(kind="file", label=f"{label} (t = {times} s)", path=rel)


Baseline = "asyncio.Future[tuple[list[Frame], str | None]]"


async def flap_input(ctx: ProbeContext, baseline: Baseline | None = None,  # type: ignore[valid-type]
                     start: str = "press:Space") -> CheckResult:
    """Space and a click each lift the bird compared with no input from the same start.

    ``baseline``: the no-input frames, when another session (game-over) already plays them.
    ``start``: the input that starts the game (at START_AT) in every run.
    """
    started = time.monotonic()
    base_run = asyncio.shield(baseline) if baseline is not None else _flap_run(ctx, None, start)  # type: ignore[arg-type]
    (base, b0), (space, b1), (click, b2) = await asyncio.gather(
        base_run, _flap_run(ctx, "press:Space", start), _flap_run(ctx, "click:0.5,0.5", start))
    broken = b0 or b1 or b2
    if broken:
        return CheckResult(id="flap-input", status="fail", detail=f"the game could not be played: {broken}",
                           duration_s=time.monotonic() - started)
    if min(len(base), len(space), len(click)) < 10:
        return CheckResult(id="flap-input", status="error", detail="the runs could not be captured",
                           duration_s=time.monotonic() - started)
    results = [_judge_flap("Space", base, space, ctx), _judge_flap("a click", base, click, ctx)]
    worst = next((r for r in results if r.status == "fail"), None) or \
        next((r for r in results if r.status == "error"), None) or results[0]
    detail = "; ".join(r.detail for r in results)
    evidence = [_strip_evidence(ctx, "flap-none.png", base, "no input"),
                _strip_evidence(ctx, "flap-space.png", space, f"Space at {FLAP_AT} s"),
                _strip_evidence(ctx, "flap-click.png", click, f"click at {FLAP_AT} s")]
    return CheckResult(id="flap-input", status=worst.status, detail=detail, evidence=evidence,
                       data={"space": results[0].data, "click": results[1].data},
                       duration_s=time.monotonic() - started)


class Watch:
    """What a person sees of a game's end: game-over text (canvas or page) and a frozen screen."""

    def __init__(self, session: PageSession) -> None:
        self.session = session
        self.frames: list[Frame] = []
        self.dom_before = ""
        self.ambient: set[str] = set()  # canvas text drawn during normal play ("R to restart" hints)

    async def over_since(self, t_from: float) -> float | None:
        """Virtual time (s) at which game-over text was last shown after ``t_from``, if it is shown."""
        now = self.session.now_ms / 1000
        for text, _first, last, _n in await self.session.texts():
            if GAME_OVER_RE.search(text) and last / 1000 > t_from + 1e-6 and text not in self.ambient:
                return last / 1000
        dom = await self.session.dom_text()
        fresh = [line for line in dom.splitlines() if line.strip() and line not in self.dom_before]
        if any(GAME_OVER_RE.search(line) for line in fresh) or \
                (GAME_OVER_RE.search(dom) and not GAME_OVER_RE.search(self.dom_before)):
            return now
        return None

    def frozen_for(self, codes: list[int]) -> float:
        """How long (s) the screen has not changed at the end of the captured frames."""
        if len(self.frames) < 2:
            return 0.0
        px = self.frames[0].width * self.frames[0].height
        i = len(codes) - 1
        while i > 0 and thermo_distance(codes[i], codes[i - 1], px) <= STILL:
            i -= 1
        return (self.frames[-1].t_ms - self.frames[i].t_ms) / 1000


async def _wait_for_over(watch: Watch, since: float, limit: float, flap: bool) -> float | None:
    """Play (flapping if asked) until game-over text shows; returns its time or None."""
    s = watch.session
    origin = s.now_ms / 1000
    end = origin + limit
    next_flap = origin + FLAP_PERIOD if flap else float("inf")
    next_poll = origin + POLL
    while s.now_ms / 1000 < end - 1e-9 and not s.broken:
        stop = min(next_flap, next_poll, end)
        watch.frames += await s.advance(stop - s.now_ms / 1000, capture_every=0.1, capture_origin=origin)
        now = s.now_ms / 1000
        if now >= next_flap - 1e-9:
            await s.press("Space")
            next_flap += FLAP_PERIOD
        if now >= next_poll - 1e-9 or now >= end - 1e-9:
            next_poll += POLL
            at = await watch.over_since(since)
            if at is not None:
                return at
    return None


def _moved(frames: list[Frame]) -> bool:
    """Whether the screen changed between captures (the first paint after load aside)."""
    if len(frames) < 3:
        return False
    codes = [thermo(f.image) for f in frames]
    px = frames[0].width * frames[0].height
    return any(thermo_distance(codes[i], codes[i - 1], px) > STILL for i in range(2, len(codes)))


START_INPUTS = [("a click", "click:0.5,0.5"), ("Enter", "press:Enter"), ("ArrowUp", "press:ArrowUp"),
                ("W", "press:w"), ("a Start button", r"target:\b(start|play|begin|go)\b")]
Found = tuple[str, str, PageSession, Watch, float | None, bool]


async def _find_start(ctx: ProbeContext, tried: list[str]) -> Found | None:
    """Try each other start input in a fresh session; the first after which the game ends wins.

    A still start screen that an input sets moving has started too (a game that never ends).
    Returns (name, action, session, watch, game-over time or None, moved after) or None.
    """
    for name, action in START_INPUTS:
        session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=60)
        keep = False
        try:
            if session.broken:
                continue
            watch = Watch(session)
            watch.frames += await session.advance(START_AT, capture_every=0.1, include_start=True)
            watch.dom_before = await session.dom_text()
            watch.ambient = {text for text, first, _last, _n in await session.texts()}
            if not await act(session, action):
                continue  # no such control on the page
            tried.append(name)
            over_at = await _wait_for_over(watch, START_AT, 10.0, flap=False)
            before, after = _moved(watch.frames[:6]), _moved(watch.frames[6:])
            if over_at is not None or (after and not before):
                keep = True
                return name, action, session, watch, over_at, after
        except PageBroken:
            continue
        finally:
            if not keep:
                await session.close()
    return None


async def game_over_and_restart(ctx: ProbeContext, baseline: Baseline | None = None) -> list[CheckResult]:  # type: ignore[valid-type]
    """Without input the game ends and shows it; then some input starts a new playable game.

    The first 1.3 s (Space at 0.5 s, then nothing) are also flap-input's no-input run: they are
    handed over through ``baseline`` (one browser context less). When Space does not start a
    game that ends, the other start inputs are tried; how the game starts is handed to
    refresh-rate and flap-input through ``ctx.shared["flappy-start"]``.
    """
    started = time.monotonic()
    start = ctx.shared_future("flappy-start")
    session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, fps=60)
    try:
        if session.broken:
            raise PageBroken(session.broken)
        watch = Watch(session)
        watch.frames += await session.advance(START_AT, capture_every=0.1, include_start=True)
        watch.dom_before = await session.dom_text()
        await session.press("Space")
        await session.advance(FLAP_AT - START_AT)
        base = [await session.capture()]
        base += await session.advance(0.5, capture_every=1 / 30)
        watch.frames += base[::3]
        # Text drawn from the start of play until now is part of playing ("R: restart" hints), not
        # an ending: a game-over message first appears when the game ends.
        watch.ambient = {text for text, first, last, _n in await session.texts()
                         if first <= (START_AT + 0.1) * 1000 and last >= (FLAP_AT + 0.4) * 1000}
        if baseline is not None and not baseline.done():  # type: ignore[attr-defined]
            baseline.set_result((base, session.broken))  # type: ignore[attr-defined]
        over_at = await _wait_for_over(watch, START_AT, 10.0, flap=False)
        before, after = _moved(watch.frames[:6]), _moved(watch.frames[6:])
        name, action, tried = "Space", "press:Space", ["Space"]
        if over_at is None and (before or not after):
            # Space did not start a game that ends: a start screen may want a click, another
            # key or a Start button (a still screen that Space set moving has started, though).
            found = await _find_start(ctx, tried)
            if found is not None:
                await session.close()
                name, action, session, watch, over_at, after = found
        start.set_result({"name": name, "action": action,
                          "over_after_s": None if over_at is None else over_at - START_AT})
        codes = [thermo(f.image) for f in watch.frames]
        evidence = [_strip_evidence(ctx, "game-over.png", watch.frames, f"no input after {name}")]
        took = time.monotonic() - started
        if over_at is None:
            frozen = watch.frozen_for(codes)
            if not after and not before:
                go = CheckResult(id="game-over", status="fail", evidence=evidence, duration_s=took,
                                 detail="nothing moved after any start input (" + ", ".join(tried) +
                                 "): the game could not be started")
            elif frozen >= 1.0:
                go = CheckResult(id="game-over", status="fail", evidence=evidence, duration_s=took,
                                 detail=f"the screen froze (for {frozen:.1f} s) but no game-over message was shown")
            else:
                go = CheckResult(id="game-over", status="fail", evidence=evidence, duration_s=took,
                                 detail=f"after 10 s without input the game still runs and never ends "
                                 f"(started with {', '.join(tried)})")
            return [go, CheckResult(id="restart", status="error", detail="no game over to restart from")]
        go = CheckResult(id="game-over", status="pass", evidence=evidence, duration_s=took,
                         detail=f"{name} starts the game; without input it ends and shows it at "
                         f"{over_at - START_AT:.1f} s",
                         data={"over_after_s": round(over_at - START_AT, 2), "start": name})
        return [go, await _restart(ctx, session, watch, (name, action))]
    except PageBroken as exc:
        why = f"the page broke: {exc}"
        return [CheckResult(id="game-over", status="fail", detail=why),
                CheckResult(id="restart", status="fail", detail=why)]
    finally:
        if baseline is not None and not baseline.done():  # type: ignore[attr-defined]
            baseline.set_result(([], session.broken))  # type: ignore[attr-defined]
        if not start.done():
            start.set_result(None)
        await session.close()


RESTART_INPUTS = [("Space", "press:Space"), ("a click", "click:0.5,0.5"),
                  ("a Restart button", r"target:restart|play\s*again|try\s*again|retry|replay|new\s+game|"
                   r"again|\b(start|play)\b|\u21bb|\u27f3"),
                  ("Enter", "press:Enter"), ("R", "press:r")]


async def _restart(ctx: ProbeContext, session: PageSession, watch: Watch, start: tuple[str, str]) -> CheckResult:
    started = time.monotonic()
    await session.advance(0.5)  # games often ignore input for a moment after the crash
    tried = []
    inputs = RESTART_INPUTS + ([start] if start[1] not in {a for _, a in RESTART_INPUTS} else [])
    for name, action in inputs:
        t_in = session.now_ms / 1000
        watch.frames = []
        if not await act(session, action):
            tried.append(f"{name}: none shown")
            continue
        again = await _wait_for_over(watch, t_in + 0.05, 2.0, flap=True)
        codes = [thermo(f.image) for f in watch.frames]
        px = watch.frames[0].width * watch.frames[0].height if watch.frames else 1
        moving = sum(1 for i in range(1, len(codes)) if thermo_distance(codes[i], codes[i - 1], px) > STILL)
        lasted = (again - t_in) if again is not None else 2.0
        if moving >= 5 and lasted >= 1.0:
            ev = _strip_evidence(ctx, "restart.png", watch.frames, f"after {name}, flapping")
            return CheckResult(id="restart", status="pass", evidence=[ev], duration_s=time.monotonic() - started,
                               detail=f"{name} starts a new game that runs {lasted:.1f}+ s with flapping")
        tried.append(f"{name}: " + ("nothing moved" if moving < 5 else f"game over again after {lasted:.1f} s"))
        if again is None:
            await _wait_for_over(watch, t_in, 3.0, flap=False)  # let a half-started game end first
        await session.advance(0.5)
    ev = _strip_evidence(ctx, "restart.png", watch.frames, "last restart attempt") if watch.frames else None
    return CheckResult(id="restart", status="fail", evidence=[ev] if ev else [],
                       duration_s=time.monotonic() - started,
                       detail="no input started a new playable game after game over (" + "; ".join(tried) + ")")


@task_probes("flappy")
async def flappy_probes(ctx: ProbeContext) -> list[CheckResult]:
    """flap-input, game-over and restart for a Flappy Bird artefact."""
    baseline: Baseline = asyncio.get_running_loop().create_future()  # type: ignore[valid-type]
    flap, over = await asyncio.gather(flap_input(ctx, baseline), game_over_and_restart(ctx, baseline))
    start = ctx.shared_future("flappy-start")
    how = start.result() if start.done() else None
    if isinstance(how, dict) and how["action"] != "press:Space":
        # Space only flapped on a start screen: judge flapping in the game the found input starts.
        flap = await flap_input(ctx, None, start=str(how["action"]))
        flap.detail = f"(started with {how['name']}) {flap.detail}"
    return [flap, *over]
