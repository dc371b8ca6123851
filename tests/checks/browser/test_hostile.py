"""Hostile pages end in a verdict within a bound, never in a hung harness."""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import pytest_asyncio

from agentbench.checks.browser import BrowserHarness, PageBroken, run_browser_checks_async
from tests.helpers.limits import short_step_limits

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

HOSTILE = Path(__file__).parent / "fixtures" / "hostile"
STEP_S = 3.0
BOUND_S = 30.0  # generous for a loaded 2-core CI box; the limits inside are STEP_S per step


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


async def play(harness: BrowserHarness, name: str, *, press: bool = False):
    started = time.monotonic()
    s = await harness.open(HOSTILE, name, step_timeout_s=STEP_S)
    try:
        frames = await s.advance(2.0, capture_every=0.5)
        if press:
            with pytest.raises(PageBroken):
                await s.press("Space")
        if not s.broken:
            await s.refresh()
        return s, frames, time.monotonic() - started
    finally:
        await s.close()


@pytest.mark.parametrize("name, reason", [
    ("top_loop.html", "did not finish"),
    ("raf_loop.html", "did not finish"),
    ("alert_storm.html", "did not finish"),
    ("navigate_away.html", "navigated away"),
])
async def test_pages_that_hang_or_leave_are_broken_in_bounded_time(harness: BrowserHarness, name: str,
                                                                   reason: str) -> None:
    s, _, took = await play(harness, name)
    assert s.broken is not None and reason in s.broken
    assert took < BOUND_S


async def test_alert_storm_is_reported(harness: BrowserHarness) -> None:
    s, _, _ = await play(harness, "alert_storm.html")
    assert len(s.dialogs) >= 10 and s.dialogs[0] == "alert: Game over!"


async def test_navigation_away_is_blocked_and_reported(harness: BrowserHarness) -> None:
    s, _, _ = await play(harness, "navigate_away.html")
    assert "http://198.51.100.1/game" in s.blocked


async def test_outside_fetches_are_blocked_while_the_page_plays(harness: BrowserHarness) -> None:
    s, frames, took = await play(harness, "fetch_out.html")
    assert s.broken is None and len(frames) == 4
    assert {"http://198.51.100.1/highscores", "http://198.51.100.1/style.css",
            "https://198.51.100.1/bird.png"} <= set(s.blocked)
    assert took < BOUND_S


async def test_busy_waits_play_on(harness: BrowserHarness) -> None:
    s, frames, took = await play(harness, "busy_wait.html")
    assert s.broken is None and len(frames) == 4 and frames[0].image.rgb != frames[1].image.rgb
    assert took < BOUND_S


async def test_a_key_handler_that_hangs_is_terminated(harness: BrowserHarness) -> None:
    s, _, took = await play(harness, "key_loop.html", press=True)
    assert s.hung and "key Space" in (s.broken or "")
    assert took < BOUND_S


async def test_a_runaway_allocation_ends(harness: BrowserHarness) -> None:
    s, _, took = await play(harness, "huge_alloc.html")
    assert s.broken is not None  # crashed (out of memory) or terminated by the time limit
    assert took < BOUND_S


async def test_full_checks_on_a_page_that_never_loads_fail_fast(chromium_path: str, tmp_path: Path) -> None:
    # Fast: the load's two tries are cut, and every check that plays the page is called off with
    # it (each says so, none opens a page of its own to wait out the limits again). The page loops
    # for ever, cut under any limit: short ones (1 s, 3 s for the replay) spare the test 5 + 20 s.
    opened = []
    with short_step_limits(step_s=1.0, replay_s=3.0), _counting_sessions(opened):
        results = await run_browser_checks_async("flappy", HOSTILE, tmp_path / "evidence", entry="top_loop.html",
                                                 chromium_path=chromium_path)
    by_id = {r.id: r for r in results}
    assert list(by_id) == ["load", "flap-input", "game-over", "restart", "score", "refresh-rate", "runtime-errors"]
    played = ("flap-input", "game-over", "restart", "refresh-rate")
    assert by_id["load"].status == "fail" and "did not finish within 3 s" in by_id["load"].detail, by_id["load"]
    assert all(by_id[c].status == "fail" and "could not be loaded" in by_id[c].detail for c in played), by_id
    assert opened[:2] == [1.0, 3.0] and len(opened) < 2 + len(played), opened


@contextmanager
def _counting_sessions(opened: list[float]):
    """Appends each page session's step limit to ``opened`` as it is opened."""
    real = BrowserHarness.open

    async def counted(self, *args, **kwargs):
        session = await real(self, *args, **kwargs)
        opened.append(session.step_timeout_s)
        return session

    BrowserHarness.open = counted
    try:
        yield
    finally:
        BrowserHarness.open = real


async def test_load_fails_blank_and_throwing_pages(harness: BrowserHarness, tmp_path: Path) -> None:
    for entry, expect in (("blank.html", "blank"), ("throws_at_load.html", "uncaught error")):
        results = await run_browser_checks_async("no-such-task", HOSTILE, tmp_path / entry, entry=entry,
                                                 harness=harness)
        by_id = {r.id: r for r in results}
        assert by_id["load"].status == "fail" and expect in by_id["load"].detail, by_id["load"]
        assert (tmp_path / entry / "load.png").is_file()
        if entry == "throws_at_load.html":
            assert by_id["runtime-errors"].status == "fail"
            assert "reading 'flap'" in by_id["runtime-errors"].evidence[0].value


async def test_sync_entry_point_works_inside_a_running_loop(chromium_path: str, tmp_path: Path) -> None:
    from agentbench.checks.browser import run_browser_checks

    results = run_browser_checks("no-such-task", HOSTILE, tmp_path / "ev", entry="blank.html",
                                 chromium_path=chromium_path)
    assert [(r.id, r.status) for r in results] == [("load", "fail"), ("runtime-errors", "pass")]


def _big_page(folder: Path, mib: int, script: str) -> Path:
    """An entry padded with an inlined data blob of ``mib`` MiB (the way pages inline assets)."""
    folder.mkdir(parents=True, exist_ok=True)
    blob = ("0123456789" * 6553 + "\n") * (16 * mib)  # ~1 MiB per 16 lines
    (folder / "index.html").write_text(f"<!DOCTYPE html><body><p id=t>big</p><!--\n{blob}-->\n"
                                       f"<script>{script}</script></body>")
    return folder


async def test_a_large_entry_is_judged_on_its_behaviour_not_called_a_hang(harness: BrowserHarness,
                                                                          tmp_path: Path) -> None:
    # A 24 MiB page: slow to hand to the browser through the route (seconds, more on a busy machine),
    # fine for a person. It used to get the 5 s step limit and was called an infinite loop. Judged as
    # the product judges it, by the load check (a load its first limit cuts is loaded again with the
    # replay's): the page is blank until its script runs, so `load` passes only where the script ran.
    folder = _big_page(tmp_path / "big", 24, "document.getElementById('t').textContent = 'loaded: the script ran';")
    html = (folder / "index.html").read_text().replace("<p id=t>big</p>", "<p id=t></p>")
    (folder / "index.html").write_text(html)
    checks = await run_browser_checks_async("no-such-task", folder, tmp_path / "evidence", harness=harness)
    load = next(c for c in checks if c.id == "load")
    assert load.status == "pass", (load.detail, load.data)


async def test_a_small_page_that_hangs_at_load_is_still_a_fail(harness: BrowserHarness, tmp_path: Path) -> None:
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "index.html").write_text("<p>x</p><script>while (true) {}</script>")
    with short_step_limits(step_s=1.0, replay_s=3.0):  # it loops for ever: cut under any limit
        checks = await run_browser_checks_async("ball", folder, tmp_path / "evidence", harness=harness)
    load = next(c for c in checks if c.id == "load")
    assert load.status == "fail" and "infinite loop" in load.detail
    assert "within 3 s" in load.detail and "loaded again" in load.data["replayed"], load
