"""Pure logic of the explorer and the to-do probes: reading looks, naming filters, ranking candidates."""

from __future__ import annotations

from agentbench.checks.browser._explore import Control, Trials
from agentbench.checks.todo._adds import rank_add
from agentbench.checks.todo._app import TodoMap, look_diff, reverted
from agentbench.checks.todo._filters import filter_key
from agentbench.checks.todo._rows import rank_row


def _control(**kw) -> Control:
    base = {"path": ":root > body:nth-child(2) > button:nth-child(1)", "target": "", "kind": "button", "name": "",
            "cls": "", "how": "markup"}
    base.update(kw)
    base["target"] = base["target"] or base["path"]
    return Control(**base)


def test_look_diff_names_what_changed() -> None:
    before = {"c": "item", "k0": False, "d1": "none", "o1": "1", "t2": "", "aa-state": "open", "parent": "p"}
    after = {"c": "completed item", "k0": True, "d1": "line-through", "o1": "0.5", "t2": "✓", "aa-state": "closed",
             "parent": "p"}
    words = look_diff(before, after)
    assert "class 'completed' added" in words and "ticked" in words and "struck through" in words
    assert "opacity 1 -> 0.5" in words and "text '' -> '✓'" in words and "a-state=closed" in words
    assert look_diff(before, dict(before)) == []
    assert look_diff({"o0": "1"}, {"o0": "0.98"}) == []  # a transition's last step is no change


def test_unmarking_undoes_marking_when_every_marked_part_left_its_done_value() -> None:
    # A web component writes completed="true" on ticking and completed="false" on unticking where a
    # new row had no attribute: the untick undoes the tick, though not byte for byte.
    fresh = {"acompleted": None, "k0/0": False, "d0/1": "none"}
    done = {"acompleted": "true", "k0/0": True, "d0/1": "line-through"}
    assert reverted(fresh, done, {"acompleted": "false", "k0/0": False, "d0/1": "none"})
    assert reverted(fresh, done, dict(fresh))
    # Unticked, but still struck through: a part the marking changed kept its done value.
    assert not reverted(fresh, done, {"acompleted": "false", "k0/0": False, "d0/1": "line-through"})
    assert not reverted(fresh, done, dict(done))
    assert not reverted(fresh, dict(fresh), dict(fresh))  # nothing was marked at all


def test_done_is_read_from_how_the_explored_task_changed() -> None:
    todo = TodoMap(undone_look={"c": "", "k0": False, "s1": "normal rgb(0, 0, 0)"},
                   done_look={"c": "done", "k0": True, "s1": "normal rgb(0, 0, 0)"})
    assert todo.is_done({"c": "done", "k0": True, "s1": "normal rgb(0, 0, 0)"}) is True
    assert todo.is_done({"c": "", "k0": False, "s1": "normal rgb(0, 0, 0)"}) is False
    assert TodoMap().is_done({"c": "done"}) is None  # nothing learnt: no way to tell


def test_filter_names() -> None:
    assert filter_key("Completed") == "done" and filter_key("#/completed") == "done"
    assert filter_key("Active 3") == "active" and filter_key("Uncomplete") == "active"
    assert filter_key("Semua") == "all" and filter_key("Belum") == "active"
    assert filter_key("Clear completed") is None and filter_key("Add") is None


def test_rows_try_checkboxes_first_and_edit_buttons_last() -> None:
    box = _control(kind="checkbox")
    delete = _control(name="×")
    edit = _control(name="Edit")
    icon = _control(kind="span", how="delegated")
    assert rank_row(box, "") < rank_row(delete, "") < rank_row(icon, "") < rank_row(edit, "")


def test_add_buttons_by_name_then_nearness() -> None:
    field = ":root > body:nth-child(2) > div:nth-child(1) > input:nth-child(1)"
    near = _control(path=":root > body:nth-child(2) > div:nth-child(1) > button:nth-child(2)", name="Go")
    far = _control(path=":root > body:nth-child(2) > footer:nth-child(9) > button:nth-child(1)", name="Help")
    named = _control(path=":root > body:nth-child(2) > footer:nth-child(9) > button:nth-child(2)", name="Add task")
    assert rank_add([far, near, named], field) == [named, near, far]


def test_trials_stop_at_the_cap_and_say_so() -> None:
    trials = Trials(cap=2)
    for i in range(2):
        assert trials.take()
        trials.add(f"c{i}", "click", "nothing changed", found="markup")
    assert not trials.take() and trials.capped
    assert trials.rows[0] == {"control": "c0", "found by": "markup", "action": "click", "effect": "nothing changed"}
