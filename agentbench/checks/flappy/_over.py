"""Flappy game over and restart, judged on the run with the start and no further input.

``watch_over`` plays that run until a person would say the game is over: play stops and something
new appears and stays (``_flappy_end``: a panel, a sprite, text in any language, in the game's
pixels or the page's text), or the page reloads itself (a silent restart: no game over is ever
shown). Game-over words ("Game over", "Try again") are one signal of something new, never enough
alone: the play must have stopped too. ``restart`` then tries what a person tries on a game-over
screen and asks for a new game that can be played (the screen moves, flapping, for a second or
more); a restart that reloads the page is not one (the prompt asks for a restart without reloading).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._model import CheckResult
from ..browser._imaging import Image
from ..browser._play import Run, differs
from ._end import SETTLE, WIDEN, Screen, Settled, busy, calm, settled
from ._screen import Coder, code_of

__all__ = ["GAME_OVER_RE", "Over", "frozen_for", "over_since", "restart", "watch_over"]

WORDS_QUIET = 0.5  # with game-over words shown, play has stopped when this much less changes
WORDS_STILL = 0.4  # ... for this long after they appeared (a game may start again by itself)

GAME_OVER_RE = re.compile(r"game\s*-?\s*over|you\s+(died|lose|lost|crashed)|\bcrash(ed)?\b|try\s+again|"
                          r"play\s+again|final\s+score|\brestart", re.IGNORECASE)
POLL = 0.25
HINT_S = 0.3  # a matching text first drawn this soon after the start is a hint ("R: restart"), not an end
FLAP_PERIOD = 0.45
PLAY_S = 1.6  # a restarted game is played this long (virtual s), flapping
END_BEFORE = 0.5   # the game-over screen is read in the captures this long (virtual s) before a restart input
STILL_MIN = 0.1    # share of the screen that must be still there for its change after the input to tell
NO_GAME = "the game-over screen stays"
LEFT_MIN = 0.01    # share of that still screen a restart changes at least (a panel, the pipes, the bird go;
                   # 7% and more in the fixtures, none where the input did nothing)


@dataclass
class Over:
    """How the no-input run ended (times in virtual s)."""

    at: float | None = None           # something new was first shown on the stopped game
    reloaded_at: float | None = None  # the page reloaded itself before any end was shown
    still_at: float | None = None     # play stopped (the screen settled) with nothing new on it
    how: str = ""                     # what was new, in a person's words
    texts: list[str] = field(default_factory=list)


async def over_since(run: Run, t_from: float, dom_before: str, *, hint_until: float | None = None,
                     hints: list[str] | None = None) -> float | None:
    """When a game-over message was shown after ``t_from`` (and is still drawn then), else None.

    Canvas text counts from when it was drawn; a DOM line counts when it is new since
    ``dom_before``. ``hint_until``: canvas text first drawn before this is a hint, not an ending
    (each such text is added to ``hints``, when given).
    """
    best: float | None = None
    texts = await run.session.texts()
    run.check_reload()
    for text, first, last, _n in texts:
        if not GAME_OVER_RE.search(text) or last / 1000 <= t_from + 1e-6:
            continue
        if hint_until is not None and first / 1000 < hint_until:
            if hints is not None and text not in hints:
                hints.append(text)
            continue
        at = max(first / 1000, t_from)
        best = at if best is None else min(best, at)
    if best is not None:
        return best
    dom = await run.session.dom_text()
    run.check_reload()
    before = set(dom_before.splitlines())
    fresh = [line for line in dom.splitlines() if line.strip() and line not in before]
    if any(GAME_OVER_RE.search(line) for line in fresh):
        return run.now
    return None


def frozen_for(run: Run) -> float:
    """How long (virtual s) the screen has not changed at the end of the run so far."""
    i = run.last_index()
    j = i
    while j > 0 and run.code(j - 1) is not None and not differs(run.code(j - 1), run.code(j)):
        j -= 1
    return (i - j) * run.every


def _images(run: Run) -> dict[int, Image]:
    return {i: f.image for i, f in run.frames.items()}


async def watch_over(run: Run, t0: float, limit: float) -> Over:
    """Play ``run`` (no input) until its end is shown or the page reloads, at most to ``t0 + limit``.

    A screen that settled with nothing new is watched on to the limit (an end screen may come
    later, after the bird landed or a sound played); one that starts moving again there is given
    SETTLE s more to settle.
    """
    dom_before = run.dom_first if run.dom_first is not None else await run.session.dom_text()
    over = Over()
    screen = Screen()
    polls: list[tuple[float, set[str]]] = []  # (time, the page's text lines then)
    end = t0 + limit
    extended = False
    while not run.broken:
        words_at = await over_since(run, t0, dom_before, hint_until=t0 + HINT_S)
        dom = await run.session.dom_text()
        run.check_reload()
        polls.append((run.now, {line.strip() for line in dom.splitlines() if line.strip()}))
        if run.reloads:
            over.reloaded_at = run.reloads[0]
            return over
        got = settled(_images(run), run.every, t0, run.now, screen)
        if got is None and words_at is not None:
            got = settled(_images(run), run.every, t0, run.now, screen, quiet=WORDS_QUIET)
        if got is not None:
            at, how = _what_is_new(run, got, polls, await run.session.texts(), t0, words_at)
            if at is not None:
                over.at, over.how, over.still_at = at, how, got.quiet_from
                await run.advance(0.5)  # the screen after it: for the evidence
                return over
            over.still_at = got.quiet_from
        elif words_at is not None and run.now >= words_at + WORDS_STILL - 1e-9 and calm(
                _images(run), run.every, t0, words_at, words_at + WORDS_STILL, screen, WORDS_QUIET):
            over.at, over.how = words_at, "a game-over message on the stopped game"
            await run.advance(0.5)
            return over
        elif words_at is not None and run.now >= words_at + SETTLE + 0.5 and _decorated(run, t0, screen):
            over.at, over.how = words_at, "a game-over message (the screen moves as much before the start)"
            await run.advance(0.5)
            return over
        elif over.still_at is not None and not extended and run.now >= end - 0.3:
            extended, end = True, end + SETTLE + 0.5  # moving again at the limit: let it settle
        if run.now >= end - 1e-9:
            return over
        await run.advance(min(POLL, end - run.now))
    return over


def _decorated(run: Run, t0: float, screen: Screen) -> bool:
    """The screen changed about as much before the start as in play (random shake, twinkling stars
    drawn every frame): its pixels cannot show play stopping, so the words must."""
    frames = _images(run)
    before = busy(frames, run.every, 0.0, t0 - 0.1, screen)
    return before > 0 and before >= 0.5 * busy(frames, run.every, t0 + 0.1, run.now, screen)


def _what_is_new(run: Run, got: Settled, polls: list[tuple[float, set[str]]],
                 texts: list[tuple[str, float, float, int]], t0: float, words_at: float | None,
                 ) -> tuple[float | None, str]:
    """(when, what) something new showed on the settled screen ``got``, else (None, "")."""
    quiet_from = got.quiet_from
    if got.new_at is not None:
        return got.new_at, f"a new picture ({got.new_share:.0%} of the game) stays on the stopped game"
    played = set().union(*(lines for t, lines in polls if t < quiet_from - 0.05))
    fresh = [line for line in polls[-1][1] if line not in played] if polls else []
    if fresh and any(t < quiet_from - 0.05 for t, _ in polls):
        first = next(t for t, lines in polls if any(line in lines for line in fresh))
        return max(first, quiet_from - 0.3), f"new text on the page: {fresh[0][:40]!r}"
    late = [(first / 1000, text) for text, first, _last, _n in texts
            if first / 1000 >= max(quiet_from - 0.3, t0 + HINT_S) and text.strip()]
    if late:
        at, text = min(late)
        return at, f"new text drawn on the game: {text[:40]!r}"
    if words_at is not None:
        return words_at, "a game-over message"
    return None, ""


RESTART_INPUTS = [("Space", "press:Space"), ("a click", "click:0.5,0.5"),
                  ("a Restart button", r"target:restart|play\s*again|try\s*again|retry|replay|new\s+game|"
                   r"again|\b(start|play)\b|\u21bb|\u27f3"),
                  ("Enter", "press:Enter"), ("R", "press:r")]


async def _plays_again(run: Run, t_in: float, dom_before: str, flap: str, dom_then: str,
                       ) -> tuple[bool, str, dict[str, object]]:
    """Flap for 1.6 s after a restart input: a new game moves and is not over within a second, and
    the game-over screen changed (``end_left``; the page's text, ``dom_then`` before the input, may
    show the change instead: an HTML panel over a canvas is not in the canvas's captures)."""
    start_i = run.index(run.now)
    end = t_in + PLAY_S
    next_flap = t_in + 0.3
    again: float | None = None
    dom_early: str | None = None
    scored_in_page = bool(_dom_scores(dom_then))  # a score in the page's text: read it again as the new game begins

    def changes() -> int:
        return sum(1 for i in range(start_i + 1, run.last_index() + 1)
                   if run.code(i - 1) is not None and run.code(i) is not None
                   and differs(run.code(i - 1), run.code(i)))

    while run.now < end - 1e-9 and not run.broken:
        await run.advance(max(0.0, min(next_flap, end) - run.now))
        if await over_since(run, max(t_in + 0.15, run.now - 0.3), dom_before) is not None:
            again = run.now
            break
        if run.now >= t_in + 0.7 and changes() == 0:
            break  # a still screen after the input and a flap: nothing started
        if run.now >= next_flap - 1e-9 and run.now < end - 1e-9:
            if dom_early is None and scored_in_page:  # the page's text as the new game begins (``_score_back``)
                dom_early = await run.session.dom_text()
            await run.do(flap)
            next_flap += FLAP_PERIOD
    moved = changes()
    lasted = (again - t_in) if again is not None else PLAY_S
    if moved >= 5 and lasted >= 1.0:
        still, left = end_left(run, t_in)
        seen: dict[str, object] = {"still_share": round(still, 3), "still_changed": round(left, 3)}
        text_changed = _lines(await run.session.dom_text()) != _lines(dom_then)
        if still >= STILL_MIN and left < LEFT_MIN and not text_changed:
            return False, (f"{NO_GAME}: {still:.0%} of the screen was still before the input and only "
                           f"{left:.1%} of that changed, with flapping (only what moved there moves on)"), seen
        return True, f"runs {lasted:.1f}+ s with flapping", {**seen, "dom_early": dom_early}
    return False, "nothing moved" if moved < 5 else f"game over again after {lasted:.1f} s", {}


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip()}


def end_left(run: Run, t_in: float) -> tuple[float, float]:
    """(still, left): the share of the screen that stayed still in the END_BEFORE s before an input
    at ``t_in``, and the share of that still part that changed in any capture after the input.

    A person sees a restart by what it does to the game-over screen: the panel goes, the pipes
    are cleared, the bird is back. What moved there already (drifting clouds, a scrolling
    ground, a blinking hint) and its surroundings are left out: moving on is no restart.
    """
    before = [i for i in range(run.index(t_in - END_BEFORE), run.index(t_in) + 1) if i in run.frames]
    after = [i for i in range(run.index(t_in) + 1, run.last_index() + 1) if i in run.frames]
    if len(before) < 3 or not after:
        return 0.0, 0.0
    ref = run.frames[before[-1]].image
    size = (ref.width, ref.height)
    coder = Coder(*size)
    codes = [code_of(run.frames[i].image) for i in before if (run.frames[i].width, run.frames[i].height) == size]
    moved = 0
    for a, b in zip(codes, codes[1:], strict=False):
        moved |= coder.differ(a, b)
    # What moves slowly moves on past where it was seen: its surroundings are left out too.
    still = coder.everything & ~coder.widen(moved, 3 * WIDEN)
    if not still:
        return 0.0, 0.0
    changed = 0
    for i in after:
        img = run.frames[i].image
        if (img.width, img.height) != size:
            return coder.share(still), 1.0  # the game's size changed: it is not the game-over screen
        changed |= coder.differ(codes[-1], code_of(img))
    return coder.share(still), (changed & still).bit_count() / still.bit_count()


async def restart(run: Run, start: tuple[str, str] | None, flap: str) -> CheckResult:
    """After game over on ``run``: does some input start a new playable game without a reload?"""
    await run.advance(0.5)  # games often ignore input for a moment after the crash
    dom_before = run.dom_first or ""
    tried: list[str] = []
    inputs = list(RESTART_INPUTS)
    if start is not None and start[1] not in {a for _, a in inputs} and not start[1].startswith("click"):
        inputs.append(start)
    for name, action in inputs:
        t_in = run.now
        reloads = len(run.reloads)
        dom_then = await run.session.dom_text()
        if not await run.do(action):
            tried.append(f"{name}: none shown")
            continue
        await run.advance(0.05)
        if len(run.reloads) > reloads:
            tried.append(f"{name}: reloads the page")
            break  # the page is back at its start: later inputs would not act on a game over
        ok, how, seen = await _plays_again(run, t_in, dom_before, flap, dom_then)
        if ok:
            early = seen.pop("dom_early", None)
            result = CheckResult(id="restart", status="pass", detail=f"{name} starts a new game that {how}",
                                 data={"input": name, "end_screen": seen, "at_s": round(t_in, 3),
                                       "until_s": round(run.now, 3)})
            return await _score_back(run, t_in, dom_before, dom_then, early, result)
        tried.append(f"{name}: {how}")
        if run.broken:
            break
        if how != "nothing moved" and not how.startswith(NO_GAME):
            await run.advance(2.5)  # let a half-started game end before the next try
    return CheckResult(id="restart", status="fail", data={"tried": tried},
                       detail="no input started a new playable game after game over without reloading the page ("
                       + "; ".join(tried) + ")")


Reading = tuple[str, int]  # (the text around the number, "Score: #"; the number)


def _scores(text: str) -> set[Reading]:
    """The scores one text shows, with their labels ("Score: 3 | Best: 5" shows ("Score: #", 3))."""
    from ._score import NUMBER, readings  # imported here: _score's play imports _top, which imports this module

    return {(NUMBER.sub("#", part), v) for part, v in readings(text)}


def _dom_scores(text: str) -> set[Reading]:
    return {r for line in text.splitlines() for r in _scores(line)}


async def _score_back(run: Run, t_in: float, dom_first: str, dom_then: str, dom_early: str | None,
                      result: CheckResult) -> CheckResult:
    """``result`` (a restart that passed), failed where the first game scored and the new game shows the
    old score instead of the one the first game started at: the same score (by its label, "Score: #")
    shown in the new game at the old value and never at the start value. Read where ``_score`` reads a
    score: canvas text by when it was drawn (first drawn before the restart input: the first game; still
    drawn after it: the new game), the page's text before the first input (the start), before the restart
    input (the end), at the new game's first flap and now."""
    texts = await run.session.texts()
    run.check_reload()
    dom_now = await run.session.dom_text()
    drawn_before: set[Reading] = set()
    drawn_after: set[Reading] = set()
    for text, first, last, _n in texts:
        if first / 1000 < t_in:
            drawn_before |= _scores(text)
        if last / 1000 > t_in + 0.05:
            drawn_after |= _scores(text)
    early = _dom_scores(dom_early) if dom_early is not None else set()
    ways = (("drawn on the game", drawn_before, drawn_before, drawn_after, drawn_after),
            ("in the page", _dom_scores(dom_first), _dom_scores(dom_then), early, early | _dom_scores(dom_now)))
    for where, began, ended, first_new, shown in ways:
        for label in sorted({lab for lab, _ in began} & {lab for lab, _ in ended} & {lab for lab, _ in first_new}):
            start_v = min(v for lab, v in began if lab == label)
            old_v = max(v for lab, v in ended if lab == label)
            new = sorted(v for lab, v in shown if lab == label)
            if old_v <= start_v:
                result.data.setdefault("score_back", f"could not tell: the first game ended at its start score "
                                       f"{start_v} ({label!r} {where})")
                continue
            result.data["score_back"] = {"where": where, "label": label, "started": start_v, "ended": old_v,
                                         "new_game": new[:5]}
            if start_v not in new and old_v in new:
                result.status = "fail"
                result.detail = (f"{result.data['input']} starts a new game, but it keeps the old score: the new "
                                 f"game shows {', '.join(map(str, new[:4]))} ({label!r} {where}) where the first "
                                 f"game ended at {old_v} and started at {start_v}")
                return result
    return result
