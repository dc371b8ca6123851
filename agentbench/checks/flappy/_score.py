"""Flappy `score`: a score is shown while playing and goes up by one per pipe passed.

What a person reads: a number drawn on the canvas or in the page's text while the game runs
("0", "Score: 3", "\u2b50 3", "Punkte: 3"), not a best score or a frame counter. What a person
sees where the number cannot be read (digits drawn as pictures, blocks, a sprite sheet, an SVG
display): something at one place that changes each time the bird passes a pipe and stays put
between passes (``_score_counts``). Both are laid against the pipes a run of its own flew the bird
through (``_passes``): a score must change once per pipe, a readable one by one. Where no pipe
was passed, a readable score is judged by its values in the other runs (it must only ever go up
by one); a page with no number to read fails then, as a game with no score does (far more common
than one that draws its score only as pictures), saying that no pipe was passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._model import CheckResult
from ..browser._page import PageBroken
from ..browser._play import Run
from ._score_counts import Counted, Played, judge

__all__ = ["NUMBER", "Seen", "readings", "score_check", "score_texts", "score_value"]

NUMBER = re.compile(r"[0-9]+")
# A label or symbol around the number ("Score:", "\u2b50", "Punkte", "pts"): short, a few words, any language.
LABEL_BEFORE = (24, 3)  # at most this many characters and words before the number
LABEL_AFTER = (12, 2)   # ... after it
_NOT_SCORE = re.compile(r"best|high|record|r\u00e9cord|rekord|\u0440\u0435\u043a\u043e\u0440\u0434|mejor|meilleur|max|"
                        r"\u6700|top|fps|level|lives|life|time|sec|ms|\bx\b|speed|gen|last|prev|%", re.IGNORECASE)


_PARTS = re.compile(r"\s*(?:\||\u2022|\u00b7|/|;|,|\t|\s{3,})\s*")
# Digits shown as pictures: a row of <img> whose alt texts are single digits (what a screen reader reads).
_READER = "reader:flappy-score"
_DIGITS_JS = """({
  digits() {
    const out = [], seen = new Set();
    for (const img of document.querySelectorAll("img[alt]")) {
      const row = img.parentElement;
      if (!row || seen.has(row)) continue;
      seen.add(row);
      const imgs = Array.from(row.children).filter((c) => c.tagName === "IMG");
      const alts = imgs.map((i) => (i.getAttribute("alt") || "").trim());
      if (!alts.length || !alts.every((a) => /^[0-9]$/.test(a))) continue;
      const shown = imgs.every((i) => {
        const r = i.getBoundingClientRect(), st = getComputedStyle(i);
        return r.width > 0 && r.height > 0 && st.visibility !== "hidden" && st.opacity !== "0";
      });
      if (shown) out.push(alts.join(""));
    }
    return out;
  },
})"""
FAST = (1.0, 3)  # a score rising by this much within this many s counts time or frames, not pipes


def _label(text: str, most: tuple[int, int]) -> bool:
    words = text.split()
    return len(text.strip()) <= most[0] and len(words) <= most[1] and not _NOT_SCORE.search(text)


def score_value(text: str) -> int | None:
    """The score a text shows ("7", "Score: 7", "\u2b50 7", "7 pts"), or None when it is not one.

    One number of up to 5 digits, with at most a short label or symbol before and after it that
    names no other count (best, level, time, fps...).
    """
    numbers = NUMBER.findall(text)
    if len(numbers) != 1 or len(numbers[0]) > 5:
        return None
    before, _, after = text.partition(numbers[0])
    if not _label(before, LABEL_BEFORE) or not _label(after, LABEL_AFTER):
        return None
    return int(numbers[0])


def readings(text: str) -> list[tuple[str, int]]:
    """The scores one line of text shows: "Score: 0 | High Score: 0" shows two readings, one a score."""
    out = []
    for part in _PARTS.split(text):
        v = score_value(part)
        if v is not None:
            out.append((part.strip(), v))
    return out


@dataclass
class Seen:
    """What the runs showed: (text, value, first s, last s) of the score-like texts, and whether
    the page showed any readable text at all (drawn on a canvas or in the page)."""

    scores: list[tuple[str, int, float, float]] = field(default_factory=list)
    any_text: bool = False

    def add(self, other: Seen) -> None:
        self.scores += other.scores
        self.any_text = self.any_text or other.any_text


async def score_texts(run: Run, t0: float) -> Seen:
    """The score-like canvas texts drawn after ``t0`` and the page's text lines, read now."""
    out = Seen()
    if run.closed or run.broken:
        return out
    try:
        for text, first, last, _n in await run.session.texts():
            out.any_text = out.any_text or bool(text.strip())
            if last / 1000 > t0:
                out.scores += [(part, v, first / 1000, last / 1000) for part, v in readings(text)]
        dom = await run.session.dom_text()
        out.any_text = out.any_text or bool(dom.strip() or (run.dom_first or "").strip())
        for line in dom.splitlines():
            out.scores += [(part, v, run.now, run.now) for part, v in readings(line)]
        for digits in await run.session.read(_READER, _DIGITS_JS, "digits") or []:
            out.any_text = True
            out.scores.append((f"{digits} (digit pictures)", int(digits), run.now, run.now))
    except PageBroken:
        pass
    return out


def score_check(shown: Seen, played: Played | None = None) -> CheckResult:
    """A score is shown during play and counts the pipes passed, one by one; see the module docstring."""
    played = played or Played(why="no run flew the bird through the pipes")
    seen = shown.scores + [(p.label.replace("#", str(v)), v, 0.0, 0.0) for p in played.texts for v in p.values or []]
    data: dict[str, object] = {}
    if seen:
        data = {"texts": sorted({t for t, *_ in seen})[:10], "values": sorted({v for _, v, _, _ in seen})[:20]}
    fast = _too_fast(shown.scores)
    if fast is not None:
        (ta, va), (tb, vb) = fast
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"the score counts time, not pipes passed: it went from {va} to {vb} within "
                           f"{tb - ta:.1f} s of play, faster than pipes can pass the bird")
    pixels = judge(played.places, played.passes, played.seen_until, played.lo) if played.passes else None
    if played.passes:
        data["pipes_passed"] = len(played.passes)
    if played.why:
        data["pass_run"] = played.why  # why the run that flew the bird through the pipes ended (or was not played)
    if played.texts and played.passes:
        text = judge(played.texts, played.passes, played.seen_until, played.lo)
        verdict = _text_counted(text, data) if text.passes else None
        # A number that stayed put as pipes passed may be no score at all, where a score in pictures counts.
        other = pixels is not None and pixels.how == "counts" and text.how not in ("counts", "half", "double")
        if verdict is not None and not other:
            return verdict
        if other and pixels is not None:
            return _pixels_counted(pixels, data, shown)
    if seen:
        return _text_values(seen, data)
    if pixels is not None and pixels.passes:
        return _pixels_counted(pixels, data, shown)
    if played.passes:
        n = len(played.passes)
        return CheckResult(id="score", status="error", data=data,
                           detail=f"could not tell whether a score is shown: no number is drawn as text, and the "
                           f"bird flew through {n} pipe{'s' * (n > 1)} but play ended too soon after to see a "
                           f"score drawn as pictures count {'them' if n > 1 else 'it'} ({played.why})")
    # No pipe passed: a score drawn as pictures could not be seen counting. A page that shows no text
    # at all, or no number, still fails, as before the pass run: far more games have no score than draw
    # it only as pictures (the corpus has one such game, labelled no-score, and none of the other kind),
    # and the verdict of a good picture-score game is not a pass either way (an error keeps it from one).
    why = played.why or "no pipe was passed"
    if not shown.any_text:
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"no score is shown while playing: the page shows no text at all (none drawn on "
                           f"the game, none in the page's text, no digit pictures); a score drawn as pictures is "
                           f"seen by its changes as pipes pass, but the run that flew the bird through the pipes "
                           f"passed none ({why})")
    return CheckResult(id="score", status="fail", data=data,
                       detail=f"no score is shown while playing: no number is drawn on the game or in the page's "
                       f"text after the start; a score drawn as pictures is seen by its changes as pipes pass, but "
                       f"the run that flew the bird through the pipes passed none ({why})")


def _counts_data(c: Counted) -> dict[str, object]:
    return {"pipes_judged": c.passes, "changes_per_pipe": c.per_pass, "delay_after_pipe_s": c.lags}


def _text_counted(c: Counted, data: dict[str, object]) -> CheckResult | None:
    """A readable score laid against the pipes passed: pass, fail, or None where that says nothing."""
    place = c.place
    assert place is not None and place.values is not None
    data = {**data, **_counts_data(c), "score_label": place.label, "score_values": place.values[:20]}
    n, values = c.passes, place.values
    shown = ", ".join(map(str, values[:6]))
    if c.how == "counts":
        return CheckResult(id="score", status="pass", data=data,
                           detail=f"a score is shown ({place.label!r}) and counts the pipes passed one by one: it "
                           f"went {shown} as the bird flew through {n} pipe{'s' * (n > 1)}")
    if c.how == "half":
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"the score counts one per two pipes passed: as the bird flew through {n} pipes "
                           f"it went up by {sum(c.per_pass)} ({place.label!r}: {shown}; per pipe {c.per_pass})")
    if c.how == "double":
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"the score goes up by 2 per pipe passed: as the bird flew through {n} pipe"
                           f"{'s' * (n > 1)} it went {shown} ({place.label!r})")
    if n >= 2 and not any(c.per_pass) and not c.extra:
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"the score does not count the pipes passed: it stayed at {values[0]} "
                           f"({place.label!r}) while the bird flew through {n} pipes")
    return None  # steps that go with no count of pipes (a pipe the run did not see pass): its values decide


def _pixels_counted(c: Counted, data: dict[str, object], shown: Seen) -> CheckResult:
    data = {**data, **_counts_data(c)}
    n = c.passes
    if c.place is not None:
        data["place_px"] = list(c.place.box)
        data["changed_at_s"] = [round(t, 2) for t in c.place.moments[:12]]
    pipes = f"{n} pipe{'s' * (n > 1)}"
    if c.how == "counts":
        lag = c.lags[0] if c.lags else 0.0
        return CheckResult(id="score", status="pass", data=data,
                           detail=f"a score is shown (drawn as pictures, not text): one place on the game changes "
                           f"each time the bird passes a pipe ({pipes} passed, each counted {lag:+.1f} s after it "
                           "left the bird) and stays put between passes")
    if c.how == "half":
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"the score counts one per two pipes passed: the place on the game that changes "
                           f"as pipes pass changed at only {sum(c.per_pass)} of the {pipes} the bird flew through "
                           f"(per pipe {c.per_pass})")
    unread = "" if shown.scores else " and no number is drawn as text"
    if c.how == "time" and c.place is not None and len(c.place.moments) >= n:
        moments = len(c.place.moments)
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"no score counts the pipes passed{unread}: as the bird flew through {pipes}, "
                           f"nothing on the game changed once per pipe; the place that changed most ({moments} "
                           f"times, per pipe {c.per_pass}) changes with time, not with the pipes")
    return CheckResult(id="score", status="fail", data=data,
                       detail=f"no score is shown{unread}: as the bird flew through {pipes}, nothing on the game "
                       "changed at a fixed place as a pipe was passed")


def _text_values(seen: list[tuple[str, int, float, float]], data: dict[str, object]) -> CheckResult:
    """A readable score judged by its values alone (no pipe passed): only ever up by one."""
    values = sorted({v for _, v, _, _ in seen})
    steps = [b - a for a, b in zip(values, values[1:], strict=False)]
    if values[0] == 0 and steps and all(s == 1 for s in steps):
        return CheckResult(id="score", status="pass", data=data,
                           detail=f"a score is shown and counts up by one ({', '.join(map(str, values[:6]))})")
    if values[0] == 0 and not steps:
        return CheckResult(id="score", status="pass", data=data,
                           detail=f"a score is shown ({seen[0][0]!r}); no pipe was passed in the runs to see it count")
    # Only canvas text drawn over time is read whole (every value it showed): the page's text is read at
    # moments (a run's end), so a good DOM score read 0 in one run and 2 in another skipped nothing.
    drawn = sorted({v for _, v, first, last in seen if last > first})
    jumps = [b - a for a, b in zip(drawn, drawn[1:], strict=False)]
    if drawn and drawn[0] == 0 and jumps and len(set(jumps)) == 1 and jumps[0] >= 2:
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"the score goes up by {jumps[0]} at a time, not one per pipe passed "
                           f"({', '.join(map(str, drawn[:6]))}, drawn on the game)")
    return CheckResult(id="score", status="pass", data=data,
                       detail=f"a score is shown ({seen[0][0]!r}; values {values[:6]})")


def _too_fast(seen: list[tuple[str, int, float, float]]) -> tuple[tuple[float, int], tuple[float, int]] | None:
    """Two readings of the drawn score (time first drawn, value) that rose faster than pipes pass."""
    # Canvas text, drawn over time; a reading replaced by a higher one (it stopped being drawn then).
    drawn = sorted({(first, last, v) for _, v, first, last in seen if last > first})
    for i, (ta, la, va) in enumerate(drawn):
        for tb, _lb, vb in drawn[i + 1:]:
            if tb - ta > FAST[0]:
                break
            if vb - va >= FAST[1] and la <= tb + 0.2:
                return (ta, va), (tb, vb)
    return None
