"""A to-do exploration's phase with two tasks of the same text: a person may add "milk" twice.

The task added last (shown once, not done) is added again; the second of the two rows (top to
bottom) is marked done, then deleted. Exactly that row must change each time: an app that finds a
task by its text ticks the first copy instead, or deletes both. Rows are told apart by position
only, so marking done is judged where positions can tell: when the rows kept their order and the
two copies are not the list's first rows, or done tasks are not kept on top (a done task moved to
the top would look like the first copy ticked). Both copies ticked, or both gone, is a defect
wherever the rows went. An app that refuses the same text twice has nothing to judge (a note).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._reload import show_all

if TYPE_CHECKING:
    from ..browser._page import PageSession
    from ._app import Names, TodoApp, TodoMap

__all__ = ["twins_phase"]


async def twins_phase(s: PageSession, app: TodoApp, todo: TodoMap, names: Names) -> None:
    """Add the last task's text again; mark the second copy done, then delete it: one row changes."""
    facts = todo.delete_facts
    if todo.delete is None and todo.marks_done is None:
        return
    await show_all(app)
    state = await app.state(look=True)
    shown, done = app.shown(state), app.done(state)
    twin = next((m for m in reversed(app.tasks) if shown.get(m) == 1 and done.get(m) is False), None)
    if twin is None:
        facts["twins note"] = "two tasks of the same text were not tried: no task shown once and not done"
        return
    await app.type_task(twin)
    state = await app.state(look=True)
    if app.shown(state).get(twin) != 2:
        facts["twins note"] = (f"adding '{twin}' a second time showed it {app.shown(state).get(twin, 0)} time(s): "
                               "two tasks of the same text were not tried")
        return
    others = sorted(m for m, n in app.shown(state).items() if n and m != twin)
    if todo.marks_done is not None and "all" in todo.filters:  # a filtered view may hide it once done
        state = await _mark_second(app, todo, twin, state)
    if todo.delete is None:
        return
    await app.use(todo.delete, twin, state, nth=1)
    now = app.shown(await app.state())
    left, gone = now.get(twin, 0), [m for m in others if not now.get(m)]
    facts.setdefault("steps", []).append({"step": f"add '{twin}' twice, delete the second with {todo.delete.what}",
                                          "expected": f"one '{twin}' left", "shown": f"{left} '{twin}'"
                                          + (f"; {gone} gone" if gone else "")})
    if left != 1 or gone:
        what = "both went" if not left else "neither went" if left == 2 else f"{left} were shown"
        facts.setdefault("problems", []).append(
            f"with two tasks '{twin}', deleting the second with {todo.delete.what}: {what}"
            + (f", and {gone} went too" if gone else ""))


async def _mark_second(app: TodoApp, todo: TodoMap, twin: str, state: dict) -> dict:
    """Mark the second copy of ``twin`` done: it alone shows done. Returns the page as read after."""
    recipe = todo.marks_done
    assert recipe is not None
    order = app.visible_in_order(state)
    await app.use(recipe, twin, state, nth=1)
    after = await app.state(look=True)
    marks = [todo.is_done(i["look"]) for i in app.copies(after, twin)]
    step = f"add '{twin}' twice, mark the second done with {recipe.what}"
    seen = ", ".join("done" if d else "not done" if d is False else "?" for d in marks)
    todo.toggle_facts.setdefault("steps", []).append({"step": step, "changed": [f"the two '{twin}': {seen}"]})
    # A done task moved to the top could read as the first copy ticked: judged where none can be,
    # the copies below the list's first row or a done task shown below one not done.
    rows = sorted((i["top"], i["left"], todo.is_done(i["look"])) for infos in state["items"].values()
                  for i in infos if i["shown"])
    done_below = any(d is True and any(e is False for _, _, e in rows[:n]) for n, (_, _, d) in enumerate(rows))
    kept_order = app.visible_in_order(after) == order and (order.index(twin) > 0 or done_below)
    if marks == [True, True]:
        wrong = "both were marked done"
    elif marks == [True, False] and kept_order:
        wrong = "the first was marked done instead, the second stayed not done"
    else:
        return after
    todo.toggle_facts.setdefault("problems", []).append(f"with two tasks '{twin}', marking the second done with "
                                                        f"{recipe.what}: {wrong}")
    return after
