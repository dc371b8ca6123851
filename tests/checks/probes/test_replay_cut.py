"""Form checks cut by the harness's real-time step limit are played again (issue 29).

Every step that runs page code has a real-time limit (5 s): past it the page is called hung. A
good page on a machine busy enough to starve it used to be failed ("the page broke while being
used"). A check or exploration cut so is now played again from a pristine page with
``REPLAY_LIMIT_S`` per step: on the virtual clock it is the same frame for frame, so a page that
hangs is cut again (its fail stands) and a starved one gets the verdict a quiet machine gives.
Here every usual try is cut at once (the limit made 0 s: the busiest machine there is).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_asyncio
from _probe_helpers import DEMO, FIXTURES, explain

from agentbench.checks.browser import BrowserHarness, ProbeContext, run_browser_checks_async
from agentbench.checks.browser._find import REPLAY_LIMIT_S
from agentbench.checks.converter._probes import probe_converter
from agentbench.checks.todo._probes import probe_todo
from tests.helpers.limits import short_step_limits

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


@pytest.fixture
def busiest(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every session opened with the usual limit gets 0 s (cut at its first step); the limits asked for are kept."""
    asked: list[float] = []
    open_session = BrowserHarness.open

    async def open_cut(self, *args, **kwargs):
        asked.append(kwargs.get("step_timeout_s") or 5.0)
        if kwargs.get("step_timeout_s") is None:
            kwargs["step_timeout_s"] = 0.0
        return await open_session(self, *args, **kwargs)

    monkeypatch.setattr(BrowserHarness, "open", open_cut)
    return asked


def _ctx(harness: BrowserHarness, folder: Path, entry: str, tmp_path: Path) -> ProbeContext:
    return ProbeContext(harness=harness, artefact_dir=folder, entry=entry, evidence_dir=tmp_path / "evidence")


async def test_a_good_converter_starved_at_every_step_gets_its_verdict(harness: BrowserHarness, busiest: list[float],
                                                                       tmp_path: Path) -> None:
    results = {r.id: r for r in await probe_converter(
        _ctx(harness, FIXTURES / "converter", "good_select_output.html", tmp_path), ["length", "bad-input"])}
    assert {r.status for r in results.values()} == {"pass"}, explain(results)
    for r in results.values():
        assert "cut by the harness's time limit" in r.data["replayed"], explain(results)
    assert REPLAY_LIMIT_S in busiest and 5.0 in busiest, busiest


async def test_a_good_todo_list_starved_at_every_step_gets_its_verdict(harness: BrowserHarness, busiest: list[float],
                                                                       tmp_path: Path) -> None:
    results = {r.id: r for r in await probe_todo(_ctx(harness, DEMO / "careful" / "todo", "index.html", tmp_path))}
    assert {r.status for r in results.values()} == {"pass"}, explain(results)
    assert "explored again" in results["persistence"].data["replayed"], explain(results)
    assert "played again" in results["escaping"].data["replayed"], explain(results)


async def test_inputs_played_again_get_the_replays_limit(harness: BrowserHarness, busiest: list[float],
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A click or key cut on a starved machine is played again in the check's replay: its limit there is
    # the replay's, or a machine that starves an input past 4.5 s fails the page ("the page broke").
    from agentbench.checks.browser._page import PageSession

    inputs: list[tuple[float, float, str]] = []  # (the session's step limit, the input's limit, what)
    limited = PageSession.run_limited

    async def recorded(self, aw, *, timeout_s=None, what="a step"):
        if sys._getframe(1).f_code.co_name == "_act":
            inputs.append((self.step_timeout_s, timeout_s, what))
        return await limited(self, aw, timeout_s=timeout_s, what=what)

    monkeypatch.setattr(PageSession, "run_limited", recorded)
    results = {r.id: r for r in await probe_todo(_ctx(harness, DEMO / "careful" / "todo", "index.html", tmp_path))}
    assert {r.status for r in results.values()} == {"pass"}, explain(results)
    replayed = [(limit, what) for step, limit, what in inputs if step == REPLAY_LIMIT_S]
    assert replayed, inputs
    assert all(limit >= REPLAY_LIMIT_S for limit, _ in replayed), replayed


HANGS_ON_INPUT = """<!doctype html><html><body><h1>Unit converter</h1>
<label>Value <input id="v" type="number" value="1"></label>
<select id="from"><option>km</option><option>m</option></select>
<select id="to"><option>m</option><option>km</option></select>
<output id="out">1000</output>
<script>
const f = { km: 1000, m: 1 };
function show() {
  const v = parseFloat(document.getElementById("v").value);
  document.getElementById("out").textContent = String(v * f[from.value] / f[to.value]);
}
for (const id of ["from", "to"]) document.getElementById(id).addEventListener("input", show);
document.getElementById("v").addEventListener("keydown", () => { while (true) {} });  // hangs on a key
</script></body></html>"""


async def test_a_converter_that_hangs_on_input_still_fails(harness: BrowserHarness, tmp_path: Path) -> None:
    # Not starved: the page itself loops when a value is typed. Played again with the long limit it is
    # cut again, and the check fails as it always did.
    folder = tmp_path / "hangs"
    folder.mkdir()
    (folder / "index.html").write_text(HANGS_ON_INPUT, encoding="utf-8")
    length = (await probe_converter(_ctx(harness, folder, "index.html", tmp_path), ["length"]))[0]
    assert length.status == "fail" and "broke" in length.detail, explain({length.id: length})
    assert "played again" in length.data["replayed"], explain({length.id: length})


async def test_a_load_starved_at_every_step_is_loaded_again(chromium_path: str, busiest: list[float],
                                                            tmp_path: Path) -> None:
    # The load check's run: cut at once, loaded again with the long limit and judged (it was `fail`,
    # and every other check of the page was called off with it).
    results = {r.id: r for r in await run_browser_checks_async(
        "converter", DEMO / "careful" / "converter", tmp_path / "evidence", entry="index.html",
        chromium_path=chromium_path)}
    assert results["load"].status == "pass", explain(results)
    assert "loaded again" in results["load"].data["replayed"], explain(results)
    assert {r.status for r in results.values()} == {"pass"}, explain(results)


async def test_a_page_that_hangs_as_it_loads_still_fails_load(chromium_path: str, tmp_path: Path) -> None:
    # The page loops for ever: cut under any limit. Short limits (1 s, then 3 s for the replay) spare
    # the test the product's 5 + 20 s of waiting per try; the replay's limit is still the longer.
    folder = tmp_path / "hangs-at-load"
    folder.mkdir()
    (folder / "index.html").write_text("<h1>Unit converter</h1><script>while (true) {}</script>", encoding="utf-8")
    with short_step_limits(step_s=1.0, replay_s=3.0):
        results = {r.id: r for r in await run_browser_checks_async(
            "converter", folder, tmp_path / "evidence", entry="index.html", chromium_path=chromium_path)}
    load = results["load"]
    assert load.status == "fail" and "did not finish within 3 s" in load.detail, explain(results)
    assert "loaded again with 3 s per step" in load.data["replayed"], explain(results)
    assert "within 1 s" in load.data["replayed"], explain(results)  # the first try's cut
