"""The harness out of the page's reach: nothing of ours in the page, readings the page cannot forge.

Each test is an attack a hostile artefact made on the earlier harness (a page global to replace,
a fixed epoch to recognise, a sessionStorage key, built-ins broken under our feet, 7 MB error
lines); each must end in the verdict the page earns, never a pass it steered and never an error.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import pytest_asyncio

from agentbench.checks.browser import BrowserHarness, run_browser_checks_async
from agentbench.checks.browser._find import dom
from tests.helpers.waiting import HANG_S

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


def page(tmp_path: Path, body: str) -> Path:
    (tmp_path / "index.html").write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")
    return tmp_path


async def test_the_page_finds_no_trace_of_the_harness(harness: BrowserHarness) -> None:
    """No globals, no storage, native-looking functions, navigator.webdriver false, a real epoch."""
    s = await harness.open(FIXTURES / "isolation", "detects_harness.html", fps=240)
    try:
        await s.advance(1.0)
        signs = await s.eval("() => window.harnessSigns")
        assert signs == [], f"the page recognised the harness by: {signs}"
        date = await s.eval("() => Date.now()")
        assert abs(date - time.time() * 1000) < 600_000  # a person's clock, not a fixed date
        assert await s.eval("() => [sessionStorage.length, localStorage.length]") == [0, 0]
    finally:
        await s.close()


async def test_a_game_that_plays_fair_only_under_a_harness_still_fails_refresh_rate(
        harness: BrowserHarness, tmp_path: Path) -> None:
    checks = await run_browser_checks_async("flappy", FIXTURES / "isolation", tmp_path / "evidence",
                                            entry="detects_harness.html", harness=harness)
    got = {c.id: c for c in checks}
    assert got["refresh-rate"].status == "fail", got["refresh-rate"].detail


async def test_a_page_that_breaks_built_ins_it_does_not_use_is_judged_as_without(harness: BrowserHarness,
                                                                                 tmp_path: Path) -> None:
    """Array.from, JSON, Function.prototype.call, toJSON, getComputedStyle... replaced by the page:
    the game plays as before, so every check gives the verdict the plain game gets, and none errs."""
    plain = await run_browser_checks_async("flappy", FIXTURES / "flappy", tmp_path / "a",
                                           entry="framelocked.html", harness=harness)
    broken = await run_browser_checks_async("flappy", FIXTURES / "isolation", tmp_path / "b",
                                            entry="breaks_builtins.html", harness=harness)
    want = {c.id: c.status for c in plain}
    got = {c.id: c.status for c in broken}
    assert "error" not in got.values(), {c.id: c.detail for c in broken if c.status == "error"}
    assert got == want, {c.id: c.detail for c in broken}


async def test_readings_come_from_where_the_page_cannot_forge_them(harness: BrowserHarness, tmp_path: Path) -> None:
    """A converter that strips NaN from what scripts read still shows NaN to a person, and to us."""
    folder = page(tmp_path, """<p id="out">Result: NaN km</p><canvas width="200" height="100"></canvas><script>
      const strip = (s) => String(s).replace(/NaN/g, '1.5');
      for (const [proto, name] of [[HTMLElement.prototype, 'innerText'], [Node.prototype, 'textContent']]) {
        const d = Object.getOwnPropertyDescriptor(proto, name);
        Object.defineProperty(proto, name,
                              { get() { return strip(d.get.call(this)); }, set: d.set, configurable: true });
      }
      Object.prototype.toJSON = function () { return 'forged'; };
      const g = document.querySelector('canvas').getContext('2d');
      g.fillStyle = '#000'; g.font = '20px sans-serif'; g.fillText('Score 3', 20, 40);
      </script>""")
    s = await harness.open(folder)
    try:
        await s.advance(0.2)
        assert "NaN" in await s.dom_text()
        assert "NaN" in " ".join([(await dom(s, "pageText"))["text"]])
        assert [t[0] for t in await s.texts()] == ["Score 3"]
        assert await s.eval("() => document.getElementById('out').innerText") == "Result: 1.5 km"  # the page's lie
    finally:
        await s.close()


async def test_the_clock_has_no_handle_in_the_page(harness: BrowserHarness, tmp_path: Path) -> None:
    """The page cannot reach the clock's controls: a forged 'GAME OVER' text reader does nothing."""
    folder = page(tmp_path, """<canvas width="200" height="100"></canvas><script>
      for (const k of Object.getOwnPropertyNames(window)) {
        const v = window[k];
        if (v && typeof v === 'object' && typeof v.texts === 'function') v.texts = () => [['GAME OVER', 0, 1e9, 99]];
      }
      window.__agentbenchClock = { texts: () => [['GAME OVER', 0, 1e9, 99]] };
      const g = document.querySelector('canvas').getContext('2d');
      (function f() { g.fillStyle = '#000'; g.fillRect(0, 0, 200, 100); requestAnimationFrame(f); })();
      </script>""")
    s = await harness.open(folder)
    try:
        await s.advance(0.5)
        assert await s.texts() == []
    finally:
        await s.close()


async def test_page_messages_are_capped_before_they_travel(harness: BrowserHarness, tmp_path: Path) -> None:
    folder = page(tmp_path, """<script>
      const big = 'x'.repeat(7 * 1024 * 1024);
      for (let i = 0; i < 3; i++) console.error(big + i);
      setTimeout(() => { throw new Error(big); }, 10);
      alert(big);
      </script>""")
    # Strings of 7 MiB built and logged five times at load: over the usual 5 s step limit at a load of 24 on 2
    # cores. The caps are the point here, not the time: a limit only a hang reaches.
    s = await harness.open(folder, step_timeout_s=HANG_S)
    try:
        await s.advance(0.3)
        await s.refresh()
        assert s.errors and all(len(e) < 2500 for e in s.errors), [len(e) for e in s.errors]
        assert s.dialogs and all(len(d) < 2500 for d in s.dialogs)
    finally:
        await s.close()


async def test_a_check_has_one_epoch_and_seed_for_all_its_sessions(harness: BrowserHarness, tmp_path: Path) -> None:
    folder = page(tmp_path, "<script>window.at = [Date.now(), Math.random()];</script>")
    seen = []
    for begin in (True, False, True):
        if begin:
            harness.begin_check(folder)
            time.sleep(0.01)
        for fps in (60, 240):
            s = await harness.open(folder, fps=fps)
            seen.append(await s.eval("() => at"))
            await s.close()
    assert seen[0] == seen[1] == seen[2] == seen[3]  # 60 and 240 Hz, and the same check's later sessions
    assert seen[4] == seen[5] and seen[4][0] != seen[0][0]  # a new check: a new epoch
    assert seen[4][1] == seen[0][1]  # the same files: the same seed (reproducible)
    assert abs(seen[4][0] - time.time() * 1000) < 600_000
