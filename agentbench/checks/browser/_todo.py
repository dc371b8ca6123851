"""To-do list probes: add, complete, delete, filter, persistence, escaping, empty-input.

Each check runs in a fresh page (its own storage) and uses the app as a person would: click the
task field, type, press Enter or click "Add", click a task's checkbox (or its done button, or its
text), click its delete button, click the All/Active/Done filters, reload. Tasks carry distinctive
texts so they can be found whatever markup the app chose (ul/li, divs, a table).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from .._model import CheckResult
from ._find import Absent, dom, run_checks_side_by_side, settle, value
from ._registry import ProbeContext, task_probes
from ._todo_app import AddBroken, TodoApp

if TYPE_CHECKING:
    from ._page import PageSession

__all__ = ["CHECK_IDS", "probe_todo"]

TASKS = ("Ant 41", "Bee 52", "Cat 63", "Dog 74", "Elk 85")  # short: typing is key by key
XSS_IMG = '<img src=x onerror="window.__xss=1">'
XSS_BOLD = "<b>bold</b>"
FILTERS = ("all", "active", "done")


def _result(check_id: str, ok: bool, good: str, bad: str, *evidence: Any, data: dict | None = None) -> CheckResult:
    return CheckResult(
        id=check_id,
        status="pass" if ok else "fail",
        detail=good if ok else bad,
        evidence=list(evidence),
        data=data or {},
    )


async def _check_add(s: PageSession) -> CheckResult:
    app = await TodoApp.open(s)
    a, b = TASKS[0], TASKS[1]
    app.tasks = [a, b]
    await app.type_task(a, "Enter")
    by_enter = app.shown(await app.state())[a]
    rows = [{"how": "typed + Enter", "task": a, "times shown": by_enter}]
    by_button = None
    if app.add_button:
        await app.type_task(b, "Add button")
        by_button = app.shown(await app.state())[b]
        rows.append({"how": "typed + clicked Add", "task": b, "times shown": by_button})
    problems = []
    if by_enter != 1:
        problems.append(
            f"Enter in the task field {'did not add the task' if by_enter == 0 else f'showed it {by_enter} times'}"
        )
    if by_button is not None and by_button != 1:
        problems.append(
            f"the Add button {'did not add the task' if by_button == 0 else f'showed it {by_button} times'}"
        )
    good = "Enter adds a task" + (" and so does the Add button" if by_button is not None else " (no Add button found)")
    return _result("add", not problems, good, "; ".join(problems), value("tasks added", rows))


async def _check_complete(s: PageSession) -> CheckResult:
    app = await TodoApp.open(s)
    a, b, c = TASKS[:3]
    await app.add(a, b, c)
    problems, rows = [], []
    before = app.done(await app.state(), a)
    if any(before.values()):
        problems.append(f"new tasks are shown done: {before}")
    how = ""
    for step, want in (("done", True), ("not done again", False), ("done again", True)):
        how = await app.toggle(b)
        shown = app.done(await app.state(), a)
        if how == "its text" and step == "done" and not shown.get(b):
            raise Absent("found no way to mark a task done: no checkbox or done button on it, and clicking its "
                         "text did not mark it done")
        rows.append(
            {
                "step": f"mark '{b}' {step} with {how}",
                "expected": {a: False, b: want, c: False},
                "shown": shown,
            }
        )
        if shown.get(b) != want:
            problems.append(f"clicking {how} did not show '{b}' as {step}")
        if shown.get(a) or shown.get(c):
            problems.append(f"after marking '{b}' {step}, another task was shown done")
    if app.has_filters("active", "done"):
        for key, want_tasks in (("active", [a, c]), ("done", [b])):
            await app.show(key)
            got = sorted(m for m, n in app.shown(await app.state()).items() if n)
            rows.append({"step": f"filter {app.filters[key]['text']!r}", "expected": want_tasks, "shown": got})
            if got != sorted(want_tasks):
                problems.append(f"under '{app.filters[key]['text']}' the list showed {got}, expected {want_tasks}")
    note = "" if app.has_filters("active", "done") else " (no Active/Done filters found to follow it)"
    return _result(
        "complete",
        not problems,
        f"{how} marks a task done and back; filters follow" + note,
        "; ".join(problems),
        value("steps", rows),
    )


async def _check_filter(s: PageSession) -> CheckResult:
    app = await TodoApp.open(s)
    a, b, c, d = TASKS[:4]
    await app.add(a, b, c, d)
    missing = [k for k in FILTERS if k not in app.filters]
    if missing:
        raise CheckError(
            f"found no filter control for {', '.join(missing)} (looked for buttons, tabs, "
            "links, radios and selects named All / Active / Done or Completed)"
        )
    await app.toggle(b)
    await app.toggle(d)
    if app.done(await app.state(), a) != {a: False, b: True, c: False, d: True}:
        raise CheckError("could not mark two tasks done to test the filters (see the complete check)")
    rows, problems = [], []
    for key, want in (("active", [a, c]), ("done", [b, d]), ("all", [a, b, c, d]), ("active", [a, c])):
        await app.show(key)
        got = sorted(m for m, n in app.shown(await app.state()).items() if n)
        rows.append({"filter": app.filters[key]["text"], "expected": want, "shown": got})
        if got != want:
            problems.append(f"'{app.filters[key]['text']}' showed {got}, expected {want}")
    return _result(
        "filter",
        not problems,
        "All, Active and Done show the right tasks",
        "; ".join(problems),
        value("filters", rows),
    )


async def _check_delete(s: PageSession) -> CheckResult:
    app = await TodoApp.open(s)
    a, b, c, d, e = TASKS
    await app.add(a, b, c, d, e)
    rows, problems = [], []
    deleted = [b]
    await app.delete(b)
    got = sorted(m for m, n in app.shown(await app.state()).items() if n)
    rows.append({"step": f"delete '{b}' (All)", "expected": sorted([a, c, d, e]), "shown": got})
    if got != sorted([a, c, d, e]):
        problems.append(f"deleting '{b}' left {got}")
    note = ""
    if app.has_filters("active"):
        await app.toggle(c)
        await app.show("active")
        order = app.visible_in_order(await app.state())
        if sorted(order) == sorted([a, d, e]):
            gone, kept = order[1], [order[0], order[2]]  # the 2nd task on screen, whatever the sort order
            await app.delete(gone)
            deleted.append(gone)
            got = sorted(m for m, n in app.shown(await app.state()).items() if n)
            rows.append(
                {
                    "step": f"filter Active, delete 2nd shown ('{gone}')",
                    "expected": sorted(kept),
                    "shown": got,
                }
            )
            if got != sorted(kept):
                problems.append(f"under Active, deleting '{gone}' left {got} shown, expected {sorted(kept)}")
            # The done task must survive: a delete by position in the filtered view hits it.
            check = "done" if app.has_filters("done") else "all" if app.has_filters("all") else None
            if check:
                want = [c] if check == "done" else sorted([c, *kept])
                await app.show(check)
                got = sorted(m for m, n in app.shown(await app.state()).items() if n)
                rows.append({"step": f"filter {app.filters[check]['text']}", "expected": want, "shown": got})
                if got != want:
                    problems.append(
                        f"after deleting '{gone}' under Active, {app.filters[check]['text']} showed "
                        f"{got}, expected {want}"
                    )
        else:
            note = f" (delete under a filter not tried: Active showed {order})"
    else:
        note = " (delete under a filter not tried: no Active filter found)"
    # What a person sees after a reload: the deleted tasks stay gone (an app that deletes on screen
    # but removes another task from storage shows it only now). Which of the others a reload shows
    # is the persistence check's (a restored filter may hide some).
    await settle(s, 1.0)
    await s.reload()
    await asyncio.sleep(0.1)
    await settle(s, 0.5)
    after = sorted(m for m, n in app.shown(await app.state()).items() if n)
    if after:  # tasks are kept at all
        back = sorted(set(after) & set(deleted))
        rows.append({"step": "reload", "deleted": deleted, "shown": after})
        if back:
            gone = sorted(set(app.tasks) - set(deleted) - set(after))
            problems.append(f"after a reload the deleted {back} came back" + (f" and {gone} were gone" if gone else ""))
    else:
        note += " (tasks are not kept across a reload, so deletion after one was not judged)"
    return _result(
        "delete",
        not problems,
        "delete removes exactly the chosen task, also after a reload" + note,
        "; ".join(problems),
        value("steps", rows),
    )


async def _items(app: TodoApp) -> list[dict[str, Any]]:
    state = await app.state()
    done = app.done(state, app.tasks[0])
    shown = app.shown(state)
    return [{"task": m, "times shown": shown[m], "done": done.get(m)} for m in app.tasks]


async def _check_persistence(s: PageSession) -> CheckResult:
    app = await TodoApp.open(s)
    a, b, c = TASKS[:3]
    await app.add(a, b, c)
    await app.toggle(b)
    await app.toggle(c)  # done, then not done again: the undo must be kept too
    await app.toggle(c)
    if app.has_filters("all"):
        await app.show("all")
    await settle(s, 1.0)  # a person pauses before reloading; debounced saves run
    before = await _items(app)
    await s.reload()
    await asyncio.sleep(0.1)  # storage read asynchronously (IndexedDB) answers in real time
    await settle(s, 0.5)
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
    bad = (
        f"after reload {len(lost)} of {len(before)} tasks were gone"
        if lost
        else "after reload the done states differ: " + "; ".join(flipped) if flipped
        else "after reload the tasks differ (shown more than once, or not as before)"
    )
    return _result(
        "persistence",
        ok,
        "the same tasks with the same done states (one undone) are there after a reload",
        bad,
        value("before reload", before),
        value("after reload", after),
    )


def _not_tried(check_id: str, exc: AddBroken) -> CheckResult:
    """A check that needs tasks, on a page where none can be added: nothing a person could see."""
    return CheckResult(id=check_id, status="skip", detail=f"not tried: {exc}")


async def _check_escaping(s: PageSession) -> CheckResult:
    try:
        app = await TodoApp.open(s)
        await app.add(TASKS[0])  # a plain task first: learns how to add and proves adding works
    except AddBroken as exc:
        return _not_tried("escaping", exc)
    # A field with maxlength cuts what is typed; the cut text is what must then read literally.
    cut = app.max_length if app.max_length > 0 else None
    img, bold = XSS_IMG[:cut], XSS_BOLD[:cut]
    rows = []
    for when in ("after adding", "after reload"):
        if when == "after adding":
            app.tasks += [XSS_IMG, XSS_BOLD]
            for text in (XSS_IMG, XSS_BOLD):
                await app.type_task(text)
        else:
            await s.reload()
        await settle(s, 0.3)
        await asyncio.sleep(0.3)  # the broken image's error event comes from the (real) network
        await settle(s, 0.1)
        marks = await dom(s, "markupCheck")
        page = await dom(s, "pageText")
        text = " ".join([page["text"], *page["values"]])
        flat = " ".join(text.split())
        rows.append(
            {
                "when": when,
                "window.__xss": marks["xss"],
                "img src=x elements": marks["imgs"],
                "<b>bold</b> elements": marks["bolds"],
                "img text shown": img in flat,
                "bold text shown": bold in flat,
                "plain task shown": TASKS[0] in flat,
            }
        )
    ran = any(r["window.__xss"] is not None or r["img src=x elements"] or r["<b>bold</b> elements"] for r in rows)
    # After a reload the markup tasks must still read literally, if the app keeps tasks at all.
    literal = all(r["img text shown"] and r["bold text shown"] for r in rows if r["plain task shown"])
    ok = not ran and literal and rows[0]["plain task shown"]
    bad = (
        "task text was run as HTML (an <img>/<b> element was created or its onerror ran)"
        if ran
        else "task text with <, > and quotes was not shown literally"
    )
    return _result("escaping", ok, "task text is shown literally and runs nothing", bad, value("markup tasks", rows))


async def _check_empty(s: PageSession) -> CheckResult:
    a, b, c = TASKS[:3]
    try:
        app = await TodoApp.open(s)
        await app.add(a, b)
    except AddBroken as exc:
        return _not_tried("empty-input", exc)
    state = await app.state()
    if not state["rows"]:
        raise CheckError("could not tell which element holds the task list")
    base = state["rows"]
    rows = [{"typed": f"'{a}', '{b}'", "rows": base["count"], "blank rows": base["blank"]}]
    attempts = [("nothing + Enter", "", "Enter"), ("3 spaces + Enter", "   ", "Enter")]
    if app.add_button:
        attempts += [("nothing + Add", "", "Add button"), ("2 spaces + Add", "  ", "Add button")]
    problems = []
    for label, text, how in attempts:
        await app.type_task(text, how)
        now = (await app.state())["rows"] or {}
        rows.append({"typed": label, "rows": now.get("count"), "blank rows": now.get("blank")})
        if now.get("blank", 0) > base["blank"]:  # a message shown in the list is not a task
            problems.append(f"{label} added a blank task")
            base = now
    app.tasks.append(c)
    await app.type_task(c)
    state = await app.state()
    times = app.shown(state)[c]
    rows.append(
        {
            "typed": f"'{c}' + {app.how} (once)",
            "rows": (state["rows"] or {}).get("count"),
            "times shown": times,
        }
    )
    if times != 1:
        problems.append(f"one {app.how} with '{c}' showed the task {times} times")
    return _result(
        "empty-input",
        not problems,
        "blank tasks are refused; one entry adds exactly one task",
        "; ".join(problems),
        value("rows in the list", rows),
    )


CHECKS = (
    ("add", _check_add),
    ("complete", _check_complete),
    ("delete", _check_delete),
    ("filter", _check_filter),
    ("persistence", _check_persistence),
    ("escaping", _check_escaping),
    ("empty-input", _check_empty),
)
CHECK_IDS = tuple(check_id for check_id, _ in CHECKS)


@task_probes("todo")
async def probe_todo(ctx: ProbeContext, only: Iterable[str] | None = None) -> list[CheckResult]:
    """Use the to-do app like a person; one result per check id, each from a pristine page.

    `only` limits the run to some check ids (tests of a fixture built to break one check).
    """
    return await run_checks_side_by_side(ctx, CHECKS, only)
