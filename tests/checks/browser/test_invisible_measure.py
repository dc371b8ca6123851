"""performance.measure between times the page gave reads those times (issue 28).

The browser measures between real times; a page gives its own times on its (virtual) clock. A measure
whose ends the page gave in an options object (start, end, duration) read them scaled as if they were
real times: measure("m", {start: 100, end: 250}) read a start other than 100 and a duration other than
150. fixtures/invisible/measure_given.html makes measures with given times, marks (one at a given time)
and no ends at all, and reads them by every reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentbench.checks.browser import BrowserHarness
from tests.helpers.waiting import until_page

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures" / "invisible"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(browser_path: str):
    async with BrowserHarness(browser_path) as h:
        yield h


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=[60, 240])
async def seen(harness: BrowserHarness, request: pytest.FixtureRequest) -> dict[str, Any]:
    s = await harness.open(FIXTURES, "measure_given.html", fps=request.param)
    try:
        await s.advance(0.6)
        await until_page(s, "() => seen !== null")
        return await s.eval("() => seen")
    finally:
        await s.close()


async def test_a_measure_between_given_times_reads_them(seen: dict[str, Any]) -> None:
    made = {name: (start, duration) for name, start, duration in seen["made"]}
    assert made["m1"] == (100, 150), made
    assert made["m2"] == (100, 50), made
    assert made["m3"] == (280, 20), made
    assert made["m6"] == (50, 350), made  # from a mark the page placed at 50


async def test_a_measure_from_a_given_mark_to_a_mark_of_now(seen: dict[str, Any]) -> None:
    made = {name: (start, duration) for name, start, duration in seen["made"]}
    assert made["m5"] == (50, pytest.approx(seen["a"] - 50)), (made, seen["a"])


async def test_a_measure_to_now_ends_by_the_next_read(seen: dict[str, Any]) -> None:
    """An end the page left out is now: at or after the mark made before, at most what it reads next."""
    made = {name: (start, duration) for name, start, duration in seen["made"]}
    start, duration = made["m4"]
    assert start == 100 and seen["a"] <= start + duration <= seen["after4"], (made["m4"], seen)
    start, duration = made["m7"]
    assert start == seen["a"] and 0 <= duration and start + duration <= seen["after7"], (made["m7"], seen)


async def test_every_reader_reads_the_same(seen: dict[str, Any]) -> None:
    """The entry made, the timeline's list and toJSON (the list's order is the browser's: left aside)."""
    assert sorted(seen["byType"]) == sorted(seen["made"]) and seen["json"] == seen["made"], seen
