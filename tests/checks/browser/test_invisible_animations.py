"""CSS animations, transitions and element.animate() stand still between virtual frames (issue 28).

The harness sets each running animation to its virtual age every frame. Between two frames the browser
used to play it on in real time, so a capture showed the virtual time plus however long the machine took
between the step and the capture: on a busy machine a DOM game's CSS scenery moved on and was read as
the bird. fixtures/invisible/css_hold.html runs a CSS keyframe animation, an element.animate() one, a
transition a timer starts and a CSS animation in a same-origin iframe, each 2 s long; the test plays it to
1 virtual s, then holds it while the browser renders 30 frames of its own (at least half a second of real
time: a condition, not a sleep), then captures. What is drawn must be where the virtual time puts it, and
the page's own reads and events must be those of a browser that plays it.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentbench.checks.browser import BrowserHarness, PageSession
from agentbench.checks.browser._imaging import Image
from tests.helpers.waiting import HANG_S, until_page

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures" / "invisible"
PLAYED_S = 1.0
HOLD_FRAMES = 30  # rendered by the browser while the page is held: at least 0.5 s of real time
RUN_PX = 700 / 2000  # the keyframe animations move 700 px in 2 s
# A rAF of the isolated world, which the page's clock does not replace: it counts the browser's own frames.
_COUNTER = ("(() => { let n = 0, asked = false; return { painted() { if (!asked) { asked = true; "
            "requestAnimationFrame(() => { asked = false; n++; }); } return n; } }; })()")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(browser_path: str):
    async with BrowserHarness(browser_path) as h:
        yield h


async def _hold(session: PageSession, frames: int) -> None:
    """Wait until the browser has rendered ``frames`` frames (real ones: 60 a second at most)."""
    deadline = time.monotonic() + HANG_S
    since = await session.read("counter", _COUNTER, "painted")
    while await session.read("counter", _COUNTER, "painted") < since + frames:
        assert time.monotonic() < deadline, f"the browser rendered no {frames} frames within {HANG_S:g} s"
        await asyncio.sleep(0.01)


def _left(image: Image, rows: tuple[int, int], match: Any) -> float | None:
    """The leftmost column (in the viewport's CSS px) where a box of the colour ``match`` is drawn."""
    scale = 800 / image.width
    for x in range(image.width):
        if any(match(image.pixel(x, y)) for y in range(int(rows[0] / scale), int(rows[1] / scale))):
            return x * scale
    return None


def _red(p: tuple[int, int, int]) -> bool:
    return p[0] > 150 and p[1] < 90 and p[2] < 90


def _green(p: tuple[int, int, int]) -> bool:
    return p[1] > 110 and p[0] < 90 and p[2] < 90


def _blue(p: tuple[int, int, int]) -> bool:
    return p[2] > 150 and p[0] < 90 and p[1] < 90


def _magenta(p: tuple[int, int, int]) -> bool:
    return p[0] > 140 and p[2] > 140 and p[1] < 90


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=[60, 240])
async def held(harness: BrowserHarness, request: pytest.FixtureRequest) -> dict[str, Any]:
    """Played to 1 virtual s, held for 30 of the browser's frames, then captured; played on to 2.6 s."""
    fps = request.param
    s = await harness.open(FIXTURES, "css_hold.html", fps=fps)
    try:
        await s.advance(PLAYED_S)
        await _hold(s, HOLD_FRAMES)
        raster, shot = await s.capture(), await s.snapshot()
        await s.advance(1 / fps)  # the page reads its animation in this frame's callbacks
        after_hold = await s.eval("() => seen.reads[seen.reads.length - 1]")
        await s.advance(2.6 - PLAYED_S)
        at_once = await s.eval("() => seen.events.slice()")  # read as soon as the clock stopped
        await until_page(s, "() => seen.events.length >= 3")
        return {"fps": fps, "raster": raster.image, "shot": shot.image, "after_hold": after_hold, "at_once": at_once,
                "seen": await s.eval("() => seen")}
    finally:
        await s.close()


def _assert_at(left: float | None, started_ms: float, fps: int, px_per_ms: float, what: str) -> None:
    """The box is where ``PLAYED_S`` puts it: its age is the virtual time since it started, first seen a
    frame or two late; one capture pixel (5 px) either way. Played on in real time it is >= 175 px on."""
    frame_ms = 1000 / fps
    age = PLAYED_S * 1000 - started_ms
    low, high = (age - 2 * frame_ms) * px_per_ms - 6, age * px_per_ms + 6
    assert left is not None, f"{what}: not drawn"
    assert low <= left <= high, f"{what} drawn at x={left:.0f}, not in [{low:.0f}, {high:.0f}] (virtual {age:.0f} ms)"


@pytest.mark.parametrize("capture", ["raster", "shot"])
async def test_a_capture_after_a_hold_shows_the_virtual_time(held: dict[str, Any], capture: str) -> None:
    """The DOM raster (what a step captures) and a screenshot (the compositor's drawing) alike."""
    image, fps = held[capture], held["fps"]
    _assert_at(_left(image, (40, 80), _red), 0, fps, RUN_PX, "the CSS animation")
    _assert_at(_left(image, (140, 180), _green), 0, fps, RUN_PX, "element.animate()")
    _assert_at(_left(image, (240, 280), _blue), 250, fps, 500 / 2000, "the transition (from 0.25 s)")


async def test_an_iframes_animation_is_on_the_virtual_clock(held: dict[str, Any]) -> None:
    """A same-origin iframe's CSS animation: on the virtual clock too, held alike (the screenshot)."""
    _assert_at(_left(held["shot"], (380, 420), _magenta), 0, held["fps"], RUN_PX, "the iframe's animation")


async def test_the_page_reads_its_animation_at_the_virtual_time(held: dict[str, Any]) -> None:
    """In the frame after the hold the page reads its animation running, at rate 1, at most as old as the
    virtual time (played on in real time it read half a second more)."""
    now, current, state, rate = held["after_hold"]
    assert state == "running" and rate == 1, held["after_hold"]
    # Between the page's first read of it and this one, its age went on by the page's virtual time between the
    # two reads, less a frame (a frame reads the age the one before set); played on in real time it went on
    # ~500 ms more. (CI read 1012.5 after 1000 page ms at 240 Hz: the capture's screenshot, on a CDP session
    # of its own, had moved the timeline on; see test_screenshots_leave_the_animations_where_they_are.)
    first_now, first_current = held["seen"]["reads"][0][:2]
    since, went_on = now - first_now, current - first_current
    assert since - 2 * 1000 / held["fps"] <= went_on <= since + 1e-6, (held["seen"]["reads"][0], held["after_hold"],
                                                                       held["seen"]["reads"][-200:])
    assert since < PLAYED_S * 1000 + 100, (held["after_hold"], since)  # the page's clock played no more than that
    reads = held["seen"]["reads"]
    assert all(r[2] == "running" and r[3] == 1 for r in reads if r[1] < 2000), reads[:3]


LIB = "({ age() { return document.getElementById('css').getAnimations()[0].currentTime; } })"


async def test_screenshots_leave_the_animations_where_they_are(harness: BrowserHarness) -> None:
    """A screenshot between two virtual frames (what snapshot() and the evidence take) moves no animation on.

    snapshot() took its screenshot on a CDP session of its own, attached and detached each time; the
    animations' timeline stands still only while the session that set its rate to 0 is alone, so each
    screenshot moved them on by ~33 ms of real time: 30 in a row aged the CSS animation by a second.
    """
    s = await harness.open(FIXTURES, "css_hold.html", fps=60)
    try:
        await s.advance(0.5)
        age = await s.read("probe", LIB, "age")
        for _ in range(30):
            await s.snapshot()
        await s.screenshot()
        assert await s.read("probe", LIB, "age") == age
        await s.advance(0.5)  # and the virtual clock still plays it: half a second on
        assert await s.read("probe", LIB, "age") == pytest.approx(age + 500, abs=1e-6)
    finally:
        await s.close()


async def test_the_animation_events_still_arrive(held: dict[str, Any]) -> None:
    """animationend, transitionend and the finish event of element.animate() come, each after its end
    on the page's clock."""
    seen = held["seen"]
    when = {name: t for name, t in seen["events"]}
    assert set(when) == {"animationend", "transitionend", "finish"}, seen["events"]
    now, current = seen["reads"][len(seen["reads"]) // 4][:2]
    start = now - current - 2 * 1000 / held["fps"]  # the page's time where the CSS animation began, or before
    assert when["animationend"] >= start + 2000 and when["finish"] >= start + 2000, (when, start)
    assert when["transitionend"] >= seen["set"] + 2000, (when, seen["set"])  # from when its timer set it off


async def test_the_animation_events_come_in_the_frame_they_are_due(held: dict[str, Any]) -> None:
    """The end events are dispatched in the frame the animation ended in, before the clock goes on:
    they are there as soon as the clock stops (a page that deletes a row on transitionend has deleted
    it before anything is read), at the virtual time of that frame. Before, they came whenever the
    browser next rendered: often after the read, and up to a few hundred virtual ms late on a busy
    machine (a to-do app's save timer, set on transitionend, had not run when the page was reloaded)."""
    seen, frame_ms = held["seen"], 1000 / held["fps"]
    assert sorted(name for name, _ in held["at_once"]) == ["animationend", "finish", "transitionend"], held["at_once"]
    now, current = seen["reads"][len(seen["reads"]) // 4][:2]
    ended = now - current - frame_ms + 2000  # a frame's read shows the age the frame before set
    when = dict(held["at_once"])
    for name in ("animationend", "finish"):
        assert ended - 1e-6 <= when[name] <= ended + frame_ms, (name, when, ended)
    # The transition starts in the frame its timer ran in (at or after the time it read), 2 s long.
    assert seen["set"] + 2000 - 1e-6 <= when["transitionend"] <= seen["set"] + 2000 + 2 * frame_ms, (when, seen["set"])
