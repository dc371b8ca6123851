"""performance.timeOrigin and event.timeStamp on the page's clock (issue 28).

In a person's browser ``Date.now()`` is ``performance.timeOrigin + performance.now()`` to a
millisecond, and an input event's ``timeStamp`` is on ``performance.now()``'s scale, a little before
its handler's ``performance.now()``. On a clock of its own the harness showed the real time origin and
real time stamps: a page could compare them with the virtual clock and see it was judged, and a game
that times input by ``event.timeStamp`` was judged on a different clock from the one it runs on.
One page of ours (fixtures/invisible/time_origin.html) records what it can compare.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentbench.checks.browser import BrowserHarness

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures" / "invisible"
NATIVE = re.compile(r"^function [\w$ ]*\(\) \{ \[native code\] \}$")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def seen(chromium_path: str) -> dict[str, Any]:
    async with BrowserHarness(chromium_path) as harness:
        first = await harness.open(FIXTURES, "time_origin.html")
        await first.advance(2.0)  # a second page of the same check opens later in real time
        await first.close()
        s = await harness.open(FIXTURES, "time_origin.html")
        try:
            await s.advance(1.0)
            await s.press("KeyA")
            await s.advance(1.0)
            await s.press("KeyB")
            await s.advance(0.6)
            return await s.eval("() => seen")
        finally:
            await s.close()


async def test_date_is_the_time_origin_plus_the_pages_time(seen: dict[str, Any]) -> None:
    gaps = [seen["first"], *(f["gap"] for f in seen["frames"])]
    assert len(gaps) >= 4, seen
    assert all(abs(g) <= 1.5 for g in gaps), gaps
    assert seen["json"] is True, seen


async def test_an_iframe_agrees_with_its_own_time_origin(seen: dict[str, Any]) -> None:
    assert abs(seen["iframe"]["gap"]) <= 1.5 and abs(seen["iframe"]["dateDiff"]) <= 1.5, seen["iframe"]


async def test_an_input_events_time_stamp_is_on_the_pages_clock(seen: dict[str, Any]) -> None:
    assert len(seen["keys"]) == 2, seen["keys"]
    for key in seen["keys"]:
        assert 0 <= key["now"] - key["ts"] <= 20 and key["again"] == key["ts"], seen["keys"]
    first, second = seen["keys"]
    assert 950 <= second["ts"] - first["ts"] <= 1050, seen["keys"]  # one virtual second apart
    assert 0 <= seen["made"]["now"] - seen["made"]["ts"] <= 20, seen["made"]


async def test_the_getters_read_as_the_browsers(seen: dict[str, Any]) -> None:
    assert all(NATIVE.match(src) for src in seen["sources"]), seen["sources"]
    assert seen["sources"][:2] == ["function get timeOrigin() { [native code] }",
                                   "function get timeStamp() { [native code] }"], seen["sources"]
    assert seen["foreign"] == "TypeError", seen
