"""A form check that runs out of its own real-time limit is `error`, even where the page threw meanwhile.

On a busy machine a converter check ran out of its 30 s (``_find._CHECK_LIMIT_S``) after its body,
its selects timing out, had gone on to pairs that throw; the exceptions then turned the unfinished
check into a `fail` that a quiet machine never gives (the corpus's
category-select-two-way-inputs-unfinished: live-update and bad-input, "the check did not finish
within 30 s"). An unfinished check decides nothing: could not tell.

The body here throws in the page and then waits on an event nobody sets, so the limit is reached
however fast the machine is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_asyncio

from agentbench.checks._model import CheckResult
from agentbench.checks.browser import BrowserHarness, ProbeContext, _find
from agentbench.checks.browser._find import run_check

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PAGE = "<!doctype html><p>converter</p><input id=v>"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


def _ctx(harness: BrowserHarness, tmp_path: Path) -> ProbeContext:
    (tmp_path / "art").mkdir()
    (tmp_path / "art" / "index.html").write_text(PAGE)
    return ProbeContext(harness=harness, artefact_dir=tmp_path / "art", entry="index.html",
                        evidence_dir=tmp_path / "evidence")


async def _throw_then(session, then) -> None:
    await session.eval("() => { setTimeout(() => { null.f(); }, 0); }")
    for _ in range(200):  # the page's error reaches the session's list (a condition, bounded)
        await session.advance(0.05)
        if _find.page_exceptions(session.errors):
            break
    assert _find.page_exceptions(session.errors), session.errors
    await then()


async def test_a_check_out_of_its_limit_is_could_not_tell_though_the_page_threw(
        harness: BrowserHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_find, "_CHECK_LIMIT_S", 3.0)  # reached for certain: the body never ends
    never = asyncio.Event()
    result = await run_check(_ctx(harness, tmp_path), "live-update", lambda s: _throw_then(s, never.wait))
    assert result.status == "error", result.detail
    assert "could not tell" in result.detail and "did not finish within 3 s" in result.detail, result.detail
    assert "TypeError" in result.detail, result.detail


async def test_a_finished_check_during_which_the_page_threw_still_fails(
        harness: BrowserHarness, tmp_path: Path) -> None:
    async def nothing() -> None:
        return None

    async def body(session):
        await _throw_then(session, nothing)
        return CheckResult(id="live-update", status="pass", detail="the result follows the typing")

    result = await run_check(_ctx(harness, tmp_path), "live-update", body)
    assert result.status == "fail" and "the page threw 1 exception" in result.detail, result.detail
