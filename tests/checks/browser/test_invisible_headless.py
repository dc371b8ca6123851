"""The browser a page sees is a person's Chrome, not a headless one (issue 28).

The checker's browser is Chromium's headless shell. A page told it from a person's Chrome by the
classic reads: ``navigator.plugins`` and ``navigator.mimeTypes`` empty, ``pdfViewerEnabled`` false,
no ``window.chrome``, and ``Notification.permission`` "denied" while the permissions API says
"prompt"; a window the size of the viewport, on a screen the same size. One page of ours
(fixtures/invisible/headless.html) records them in the page and in an about:blank iframe. Each test
runs on the headless shell (the checker's browser: there they failed before the clock gave a
person's answers) and on the hosts' chromium (its own answers where it has them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentbench.checks.browser import BrowserHarness, run_browser_checks_async
from tests.helpers.waiting import until_page

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures" / "invisible"
NATIVE = re.compile(r"^function [\w$ ]*\(\) \{ \[native code\] \}$")
PDF_VIEWERS = ["PDF Viewer", "Chrome PDF Viewer", "Chromium PDF Viewer", "Microsoft Edge PDF Viewer",
               "WebKit built-in PDF"]
PDF = "Portable Document Format"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(browser_path: str):
    async with BrowserHarness(browser_path) as h:
        yield h


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def seen(harness: BrowserHarness) -> dict[str, Any]:
    s = await harness.open(FIXTURES, "headless.html")
    try:
        await s.advance(0.5)
        await until_page(s, "() => seen.permission !== null && seen.timing !== null")
        return await s.eval("() => seen")
    finally:
        await s.close()


@pytest.mark.parametrize("realm", ["page", "iframe"])
async def test_the_pdf_viewer_plugins_are_listed_as_in_chrome(seen: dict[str, Any], realm: str) -> None:
    r = seen[realm]
    assert r["pdf"] is True, r
    assert r["pluginCount"] == 5 and r["pluginNames"] == PDF_VIEWERS, r
    assert r["firstPlugin"] == ["PDF Viewer", "internal-pdf-viewer", PDF, 2], r
    assert r["firstMimes"] == [["application/pdf", "pdf", PDF, True], ["text/pdf", "pdf", PDF, True]], r
    assert r["mimeCount"] == 2 and r["mimeTypes"] == [["application/pdf", "PDF Viewer"], ["text/pdf", "PDF Viewer"]], r
    assert r["itemAndNamed"] == [True, True, None, None, True, True], r
    assert r["kinds"] == [True, True, True, True, "[object PluginArray]", "[object Plugin]"], r
    assert r["keys"] == ["0", "1", "2", "3", "4"] and r["same"] is True, r
    assert r["foreign"] == "TypeError", r  # a getter read off something else throws, as the browser's


@pytest.mark.parametrize("realm", ["page", "iframe"])
async def test_window_chrome_is_there_as_in_chrome(seen: dict[str, Any], realm: str) -> None:
    r = seen[realm]
    assert r["chrome"] == "object" and r["chromeKeys"] == ["loadTimes", "csi", "app"], r
    assert r["chromeApp"] == [False, False, "cannot_run"], r
    assert r["loadTimes"] and r["loadTimes"][:3] == ["requestTime", "startLoadTime", "commitLoadTime"], r
    assert all(NATIVE.match(src) for src in r["sources"]), r["sources"]


async def test_notifications_are_not_denied_before_the_page_asks(seen: dict[str, Any]) -> None:
    """A person's Chrome says "default" (never asked) while the permissions API says "prompt"."""
    assert seen["permission"] == "prompt", seen["permission"]
    assert seen["page"]["notification"] == "default" and seen["iframe"]["notification"] == "default", seen


@pytest.mark.parametrize("realm", ["page", "iframe"])
async def test_the_window_has_a_frame_and_a_screen_around_it(seen: dict[str, Any], realm: str) -> None:
    """Headless, the window is the viewport and so is the screen (outer == inner == 800 x 600). A person's
    Chrome draws its tab strip and toolbar above the page, on a screen larger than the window; an
    iframe reads the tab's window."""
    r, (w, h) = seen[realm], seen["page"]["inner"]
    assert r["outer"][0] == w and 60 <= r["outer"][1] - h <= 140, (r["outer"], (w, h))
    assert r["screen"] == [1920, 1080, 1920, 1080], r["screen"]
    assert NATIVE.match(r["outerSource"]), r["outerSource"]


async def test_chrome_load_times_follow_the_clock_the_page_reads(seen: dict[str, Any]) -> None:
    t = seen["timing"]
    assert t is not None, seen
    assert -1 < t["start"] <= 0 and -1 < t["startE"] <= 0, t  # the navigation began at timeOrigin
    assert 0 < t["finished"] <= t["now"], t  # the document finished loading before now
    assert 0 < t["pageT"] <= t["perf"], t  # csi's page time is performance.now's


async def test_a_game_that_hides_from_a_headless_browser_fails_refresh_rate(
        harness: BrowserHarness, tmp_path: Path) -> None:
    """fixtures/invisible/hostile_flappy.html also steps by elapsed time (and so looks right at 60 and
    240 Hz) when the browser reads as headless: refresh-rate sees the game a person sees, 4x fast."""
    results = {r.id: r for r in await run_browser_checks_async(
        "flappy", FIXTURES, tmp_path, entry="hostile_flappy.html", harness=harness)}
    refresh = results["refresh-rate"]
    assert refresh.status == "fail", (refresh.detail, refresh.data)
    assert "4.0x faster" in refresh.detail, refresh.detail
