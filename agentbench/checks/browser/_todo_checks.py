"""The to-do checks that replay what the exploration learnt on a pristine page of their own.

``delete`` (exactly the chosen task goes, under a filter too, and stays gone after a reload),
``persistence`` (the same tasks and done states after a reload), ``escaping`` (task text is shown
literally and runs nothing) and ``empty-input`` (every way that adds refuses a blank task).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from .._model import CheckResult
from ._find import dom, settle, value
from ._todo_app import AddBroken, TodoApp

if TYPE_CHECKING:
    from ._page import PageSession

__all__ = ["TASKS", "check_delete", "check_empty", "check_escaping", "check_persistence"]

TASKS = ("Ant 41", "Bee 52", "Cat 63", "Dog 74", "Elk 85")  # short: typing is key by key
XSS_IMG = '<img src=x onerror="alert(1)">'
XSS_BOLD = "<b>bold</b>"


def _result(check_id: str, ok: bool, good: str, bad: str, *evidence: Any) -> CheckResult:
    return CheckResult(id=check_id, status="pass" if ok else "fail", detail=good if ok else bad,
                       evidence=list(evidence))


def _tried(app: TodoApp) -> list:
    rows = app.map.tables.get("rows", [])
    return [value("what the exploration tried on a task's row", rows)] if rows else []


async def _reload(s: PageSession) -> None:
    await settle(s, 1.0)  # a person pauses before reloading; debounced saves run
    await s.reload()
    await asyncio.sleep(0.1)  # storage read asynchronously (IndexedDB) answers in real time
    await settle(s, 0.5)


async def check_delete(s: PageSession, app: TodoApp) -> CheckResult:
    recipe = app.map.delete
    if recipe is None:
        asked = app.map.delete_facts.get("asked")
        if asked:
            raise CheckError(f"deleting asks for confirmation ({asked}); the harness answers dialogs with Cancel, "
                             "so the deletion cannot be judged")
        if app.map.row_capped:
            raise CheckError(f"stopped after {app.map.row_tried} actions on a task's row (the cap) without finding "
                             "one that deletes it")
        return CheckResult(id="delete", status="fail", evidence=_tried(app),
                           detail=f"found no way to delete a task: tried {app.map.row_tried} action(s) on a task's "
                           "row (its controls, shown on hover too, its text clicked and double-clicked); none "
                           "removed it")
    a, b, c, d, e = TASKS
    await app.add(a, b, c, d, e)
    rows, problems, deleted = [], [], [b]
    await app.use(recipe, b)
    got = app.shown_tasks(await app.state())
    rows.append({"step": f"delete '{b}' with {recipe.what}", "expected": sorted([a, c, d, e]), "shown": got})
    if got != sorted([a, c, d, e]):
        problems.append(f"deleting '{b}' with {recipe.what} left {got}")
    note = ""
    if app.has_filters("active") and app.map.marks_done is not None:
        await app.use(app.map.marks_done, c)
        await app.show("active")
        order = app.visible_in_order(await app.state())
        if sorted(order) == sorted([a, d, e]):
            gone, kept = order[1], [order[0], order[2]]  # the 2nd task on screen, whatever the sort order
            await app.use(recipe, gone)
            deleted.append(gone)
            got = app.shown_tasks(await app.state())
            rows.append({"step": f"filter Active, delete 2nd shown ('{gone}')", "expected": sorted(kept), "shown": got})
            # Exactly that task goes; an app may show every task again after deleting (its view resets).
            if gone in got or not set(kept) <= set(got) or not set(got) <= {*kept, c}:
                problems.append(f"under Active, deleting '{gone}' left {got} shown, expected {sorted(kept)}")
            # The done task must survive: a delete by position in the filtered view hits it.
            check = "done" if app.has_filters("done") else "all" if app.has_filters("all") else None
            if check:
                want = [c] if check == "done" else sorted([c, *kept])
                await app.show(check)
                got = app.shown_tasks(await app.state())
                rows.append({"step": f"filter {app.filter_name(check)}", "expected": want, "shown": got})
                if got != want:
                    problems.append(f"after deleting '{gone}' under Active, {app.filter_name(check)} showed {got}, "
                                    f"expected {want}")
        else:
            note = f" (delete under a filter not tried: Active showed {order})"
    # After a reload the deleted tasks stay gone (an app that deletes on screen but removes another
    # task from storage shows it only now). Which of the others a reload shows is persistence's.
    await _reload(s)
    if app.has_filters("all"):
        try:
            await app.show("all")
        except CheckError:
            pass
    after = app.shown_tasks(await app.state())
    if after:
        back = sorted(set(after) & set(deleted))
        rows.append({"step": "reload", "deleted": deleted, "shown": after})
        if back:
            lost = sorted(set(app.tasks) - set(deleted) - set(after))
            problems.append(f"after a reload the deleted {back} came back" + (f" and {lost} were gone" if lost else ""))
    else:
        note += " (tasks are not kept across a reload, so deletion after one was not judged)"
    return _result("delete", not problems, f"{recipe.what} removes exactly the chosen task, also after a reload" + note,
                   "; ".join(problems), value("steps", rows))


async def _items(app: TodoApp) -> list[dict[str, Any]]:
    state = await app.state(look=True)
    done = app.done(state)
    shown = app.shown(state)
    return [{"task": m, "times shown": shown[m], "done": done.get(m)} for m in app.tasks]


async def check_persistence(s: PageSession, app: TodoApp) -> CheckResult:
    a, b, c = TASKS[:3]
    await app.add(a, b, c)
    if app.map.marks_done is not None:
        await app.use(app.map.marks_done, b)
    if app.map.toggle is not None:
        await app.use(app.map.toggle, c)  # done, then not done again: the undo must be kept too
        await app.use(app.map.toggle, c)
    if app.has_filters("all"):
        await app.show("all")
    before = await _items(app)
    await _reload(s)
    if app.has_filters("all"):
        try:
            await app.show("all")
        except CheckError:
            pass  # the filter bar may be rendered only when there are tasks
    after = await _items(app)
    ok = before == after and all(r["times shown"] == 1 for r in before)
    lost = [r["task"] for r, q in zip(before, after, strict=True) if q["times shown"] == 0]
    flipped = [f"'{r['task']}' was {'done' if r['done'] else 'not done'} before and "
               f"{'done' if q['done'] else 'not done'} after" for r, q in zip(before, after, strict=True)
               if q["times shown"] and r["done"] != q["done"]]
    bad = (f"after reload {len(lost)} of {len(before)} tasks were gone" if lost
           else "after reload the done states differ: " + "; ".join(flipped) if flipped
           else "after reload the tasks differ (shown more than once, or not as before)")
    what = "the same tasks with the same done states (one undone) are there after a reload"
    if app.map.marks_done is None:
        what = "the same tasks are there after a reload (no way to mark one done was found)"
    return _result("persistence", ok, what, bad, value("before reload", before), value("after reload", after))


async def check_escaping(s: PageSession, app: TodoApp) -> CheckResult:
    try:
        await app.add(TASKS[0])  # a plain task first: proves adding works here
    except AddBroken as exc:
        return CheckResult(id="escaping", status="skip", detail=f"not tried: {exc}")
    # A field with maxlength cuts what is typed; the cut text is what must then read literally.
    cut = app.map.max_length if app.map.max_length > 0 else None
    img, bold = XSS_IMG[:cut], XSS_BOLD[:cut]
    rows = []
    for when in ("after adding", "after reload"):
        dialogs = len(s.dialogs)
        if when == "after adding":
            app.tasks += [XSS_IMG, XSS_BOLD]
            for text in (XSS_IMG, XSS_BOLD):
                await app.type_task(text)
        else:
            await s.reload()
        await settle(s, 0.3)
        await asyncio.sleep(0.3)  # the broken image's error event comes from the (real) network
        await settle(s, 0.1)
        await s.refresh()
        marks = await dom(s, "injected")
        flat = " ".join(marks["text"].split())
        ran = [d for d in s.dialogs[dialogs:] if d.startswith("alert: 1")]
        rows.append({"when": when, "img src=x elements": marks["imgs"], "<b>bold</b> elements": marks["bolds"],
                     "its onerror ran (alert)": bool(ran), "img text shown": img in flat,
                     "bold text shown": bold in flat, "plain task shown": TASKS[0] in flat})
    ran = any(r["its onerror ran (alert)"] or r["img src=x elements"] or r["<b>bold</b> elements"] for r in rows)
    # After a reload the markup tasks must still read literally, if the app keeps tasks at all.
    literal = all(r["img text shown"] and r["bold text shown"] for r in rows if r["plain task shown"])
    ok = not ran and literal and rows[0]["plain task shown"]
    bad = ("task text was run as HTML (an <img>/<b> element was created or its onerror ran)" if ran
           else "task text with <, > and quotes was not shown literally")
    return _result("escaping", ok, "task text is shown literally and runs nothing", bad, value("markup tasks", rows))


async def check_empty(s: PageSession, app: TodoApp) -> CheckResult:
    a, b = TASKS[:2]
    try:
        await app.add(a, b)
    except AddBroken as exc:
        return CheckResult(id="empty-input", status="skip", detail=f"not tried: {exc}")
    state = await app.state()
    if not state["list"]:
        raise CheckError("could not tell which element holds the task list")
    base = state["list"]
    rows = [{"typed": f"'{a}', '{b}'", "rows": base["count"], "blank rows": base["blank"]}]
    problems = []
    # Every way that adds a task is tried on its own: Enter and the Add button may differ.
    for path in app.map.add_paths:
        for label, text in (("nothing", ""), ("3 spaces", "   ")):
            await app.type_task(text, path)
            now = (await app.state())["list"] or {}
            rows.append({"typed": f"{label} + {path.label}", "rows": now.get("count"), "blank rows": now.get("blank")})
            if now.get("blank", 0) > base["blank"]:  # a message shown in the list is not a task
                problems.append(f"{label} + {path.label} added a blank task")
                base = now
    for path, task in zip(app.map.add_paths, TASKS[2:], strict=False):
        app.tasks.append(task)
        await app.type_task(task, path)
        state = await app.state()
        times = app.shown(state)[task]
        rows.append({"typed": f"'{task}' + {path.label} (once)", "rows": (state["list"] or {}).get("count"),
                     "times shown": times})
        if times != 1:
            problems.append(f"one entry of '{task}' by {path.label} showed the task {times} times")
    return _result("empty-input", not problems, "blank tasks are refused; one entry adds exactly one task",
                   "; ".join(problems), value("rows in the list", rows))

