"""What a person can see: how long and how large a defect must be before it counts.

Every probe that calls something "visible" asks here, so the thresholds live in one place:

- ``SEEN_S``: a wrong state (a ball past a wall, a frozen bird) shorter than this is not seen.
  One or two frames at 60 Hz (17-33 ms) flash by; about three frames (50 ms) are noticed.
- ``SEEN_PX``: offsets under a few px (arena px) are not seen; a body's own size sets a larger
  allowance (``SEEN_SHARE`` of its radius: a third of a big ball overlapping a wall looks like
  the ball squashing on it).
- ``STILL_PX``: jitter within a px looks still.
- ``SAME_SPEED`` / ``OTHER_SPEED``: two speeds whose ratio lies inside ``SAME_SPEED`` look the
  same; a ratio of ``OTHER_SPEED`` (or its inverse) or more is plainly different; between them
  a person cannot tell.
- ``HEIGHT_SHARE``: a rebound must differ by this share (and ``SEEN_PX``) to look higher or
  lower than another.

Pure functions and constants; task-neutral.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["HEIGHT_SHARE", "OTHER_SPEED", "SAME_SPEED", "SEEN_PX", "SEEN_S", "SEEN_SHARE", "STILL_PX",
           "higher", "lasts", "overlap_seen", "same_height", "speed_verdict", "spells"]

SEEN_S = 0.05
SEEN_PX = 3.0
SEEN_SHARE = 0.3
STILL_PX = 1.0
SAME_SPEED = (0.75, 1.35)
OTHER_SPEED = 1.8
HEIGHT_SHARE = 0.05


def overlap_seen(radius: float, arena: tuple[int, int]) -> float:
    """How far (px) a body of ``radius`` may overlap an edge of ``arena`` (w, h) before a person sees it.

    A few px always (more in a big arena: 0.6 % of its larger side), a third of the body's radius
    for a big body.
    """
    return max(SEEN_PX, 0.006 * max(arena), SEEN_SHARE * radius)


def spells(times_ms: Sequence[float], wrong: Sequence[bool]) -> list[tuple[float, float, int, int]]:
    """Runs of consecutive wrong samples: (first time, how long it lasted in ms, first index, last index).

    A run lasts from its first to its last sample: one sample alone lasts 0 ms (it may have been
    a single frame), two samples 50 ms apart last 50 ms.
    """
    out: list[tuple[float, float, int, int]] = []
    start: int | None = None
    for k, bad in enumerate(wrong):
        if bad and start is None:
            start = k
        if start is not None and (not bad or k == len(wrong) - 1):
            end = k if bad else k - 1
            out.append((times_ms[start], times_ms[end] - times_ms[start], start, end))
            start = None
    return out


def lasts(duration_ms: float) -> bool:
    """Whether something that lasted ``duration_ms`` is seen."""
    return duration_ms >= SEEN_S * 1000 - 1e-6


def speed_verdict(ratio: float) -> str:
    """``same``, ``different`` or ``unclear`` for the ratio of two speeds as a person sees them."""
    if SAME_SPEED[0] <= ratio <= SAME_SPEED[1]:
        return "same"
    if ratio >= OTHER_SPEED or ratio <= 1 / OTHER_SPEED:
        return "different"
    return "unclear"


def higher(a: float, b: float) -> bool:
    """Whether a rebound of ``b`` px looks higher than one of ``a`` px."""
    return b > a * (1 + HEIGHT_SHARE) + SEEN_PX / 2


def same_height(heights: Sequence[float]) -> bool:
    """Whether rebounds all look alike: each within ``HEIGHT_SHARE`` (and ``SEEN_PX``) of their mean."""
    if not heights:
        return False
    mean = sum(heights) / len(heights)
    return all(abs(h - mean) <= mean * HEIGHT_SHARE + SEEN_PX for h in heights)
