"""Bouncing-ball probes: motion, bounds, energy-loss, ball-count (refresh-rate: ``_ball_refresh``).

Balls are bodies, found by what they do (``_bodies``): what the page draws as circles (canvas
arcs, round sprites, round elements, SVG circles), decorations drawn with a ball merged into it,
followed from sample to sample; a body that never moves is scenery. A page whose balls appear
only when a person acts is played as a person plays it (``find_spawn``): nothing moves on its own,
so a person clicks on the arena (a few times), clicks a Start button first if there is one, or
presses and holds; each try is kept only if bodies move where the run without it had none.
The balls are watched as long as a person would: at least ``WATCH`` virtual s (slow sinking
shows), less once every ball is at rest. A run cut by the harness's time limit on a busy machine
(``_cut``) is no evidence: a cut watch is played again whole with the long limit and judged on that
(the verdict a quiet machine gives); a page that hangs there fails; otherwise the checks say ``error``.
"""

from __future__ import annotations

import asyncio
import time

from ...errors import CheckError
from .._model import CheckResult, Evidence
from ..browser._imaging import encode_png, filmstrip
from ..browser._page import PageBroken
from ..browser._perception import HEIGHT_SHARE, SEEN_PX, higher
from ..browser._play import Run, Step, close_all, moving
from ..browser._registry import LoadRun, ProbeContext
from ._bodies import Track, balls, follow
from ._cut import REPLAY_LIMIT_S, REPLAY_WAIT_S, SLACK, cut_by_limit
from ._sight import buried
from ._tracks import Contacts, at_rest, out_of_bounds, rebounds, unsettled

__all__ = ["CHECK_IDS", "LOAD_RUN", "Spawn", "ball_probes", "find_spawn", "shared_spawn"]

CHECK_IDS = ("motion", "bounds", "energy-loss", "ball-count")

WATCH = 62.0       # virtual s the balls are watched for (unless all come to rest sooner)
TRY_S = 2.5        # a spawn try is watched this long after load
CHUNK = 2.0        # the watch reads the bodies this often (virtual s)
REST_S = 5.0       # every body still (within a px) for this long: the animation has settled
EVERY = 3          # bodies are logged every 3rd frame (20 per virtual s at 60 Hz)
CAP = 0.5          # pixel captures (motion, evidence)
WOKEN_WAIT_S = 240.0  # the longest the load check waits for the spawn discovery (the probes' own limit)

_ARENA = [(0.3, 0.25), (0.5, 0.2), (0.7, 0.3)]
SPAWN_TRIES: list[tuple[str, list[Step]]] = [
    ("clicks on the arena", [Step(0.5 + 0.2 * k, f"click:{fx},{fy}") for k, (fx, fy) in enumerate(_ARENA)]),
    ("a Start button, then clicks on the arena",
     [Step(0.5, r"target:\b(start|play|begin|go|run|drop)\b")]
     + [Step(1.0 + 0.2 * k, f"click:{fx},{fy}") for k, (fx, fy) in enumerate(_ARENA)]),
    ("pressing and holding on the arena", [Step(0.5, "click:0.5,0.3@0.6")]),
    ("Space", [Step(0.5, "click:0.5,0.5"), Step(0.7, "press:Space")]),
]


class Spawn:
    """How balls came to move: ``name`` None when they move with no input; ``steps`` replay it.

    ``cut``: why it could not be told (a run of the search was cut by the harness's time limit
    on a busy machine, see ``_cut``); ``run`` is then that run, closed.
    """

    def __init__(self, name: str | None, steps: list[Step], run: Run, log: list, tried: list[str],
                 cut: str | None = None) -> None:
        self.name, self.steps, self.run, self.log, self.tried, self.cut = name, steps, run, log, tried, cut
        self.claimed = False

    @property
    def t0(self) -> float:
        return max((s.t for s in self.steps), default=0.0) + 0.1


async def _bodies(run: Run, log: list) -> None:
    got, _colours = await run.session.bodies()
    log.extend(got)


def _moves(log: list) -> bool:
    """Some body is drawn at a different place later (bodies move), in the logged samples."""
    tracks = follow([(t, b) for t, b, _ in log], _size(log) or (800, 600))
    return any(tr.travel > SEEN_PX for tr in tracks)


def _size(log: list) -> tuple[int, int] | None:
    return next((s for _, _, s in reversed(log) if s), None)


async def _try(ctx: ProbeContext, steps: list[Step], *, loaded: Run | None = None,
               step_timeout_s: float | None = None) -> tuple[Run, list]:
    """A run from load with ``steps``, its balls logged; ``loaded``: the load check's run to go on with;
    ``step_timeout_s``: its limit per step (None: the context's).

    A run cut by the time limit comes back as it is (``session.hung``: see ``_cut``); one the page
    broke otherwise (crashed, left) raises PageBroken.
    """
    run = loaded or await Run.open(ctx, every=CAP, step_timeout_s=step_timeout_s)
    log: list = []
    try:
        if loaded is None and not run.session.hung:
            await run.session.track_bodies(EVERY)
        await run.play(steps, TRY_S)
        if not run.session.hung:
            await _bodies(run, log)
    except PageBroken:
        if not run.session.hung:
            await run.close()
            raise
    except BaseException:
        await run.close()
        raise
    return run, log


async def _cut(ctx: ProbeContext, run: Run, steps: list[Step], what: str, tried: list[str]) -> Spawn | None:
    """The search's answer when its run was cut by the time limit: could not tell, or (the page hangs) broken."""
    if not run.session.hung:
        return None
    await run.close()
    why = await cut_by_limit(ctx, run.session, steps, what, track=EVERY)
    if why is None:
        raise PageBroken(run.broken or "hung")  # the page hangs there: the verdict it always got
    return Spawn(None, [], run, [], tried, cut=why)


async def find_spawn(ctx: ProbeContext) -> Spawn:
    """The balls as they come: on their own, else after what a person tries (see the module doc)."""
    loaded = await ctx.take_load_run()  # played as LOAD_RUN says: the same frames as a fresh try
    run, log = await _try(ctx, [], loaded=loaded if isinstance(loaded, Run) else None)
    if cut := await _cut(ctx, run, [], "the run with no input", []):
        return cut
    if _moves(log) or (not any(b for _, b, _ in log) and moving(run, 0.5, TRY_S) >= 2):
        return Spawn(None, [], run, log, [])
    await run.close()
    tried: list[str] = []
    for name, steps in SPAWN_TRIES:
        run, log = await _try(ctx, steps)
        if cut := await _cut(ctx, run, steps, f"the try of {name}", [*tried, name]):
            return cut
        if not all(ok for _, _, ok in run.inputs):
            await run.close()
            continue  # no such control
        tried.append(name)
        if _moves(log):
            return Spawn(name, steps, run, log, tried)
        await run.close()
    run, log = await _try(ctx, [])
    if cut := await _cut(ctx, run, [], "the run with no input", tried):
        return cut
    return Spawn(None, [], run, log, tried)


async def shared_spawn(ctx: ProbeContext) -> Spawn | None:
    """The check run's one spawn discovery (the ball probes and refresh-rate share it)."""
    got = await ctx.discover("ball-spawn", lambda: find_spawn(ctx))
    return got if isinstance(got, Spawn) else None


async def watch(run: Run, log: list, t0: float) -> None:
    """Play on to ``WATCH`` virtual s after ``t0``; stop once every body has been still ``REST_S``.

    Stops where the run is cut by the time limit (``session.hung``); a page broken otherwise raises.
    """
    while run.now < t0 + WATCH - 1e-9 and not run.broken:
        await run.advance(min(CHUNK, t0 + WATCH - run.now))
        try:
            await _bodies(run, log)
        except PageBroken:
            if run.session.hung:  # cut while playing or while its bodies were read
                return
            raise
        had = any(b for _, b, _ in log)
        if run.now > t0 + REST_S + 1 and had and at_rest([(t, b) for t, b, _ in log], (run.now - REST_S) * 1000):
            return


async def _colours(run: Run) -> list[str]:
    """The colours the bodies were drawn in (none once the run broke or was cut reading them)."""
    if run.broken:
        return []
    try:
        return (await run.session.bodies())[1]
    except PageBroken:
        if run.session.hung:
            return []
        raise


def _evidence(ctx: ProbeContext, run: Run) -> Evidence | None:
    idx = sorted(run.frames)
    if not idx:
        return None
    picks = [idx[round(k * (len(idx) - 1) / 7)] for k in range(8)] if len(idx) >= 8 else idx
    path, rel = ctx.evidence_path("ball.png")
    path.write_bytes(encode_png(filmstrip([run.frames[i].image for i in picks])))
    return Evidence(kind="file", label="t = " + ", ".join(f"{i * run.every:.1f}" for i in picks) + " s", path=rel)


def _energy(tracks: list[Track], size: tuple[int, int], end_ms: float | None = None) -> CheckResult:
    """Rebounds lose height, and the balls settle. A ball that bounces higher after another hit it
    got that height from the other ball (it lost as much): only growth with no other ball touching
    counts. ``end_ms``: the end of a watch that ran its full time (the balls never came to rest),
    whose last seconds show whether they are settling (``unsettled``)."""
    floor_band = size[1] * 0.5
    series = [(k, s) for k, tr in enumerate(tracks) if len(s := rebounds(tr.pts, floor_band)) >= 2]
    restless = unsettled(tracks, end_ms, size) if end_ms is not None else None
    never = f"the balls never settle: {restless}"
    if not series:
        if restless:
            return CheckResult(id="energy-loss", status="fail", detail=never)
        return CheckResult(id="energy-loss", status="skip",
                           detail="no ball was seen bouncing on the floor twice: bounce heights unknown")
    data: dict[str, object] = {"rebounds_px": [[round(h) for _, _, h in s[:12]] for _, s in series[:20]]}
    contacts: Contacts | None = None
    hit = 0
    for n, (k, s) in enumerate(series):
        heights = [h for _, _, h in s]
        rises = [i for i in range(1, len(s)) if higher(heights[i - 1], heights[i])]
        if len(rises) < 2 or not heights[-1] > heights[0] * (1 + HEIGHT_SHARE):
            continue
        contacts = contacts or Contacts(tracks)
        alone = [i for i in rises if not contacts.touched(k, s[i - 1][0], s[i][1])]
        hit += len(rises) - len(alone)
        if len(alone) >= 2:
            data["rises_after_a_hit"] = hit
            return CheckResult(id="energy-loss", status="fail", data=data,
                               detail=f"ball {n + 1} bounces higher and higher on its own: "
                               + " -> ".join(f"{h:.0f}" for h in heights[:6]) + " px")
    if hit:
        data["rises_after_a_hit"] = hit
    first, last = sum(s[0][2] for _, s in series), sum(s[-1][2] for _, s in series)
    if last > 0.9 * first:
        return CheckResult(id="energy-loss", status="fail", data=data,
                           detail=f"bounces do not lose height (first rebounds {first:.0f} px in all, "
                           f"last {last:.0f} px)")
    if restless:
        return CheckResult(id="energy-loss", status="fail", data=data,
                           detail=f"{never}; their first rebounds lost height ({first:.0f} px in all, "
                           f"last {last:.0f} px), then they stopped losing energy")
    return CheckResult(id="energy-loss", status="pass", data=data,
                       detail=f"bounces lose height (first rebounds {first:.0f} px in all, last {last:.0f} px)")


def _count(tracks: list[Track], colours: list[str]) -> CheckResult:
    """Several balls at once; their colours and sizes are told in the detail, not judged.

    The prompt asks for balls of different colours and sizes, but the corpus's labels never count
    one colour or one size against a page (a start menu that drops black balls is labelled good;
    five alike blue balls are named for other defects only): a person sees such balls bounce right.
    """
    events = sorted([(tr.pts[0][0], 1) for tr in tracks] + [(tr.pts[-1][0] + 0.5, -1) for tr in tracks])
    most = cur = 0
    for _t, d in events:
        cur += d
        most = max(most, cur)
    cols = {colours[c] if 0 <= c < len(colours) else "?" for tr in tracks for c in tr.colours}
    sizes = sorted({round(tr.r) for tr in tracks})
    data = {"balls_at_once": most, "colours": sorted(cols)[:12], "radii": sizes[:12]}
    look = f"{len(cols)} colour(s), radii {', '.join(map(str, sizes[:8]))} px"
    if most >= 2:
        return CheckResult(id="ball-count", status="pass", data=data, detail=f"{most} balls at once ({look})")
    return CheckResult(id="ball-count", status="fail", data=data,
                       detail=f"only {most} ball moves at a time ({look}): the prompt asks for several")


async def _woken_by(ctx: ProbeContext) -> str | None:
    """For a page blank at load: what brings balls to life (the spawn discovery), if anything does.

    The input a person gives (clicks on the arena, a Start button ...), or a moment's wait when
    the balls come on their own after the first second. Bounded: a discovery called off with
    the probes (their time limit) must not hold the load check.
    """
    try:
        spawn = await asyncio.wait_for(asyncio.shield(shared_spawn(ctx)), WOKEN_WAIT_S)
    except TimeoutError:
        return None
    if spawn is None or spawn.cut:
        return None  # broke, or could not tell (a run cut by the time limit): nothing seen coming to life
    if spawn.name is None:
        return f"a wait of {TRY_S:g} s" if not spawn.tried else None  # moved with no input at all
    return spawn.name


# The probes start from the load check's run (the spawn search), its bodies logged from load.
LOAD_RUN = LoadRun(every=CAP, track_bodies=EVERY, woken_by=_woken_by)


async def ball_probes(ctx: ProbeContext) -> list[CheckResult]:
    """motion, bounds, energy-loss and ball-count for a bouncing-balls artefact."""
    started = time.monotonic()
    ids = CHECK_IDS
    spawn = await shared_spawn(ctx)
    if spawn is None:
        return [CheckResult(id=c, status="fail", detail="the page broke while it was played") for c in ids]
    if spawn.cut:
        why = spawn.cut + (f" (tried: {', '.join(spawn.tried)})" if spawn.tried else "")
        return [CheckResult(id=c, status="error", detail=why, duration_s=time.monotonic() - started) for c in ids]
    run, log = spawn.run, list(spawn.log)
    how = f" (after {spawn.name})" if spawn.name else ""
    try:
        full, frames_moving, colours = await _watched(run, log, spawn.t0)
    finally:
        await close_all(run)
    replayed = None
    if run.session.hung:
        again = await _watch_again(ctx, spawn, run, f"the watch of the balls{how}")
        if not isinstance(again, tuple):
            status = "error" if again else "fail"
            why = again or f"the page broke: {run.broken}"  # it hangs there: the verdict it always got
            return [CheckResult(id=c, status=status, detail=why, duration_s=time.monotonic() - started) for c in ids]
        replayed = (f"the watch was cut by the harness's time limit per step at {run.now:.1f} s "
                    f"({run.broken or 'cut'}); played again whole from load with {REPLAY_LIMIT_S:g} s per step")
        run, log, full, frames_moving, colours = again
    if run.broken and len(log) < 10:
        return [CheckResult(id=c, status="fail", detail=f"the page broke: {run.broken}") for c in ids]
    ev = _evidence(ctx, run)
    evidence = [ev] if ev else []
    size = _size(log)
    tracks = balls(follow([(t, b) for t, b, _ in log], size or (800, 600)))
    if not tracks and frames_moving < 2:
        tried = f" (tried: {', '.join(spawn.tried)})" if spawn.tried else ""
        why = f"nothing moves{tried}"
        return [CheckResult(id="motion", status="fail", detail=why, evidence=evidence),
                *(CheckResult(id=c, status="skip", detail="no balls move: nothing to judge") for c in ids[1:])]
    results = [CheckResult(id="motion", status="pass", evidence=evidence, detail=f"the balls move{how}",
                           data={"tracks": len(tracks), "spawn": spawn.name})]
    if size is None or not tracks:  # what moves is no ball this harness sees: it cannot tell
        why = ("could not tell: something moves, but nothing drawn as a ball (canvas arcs, Path2D circles, "
               "round sprites or elements, SVG circles)")
        results += [CheckResult(id=c, status="error", detail=why) for c in ids[1:]]
    else:
        watched = (log[-1][0] - log[0][0]) / 1000 if log else 0.0
        bad = out_of_bounds(tracks, size, log[-1][0])
        if not bad and (sunk := buried(tracks, [run.frames[i] for i in sorted(run.frames)],
                                       [(t, b) for t, b, _ in log], size)):
            bad = [sunk]
        results.append(CheckResult(id="bounds", status="fail" if bad else "pass", evidence=evidence,
                                   detail="; ".join(bad) if bad else f"{len(tracks)} ball(s) stay inside the "
                                   f"{size[0]}x{size[1]} arena for {watched:.0f} s{how}",
                                   data={"arena": list(size), "balls": len(tracks), "watched_s": round(watched, 1)}))
        results.append(_energy(tracks, size, log[-1][0] if full else None))
        results.append(_count(tracks, colours))
    for r in results:
        r.duration_s = time.monotonic() - started
        if replayed:
            r.data["replayed"] = replayed
    return results


async def _watched(run: Run, log: list, t0: float) -> tuple[bool, int, list[str]]:
    """Watch the balls (``watch``): whether the watch ran its full time (the balls never all came to
    rest), the frames in which the picture moved in its first 5 s, and the bodies' colours."""
    await watch(run, log, t0)
    full = run.now >= t0 + WATCH - 1e-6
    frames_moving = moving(run, t0, min(run.now, t0 + 5))
    return full, frames_moving, await _colours(run)


async def _watch_again(ctx: ProbeContext, spawn: Spawn, cut: Run, what: str
                       ) -> tuple[Run, list, bool, int, list[str]] | str | None:
    """A watch the step limit cut (``cut``), played again whole from load with ``REPLAY_LIMIT_S`` per step.

    On the virtual clock the replay is the same frame for frame: the replayed run and what it saw
    when it played through (the verdicts a quiet machine gives); None when it was cut again at the
    same moment (the page hangs there: the verdict it always got); else why it could not be told.
    """
    at = cut.now

    async def play() -> tuple[Run, list, bool, int, list[str]]:
        run, log = await _try(ctx, spawn.steps, step_timeout_s=REPLAY_LIMIT_S)  # the spawn's run, again
        try:
            if run.session.hung:
                return run, log, False, 0, []
            return (run, log, *await _watched(run, log, spawn.t0))
        except PageBroken:
            if not run.session.hung:
                raise
            return run, log, False, 0, []
        finally:
            await close_all(run)

    try:
        run, log, full, frames_moving, colours = await asyncio.wait_for(play(), REPLAY_WAIT_S)
    except TimeoutError:
        seen = f"a replay with a {REPLAY_LIMIT_S:g} s limit per step did not finish within {REPLAY_WAIT_S:g} s"
    except (CheckError, PageBroken) as exc:
        seen = f"a replay to tell a hang from a busy machine could not be played ({exc})"
    else:
        if not run.session.hung:
            return run, log, full, frames_moving, colours
        if abs(run.now - at) <= SLACK:
            return None
        seen = f"replayed with a {REPLAY_LIMIT_S:g} s limit per step it was cut at {run.now:.1f} s instead"
    return (f"could not tell: the harness's time limit cut {what} at {at:.1f} s ({cut.broken or 'cut'}); {seen}; "
            "what the run did not show is no evidence")

