"""Flappy `score`: a score is shown while playing and goes up by one per pipe passed.

What a person reads: a number drawn on the canvas or in the page's text while the game runs
("0", "Score: 3"), not a best score or a frame counter. How it changes is read from the runs the
other probes played (the flap runs survive longest): it must only ever go up by one.
"""

from __future__ import annotations

import re

from .._model import CheckResult
from ..browser._page import PageBroken
from ..browser._play import Run

__all__ = ["score_check", "score_texts", "score_value"]

_NUM = re.compile(r"^\s*(?:([A-Za-z][A-Za-z .]{0,14}?)\s*[:=]?\s*)?(\d{1,5})\s*(?:pts|points)?\s*$", re.IGNORECASE)
_NOT_SCORE = re.compile(r"best|high|record|top|fps|level|lives|life|time|sec|ms|\bx\b|speed|gen", re.IGNORECASE)


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


def score_value(text: str) -> int | None:
    """The score a text shows ("7", "Score: 7", "SCORE 7"), or None when it is not one."""
    m = _NUM.match(text)
    if not m or (m.group(1) and _NOT_SCORE.search(m.group(1))):
        return None
    return int(m.group(2))


Seen = list[tuple[str, int, float, float]]


async def score_texts(run: Run, t0: float) -> Seen:
    """(text, value, first s, last s) of the score-like canvas texts drawn after ``t0``, and DOM lines."""
    out: Seen = []
    if run.closed or run.broken:
        return out
    try:
        for text, first, last, _n in await run.session.texts():
            v = score_value(text)
            if v is not None and last / 1000 > t0:
                out.append((text, v, first / 1000, last / 1000))
        for line in (await run.session.dom_text()).splitlines():
            for part in _PARTS.split(line):  # "Score: 0 | High Score: 0" shows two readings
                v = score_value(part)
                if v is not None:
                    out.append((part.strip(), v, run.now, run.now))
        for digits in await run.session.read(_READER, _DIGITS_JS, "digits") or []:
            out.append((f"{digits} (digit pictures)", int(digits), run.now, run.now))
    except PageBroken:
        pass
    return out


def score_check(seen: Seen) -> CheckResult:
    """A score is shown during play; the values seen only ever step up by one."""
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


def _too_fast(seen: Seen) -> tuple[tuple[float, int], tuple[float, int]] | None:
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
