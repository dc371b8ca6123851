"""Swiping a task's row, as a person does on a list whose rows have no delete control of their own.

Tried last, only when no click, double-click or revealed menu on a row deleted it: the row is dragged left,
then right, by most of its width with the real mouse, and, where the page listens for touch, with
one finger. Judged by effect like every other row action (the row is gone, and stays gone after
a reload); each drag tried is a line of the effect table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import CheckError
from ..browser._find import dom, mouse_away, point_of, settle
from ..browser._page import PageBroken

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["SWIPES", "TOUCHED", "swipe", "wait_uncovered"]

REACH = 0.6  # of the row's width: past any threshold a swipe list sets (90 px, a third, a half)
MOVES = 10  # moves a drag is made of, a frame apart (~170 ms: a swipe, not a slow drag)
SCROLL_MS = 5000  # real ms for Playwright to scroll a row into view (only one out of view is scrolled to)
AFTER_S = 0.6  # virtual seconds for the row to slide off and be removed (a timer or transition)
TOUCHED = {"touchstart", "touchend", "touchmove"}
SWIPES = {"swipe-left": (-1, False), "swipe-right": (1, False), "touch-swipe-left": (-1, True),
          "touch-swipe-right": (1, True)}  # action -> (direction, with a finger)


async def swipe(s: PageSession, path: str, action: str, what: str) -> None:
    """Drag the element at ``path`` sideways by most of its width (in view first), on the virtual clock."""
    way, finger = SWIPES[action]
    vw, vh = s.viewport
    box = await dom(s, "box", {"path": path})
    if box and (box[1] < 0 or box[1] + box[3] > vh):  # out of view: scrolled to, as a person scrolls
        try:
            await s.run_limited(s.page.locator(path).scroll_into_view_if_needed(timeout=SCROLL_MS),
                                what=f"scrolling to {what}")
        except PageBroken:
            raise
        except Exception as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CheckError(f"could not scroll to {what}: {why}") from exc
        box = await dom(s, "box", {"path": path})
    if not box or box[2] < 4 or box[3] < 2:
        raise CheckError(f"{what} has no box to drag")
    box = {"x": box[0], "y": box[1], "width": box[2], "height": box[3]}
    left, right = max(box["x"], 1.0), min(box["x"] + box["width"], vw - 1.0)
    width = right - left
    # From the side it leaves by most of its width: a left swipe starts near the row's right end.
    start = left + width * (1 - REACH) / 2 if way > 0 else right - width * (1 - REACH) / 2
    y = await _grip(s, path, start, box, what)
    points = [(start + way * width * REACH * i / MOVES, y) for i in range(MOVES + 1)]
    try:
        await s.drag(points, touch=finger)
    except PageBroken:
        raise
    except CheckError:
        raise
    except Exception as exc:
        raise CheckError(f"could not drag {what}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
            from exc
    await settle(s, AFTER_S)
    await mouse_away(s)


GRIP = (0.5, 0.3, 0.7)  # heights across the row (of its box) where a finger may press
COVERED_S = 6.0  # virtual seconds a person waits for what lies over the row (an undo toast) to go


async def _grip(s: PageSession, path: str, x: float, box: dict[str, float], what: str) -> float:
    """A height at which a press at ``x`` lands on the row itself; while something lies over it (a
    toast shown for a few seconds over the list's last row), waited for as a person waits."""
    vh = s.viewport[1]
    ys = [min(max(box["y"] + box["height"] * f, 1.0), vh - 1.0) for f in GRIP]
    waited = 0.0
    while True:
        hit = await dom(s, "hits", {"path": path, "points": [[x, y] for y in ys]})
        if any(hit):
            return ys[hit.index(True)]
        if waited >= COVERED_S:
            raise CheckError(f"{what} stayed covered by another element for {COVERED_S:g} s, so it could not be "
                             "pressed to swipe")
        await settle(s, 1.0)
        waited += 1.0


async def wait_uncovered(s: PageSession, row: str, part: str) -> None:
    """Before a click on a part of a row: while what lies at the part's centre is not of the row (an
    undo toast laid over the list's last row for a few seconds), wait as a person waits, up to
    ``COVERED_S``; then the click goes where it would have gone."""
    point = await point_of(s, part, force=True)
    waited = 0.0
    while point is not None and waited < COVERED_S:
        if (await dom(s, "hits", {"path": row, "points": [list(point)]}))[0]:
            return
        await settle(s, 1.0)
        waited += 1.0
