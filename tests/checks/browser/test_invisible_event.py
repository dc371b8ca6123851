"""window.event inside a page's callbacks (issue 28).

The clock calls each timer and animation frame callback from inside a window event of its own (so
that the callback's stack shows nothing of ours). In a person's browser such a callback runs with
no event: ``window.event`` is undefined. Under the harness it was the clock's event, whose name
is the session's secret channel: a tell, and a handle a page could drive the clock with. One page
of ours (fixtures/invisible/window_event.html) records what it sees and tries the handle.
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
        s = await harness.open(FIXTURES, "window_event.html")
        try:
            await s.advance(0.5)
            await s.press("KeyA")
            await s.advance(0.2)
            return await s.eval("() => seen")
        finally:
            await s.close()


async def test_a_callback_runs_with_no_event(seen: dict[str, Any]) -> None:
    for where in ("raf", "timeout", "interval", "micro", "iframe"):
        assert seen[where] and set(seen[where]) == {"undefined"}, seen
    assert len(seen["raf"]) == 7 and len(seen["interval"]) == 3 and len(seen["iframe"]) == 2, seen


async def test_events_the_page_dispatches_and_input_read_as_in_a_browser(seen: dict[str, Any]) -> None:
    assert seen["nested"] == ["nested"] and seen["key"] == ["keydown"], seen


async def test_the_page_finds_no_handle_on_the_clock(seen: dict[str, Any]) -> None:
    assert seen["steered"] == [], seen


async def test_the_getter_reads_as_the_browsers(seen: dict[str, Any]) -> None:
    assert NATIVE.match(seen["source"]) and "event" in seen["source"], seen["source"]
