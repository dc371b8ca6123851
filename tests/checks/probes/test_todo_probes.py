"""The to-do probes on real Chromium: artefacts written the way different models write them.

Every check id has at least one artefact that must fail it and one that must pass it. The probe
runs once per artefact (cached); a broken fixture runs only the checks it is built to break
(plus one it must still pass, to catch over-eager failures).
"""

from __future__ import annotations

import pytest
import pytest_asyncio
from _probe_helpers import ProbeRuns, artefact, explain

from agentbench.checks.browser import BrowserHarness
from agentbench.checks.browser._find import dom
from agentbench.checks.todo._app import AddPath, TodoApp, TodoMap
from agentbench.checks.todo._checks import TASKS
from agentbench.checks.todo._probes import CHECK_IDS, probe_todo
from agentbench.checks.todo._swipe import swipe

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

GOOD = [
    "todo/good_plain.html",
    "todo/good_class_hover_delete.html",
    "todo/good_divs_click_text.html",
    "todo/good_table_select_opacity.html",
    "todo/good_animated_newest_first.html",
    # Delete asks confirm("Remove this item?"): answered OK, as the person who asked for it would.
    "todo/good_confirm_delete.html",
    # Delete opens a box of the page's own, "Delete this task?" [Cancel] [Delete]: answered Delete.
    "todo/good_modal_confirm_delete.html",
    # Rows are web components: the checkbox in a shadow root writes completed="true"/"false" on the
    # host (no attribute at first): unticking undoes ticking.
    "todo/good_shadow_item_attribute.html",
    # The app wires itself up in a timer after load (a library's "document ready"), as jQuery 3 does.
    "todo/good_ready_by_timer.html",
    # The row slides out (a 1.5 s transition) and is deleted on transitionend: waited for on the
    # virtual clock, however busy the machine.
    "todo/good_transition_delete.html",
    # The app names a task outside its list: an aria-live line ('Marked "X" done') and, after a
    # delete, a bar fixed at the corner ('"X" removed [Undo]'); neither is the task's row.
    "todo/good_undo_notice_names_task.html",
    # Delete asks in a <dialog> that names the task; closed, it still holds the name (hidden).
    "todo/good_dialog_names_task.html",
    # A row's Remove shows only after its "⋮" is clicked: opened, then clicked, as a person does.
    "todo/good_row_options_menu.html",
    # The filters are items of a menu the "Showing: All ▾" button opens: opened, then picked.
    "todo/good_filter_dropdown_menu.html",
    # No delete control on a row: a row dragged left with the mouse is deleted; a note laid over the
    # card's foot (position: absolute) names it for 4 s and covers the last row meanwhile.
    "todo/good_swipe_mouse_delete.html",
    # Listens for touch alone: a finger's swipe to the right deletes; a mouse drag does nothing.
    "todo/good_touch_swipe_delete.html",
    # Rows are prepended (newest on top); on load the done tasks are moved to the bottom: the order
    # within done and within not done is kept, so the list is the one the person made.
    "todo/good_done_sink_on_load.html",
    "demo:careful/todo",
]
# artefact -> {check: expected status}; only these checks run on it
BROKEN = {
    "todo/bad_enter_twice.html": {"add": "fail", "empty-input": "fail", "escaping": "pass"},
    # Enter does nothing but the Add button adds: the prompt asks for Enter *or* an Add button, so
    # this passes `add` (it used to be failed by a rule stricter than the prompt's).
    "todo/bad_button_only.html": {"add": "pass", "complete": "pass"},
    "todo/bad_checkbox_unbound.html": {"complete": "fail", "filter": "fail", "add": "pass"},
    "todo/bad_all_filter.html": {"filter": "fail", "complete": "pass", "delete": "pass"},
    "todo/bad_delete_index.html": {"delete": "fail", "filter": "pass"},
    "todo/bad_saves_never_loads.html": {"persistence": "fail", "complete": "pass"},
    # Each change must persist by itself: a tick saved only by a later add or delete is not kept;
    # a delete saved only by a later add or tick is not kept either.
    "todo/bad_tick_not_saved.html": {"persistence": "fail", "complete": "pass", "delete": "pass"},
    "todo/bad_delete_not_saved.html": {"delete": "fail", "persistence": "pass"},
    # Done tasks sink; Remove removes by the row's shown place: another task goes, the chosen stays.
    "todo/bad_delete_sorted_position.html": {"delete": "fail", "complete": "pass"},
    "todo/bad_innerhtml.html": {"escaping": "fail", "add": "pass"},
    # Ticks by the row's place in the filtered view, used in the full list: right under All; under
    # Active, with a done task before it, ticking the last shown ticks another task.
    "todo/bad_toggle_filtered_index.html": {"complete": "fail", "delete": "pass"},
    # Finds a task by its text: of two rows of the same text, ticking the second ticks the first,
    # and deleting one deletes both.
    "todo/bad_delete_by_text.html": {"delete": "fail", "complete": "fail", "filter": "pass"},
    # Only the Done view is built with innerHTML: the markup task runs once marked done and shown there.
    "todo/bad_done_view_innerhtml.html": {"escaping": "fail", "filter": "pass"},
    "todo/bad_adds_blank.html": {"empty-input": "fail", "delete": "pass"},
    # good, but easy to misjudge: a cut-off field and a message row inside the list
    "todo/good_maxlength_message.html": {"escaping": "pass", "empty-input": "pass"},
    # A swiped row slides away and folds shut, but stays in the page and in storage.
    "todo/bad_swipe_only_slides.html": {"delete": "fail", "complete": "pass"},
    # A swiped row is removed, but the deletion is not saved: a reload brings it back.
    "todo/bad_swipe_not_saved.html": {"delete": "fail", "complete": "pass"},
    # Saved from the DOM newest first, each saved row prepended again on load: every reload
    # reverses the list (the same tasks, the same done states, in the opposite order).
    "todo/bad_restores_reversed.html": {"persistence": "fail", "complete": "pass", "delete": "pass"},
    # Texts and done marks (by position) are saved apart, and a delete saves only the texts: after
    # a delete and a reload the done marks sit on other tasks.
    "todo/bad_done_marks_by_position.html": {"persistence": "fail", "complete": "pass", "delete": "pass"},
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield ProbeRuns(harness, tmp_path_factory.mktemp("todo-evidence"), probe_todo)


async def test_every_check_has_a_failing_and_a_passing_artefact() -> None:
    failing = {c for checks in BROKEN.values() for c, s in checks.items() if s == "fail"}
    assert set(CHECK_IDS) <= failing


@pytest.mark.parametrize("spec", GOOD)
async def test_good_apps_pass_every_check(runs: ProbeRuns, spec: str) -> None:
    results, _ = await runs.run(spec)
    assert list(results) == list(CHECK_IDS)
    assert all(r.status == "pass" for r in results.values()), explain(results)
    assert all(r.evidence for r in results.values())


@pytest.mark.parametrize("spec", list(BROKEN))
async def test_broken_apps_fail_what_they_break(runs: ProbeRuns, spec: str) -> None:
    expected = BROKEN[spec]
    results, _ = await runs.run(spec, expected)
    assert {c: r.status for c, r in results.items()} == expected, explain(results)
    for check, status in expected.items():
        if status == "fail":
            assert results[check].detail and results[check].evidence


async def test_rushed_demo_fails_persistence_and_decides_the_rest(runs: ProbeRuns) -> None:
    results, _ = await runs.run("demo:rushed/todo")
    assert results["persistence"].status == "fail", explain(results)
    assert results["add"].status == "pass", explain(results)
    assert all(r.status in {"pass", "fail"} for r in results.values()), explain(results)


async def test_persistence_evidence_lists_before_and_after(runs: ProbeRuns) -> None:
    results, ctx = await runs.run("todo/bad_saves_never_loads.html", BROKEN["todo/bad_saves_never_loads.html"])
    ev = {e.label: e.value for e in results["persistence"].evidence}
    before = ev["before reload"]
    assert len(before) >= 3 and all(r["times shown"] == 1 for r in before)
    assert {r["done"] for r in before} == {True, False}  # some marked done, some not (one done and back)
    assert all(r["times shown"] == 0 for r in ev["after reload"])
    shot = [e for e in results["persistence"].evidence if e.kind == "file"]
    assert shot and (ctx.evidence_dir.parent / shot[0].path).is_file()


async def test_a_list_restored_in_another_order_says_which(runs: ProbeRuns) -> None:
    spec = "todo/bad_restores_reversed.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    detail = results["persistence"].detail
    assert "another order" in detail, explain(results)
    ev = {e.label: e.value for e in results["persistence"].evidence}
    # the same tasks with the same done states, top to bottom the other way round
    before, after = ev["before reload"], ev["after reload"]
    assert [(r["task"], r["done"]) for r in before] == [(r["task"], r["done"]) for r in after]
    assert len(before) >= 3
    assert [r["place"] for r in after] == [len(before) + 1 - r["place"] for r in before]


async def test_a_delete_that_removes_another_task_says_so(runs: ProbeRuns) -> None:
    # Not "found no way to delete": the Remove button removed a task, the wrong one.
    results, _ = await runs.run("todo/bad_delete_sorted_position.html", BROKEN["todo/bad_delete_sorted_position.html"])
    detail = results["delete"].detail
    assert "removes other tasks than the chosen one" in detail and "instead of" in detail, explain(results)


async def test_a_tick_under_a_filter_that_ticks_another_says_which(runs: ProbeRuns) -> None:
    results, _ = await runs.run("todo/bad_toggle_filtered_index.html", BROKEN["todo/bad_toggle_filtered_index.html"])
    detail = results["complete"].detail
    assert "under 'Active'" in detail and "should have changed" in detail, explain(results)


async def test_deleting_one_of_two_tasks_of_the_same_text_says_both_went(runs: ProbeRuns) -> None:
    results, _ = await runs.run("todo/bad_delete_by_text.html", BROKEN["todo/bad_delete_by_text.html"])
    assert "with two tasks" in results["delete"].detail and "both went" in results["delete"].detail, explain(results)
    assert "the first was marked done instead" in results["complete"].detail, explain(results)


def _swipes(result) -> list[dict[str, str]]:
    table = next(e.value for e in result.evidence if e.label == "what was tried and what it did")
    return [r for r in table if "swipe" in r["action"]]


async def test_a_row_with_no_delete_control_is_swiped_left_with_the_mouse(runs: ProbeRuns) -> None:
    results, _ = await runs.run("todo/good_swipe_mouse_delete.html")
    delete = results["delete"]
    assert delete.status == "pass" and delete.detail.startswith("a mouse swipe of its row to the left"), \
        explain(results)
    # Tried once nothing else on the row deleted; the first drag deleted, so it was the only one.
    tried = _swipes(delete)
    assert len(tried) == 1 and tried[0]["effect"].startswith("removed exactly"), tried
    # Its double-click opens an edit box laid over the text (position: absolute): the row's own part.
    table = next(e.value for e in delete.evidence if e.label == "what was tried and what it did")
    assert any(r["control"] == "double-click on its text" and r["effect"] == "made the task's text editable"
               for r in table), table


async def test_a_page_that_listens_for_touch_alone_is_swiped_with_a_finger(runs: ProbeRuns) -> None:
    results, _ = await runs.run("todo/good_touch_swipe_delete.html")
    delete = results["delete"]
    assert delete.status == "pass" and delete.detail.startswith("a finger swipe of its row to the right"), \
        explain(results)
    tried = [(r["control"], r["effect"]) for r in _swipes(delete)]
    assert [c for c, _ in tried] == [f"a {who} swipe of its row to the {side}" for who, side in
                                     (("mouse", "left"), ("mouse", "right"), ("finger", "left"), ("finger", "right"))]
    assert [e for _, e in tried[:3]] == ["nothing changed"] * 3 and tried[3][1].startswith("removed exactly")


async def test_a_row_below_the_fold_is_scrolled_to_and_then_swiped(runs: ProbeRuns) -> None:
    folder, entry = artefact("todo/good_touch_swipe_delete.html")
    s = await runs.harness.open(folder, entry)
    try:
        field = ":root > body:nth-child(2) > input:nth-child(3)"  # that page's task field
        app = TodoApp(s, TodoMap(field=field, add_paths=[AddPath("Enter")]))
        await app.add(*TASKS)
        row = app.item(await app.state(), TASKS[-1])["row"]
        assert (await dom(s, "box", {"path": row}))[1] > s.viewport[1], "the last row should start below the fold"
        await swipe(s, row, "touch-swipe-right", "the last row")
        assert app.shown(await app.state()) == {**dict.fromkeys(TASKS[:-1], 1), TASKS[-1]: 0}
    finally:
        await s.close()


async def test_a_swipe_that_only_hides_the_row_is_no_delete(runs: ProbeRuns) -> None:
    spec = "todo/bad_swipe_only_slides.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    assert "found no way to delete" in results["delete"].detail, explain(results)
    tried = _swipes(results["delete"])
    # Both ways with the mouse, each said; no finger: nothing on the page listens for touch.
    assert [r["control"] for r in tried] == [f"a mouse swipe of its row to the {side}" for side in ("left", "right")]
    assert "still in the page" in tried[0]["effect"] and tried[1]["effect"] == "nothing changed", tried


async def test_a_swipe_that_is_not_saved_comes_back_after_a_reload(runs: ProbeRuns) -> None:
    spec = "todo/bad_swipe_not_saved.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    assert "came back" in results["delete"].detail, explain(results)
    assert _swipes(results["delete"])[0]["effect"].startswith("removed exactly"), explain(results)


async def test_escaping_in_the_done_view_says_where_it_ran(runs: ProbeRuns) -> None:
    results, _ = await runs.run("todo/bad_done_view_innerhtml.html", BROKEN["todo/bad_done_view_innerhtml.html"])
    assert "filter 'Done'" in results["escaping"].detail, explain(results)


async def test_escaping_evidence_shows_what_ran(runs: ProbeRuns) -> None:
    results, _ = await runs.run("todo/bad_innerhtml.html", BROKEN["todo/bad_innerhtml.html"])
    rows = results["escaping"].evidence[0].value
    assert rows[0]["img src=x elements"] >= 1 and rows[0]["bold text shown"] is False


async def test_a_page_without_a_task_field_fails_what_needs_a_task(runs: ProbeRuns) -> None:
    # Issue 11: nothing to type a task into is a finding a person sees (add is absent), not a gap;
    # what cannot be tried without a task (escaping, blank input) is skipped, not failed.
    results, _ = await runs.run("todo/gap_no_input.html")
    statuses = {c: r.status for c, r in results.items()}
    assert statuses == {"add": "fail", "complete": "fail", "delete": "fail", "filter": "fail",
                        "persistence": "fail", "escaping": "skip", "empty-input": "skip"}, explain(results)
    assert "no field to type a task into" in results["add"].detail


async def test_an_app_in_an_open_shadow_root_is_explored_like_any_other(runs: ProbeRuns) -> None:
    # The task field and the list live in a web component's open shadow root: found, typed into, read.
    results, _ = await runs.run("todo/gap_shadow_input.html", ["add", "complete"])
    assert results["add"].status == "pass", explain(results)
    # That app has no way at all to mark a task done: everything on its rows was tried.
    assert results["complete"].status == "fail" and "tried" in results["complete"].detail, explain(results)


async def test_a_field_we_cannot_see_into_is_an_error_not_a_fail(runs: ProbeRuns) -> None:
    # The task field lives in a closed shadow root no reader can see into: we could not tell.
    results, _ = await runs.run("explore/gap_closed_shadow.html", ["add", "complete"])
    assert {r.status for r in results.values()} == {"error"}, explain(results)
    assert "closed shadow root" in results["add"].detail


async def test_page_errors_reach_the_context(runs: ProbeRuns, chromium_path: str, tmp_path) -> None:
    folder, entry = artefact("todo/good_plain.html")
    broken = tmp_path / "throws.html"
    broken.write_text(
        (folder / entry)
        .read_text()
        .replace("function render() {", "function render() {\n  if (todos.length > 1) null.boom;")
    )
    results, ctx = await ProbeRuns(runs.harness, tmp_path, probe_todo).run(str(broken), ["add"])
    assert results["add"].status == "fail" and "TypeError" in results["add"].detail
    assert any("TypeError" in e for e in ctx.page_errors)
