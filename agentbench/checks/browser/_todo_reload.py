"""The last phases of a to-do exploration: delete under a filter, then a reload.

After the rows and filters are known, the same page is used on: under the Active filter the
second task shown is deleted with the delete action the rows phase found (a delete by position in
the filtered list hits another task), then one untouched task is marked done and not done again,
and the page is reloaded: the tasks shown before must come back with the same done states, and the
deleted ones must stay gone (an app that deletes on screen but removes another task from storage
shows it only now).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ._find import settle

if TYPE_CHECKING:
    from ._page import PageSession
    from ._todo_app import TodoApp, TodoMap
    from ._todo_map import Names

__all__ = ["delete_under_filter", "reload_phase"]


async def delete_under_filter(s: PageSession, app: TodoApp, todo: TodoMap, names: Names) -> None:
    """Under Active, delete the 2nd task shown: exactly it goes, and the done ones stay."""
    facts = todo.delete_facts
    if todo.delete is None or "active" not in todo.filters:
        facts["note"] = "delete under a filter not tried: no Active filter was found"
        return
    state = await app.state(look=True)
    done = app.done(state)
    shown = [m for m, n in app.shown(state).items() if n == 1]
    active = [m for m in shown if done.get(m) is False]
    finished = [m for m in shown if done.get(m)]
    while len(active) < 3:
        task = names.next()
        await app.add(task)
        active.append(task)
    if not finished:
        facts["note"] = "delete under a filter not tried: no task was marked done"
        return
    await app.show("active")
    order = [m for m in app.visible_in_order(await app.state()) if m in set(active) | set(finished)]
    if sorted(order) != sorted(active):
        facts["note"] = f"delete under a filter not tried: Active showed {order}"
        return
    gone, kept = order[1], [order[0], *order[2:]]
    await app.use(todo.delete, gone)
    got = [m for m in app.shown_tasks(await app.state()) if m in set(active) | set(finished)]
    facts.setdefault("deleted", []).append(gone)
    facts.setdefault("steps", []).append({"step": f"filter Active, delete the 2nd shown ('{gone}')",
                                          "expected": sorted(kept), "shown": got})
    # Exactly that task goes; an app may show every task again after deleting (its view resets).
    if gone in got or not set(kept) <= set(got) or not set(got) <= {*kept, *finished}:
        facts.setdefault("problems", []).append(
            f"under Active, deleting '{gone}' left {got} shown, expected {sorted(kept)}")
    check = "done" if "done" in todo.filters else "all" if "all" in todo.filters else None
    if check:
        want = sorted(finished) if check == "done" else sorted([*finished, *kept])
        await app.show(check)
        got = [m for m in app.shown_tasks(await app.state()) if m in set(active) | set(finished)]
        facts["steps"].append({"step": f"filter {app.filter_name(check)}", "expected": want, "shown": got})
        if got != want:
            facts.setdefault("problems", []).append(
                f"after deleting '{gone}' under Active, {app.filter_name(check)} showed {got}, expected {want}")


async def _items(app: TodoApp, tasks: list[str]) -> list[dict[str, Any]]:
    state = await app.state(look=True)
    done = app.done(state)
    shown = app.shown(state)
    return [{"task": m, "times shown": shown.get(m, 0), "done": done.get(m)} for m in tasks]


async def _show_all(app: TodoApp) -> None:
    if "all" in app.map.filters:
        try:
            await app.show("all")
        except CheckError:
            pass  # the filter bar may be rendered only when there are tasks


async def reload_phase(s: PageSession, app: TodoApp, todo: TodoMap, names: Names) -> None:
    """Mark one task done and not done again, reload, and compare what shows before and after."""
    facts = todo.persist_facts
    await _show_all(app)
    state = await app.state(look=True)
    if todo.toggle is not None:
        task = names.next()
        await app.add(task)
        try:
            await app.use(todo.toggle, task)  # done, then not done again: the undo must be kept too
            await app.use(todo.toggle, task)
            facts["undone"] = task
        except CheckError as exc:  # a filtered view may hide it once done (no working All filter)
            facts["note"] = f"no task marked done and back before the reload: {exc}"
    state = await app.state(look=True)
    tasks = [m for m, n in app.shown(state).items() if n]
    await settle(s, 1.0)  # a person pauses before reloading; debounced saves run
    before = await _items(app, tasks)
    await s.reload()
    await asyncio.sleep(0.1)  # storage read asynchronously (IndexedDB) answers in real time
    await settle(s, 0.5)
    await _show_all(app)
    after = await _items(app, tasks)
    deleted = [*todo.delete_facts.get("removed", []), *todo.delete_facts.get("deleted", [])]
    now = app.shown(await app.state())
    facts.update(before=before, after=after, deleted=deleted, back=[m for m in deleted if now.get(m)])
