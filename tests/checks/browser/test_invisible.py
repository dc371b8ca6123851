"""The harness invisible to the page (issue 28): what a page can read is what a person's browser shows.

One page of our own (fixtures/invisible/tells.html) records what it can learn: the user agent in
the page and in a worker, the Date constructor's shape, the source of our functions read through
another realm's ``Function.prototype.toString``, ``document.timeline`` against the frame's time,
and an iframe's clocks against the page's. Each test is one tell a page used to find.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentbench.checks.browser import BrowserHarness, ProbeContext, run_browser_checks_async
from agentbench.checks.browser._refresh import refresh_rate_check
from tests.helpers.waiting import until_page

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FIXTURES = Path(__file__).parent / "fixtures" / "invisible"
NATIVE = re.compile(r"^function [\w$ ]*\(\) \{ \[native code\] \}$")
# Chromium's own (read off a browser without the clock): what .length says of each.
NATIVE_LENGTH = {
    "requestAnimationFrame": 1, "cancelAnimationFrame": 1, "webkitRequestAnimationFrame": 1,
    "webkitCancelAnimationFrame": 1, "setTimeout": 1, "setInterval": 1, "clearTimeout": 0, "clearInterval": 0,
    "requestIdleCallback": 1, "cancelIdleCallback": 1, "alert": 0, "confirm": 0, "prompt": 0, "open": 0, "Date": 7,
    "now": 0, "random": 0, "performance.now": 0, "toString": 0, "fillText": 3, "strokeText": 3, "arc": 5,
    "ellipse": 7, "beginPath": 0, "fill": 0, "stroke": 0, "drawImage": 3, "getContext": 1, "play": 0,
    "addColorStop": 2, "timeline": 0, "iframe requestAnimationFrame": 1,
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


async def _seen(harness: BrowserHarness, fps: int) -> dict[str, Any]:
    s = await harness.open(FIXTURES, "tells.html", fps=fps)
    try:
        await s.advance(1.0)
        await until_page(s, "() => seen.worker !== null")
        return await s.eval("() => seen")
    finally:
        await s.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def seen(harness: BrowserHarness) -> dict[str, Any]:
    return await _seen(harness, 60)


async def test_the_user_agent_is_a_normal_chrome_in_the_page_and_its_workers(
        harness: BrowserHarness, seen: dict[str, Any]) -> None:
    major = harness.version.split(".")[0]
    assert "Headless" not in seen["ua"] and "Headless" not in seen["appVersion"], seen["ua"]
    assert f"Chrome/{major}." in seen["ua"], seen["ua"]
    assert seen["appVersion"] == seen["ua"].removeprefix("Mozilla/"), seen["appVersion"]
    assert seen["brands"] and not any("Headless" in b for b in seen["brands"]), seen["brands"]
    worker = seen["worker"]
    assert worker and "error" not in worker, worker
    assert worker["ua"] == seen["ua"], worker
    assert worker["brands"] == seen["brands"], worker


async def test_the_user_agent_is_the_same_at_60_and_240_hz(harness: BrowserHarness, seen: dict[str, Any]) -> None:
    fast = await _seen(harness, 240)
    assert [fast["ua"], fast["brands"], fast["worker"]["ua"]] == [seen["ua"], seen["brands"], seen["worker"]["ua"]]


async def test_date_has_the_native_constructors_shape(seen: dict[str, Any]) -> None:
    date, native = seen["date"], seen["worker"]  # a worker's Date is the browser's own
    assert date["length"] == native["dateLength"] == 7, date
    assert date["props"] == native["dateProps"], date
    assert date["name"] == "Date" and date["ctor"] and date["inst"], date
    assert date["fns"] == ["function"] * 3 and date["called"] == "string" and date["withArgs"] == 7, date


async def test_our_functions_read_as_native_from_another_realm(seen: dict[str, Any]) -> None:
    """An about:blank iframe's Function.prototype.toString says [native code] for every function the
    clock put in, with the function's own name and length; the page's own toString says the same."""
    source = {name: got for name, got in seen["foreign"].items() if not (got[0] and NATIVE.match(got[1]))}
    assert not source, source
    names = {name: got[1] for name, got in seen["foreign"].items()
             if got[1] != f"function {got[2]}() {{ [native code] }}"}
    assert not names, names
    lengths = {name: got[3] for name, got in seen["foreign"].items() if got[3] != NATIVE_LENGTH.get(name, got[3])}
    assert not lengths, lengths


async def test_document_timeline_runs_on_the_page_clock(seen: dict[str, Any]) -> None:
    """In a browser document.timeline.currentTime is the frame's time, as the animation frame's timestamp."""
    assert len(seen["frames"]) >= 5, seen["frames"]
    off = [(t, tl) for t, tl, _now in seen["frames"] if tl is None or abs(tl - t) > 0.01]
    assert not off, off


async def test_an_iframe_shares_the_page_clock(seen: dict[str, Any]) -> None:
    """An iframe made half a second in: its Date reads the page's, its own performance.now starts at 0
    and runs with the page's, and its timers and animation frames run."""
    child = seen["child"]
    # The page's Date is read just after the iframe's, with work between (time moves as work is done:
    # 4 ms at a load of 50); the drift by the virtual time played would be the page's ~600 ms.
    assert abs(child["dateDiff"]) < 1000 / 60 and abs(child["newDateDiff"]) < 1000 / 60, child
    # Its own time from its own start: a few ms at most of work read just after it was made (time
    # moves as work is done, and more of it passes at a load of 16), never the page's ~600 ms.
    assert child["now"] < 1000 / 60, child
    assert child["timeouts"] == 1, child
    inner, outer = child["timeoutAt"]
    assert 99.9 <= inner <= 110, child  # its own time, from its own start
    assert child["rafs"] and abs(child["rafs"][0][0] - (child["rafs"][0][1] + 1000 / 60 - (outer - inner))) < 1, child


async def test_an_iframe_page_plays_and_a_removed_one_stops(harness: BrowserHarness, tmp_path: Path) -> None:
    """An iframe's own page (src=) animates in the page's frames; a removed iframe's timers stop."""
    (tmp_path / "inner.html").write_text("""<!doctype html><script>
      let n = 0; (function f() { parent.innerFrames = ++n; requestAnimationFrame(f); })();
      </script>""", encoding="utf-8")
    (tmp_path / "index.html").write_text("""<!doctype html><body><iframe src="inner.html"></iframe><script>
      window.ticks = 0; window.innerFrames = 0;
      const f = document.createElement('iframe'); document.body.appendChild(f);
      f.contentWindow.setInterval(() => { ticks++; }, 50);
      setTimeout(() => { window.atRemoval = ticks; f.remove(); }, 300);
      </script></body>""", encoding="utf-8")
    s = await harness.open(tmp_path, fps=60)
    try:
        await s.advance(1.0)
        ticks, at_removal, inner = await s.eval("() => [ticks, atRemoval, innerFrames]")
    finally:
        await s.close()
    assert at_removal >= 5 and ticks == at_removal, (ticks, at_removal)
    assert inner >= 55, inner


# ---- tells 1, 2 and 9: time that moves with work, a navigation's start, a callback's stack ------------
# fixtures/invisible/work.html reads the clock around a busy loop (3 million steps) in its first
# script, in an animation frame callback and in a timer callback, and takes a stack in each callback.

async def _work(harness: BrowserHarness, fps: int) -> tuple[dict[str, Any], list[str]]:
    s = await harness.open(FIXTURES, "work.html", fps=fps)
    try:
        await s.advance(1.5)
        return await s.eval("() => seen"), list(s.errors)
    finally:
        await s.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def work(harness: BrowserHarness) -> tuple[dict[str, Any], list[str]]:
    return await _work(harness, 60)


@pytest.mark.parametrize("where", ["script", "raf", "timer"])
async def test_time_moves_while_the_page_works(work: tuple[dict[str, Any], list[str]], where: str) -> None:
    """Tell 1: a busy loop reads a later performance.now() and Date.now() after it than before."""
    got = work[0][where]
    assert got["t1"] - got["t0"] >= 1, got
    assert got["d1"] >= got["d0"], got


async def test_work_leaves_the_frames_exact(work: tuple[dict[str, Any], list[str]]) -> None:
    """The work shows in what the page reads, below the next frame's time; frames still come at the rate."""
    seen = work[0]
    raf, (next_ts, next_now) = seen["raf"], seen["nextFrame"]
    assert next_ts - raf["ts"] == pytest.approx(1000 / 60, abs=1e-6), seen
    assert raf["ts"] <= raf["t0"] < raf["t1"] < next_ts <= next_now, seen


async def test_the_first_script_runs_after_the_navigation(harness: BrowserHarness,
                                                           work: tuple[dict[str, Any], list[str]]) -> None:
    """Tell 2: performance.now() in the first script is past a navigation's response (tens of ms), the
    same in every run of the artefact, at either rate."""
    first = work[0]["first"]
    assert 20 <= first <= 1000, first
    again, _ = await _work(harness, 240)
    assert again["first"] == first, (again["first"], first)


@pytest.mark.parametrize("where", ["rafStack", "timerStack"])
async def test_a_callbacks_stack_shows_the_callback_alone(work: tuple[dict[str, Any], list[str]], where: str) -> None:
    """Tell 9: a stack taken in an animation frame or timer callback has the page's frames only."""
    lines = work[0][where].splitlines()
    assert lines[0] == "Error: here" and len(lines) == 2, lines
    assert "http://localhost/work.html" in lines[1], lines
    assert (work[0]["rafArgs"], work[0]["timerArgs"]) == (1, 0), work[0]  # its own arguments, no more


async def test_an_error_thrown_in_a_callback_is_the_pages_uncaught_error(
        work: tuple[dict[str, Any], list[str]]) -> None:
    """Thrown in an animation frame callback: the page's onerror hears it, the harness records it, frames go on."""
    seen, errors = work
    assert "thrown in frame 50" in seen.get("onerror", ""), seen
    assert [e for e in errors if "thrown in frame 50" in e], errors
    assert seen["times"][-1] >= 1500, seen["times"]


# ---- tell 6: a dedicated worker runs on the page's virtual clock ---------------------------------------------
# fixtures/invisible/worker_clock.html: a blob: worker counts its 100 ms interval and its animation frames;
# every 30 frames the page asks it what its clocks say and records its own beside the answer.
FRAME_MS = 1000 / 60


async def _worker_answers(harness: BrowserHarness, seconds: float) -> dict[str, Any]:
    s = await harness.open(FIXTURES, "worker_clock.html", fps=60)
    try:
        await s.advance(seconds)
        return await s.eval("() => ({made, answers, pageFns, workerShape, blobUrl})")
    finally:
        await s.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def worker_seen(harness: BrowserHarness) -> dict[str, Any]:
    return await _worker_answers(harness, 3.0)


async def test_a_workers_clock_agrees_with_the_pages_after_play(worker_seen: dict[str, Any]) -> None:
    """After 3 virtual s the worker's Date is the page's and its performance.now has run with the
    page's from the moment the page made it (within the one frame a message takes)."""
    answers = worker_seen["answers"]
    assert [a["asked"]["frame"] for a in answers] == list(range(30, 181, 30)), answers
    last = answers[-1]
    assert 0 <= last["asked"]["date"] - last["date"] <= FRAME_MS + 1, last
    made_now, made_date = worker_seen["made"]  # the page's clocks just before it made the worker
    elapsed = last["asked"]["now"] - made_now
    assert abs(elapsed - FRAME_MS - last["now"]) <= 1, (elapsed, last)
    # At its first statement: performance.now 0, Date the page's then (the page's own reads run ahead
    # of its frame time by the work it has done in the task, below a frame).
    assert last["t0"] == 0 and -1 <= made_date - last["d0"] <= FRAME_MS, last


async def test_a_workers_interval_and_animation_frames_tick_by_virtual_time(worker_seen: dict[str, Any]) -> None:
    for a in worker_seen["answers"]:
        assert a["ticks"] == int(a["now"] // 100), a  # every 100 ms of the worker's time, none more
        assert a["rafs"] == a["asked"]["frame"] - 1, a  # one per page frame, up to the frame before
    assert worker_seen["answers"][-1]["ticks"] >= 29


async def test_a_worker_reads_the_same_on_every_run(harness: BrowserHarness, worker_seen: dict[str, Any]) -> None:
    """What the worker reads is the same in a second run (the page's own reads move with the work it
    does: they are left out)."""
    def worker(seen: dict[str, Any]) -> list[list[Any]]:
        return [[a[k] for k in ("now", "date", "ticks", "rafs", "t0", "d0", "got")] for a in seen["answers"]]
    again = await _worker_answers(harness, 3.0)
    assert worker(again) == worker(worker_seen)


async def test_a_worker_cannot_tell_its_clock_from_the_browsers(worker_seen: dict[str, Any]) -> None:
    """Its functions read as native from its own realm, with their names and lengths, and none is an
    own property of the global scope that was not one; the harness's message never reaches its code;
    its script's "use strict" holds; its location is the page's blob: URL;
    the page's Worker, its terminate and URL.createObjectURL and revokeObjectURL read as native from
    another realm."""
    last = worker_seen["answers"][-1]
    lengths = {"setTimeout": 1, "setInterval": 1, "requestAnimationFrame": 1, "cancelAnimationFrame": 1, "Date": 7}
    for name, (source, fn_name, length) in last["natives"].items():
        assert NATIVE.match(source) and source == f"function {fn_name}() {{ [native code] }}", (name, source)
        assert length == lengths.get(name, 0), (name, length)
    assert last["got"][0] == 30, last["got"]  # the page's first message is the first it gets
    assert last["strict"] is True  # its own "use strict" holds
    url = worker_seen["blobUrl"]  # its location is the URL the page made it from
    assert last["loc"] == [url, url.removeprefix("blob:"), url, "http://localhost"], (last["loc"], url)
    # Own properties of its global scope, as in Chromium's worker (its timers live on the prototype).
    assert last["own"] == ["Date", "cancelAnimationFrame", "close", "requestAnimationFrame"], last["own"]
    for name, (foreign, fn_name, length, own) in worker_seen["pageFns"].items():
        assert NATIVE.match(foreign) and foreign == own == f"function {fn_name}() {{ [native code] }}", (name, foreign)
        assert length == {"Worker": 1, "createObjectURL": 1, "revokeObjectURL": 1, "terminate": 0}[name], (name, length)
    assert worker_seen["workerShape"] == [True, True, "function"]


async def test_a_worker_from_a_script_file_runs_on_the_page_clock(harness: BrowserHarness) -> None:
    """fixtures/invisible/worker_file.html makes worker_file.js (a query of its own, "use strict", a
    relative importScripts): its clocks and interval run on the page's time, and what it can read of
    itself is as it was (its location, its import, its strictness)."""
    s = await harness.open(FIXTURES, "worker_file.html", fps=60)
    try:
        await s.advance(3.0)
        seen = await s.eval("() => ({made, answers})")
    finally:
        await s.close()
    answers = seen["answers"]
    assert [a["asked"]["frame"] for a in answers] == list(range(30, 181, 30)), answers
    last, (made_now, made_date) = answers[-1], seen["made"]
    assert abs(last["asked"]["now"] - made_now - FRAME_MS - last["now"]) <= 1, last
    assert 0 <= last["asked"]["date"] - last["date"] <= FRAME_MS + 1, last
    assert -1 <= made_date - last["d0"] <= FRAME_MS, last
    assert last["t0"] == 0 and all(a["ticks"] == int(a["now"] // 100) for a in answers), answers
    assert last["lib"] is True and last["strict"] is True, last
    url = "http://localhost/worker_file.js?v=2"
    assert last["loc"] == [url, "?v=2", url], last["loc"]


async def test_workers_that_end_fail_or_hang_never_stop_the_page(harness: BrowserHarness, tmp_path: Path) -> None:
    """A worker terminated at once, one that closes itself, one whose script does not parse and one
    that never ends its first script: the page plays on (as in a browser); a module worker beside
    them runs on the page's time."""
    (tmp_path / "index.html").write_text("""<!doctype html><script>
      const make = (code, opts) => new Worker(URL.createObjectURL(new Blob([code])), opts);
      make('setInterval(() => {}, 10);').terminate();
      make('setTimeout(() => close(), 200);');
      make('this is not javascript');
      make('while (true) {}');
      const m = make('let n = 0; setInterval(() => { n++; }, 100); ' +
                     'onmessage = () => postMessage([n, performance.now()]);', { type: 'module' });
      m.onmessage = (e) => { window.moduleSays = e.data; };
      window.frames_ = 0;
      requestAnimationFrame(function f() { if (++frames_ === 110) m.postMessage(0); requestAnimationFrame(f); });
      </script>""", encoding="utf-8")
    s = await harness.open(tmp_path, fps=60)
    try:
        await s.advance(2.0)
        assert s.broken is None, s.broken
        frames, says = await s.eval("() => [frames_, moduleSays]")
    finally:
        await s.close()
    assert frames == 120, frames
    ticks, now = says
    assert ticks == int(now // 100) and now >= 1800, says


async def test_a_worker_slow_in_real_time_never_makes_the_page_look_hung(harness: BrowserHarness,
                                                                         tmp_path: Path) -> None:
    """A worker whose every tick works for a quarter of a real second (a person's browser plays on):
    the step stops waiting for it before the page's own limit, so the page is not called hung."""
    (tmp_path / "index.html").write_text("""<!doctype html><script>
      new Worker(URL.createObjectURL(new Blob([
        // 250 ms of real time per tick, read off an event's timeStamp (real time, not the clock's)
        'const real = () => new Event("x").timeStamp; ' +
        'setInterval(() => { const t = real(); while (real() - t < 250); postMessage(0); }, 16);'])));
      window.frames_ = 0;
      requestAnimationFrame(function f() { frames_++; requestAnimationFrame(f); });
      </script>""", encoding="utf-8")
    s = await harness.open(tmp_path, fps=60)
    try:
        await s.advance(1.0)
        assert s.broken is None, s.broken
        assert await s.eval("() => frames_") == 60
    finally:
        await s.close()


async def test_a_worker_a_worker_makes_runs_on_the_page_clock(harness: BrowserHarness, tmp_path: Path) -> None:
    """A worker makes a worker from a blob: URL: it counts its 100 ms interval on the page's time, and
    reads the page's Date, when asked 3 virtual s in. (A worker's worker from a script file does not
    load in the harness at all, clock or not: the browser's route does not see its request.)"""
    (tmp_path / "index.html").write_text("""<!doctype html><script>
      const outer = `
        const inner = new Worker(URL.createObjectURL(new Blob([self.tickCode])));
        inner.onmessage = (e) => postMessage(e.data);
        onmessage = () => inner.postMessage(0);`;
      const code = "let n = 0; setInterval(() => { n++; }, 100); " +
        "onmessage = () => postMessage([n, performance.now(), Date.now()]);";
      const w = new Worker(URL.createObjectURL(new Blob(['self.tickCode = ' + JSON.stringify(code) + ';' + outer])));
      w.onmessage = (e) => { window.said = [e.data, Date.now()]; };
      let n = 0;
      requestAnimationFrame(function f() { if (++n === 180) w.postMessage(0); requestAnimationFrame(f); });
      </script>""", encoding="utf-8")
    s = await harness.open(tmp_path, fps=60)
    try:
        await s.advance(3.1)
        (ticks, now, date), page_date = await s.eval("() => said")
    finally:
        await s.close()
    assert ticks == int(now // 100) and now >= 2900, (ticks, now)
    assert 0 <= page_date - date <= 6 * FRAME_MS, (date, page_date)


async def test_a_game_whose_physics_runs_in_a_worker_is_judged_alike_at_60_and_240_hz(
        harness: BrowserHarness, tmp_path: Path) -> None:
    """Time-based physics in a worker: the ball is where the time says at either rate (refresh-rate passes)."""
    ctx = ProbeContext(harness=harness, artefact_dir=FIXTURES, entry="worker_game.html", evidence_dir=tmp_path / "ev")
    result = await refresh_rate_check(ctx, [])
    assert result.status == "pass", (result.detail, result.data)
    assert 0.95 <= float(result.data["s"]) <= 1.05, result.data


async def test_a_game_that_hides_from_the_judge_by_its_clock_fails_refresh_rate(
        harness: BrowserHarness, tmp_path: Path) -> None:
    """fixtures/invisible/hostile_flappy.html steps once per frame (4x fast at 240 Hz) unless its clock
    says it is judged (0 ms in its first script, or no time over a busy loop): the flappy checks see the
    game a person sees, and refresh-rate fails it."""
    results = {r.id: r for r in await run_browser_checks_async(
        "flappy", FIXTURES, tmp_path, entry="hostile_flappy.html", harness=harness)}
    refresh = results["refresh-rate"]
    assert refresh.status == "fail", (refresh.detail, refresh.data)
    assert "4.0x faster" in refresh.detail, refresh.detail
    assert results["flap-input"].status == "pass", results["flap-input"].detail
