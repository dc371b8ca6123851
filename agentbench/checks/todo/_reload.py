"""The last phases of a to-do exploration: delete and mark done under a filter, then reloads.

After the rows and filters are known, the same page is used on: under the Active filter the
second task shown is deleted with the delete action the rows phase found (a delete by position in
the filtered list hits another task), and the last task shown is marked done (likewise: a tick by
position in the filtered list ticks another once a done task comes before it); then a task is
added and the page reloaded: the tasks shown before must come back with the same done states, and
the deleted ones must stay gone (an app that deletes on screen but removes another task from
storage shows it only now). Then each other kind of change is made alone and followed at once by a
reload (marking done, marking not done again, deleting): an app that saves the whole list on add
but nothing on ticking would otherwise have its ticks saved by the next add, by accident; after the
delete the other tasks keep their done states (done marks saved by position, apart from the tasks,
move to other tasks once a delete is saved without them). The tasks come back in the order they
were shown (compared within done and within not done).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import CheckError

if TYPE_CHECKING:
    from ..browser._page import PageSession
    from ._app import Names, TodoApp, TodoMap

__all__ = ["delete_under_filter", "reload_phase", "show_all", "toggle_under_filter"]


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


def _states(app: TodoApp, state: dict[str, Any], tasks: set[str]) -> dict[str, str]:
    """Each of ``tasks`` as shown: "done", "not done", "gone" ("?" when its look tells neither)."""
    shown, done = app.shown(state), app.done(state)
    return {m: "gone" if not shown.get(m) else "?" if done.get(m) is None else "done" if done[m] else "not done"
            for m in tasks}


async def toggle_under_filter(s: PageSession, app: TodoApp, todo: TodoMap, names: Names) -> None:
    """Under Active, mark the last task shown done: exactly it changes (an app that ticks by the
    row's place in the filtered list, used as an index into the whole list, ticks another task
    once a done task comes before it). Judged in the view that shows every task."""
    facts = todo.toggle_facts
    recipe = todo.marks_done
    whole = "all" if "all" in todo.filters else "done" if "done" in todo.filters else None
    if recipe is None or "active" not in todo.filters or whole is None:
        facts["filtered note"] = "marking done under a filter not tried: no Active filter (or no other) was found"
        return
    await app.show(whole)
    state = await app.state(look=True)
    if whole == "all":
        before = {m: v for m, v in _states(app, state, set(app.tasks)).items() if v in {"done", "not done"}}
        if sum(1 for m in app.tasks if before.get(m) == "not done") < 2:
            await app.add(names.next())
            state = await app.state(look=True)
            before = {m: v for m, v in _states(app, state, set(app.tasks)).items() if v in {"done", "not done"}}
    else:  # only Done and Active: the done tasks as Done shows them, the others as Active does
        before = {m: "done" for m, v in _states(app, state, set(app.tasks)).items() if v == "done"}
    if "done" not in before.values():
        facts["filtered note"] = "marking done under a filter not tried: no task was marked done"
        return
    await app.show("active")
    state = await app.state(look=True)
    order = [m for m in app.visible_in_order(state) if app.shown(state).get(m) == 1]
    if whole != "all":
        before.update({m: "not done" for m in order if app.done(state).get(m) is False})
    active = [m for m in order if before.get(m) == "not done"]
    if len(active) < 2 or any(before.get(m) != "not done" for m in order):
        facts["filtered note"] = f"marking done under a filter not tried: Active showed {order}"
        return
    task = active[-1]
    await app.use(recipe, task)
    await app.show(whole)
    after = _states(app, await app.state(look=True), set(before))
    if whole != "all":  # Done shows the done ones; the rest are read under Active
        await app.show("active")
        now = _states(app, await app.state(look=True), set(before))
        after = {m: after[m] if after[m] != "gone" else "not done" if now[m] == "not done" else "gone"
                 for m in before}
    step = f"filter {app.filter_name('active')}, mark the last shown ('{task}') done with {recipe.what}"
    changed = sorted(f"'{m}' {after[m]}" for m in before if m != task and after[m] not in {before[m], "?"})
    facts.setdefault("steps", []).append({"step": step, "changed": [f"'{task}' {after[task]}"],
                                          "others": changed})
    if after[task] == "?":
        facts["filtered note"] = f"after {step}, whether it was done could not be told"
    elif after[task] != "done" or changed:
        got = f"'{task}' was {after[task]}" + (f" and {', '.join(changed)}" if changed else "")
        facts.setdefault("problems", []).append(
            f"under {app.filter_name('active')}, marking the last shown task ('{task}') done with {recipe.what}: "
            f"{got}; only '{task}' should have changed")


async def _items(app: TodoApp, tasks: list[str]) -> list[dict[str, Any]]:
    """Each task as shown: how many times, whether done, and its place from the top among the
    tasks shown once (None where it is not shown once)."""
    state = await app.state(look=True)
    done = app.done(state)
    shown = app.shown(state)
    order = [m for m in app.visible_in_order(state) if m in set(tasks) and shown.get(m) == 1]
    return [{"task": m, "times shown": shown.get(m, 0), "done": done.get(m),
             "place": order.index(m) + 1 if m in order else None} for m in tasks]


async def show_all(app: TodoApp, expect: list[str] | None = None) -> None:
    """Use the All filter (a view kept across a reload may hide tasks), unless ``expect`` all show."""
    if "all" not in app.map.filters:
        return
    if expect is not None:
        shown = app.shown(await app.state())
        if all(shown.get(m) for m in expect):
            return
    try:
        await app.show("all")
    except CheckError:
        pass  # the filter bar may be rendered only when there are tasks


async def _reloaded(app: TodoApp, tasks: list[str]) -> None:
    await app.reload(tasks)
    await show_all(app, tasks)


async def _mark(app: TodoApp, todo: TodoMap, task: str, done: bool) -> bool:
    """Mark ``task`` done (or not done) with the row's action; whether it then shows so."""
    recipe = todo.toggle if not done else todo.marks_done
    words = "done" if done else "not done"
    if recipe is None:
        return False
    try:
        await app.use(recipe, task)
    except CheckError as exc:  # a filtered view may hide it once done (no working All filter)
        todo.persist_facts["note"] = f"marking '{task}' {words} before a reload was not tried: {exc}"
        return False
    if app.done(await app.state(look=True)).get(task) is not done:
        todo.persist_facts["note"] = f"'{task}' did not show as {words} after {recipe.what}, so no reload followed"
        return False
    return True


async def reload_phase(s: PageSession, app: TodoApp, todo: TodoMap, names: Names) -> None:
    """Add a task, mark it done and reload: the tasks shown before come back with the same done
    states (that one done: marking done is the last change, so no later save keeps it by accident)
    and the deleted ones stay gone. Then marking it not done again, and deleting another task, each
    alone and followed at once by a reload."""
    facts = todo.persist_facts
    rows = facts.setdefault("changes", [])
    await show_all(app)
    task = names.next()
    await app.add(task)
    facts["added"] = task
    marked = await _mark(app, todo, task, True)
    state = await app.state(look=True)
    tasks = [m for m, n in app.shown(state).items() if n]
    before = await _items(app, tasks)
    await _reloaded(app, tasks)
    after = await _items(app, tasks)
    deleted = [*todo.delete_facts.get("removed", []), *todo.delete_facts.get("deleted", [])]
    now = app.shown(await app.state())
    facts.update(before=before, after=after, deleted=deleted, back=[m for m in deleted if now.get(m)])
    if marked:
        rows.append({"change": f"added '{task}', marked it done ({todo.marks_done.what})",  # type: ignore[union-attr]
                     "after reload": _seen(after[tasks.index(task)])})
    lost = [q for q in after if not q["times shown"]]
    swapped = bool(lost) and len(lost) <= len(facts["back"])  # storage deleted others: the delete check's finding
    if any(q["times shown"] > max(1, p["times shown"]) or q["times shown"] and q["done"] != p["done"]
           for p, q in zip(before, after, strict=True)) or (lost and not swapped):
        # Changes are not kept in general (the persistence check's finding): whether one kind alone
        # is kept tells no more, and a deletion not kept would only say the same again.
        facts["note"] = "no change was tried alone: the reload after the add did not give back what was shown"
        return
    if marked and todo.toggle is not None and _seen(after[tasks.index(task)]) == "done":
        await _unmark_alone(app, todo, task)
    await _delete_alone(app, todo, task)


def _seen(item: dict[str, Any]) -> str:
    return "gone" if not item["times shown"] else "done" if item["done"] else "not done"


async def _unmark_alone(app: TodoApp, todo: TodoMap, task: str) -> None:
    """Mark ``task`` (done) not done again and reload at once: that too is kept by itself."""
    if not await _mark(app, todo, task, False):
        return
    shown = [m for m, n in app.shown(await app.state()).items() if n]
    await _reloaded(app, shown)
    seen = _seen((await _items(app, [task]))[0])
    assert todo.toggle is not None
    todo.persist_facts["changes"].append({"change": f"marked '{task}' not done ({todo.toggle.what})",
                                          "after reload": seen})
    if seen != "not done":
        todo.persist_facts.setdefault("problems", []).append(
            f"marking '{task}' not done was not kept: after a reload right after it, it was {seen}")


async def _delete_alone(app: TodoApp, todo: TodoMap, keep: str) -> None:
    """Delete one task (not ``keep``) and reload at once: it stays gone and the others stay."""
    if todo.delete is None:
        return
    shown = [m for m, n in app.shown(await app.state()).items() if n == 1]
    victim = next((m for m in shown if m != keep), None)
    if victim is None:
        return
    others = [m for m in shown if m != victim]
    try:
        await app.use(todo.delete, victim)
    except CheckError as exc:
        todo.delete_facts["note"] = f"deleting a task alone before a reload was not tried: {exc}"
        return
    state = await app.state(look=True)
    if app.shown(state).get(victim):
        return  # not deleted here: the rows phase judged how deleting works
    done = app.done(state)
    await _reloaded(app, others)
    state = await app.state(look=True)
    now, done_now = app.shown(state), app.done(state)
    lost = [m for m in others if not now.get(m)]
    # The others keep their done states: an app that saves done marks by position apart from the
    # tasks shows them on other tasks once a delete moved the positions.
    flipped = [f"'{m}' was {'done' if done[m] else 'not done'} before and {'done' if done_now[m] else 'not done'} after"
               for m in others if now.get(m) and done.get(m) is not None and done_now.get(m) is not None
               and done[m] != done_now[m]]
    seen = ("came back" if now.get(victim) else "stayed gone") + (f"; {lost} gone" if lost else "") + (
        f"; {', '.join(flipped)}" if flipped else "")
    todo.persist_facts["changes"].append({"change": f"deleted '{victim}' ({todo.delete.what})", "after reload": seen})
    if flipped:
        todo.persist_facts.setdefault("problems", []).append(
            f"after deleting '{victim}' and a reload right after it, the done states of others differ: "
            + "; ".join(flipped))
    if now.get(victim):
        also = f" and {lost} were gone" if lost else ""
        todo.delete_facts.setdefault("problems", []).append(
            f"deleting '{victim}' was not kept: after a reload right after it, it came back{also}")
