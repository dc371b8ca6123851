"""The to-do checks that use what the exploration learnt on a pristine page of their own.

``escaping`` (task text is shown literally and runs nothing, also once marked done and under each
filter: an app may build only its Done view with innerHTML) and ``empty-input`` (every way that
adds refuses a blank task): both fill the list with what no other check wants to see.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from .._model import CheckResult
from ..browser._find import dom, rendered, settle, value
from ._app import AddBroken, TodoApp

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["TASKS", "check_empty", "check_escaping", "check_escaping_filtered"]

TASKS = ("Ant 41", "Bee 52", "Cat 63", "Dog 74", "Elk 85")  # short: typing is key by key
XSS_IMG = '<img src=x onerror="alert(1)">'
XSS_BOLD = "<b>bold</b>"


def _result(check_id: str, ok: bool, good: str, bad: str, *evidence: Any) -> CheckResult:
    return CheckResult(id=check_id, status="pass" if ok else "fail", detail=good if ok else bad,
                       evidence=list(evidence))


def _tried(app: TodoApp) -> list:
    rows = app.map.tables.get("rows", [])
    return [value("what the exploration tried on a task's row", rows)] if rows else []


IMAGE_LIMIT_S = 10.0  # real seconds for the browser to fail fetching an <img src=x>


async def _images_fetched(s: PageSession) -> None:
    """Wait until no image is being fetched (the broken image's error event comes from the network,
    outside the virtual clock), then for a rendered frame and the timers its handler started. A
    condition, not a span of time; should it never hold, the check reads what there is (waiting
    longer could only show more of what ran)."""
    deadline = time.monotonic() + IMAGE_LIMIT_S
    while await dom(s, "loadingImages") and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await rendered(s)
    await settle(s, 0.1)


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
        await _images_fetched(s)
        await s.refresh()
        marks = await dom(s, "injected", {"input": app.field})
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


async def _marks(s: PageSession, app: TodoApp, when: str) -> dict[str, Any]:
    dialogs = len(s.dialogs)
    await _images_fetched(s)
    await s.refresh()
    marks = await dom(s, "injected", {"input": app.field})
    ran = [d for d in s.dialogs[dialogs:] if d.startswith("alert: 1")]
    return {"when": when, "img src=x elements": marks["imgs"], "its onerror ran (alert)": bool(ran),
            "img text shown": XSS_IMG[:app.map.max_length if app.map.max_length > 0 else None]
            in " ".join(marks["text"].split())}


async def check_escaping_filtered(s: PageSession, app: TodoApp) -> CheckResult:
    """The markup task marked done, then each filter found shown: nothing it holds runs (a Done
    view built with innerHTML). Run once the exploration has found how to mark done and filter."""
    recipe = app.map.marks_done
    if recipe is None:
        return CheckResult(id="escaping", status="skip", detail="no way to mark a task done was found")
    cut = app.map.max_length if app.map.max_length > 0 else None
    try:
        await app.add(TASKS[0])
    except AddBroken as exc:
        return CheckResult(id="escaping", status="skip", detail=f"not tried: {exc}")
    img = XSS_IMG[:cut]
    app.tasks.append(img)
    await app.type_task(XSS_IMG)
    await settle(s, 0.3)
    rows = [await _marks(s, app, "after adding")]
    if not rows[0]["img text shown"] or rows[0]["img src=x elements"] or rows[0]["its onerror ran (alert)"]:
        raise CheckError("the markup task did not show literally when added (the first part's finding)")
    await app.use(recipe, img)
    await settle(s, 0.3)
    rows.append(await _marks(s, app, f"after marking it done ({recipe.what})"))
    for key in ("done", "active", "all"):
        if key in app.map.filters:
            await app.show(key)
            await settle(s, 0.3)
            rows.append(await _marks(s, app, f"under the filter {app.filter_name(key)}"))
    ran = [r["when"] for r in rows if r["img src=x elements"] or r["its onerror ran (alert)"]]
    return _result("escaping", not ran, "the markup task marked done runs nothing under any filter",
                   f"task text was run as HTML {ran[0]} (an <img src=x> was created or its onerror ran)" if ran else "",
                   value("the markup task marked done", rows))


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

