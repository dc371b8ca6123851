"""A worker's script reads as a person's browser shows it (issue 28, tell 6): what the harness does to
put a worker from a script file on the page's clock leaves no trace the page or the worker can read.

fixtures/invisible/worker_perf.html and worker_perf_module.html make a worker from a script file (with
a query and a fragment of its own), classic or module, that imports a library (worker_perf_data.html:
a classic worker from a data: URL, with a fragment); the page and the worker
record what their performance timelines say through every reader (by type, all, by name, toJSON, a
buffered observer), their clocks, and the classic worker a stack taken in a timer's callback. The same
page is opened in the same Chromium without the harness: what the harness's page reads must be what
that one reads.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import async_playwright

from agentbench.checks.browser import BrowserHarness
from agentbench.checks.browser._workers import worker_key

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures" / "invisible"
ORIGIN = "http://localhost"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


PAGES = {"classic": "worker_perf.html", "module": "worker_perf_module.html", "data": "worker_perf_data.html"}
FRAME_MS = 1000 / 60


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=sorted(PAGES))
async def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def under_test(harness: BrowserHarness, kind: str) -> tuple[dict[str, Any], str]:
    """What the page read under the harness, and the session's secret."""
    s = await harness.open(FIXTURES, PAGES[kind], fps=60)
    try:
        for _ in range(200):  # the workers answer in real tasks: frames until the page has it all (a condition)
            if await s.eval("() => seen !== null"):
                break
            await s.advance(0.05)
        return await s.eval("() => seen"), s.channel
    finally:
        await s.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def in_a_browser(chromium_path: str, kind: str) -> dict[str, Any]:
    """What the same page reads in the same Chromium with nothing of ours: served as is, no clock."""
    async def serve(route: Any) -> None:
        path = route.request.url.removeprefix(ORIGIN + "/").split("?")[0].split("#")[0]
        file = FIXTURES / path
        if path and "/" not in path and file.is_file():
            ctype = "text/html" if path.endswith(".html") else "text/javascript"
            await route.fulfill(status=200, body=file.read_bytes(), content_type=ctype)
        else:
            await route.fulfill(status=404, body=b"not found", content_type="text/plain")

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, headless=True)
        try:
            context = await browser.new_context()
            await context.route("**/*", serve)
            page = await context.new_page()
            await page.goto(f"{ORIGIN}/{PAGES[kind]}")
            await page.wait_for_function("() => seen !== null", timeout=30_000)
            return await page.evaluate("() => seen")
        finally:
            await browser.close()


def _readings(seen: dict[str, Any]) -> dict[str, Any]:
    """What must read the same as in a person's browser: not the clocks, nor the frames of ours below
    a worker's timer callback (tell 9's), but the callback's own frame."""
    worker = seen["worker"]
    return {k: v for k, v in seen.items() if k not in ("worker", "clock")} | {
        "worker": {k: v for k, v in worker.items() if k not in ("stack", "clock")}
        | ({"frame": worker["stack"].split("\n")[:2]} if "stack" in worker else {})}


async def test_the_worker_scripts_entries_read_as_in_a_browser(under_test: tuple[dict[str, Any], str],
                                                                in_a_browser: dict[str, Any], kind: str) -> None:
    """Names, counts and sizes of the resource entries, by every reader, in the page and in its worker."""
    seen, _ = under_test
    # The browser's own, as measured: the worker's script in the page's timeline (and a module
    # worker's import too) after our page script; a data: URL has none.
    assert len(in_a_browser["byType"]) == {"classic": 2, "module": 3, "data": 1}[kind], in_a_browser
    if kind != "data":
        script = PAGES[kind].replace(".html", ".js")
        url = f"{ORIGIN}/{script}?v={3 if kind == 'classic' else 4}#top"
        size = (FIXTURES / script).stat().st_size
        assert in_a_browser["byType"][1] == [url, "other", "text/javascript", 200], in_a_browser
        assert in_a_browser["sizes"][1] == [size, size, size + 300], in_a_browser
    assert _readings(seen) == _readings(in_a_browser)


async def test_the_worker_runs_on_the_page_clock(under_test: tuple[dict[str, Any], str]) -> None:
    """Its first statement (a module's first import) reads 0 and the page's Date when it was made; asked
    after 120 frames, its clocks read (as it is asked) the page's, at most a frame behind, and its
    100 ms interval has run with them."""
    seen, _ = under_test
    clock, page = seen["worker"]["clock"], seen["clock"]
    assert clock["t0"] == 0, clock
    assert -1 <= page["madeAt"][1] - clock["d0"] <= FRAME_MS, (clock, page)
    # The page's clock moves on with the work its frame callback did before it asked (issue 28, tell 1).
    work = page["askedAt"][0] - page["askedAt"][2]
    assert 0 <= work < FRAME_MS, page
    assert 0 <= page["askedAt"][0] - page["madeAt"][0] - clock["now"] <= FRAME_MS + 1 + work, (clock, page)
    assert 0 <= page["askedAt"][1] - clock["date"] <= FRAME_MS + 1 + work, (clock, page)
    assert clock["ticks"] == int(clock["now"] // 100) and clock["ticks"] >= 19, clock


async def test_nothing_a_page_or_worker_reads_names_our_query_or_the_secret(
        under_test: tuple[dict[str, Any], str]) -> None:
    """Not the query's key, nor any 6 characters of the session's secret, in anything the page or its
    workers read (a classic worker's stack included)."""
    seen, channel = under_test
    text = json.dumps(seen)
    assert worker_key(channel) not in text
    pieces = {channel[i:i + 6] for i in range(len(channel) - 5)}
    assert not [p for p in pieces if p in text], text
    assert "at " in seen["worker"].get("stack", "at ")  # the stack was read


async def test_the_query_key_is_not_a_part_of_the_secret() -> None:
    """One-way: an HMAC of the secret, so no part of the key is a part of the secret."""
    channel = "0123456789abcdef01234567"
    key = worker_key(channel)
    assert key == hmac.new(channel.encode(), b"agentbench worker query", hashlib.sha256).hexdigest()[:16]
    assert not [key[i:i + 4] for i in range(len(key) - 3) if key[i:i + 4] in channel]
    assert worker_key("f" * 24) != key
