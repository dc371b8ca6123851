"""Flappy `score`: a score is shown while playing and goes up by one per pipe passed.

What a person reads: a number drawn on the canvas or in the page's text while the game runs
("0", "Score: 3", "\u2b50 3", "Punkte: 3"), not a best score or a frame counter. How it changes is
read from the runs the other probes played (the flap runs survive longest): it must only ever go
up by one. A page that shows no text at all fails, and says so: the corpus has a real game with no
text anywhere, labelled no-score, while a score drawn pixel by pixel (rectangles for digits), which
we do not read, is far rarer in what people and models write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._model import CheckResult
from ..browser._page import PageBroken
from ..browser._play import Run

__all__ = ["Seen", "score_check", "score_texts", "score_value"]

_NUMBER = re.compile(r"[0-9]+")
# A label or symbol around the number ("Score:", "\u2b50", "Punkte", "pts"): short, a few words, any language.
LABEL_BEFORE = (24, 3)  # at most this many characters and words before the number
LABEL_AFTER = (12, 2)   # ... after it
_NOT_SCORE = re.compile(r"best|high|record|r\u00e9cord|rekord|\u0440\u0435\u043a\u043e\u0440\u0434|mejor|meilleur|max|"
                        r"\u6700|top|fps|level|lives|life|time|sec|ms|\bx\b|speed|gen|%", re.IGNORECASE)


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
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1 or len(numbers[0]) > 5:
        return None
    before, _, after = text.partition(numbers[0])
    if not _label(before, LABEL_BEFORE) or not _label(after, LABEL_AFTER):
        return None
    return int(numbers[0])


def _readings(text: str) -> list[tuple[str, int]]:
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
                out.scores += [(part, v, first / 1000, last / 1000) for part, v in _readings(text)]
        dom = await run.session.dom_text()
        out.any_text = out.any_text or bool(dom.strip() or (run.dom_first or "").strip())
        for line in dom.splitlines():
            out.scores += [(part, v, run.now, run.now) for part, v in _readings(line)]
        for digits in await run.session.read(_READER, _DIGITS_JS, "digits") or []:
            out.any_text = True
            out.scores.append((f"{digits} (digit pictures)", int(digits), run.now, run.now))
    except PageBroken:
        pass
    return out


def score_check(shown: Seen) -> CheckResult:
    """A score is shown during play; the values seen only ever step up by one."""
    seen = shown.scores
    if not seen and not shown.any_text:
        return CheckResult(id="score", status="fail",
                           detail="no score is shown while playing: the page shows no text at all (none drawn on "
                           "the game with fillText or strokeText, none in the page's text, no digit pictures; a "
                           "score drawn pixel by pixel is not read)")
    if not seen:
        return CheckResult(id="score", status="fail",
                           detail="no score is shown while playing (no number drawn on the game or in the page's "
                           "text after the start)")
    values = sorted({v for _, v, _, _ in seen})
    data = {"texts": sorted({t for t, *_ in seen})[:10], "values": values[:20]}
    fast = _too_fast(seen)
    if fast is not None:
        (ta, va), (tb, vb) = fast
        return CheckResult(id="score", status="fail", data=data,
                           detail=f"the score counts time, not pipes passed: it went from {va} to {vb} within "
                           f"{tb - ta:.1f} s of play, faster than pipes can pass the bird")
    steps = [b - a for a, b in zip(values, values[1:], strict=False)]
    if values[0] == 0 and steps and all(s == 1 for s in steps):
        return CheckResult(id="score", status="pass", data=data,
                           detail=f"a score is shown and counts up by one ({', '.join(map(str, values[:6]))})")
    if values[0] == 0 and not steps:
        return CheckResult(id="score", status="pass", data=data,
                           detail=f"a score is shown ({seen[0][0]!r}); no pipe was passed in the runs to see it count")
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
