"""The report in real Chromium: matrix, live artefacts, isolation, replay, verdicts, ledger.

Screenshots go to $AGENTBENCH_SCREENSHOTS, or artefacts/screenshots/ in CI (for CI artifacts).
"""

from __future__ import annotations

import json
import os
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from agentbench.report import ReportServer, load_verdicts, write_report
from tests.report._runs import plant_verdicts

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    where = os.environ.get("AGENTBENCH_SCREENSHOTS")
    if where:
        path = Path(where)
    elif os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        path = ROOT / "artefacts" / "screenshots"
    else:
        path = tmp_path / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@asynccontextmanager
async def _page(chromium_path: str):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            from tests.helpers.waiting import HANG_S

            page.set_default_timeout(HANG_S * 1000)  # every wait is for a condition: only a hang runs out
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page, errors
        finally:
            await browser.close()


async def _frame(page, uid: str):
    handle = await page.wait_for_selector(f'iframe.artefact[title="{uid}"][srcdoc]', state="attached")
    return await handle.content_frame()


async def _click(page, locator) -> None:
    """Scroll first and let two frames pass: a click right after a scroll can be routed by a stale
    hit-test into an out-of-process iframe that was under that point before the scroll."""
    await locator.scroll_into_view_if_needed()
    await page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    await locator.click()


async def _text_is(frame, selector: str, expected: str) -> None:
    await frame.wait_for_function(
        "([s, e]) => { const el = document.querySelector(s); return el && el.textContent === e; }",
        arg=[selector, expected])


async def test_static_report_matrix_frames_isolation_replay_ledger(run_dir: Path, chromium_path: str,
                                                                    shots: Path) -> None:
    plant_verdicts(run_dir)
    path = write_report([run_dir])
    async with _page(chromium_path) as (page, errors):
        await page.goto(path.as_uri())
        # the matrix: tasks x models, every attempt with verdict or outcome
        assert await page.locator("table.matrix thead th").all_inner_texts() == ["task", "alpha", "beta"]
        assert await page.locator("table.matrix tbody th").all_inner_texts() == ["flappy", "todo", "converter"]
        todo_beta = page.locator('table.matrix tr[data-task="todo"] td').nth(1)
        assert "no-artefact" in await todo_beta.inner_text()
        assert "infra-error" in await page.locator('table.matrix tr[data-task="converter"] td').nth(1).inner_text()

        # every iframe that is loaded shows its own artefact, live (its script ran)
        loaded = await page.locator("iframe.artefact[srcdoc]").evaluate_all("fs => fs.map(f => f.title)")
        assert sorted(loaded) == ["run-a/converter/alpha/r1", "run-a/flappy/alpha/r1", "run-a/flappy/beta/r1",
                                  "run-a/todo/alpha/r1"]
        for uid in loaded:
            await _text_is(await _frame(page, uid), "#who", uid)
        await _text_is(await _frame(page, "run-a/todo/alpha/r1"), "#split", "inlined script ran")
        probe = await _frame(page, "run-a/flappy/alpha/r1")
        assert await probe.inner_text("#mode") == "CSS1Compat"  # the clock did not knock it into quirks mode
        await _click(page, page.locator('#task-flappy button.rep[data-show="a-run-a-flappy-alpha-r2"]'))  # hidden
        await _text_is(await _frame(page, "run-a/flappy/alpha/r2"), "#who", "run-a/flappy/alpha/r2")
        assert await page.locator('iframe.artefact[title="run-a/flappy/alpha/r1"][srcdoc]').count() == 0
        await _click(page, page.locator('#task-flappy button.rep[data-show="a-run-a-flappy-alpha-r1"]'))

        # the artefact cannot reach the report: every way out is blocked, the report is intact
        escape = await _frame(page, "run-a/flappy/beta/r1")
        await escape.wait_for_function("document.getElementById('out').textContent.includes('origin:')")
        assert await escape.inner_text("#out") == ("parent-dom:blocked top-title:blocked frame-element:blocked "
                                                   "storage:blocked cookie:blocked origin:null")
        assert await page.title() == "agentbench report: run-a"
        assert await page.locator("table.matrix").count() == 1
        assert "PWNED" not in await page.inner_text("body")  # (the srcdoc attribute holds the word)

        # the ledger counts the planted too-strict and too-generous cases
        row = page.locator('#ledger tr[data-scorer="verdict"]')
        assert await row.locator(".n-agree").inner_text() == "1"
        assert (await row.locator(".n-strict").inner_text()).split() == ["1", "run-a/flappy/beta/r1"]
        assert (await row.locator(".n-generous").inner_text()).split() == ["1", "run-a/flappy/alpha/r1"]
        await _click(page, row.locator(".n-strict a"))  # the link leads to that attempt
        assert await page.evaluate("location.hash") == "#a-run-a-flappy-beta-r1"

        # synchronised replay: the chosen rate reaches every artefact of the task, with the input
        section = page.locator("#task-flappy")
        for rate in (240, 60):
            await section.locator("select.fps").select_option(str(rate))
            real0 = time.monotonic()
            await _click(page, section.locator("button.replay-btn"))
            probe = await _frame(page, "run-a/flappy/alpha/r1")
            await _text_is(probe, "#rate", f"{rate}.0")  # rAF callbacks per virtual second
            await probe.wait_for_function("Number(document.getElementById('keys').textContent) >= 2")
            beta = await _frame(page, "run-a/flappy/beta/r1")
            starts = [await f.evaluate("window.__ABR_CFG.start_at") for f in (probe, beta)]
            assert starts[0] == starts[1] > 0  # one clock for the whole task
            assert [await f.evaluate("window.__ABR_CFG.fps") for f in (probe, beta)] == [rate, rate]
            state = await probe.evaluate("__abrClock.state()")
            elapsed = time.monotonic() - real0
            # paced to real time: never ahead of the wall clock (the 0.8 s start delay aside)
            assert 0 < state["t_ms"] / 1000 <= elapsed + 0.1
            status = page.locator("#a-run-a-flappy-alpha-r1 [data-status]")
            await page.wait_for_function("([el, r]) => el.dataset.fps === r",
                                         arg=[await status.element_handle(), str(rate)])
            assert "1 page error: " in await status.inner_text() and "planted once" in await status.inner_text()
        assert await section.get_attribute("data-rate") == "60"
        await page.screenshot(path=str(shots / "report-static.png"), full_page=True)
        assert [e for e in errors if "planted once" not in e] == []  # the report's own script is clean


async def test_served_verdict_survives_reload_and_artefact_cannot_forge_one(run_dir: Path, chromium_path: str,
                                                                            shots: Path) -> None:
    with ReportServer([run_dir]) as server:
        async with _page(chromium_path) as (page, errors):
            await page.goto(server.open_url)
            box = page.locator('div.human[data-uid="run-a/todo/beta/r1"]')
            await box.locator("input.vnote").fill("nothing to see, rightly")
            await _click(page, box.locator('button[data-verdict="fail"]'))
            await box.locator(".vmsg", has_text="saved").wait_for()
            assert await page.locator('#matrix [data-human-for="run-a/todo/beta/r1"]').inner_text() == "person: fail"
            saved = json.loads((run_dir / "verdicts.json").read_text())
            assert saved["verdicts"]["todo/beta/r1"]["verdict"] == "fail"
            assert saved["verdicts"]["todo/beta/r1"]["note"] == "nothing to see, rightly"

            # the sandboxed artefact's own POST to the API went nowhere
            escape = await _frame(page, "run-a/flappy/beta/r1")
            await escape.wait_for_function("document.getElementById('api').textContent !== 'api:pending'")
            assert await escape.inner_text("#api") in ("api:blocked", "api:403")

            strips = page.locator('#a-run-a-flappy-beta-r1 figure.ev-image img')
            assert await strips.count() == 2
            assert await strips.evaluate_all("imgs => imgs.every(i => i.complete && i.naturalWidth === 8)")
            await page.reload()
            box = page.locator('div.human[data-uid="run-a/todo/beta/r1"]')
            assert await box.get_attribute("data-current") == "fail"
            assert await box.locator(".current").inner_text() == "fail — nothing to see, rightly"
            assert await page.locator('#matrix [data-human-for="run-a/todo/beta/r1"]').inner_text() == "person: fail"
            assert "1 attempt judged by a person" in await page.locator("#ledger").inner_text()
            await page.locator("#task-todo").screenshot(path=str(shots / "report-served-todo.png"))
            assert [e for e in errors if "planted once" not in e] == []  # the report's own script is clean
    book = load_verdicts(run_dir)
    assert list(book.verdicts) == ["todo/beta/r1"]  # no forged flappy/beta/r1
