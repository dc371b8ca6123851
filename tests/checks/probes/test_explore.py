"""The page explorer on real Chromium, on fixtures of its own: one per way people build controls.

Each fixture (tests/checks/probes/fixtures/explore/) is a small app whose controls are built one
particular way (a hidden checkbox under a styled label, a row-level click, double-click to delete,
a CSS-drawn ×, hover-only controls, plain divs with one delegated listener, an app inside shadow
roots, radio/select/icon filters, Enter dead but Add working). The to-do probe must find each by
what it does; what is truly absent must be a ``fail`` naming what was tried, never an ``error``.
"""

from __future__ import annotations

import pytest
import pytest_asyncio
from _probe_helpers import FIXTURES, ProbeRuns, explain

from agentbench.checks.browser import BrowserHarness
from agentbench.checks.browser._explore import controls, listeners
from agentbench.checks.converter._probes import CHECK_IDS as CONVERTER_CHECKS
from agentbench.checks.converter._probes import probe_converter
from agentbench.checks.todo._probes import CHECK_IDS, probe_todo

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

ALL_PASS = {c: "pass" for c in CHECK_IDS}
TODO = {
    "explore/todo_hidden_checkbox_label.html": ALL_PASS,
    "explore/todo_dblclick_delete_select_filter.html": ALL_PASS,
    "explore/todo_delegated_plain_divs.html": ALL_PASS,
    "explore/todo_shadow_components.html": ALL_PASS,
    "explore/todo_hover_button_radio_filters.html": ALL_PASS,
    "explore/todo_aria_switch_svg_delete.html": ALL_PASS,
    "explore/todo_no_filter_clear_all.html": {**ALL_PASS, "filter": "fail"},
    "explore/todo_finish_no_undo.html": {**ALL_PASS, "complete": "fail", "filter": "fail", "persistence": "fail"},
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(harness: BrowserHarness, tmp_path_factory: pytest.TempPathFactory):
    yield ProbeRuns(harness, tmp_path_factory.mktemp("explore-evidence"), probe_todo)


CONVERTER = [
    "explore/conv_radio_units.html",  # two radio groups, hidden inputs under pill labels
    "explore/conv_hover_menu_units.html",  # units in menus that open only while hovered
    "explore/conv_click_menu_units.html",  # units in custom dropdowns that open (and close) on a click
    "explore/conv_to_unit_first.html",  # the result's unit first on the line, nothing naming from/to
]


@pytest.mark.parametrize("spec", list(TODO))
async def test_todo_controls_are_found_by_what_they_do(runs: ProbeRuns, spec: str) -> None:
    results, _ = await runs.run(spec)
    assert {c: r.status for c, r in results.items()} == TODO[spec], explain(results)


@pytest.mark.parametrize("spec", CONVERTER)
async def test_converter_unit_controls_are_found_however_built(harness: BrowserHarness, tmp_path, spec: str) -> None:
    results, _ = await ProbeRuns(harness, tmp_path, probe_converter).run(spec)
    assert {c: r.status for c, r in results.items()} == {c: "pass" for c in CONVERTER_CHECKS}, explain(results)


async def test_every_tried_control_is_in_the_effect_table(runs: ProbeRuns) -> None:
    results, _ = await runs.run("explore/todo_delegated_plain_divs.html")
    rows = next(e.value for e in results["filter"].evidence if e.kind == "value")
    assert set(rows[0]) == {"control", "found by", "action", "effect"}
    # The filters are icon-only divs with no listener of their own: found through the document's.
    assert any("ancestor" in r["found by"] and "only the done tasks" in r["effect"] for r in rows), rows
    complete = next(e.value for e in results["complete"].evidence if e.label.startswith("what was tried"))
    assert any("data-state=closed" in r["effect"] for r in complete), complete


async def test_absent_filter_is_a_fail_naming_what_was_tried(runs: ProbeRuns) -> None:
    results, _ = await runs.run("explore/todo_no_filter_clear_all.html")
    assert results["filter"].status == "fail"
    assert "tried 2 action(s)" in results["filter"].detail and "none showed" in results["filter"].detail
    rows = next(e.value for e in results["filter"].evidence if e.kind == "value")
    assert [r["control"] for r in rows] == ["button 'Sort A-Z'", "button 'Clear all'"]  # destructive last


async def test_enter_dead_but_add_button_working_passes_add(runs: ProbeRuns) -> None:
    results, _ = await runs.run("explore/todo_dblclick_delete_select_filter.html")
    assert results["add"].status == "pass" and "Enter adds nothing" in results["add"].detail
    # the click that waits for a possible double-click still marks done; the double-click deletes
    assert "double-click" in results["delete"].detail


async def test_one_way_done_is_named(runs: ProbeRuns) -> None:
    results, _ = await runs.run("explore/todo_finish_no_undo.html")
    assert "does not mark it not done" in results["complete"].detail


async def test_controls_pierce_shadow_roots_and_report_listeners(harness: BrowserHarness) -> None:
    session = await harness.open(FIXTURES / "explore", "todo_shadow_components.html")
    try:
        found = await controls(session)
        kinds = {(c.kind, c.name) for c in found}
        assert ("field", "What needs doing?") in kinds and ("button", "Completed") in kinds, kinds
        # a Playwright locator reaches the element the deep path names (inside the shadow root)
        field = next(c for c in found if c.kind == "field")
        assert await session.page.locator(field.path).get_attribute("placeholder") == "What needs doing?"
    finally:
        await session.close()


async def test_listeners_include_delegation_on_the_document(harness: BrowserHarness) -> None:
    session = await harness.open(FIXTURES / "explore", "todo_delegated_plain_divs.html")
    try:
        listening = await listeners(session)
        assert "click" in listening.get(":root", []), listening
        found = await controls(session, listening=listening)
        tabs = [c for c in found if c.name in {"☰", "○", "●"}]
        assert len(tabs) == 3 and all(c.how == "delegated" for c in tabs), found
    finally:
        await session.close()


async def test_hidden_checkbox_is_clicked_through_its_label(harness: BrowserHarness) -> None:
    session = await harness.open(FIXTURES / "explore", "todo_hover_button_radio_filters.html")
    try:
        radios = [c for c in await controls(session) if c.kind == "radio"]
        assert len(radios) == 3 and all(c.hidden_input and c.target != c.path for c in radios), radios
    finally:
        await session.close()
