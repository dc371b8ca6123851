"""Exploring a to-do app once per page: which actions add a task, mark one done, delete one, filter.

One session, from a pristine page, tries what a person could act on and watches the effect:

1. add: type a task in the field and press Enter; then click the page's controls (an Add button
   first by name, then by nearness) after typing: a control after which exactly one row with the
   text appears is an Add button. Enter that does nothing while a button adds is no defect.
2. rows: on one task's row, every part a person could act on (its checkbox, under a label too;
   its buttons, shown on hover too; parts with a listener of their own or of an ancestor; its
   text, clicked and double-clicked) is used once. An action that changes the row's look and a
   second that changes it back marks done; an action that removes exactly that row deletes.
3. filters: with some tasks done, every page control (outside the rows) is used: one after which
   only the done tasks are shown is the Done filter, likewise Active and All.

Names only rank the candidates (a "Delete" button is tried before a bare span) and label the
evidence. All of it is recorded in the effect table the checks show.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ..browser._explore import Control, Trials, act, controls, listeners, opaque_parts, return_to
from ..browser._find import dom, mouse_away, page_exceptions, press, settle, tree_distance, type_into
from ..browser._page import PageBroken
from ._app import AddBroken, AddPath, Names, Recipe, TodoApp, TodoMap, changed_keys, look_diff, reverted
from ._filters import explore_filters
from ._reload import delete_under_filter, reload_phase

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["START_S", "explore_rows", "find_adds", "rank_row"]

ADD_CAP = 14  # controls tried as the Add button when Enter adds nothing
ROW_CAP = 16  # actions tried on rows
START_S = 0.5  # virtual seconds a page runs before the first input (a "document ready" that waits a timer)
_DEL = re.compile(r"delete|remove|trash|destroy|discard|erase|\bdel\b|✕|✖|×|✗|❌|🗑|^\s*x\s*$|xmark|close", re.I)
_TOG = re.compile(r"\bdone\b|complete|finish|\bcheck|toggle|\bmark|✓|✔|☐|☑|✅|undo|reopen|uncheck|restore", re.I)
_EDIT = re.compile(r"edit|pencil|rename|✎|✏|\bsave\b|cancel", re.I)
_ADD = re.compile(r"^\s*[+＋➕]\s*$|\badd\b|\bcreate\b|\bsubmit\b|\bsave\b|tambah|hinzuf|ajouter|añadir|"
                  r"agregar|aggiungi|adicionar|toevoegen|dodaj|ekle|добав|添加|追加|추가", re.I)
_ADD_CLASS = re.compile(r"(^|[\s_-])(add|plus|create|submit)([\s_-]|$)|fa-plus|bi-plus|icon-plus", re.I)
_FIELD_HINT = re.compile(r"task|to-?do|add|what|new|item|enter|tugas|tarefa|aufgabe|tâche|tarea", re.I)


def _shown_words(n: int) -> str:
    return {0: "nothing was added", 1: "shown once"}.get(n, f"shown {n} times")


def rank_add(cands: list[Control], field: str) -> list[Control]:
    """Add-button candidates, likeliest first: named or classed as Add, the field's form, then nearest."""
    def key(c: Control) -> tuple[int, int]:
        named = bool(_ADD.search(c.name) or _ADD_CLASS.search(c.cls))
        kind = 0 if c.kind in {"button", "link", "button-role"} or c.how != "delegated" else 1
        bad = bool(_DEL.search(c.name)) or c.kind in {"checkbox", "radio", "select", "field", "editable"}
        return (2 if bad else 0 if named else 1 + kind, tree_distance(c.target, field))
    return sorted(cands, key=key)


async def find_adds(s: PageSession, todo: TodoMap, names: Names, trials: Trials) -> TodoApp:
    """Learn the task field and the ways that add a task (Enter, an Add button); AddBroken if none."""
    fields = await dom(s, "fields")
    fields.sort(key=lambda f: (f["kind"] == "editable", 0 if _FIELD_HINT.search(f["hint"]) else 1, f["top"]))
    if not fields:
        hidden = await opaque_parts(s)
        if hidden:
            raise CheckError(f"found no field to type a task into; the page has parts that cannot be seen into "
                             f"({', '.join(hidden[:3])})")
        raise AddBroken("the page has no field to type a task into, so no task can be added")
    app: TodoApp | None = None
    for f in fields[:2]:
        todo.field, todo.max_length = f["path"], int(f.get("maxLength") or -1)
        app = TodoApp(s, todo, exploring=True)
        await _try_adds(s, app, todo, names, trials)
        if todo.add_paths:
            break
    assert app is not None
    if not todo.add_paths and todo.add_prompt:
        raise CheckError(f"adding may go through a browser prompt ({todo.add_prompt}); the harness answers "
                         "dialogs with Cancel, so adding cannot be judged")
    if not todo.add_paths:
        tried = ", ".join(todo.add_controls[:8]) or "none found"
        more = "" if len(todo.add_controls) <= 8 else f" and {len(todo.add_controls) - 8} more"
        raise AddBroken(f"no task can be added: typed a task and pressed Enter, and clicked {len(todo.add_controls)} "
                        f"control(s) after typing ({tried}{more}): none showed it")
    # The way that adds exactly once comes first; one that adds twice still adds (judged by `add`).
    todo.add_paths.sort(key=lambda p: todo.add_tries.get(p.label, 0) != 1)
    app.path = todo.add_paths[0]
    return app


async def _try_adds(s: PageSession, app: TodoApp, todo: TodoMap, names: Names, trials: Trials) -> None:
    task = names.next()
    app.tasks.append(task)
    errors = len(s.errors)
    await app.type_task(task, AddPath("Enter"))
    n = app.shown(await app.state())[task]
    todo.add_tries["Enter"] = n
    thrown = page_exceptions(s.errors[errors:])
    if thrown and n:
        todo.add_threw.append(f"adding '{task}' by Enter threw {thrown[0]}")
    threw = f"; threw {thrown[0]}" if thrown else ""
    trials.add("the task field", f"typed '{task}' + Enter", _shown_words(n) + threw,
               found="the page's text field")
    if n:
        todo.add_paths.append(AddPath("Enter"))
    else:
        app.tasks.remove(task)
    state = await app.state()
    rows = [i["row"] for infos in state["items"].values() for i in infos if i["shown"]]
    # A form is submitted by Enter or its button, never clicked; the field's own label only focuses it.
    cands = [c for c in await controls(s, exclude=[app.field, *rows])
             if c.kind not in {"form", "field", "editable"} and not (c.kind == "label" and c.how == "markup")]
    cands = rank_add(cands, app.field)
    if n:  # Enter adds: look only for a control that says it adds
        cands = [c for c in cands if len(c.name) <= 24 and (_ADD.search(c.name) or _ADD_CLASS.search(c.cls))][:2]
    for c in cands[:ADD_CAP]:
        if not trials.take():
            break
        task = names.next()
        app.tasks.append(task)
        await type_into(s, app.field, task, "the task field")
        errors, url, dialogs = len(s.errors), s.page.url, len(s.dialogs)
        await act(s, c, "click")
        todo.add_controls.append(c.describe())
        await s.refresh()
        state = await app.state()
        k = app.shown(state)[task]
        thrown = page_exceptions(s.errors[errors:])
        effect = _shown_words(k) if k else _page_effect(state, task, url, s.page.url)
        prompts = [d for d in s.dialogs[dialogs:] if d.startswith("prompt")]
        if prompts and not k:
            todo.add_prompt = todo.add_prompt or f"{c.describe()} asked '{prompts[0]}'"
            effect += f" (asked '{prompts[0]}', answered {answered(s, prompts[0])})"
        trials.add(c, f"typed '{task}' + click", effect + (f"; threw {thrown[0]}" if thrown else ""))
        if not k:
            app.tasks.remove(task)
        else:
            path = AddPath("button", c)
            todo.add_tries[path.label] = k
            if thrown:
                todo.add_threw.append(f"adding '{task}' by {path.label} threw {thrown[0]}")
            todo.add_paths.append(path)
            return
        await return_to(s, url)  # the control went to another page of the artefact: back to the app


def answered(s: PageSession, dialog: str) -> str:
    """How the harness answered a dialog the page opened ("confirm: Remove?" -> "OK" in a to-do session)."""
    if dialog.startswith("confirm"):
        return "OK" if s.confirm else "Cancel"
    return "Cancel" if dialog.startswith("prompt") else "closed"


def _page_effect(state: dict[str, Any], task: str, url: str, now: str) -> str:
    if now != url:
        return f"went to {now.rsplit('/', 1)[-1] or now}"
    if state["page"]["fieldValue"] is not None and task not in (state["page"]["fieldValue"] or ""):
        return "nothing was added; the field was cleared"
    return "nothing was added"


def rank_row(c: Control, holder_rel: str) -> float:
    """Row parts, most likely first: checkbox, done/delete by name, buttons, own listeners, icons, text."""
    words = f"{c.name} {c.cls}"
    if _EDIT.search(words) and not _DEL.search(c.name):
        return 9
    if c.kind in {"checkbox", "switch"} or c.kind == "radio":
        return 0
    if _TOG.search(words) and not _DEL.search(words):
        return 1
    if _DEL.search(words):
        return 2
    if c.kind in {"button", "link"}:
        return 3
    if c.how == "listener":
        return 4
    if not c.name.strip():
        return 5  # an icon or a CSS-drawn ×: no text of its own
    return 6


async def _row_candidates(s: PageSession, app: TodoApp, task: str) -> list[tuple[float, Recipe]]:
    state = await app.state()
    info = app.item(state, task)
    if info is None:
        return []
    row = info["row"]
    holder_rel = await dom(s, "relOf", {"root": row, "el": info["holder"]})
    listening = await listeners(s)
    plain = {c.target for c in await controls(s, scope=row, listening=listening)}
    await act(s, row, "hover", f"the row of '{task}'")
    found = await controls(s, scope=row, listening=listening)
    out: list[tuple[float, Recipe]] = []
    seen: set[tuple[str, str]] = set()
    for c in found:
        if c.kind in {"field", "select"} and not c.hidden_input:
            continue
        rel = await dom(s, "relOf", {"root": row, "el": c.target})
        hover = c.target not in plain
        what = ("its checkbox" if c.kind == "checkbox" else "its text" if rel == holder_rel else
                "its row" if rel == "" else c.describe())
        by = c.found_by + (", shown on hover" if hover else "")
        seen.add((rel, "click"))
        out.append((rank_row(c, holder_rel), Recipe(rel, "click", what, by, hover)))
    for rel, action, what, rank in ((holder_rel, "click", "its text", 3.5), (holder_rel, "dblclick", "its text", 7),
                                    ("", "dblclick", "the row", 8)):
        if (rel, action) not in seen:
            seen.add((rel, action))
            out.append((rank, Recipe(rel, action, ("double-click on " if action == "dblclick" else "") + what,
                                     "the task's text" if rel == holder_rel else "the task's row")))
    return sorted(out, key=lambda x: x[0])


async def explore_rows(s: PageSession, app: TodoApp, todo: TodoMap, names: Names, trials: Trials) -> None:
    """Try each part of a task's row until one marks it done (and back) and one deletes it."""
    shown = app.shown(await app.state())
    fresh = [t for t in app.tasks if shown.get(t) == 1]
    while len(fresh) < 3:
        task = names.next()
        await app.add(task)
        fresh.append(task)
    target = fresh[1]
    cands = await _row_candidates(s, app, target)
    last: dict[str, Any] | None = None  # the page as the last action left it, when that changed nothing
    for _, recipe in cands:
        if todo.toggle and todo.delete:
            break
        if (todo.toggle and recipe.rel == todo.toggle.rel and recipe.action == "click") or not trials.take():
            continue
        if target not in fresh:
            fresh = [t for t in fresh if app.shown(await app.state()).get(t) == 1]
            while len(fresh) < 3:
                task = names.next()
                await app.add(task)
                fresh.append(task)
            target = fresh[1]
        todo.row_tried += 1
        done, last = await _try_on_row(s, app, todo, recipe, target, trials, last)
        if done:
            fresh.remove(target)
            last = None
    todo.row_capped = trials.capped and not (todo.toggle and todo.delete)


async def _use_again(s: PageSession, app: TodoApp, recipe: Recipe, task: str, was: dict[str, Any]) -> dict[str, Any]:
    """Use a recipe once more on the page as read in ``was`` and read it again; a handler that waits
    for a possible double-click acts a moment later, so an unchanged look is read after that moment."""
    await app.use(recipe, task, was)
    state = await app.state(look=True)
    now, then = app.item(state, task), app.item(was, task)
    if now is not None and then is not None and now["look"] == then["look"]:
        await settle(s, 0.4)
        state = await app.state(look=True)
    return state


def _deleted(todo: TodoMap, recipe: Recipe, task: str, others: list[str], thrown: list[str]) -> None:
    if thrown:
        todo.delete_facts.setdefault("problems", []).append(f"deleting '{task}' threw {thrown[0]}")
    if todo.delete is None:
        todo.delete = recipe
        todo.delete_facts.setdefault("steps", []).append(
            {"step": f"delete '{task}' with {recipe.what}", "expected": sorted(others), "shown": sorted(others)})
    todo.delete_facts.setdefault("removed", []).append(task)


async def _try_on_row(s: PageSession, app: TodoApp, todo: TodoMap, recipe: Recipe, task: str,
                      trials: Trials, before: dict[str, Any] | None) -> tuple[bool, dict[str, Any] | None]:
    """Use one recipe on a fresh task's row and record its effect.

    Returns (whether the task is no longer fresh, the page as read after when nothing changed).
    ``before``: the page as the last action left it (it changed nothing), else None.
    """
    errors = len(s.errors)
    if before is None:
        await mouse_away(s)  # hover styling must not read as the action's effect
        before = await app.state(look=True)
    others = [m for m, n in app.shown(before).items() if n and m != task]
    dialogs, url = len(s.dialogs), s.page.url
    try:
        await app.use(recipe, task, before)
    except CheckError as exc:
        trials.add(recipe.what, recipe.action, f"could not be used: {exc}", found=recipe.found_by)
        return False, None
    if await return_to(s, url):
        trials.add(recipe.what, recipe.action, "went to another page (went back)", found=recipe.found_by)
        return True, None
    await s.refresh()
    after = await app.state(look=True)
    asked = s.dialogs[dialogs:]
    say = f"{recipe.action} on '{task}'"
    shown_before = {c["path"] for c in before["page"]["confirm"]}
    box = [c for c in after["page"]["confirm"] if c["path"] not in shown_before]
    if box and not asked:  # the page asks in a box of its own: answered yes, as the person who asked
        recipe = replace(recipe, confirm=box[0]["name"])
        await app.answer(recipe.confirm, before["page"]["confirm"])
        await s.refresh()
        after = await app.state(look=True)
        say += f", then '{recipe.confirm}'"
    gone = [m for m in others if not app.shown(after).get(m)]
    b, a = app.item(before, task), app.item(after, task)
    if a is None:
        present = any(after["items"][task])
        if gone:
            trials.add(recipe.what, say, f"removed '{task}' and also {gone}", found=recipe.found_by)
        elif present:
            trials.add(recipe.what, say, f"hid '{task}' (still in the page)", found=recipe.found_by)
        else:
            trials.add(recipe.what, say, f"removed exactly '{task}'", found=recipe.found_by)
            _deleted(todo, recipe, task, others, page_exceptions(s.errors[errors:]))
        return True, None
    # Editing: the text became a field, or focus went into one in the row (apps that show every task
    # in a field of its own are not "editing" by that alone).
    if (a["field"] and not b["field"]) or (a["editing"] and not b["editing"]):
        trials.add(recipe.what, say, "made the task's text editable", found=recipe.found_by)
        await press(s, "Escape")
        await settle(s, 0.2)
        return True, None
    diff = look_diff(b["look"] or {}, a["look"] or {})
    if not diff and not asked:  # a click that waits for a possible double-click acts a moment later
        await settle(s, 0.4)
        after = await app.state(look=True)
        a = app.item(after, task)
        if a is None:
            trials.add(recipe.what, say, f"removed exactly '{task}' after a moment", found=recipe.found_by)
            _deleted(todo, recipe, task, others, page_exceptions(s.errors[errors:]))
            return True, None
        diff = look_diff(b["look"] or {}, a["look"] or {})
    if not diff:
        answer = answered(s, asked[0]) if asked else ""
        words = "nothing changed" + (f" (asked '{asked[0]}', answered {answer})" if asked else "")
        if answer == "Cancel":
            todo.delete_facts.setdefault("asked", asked[0])
        trials.add(recipe.what, say, words, found=recipe.found_by)
        return False, after
    also = f"; also changed {gone}" if gone else ""
    trials.add(recipe.what, say, "; ".join(diff[:4]) + also, found=recipe.found_by)
    if todo.toggle or gone:
        return True, None
    # Changed its look: a second use should change it back, a third mark it again.
    steps = [{"step": f"{recipe.what}: mark '{task}'", "changed": diff[:4], "others changed": gone}]
    back = await _use_again(s, app, recipe, task, after)
    b2 = app.item(back, task)
    undo = look_diff(b["look"] or {}, b2["look"] or {}) if b2 else ["the task disappeared"]
    back_ok = b2 is not None and reverted(b["look"] or {}, a["look"] or {}, b2["look"] or {})
    said = ["back as before"] if not undo else [f"back, still: {', '.join(undo[:2])}"] if back_ok else undo[:4]
    steps.append({"step": f"{recipe.what} again", "changed": said,
                  "others changed": [m for m in others if not app.shown(back).get(m)]})
    if not back_ok:
        trials.add(recipe.what, f"{recipe.action} again", "did not change it back: " + "; ".join(undo[:3]),
                   found=recipe.found_by)
        todo.one_way = todo.one_way or recipe
        todo.toggle_facts = {"steps": steps, "reverted": False, "first": diff}
        todo.undone_look, todo.done_look = b["look"], a["look"]
        return True, None
    trials.add(recipe.what, f"{recipe.action} again", "changed it back", found=recipe.found_by)
    again = await _use_again(s, app, recipe, task, back)
    a3 = app.item(again, task)
    third = look_diff(b["look"] or {}, a3["look"] or {})[:4] if a3 else ["the task disappeared"]
    steps.append({"step": f"{recipe.what} a third time", "changed": third,
                  "others changed": [m for m in others if not app.shown(again).get(m)]})
    todo.toggle = recipe
    todo.undone_look, todo.done_look = b["look"], a["look"]
    marked = changed_keys(b["look"] or {}, a["look"] or {})
    again_ok = a3 is not None and not marked & changed_keys(a["look"] or {}, a3["look"] or {})
    todo.toggle_facts = {"steps": steps, "reverted": True, "again": again_ok,
                         "first": diff, "task": task, "threw": page_exceptions(s.errors[errors:])}
    return True, None


async def explore_todo(s: PageSession, todo: TodoMap, on_adds: Any = None) -> TodoMap:
    """The whole exploration in one session; ``on_adds(todo)`` is called once the add paths are known."""
    names, trials = Names(), Trials(cap=ADD_CAP + 2)
    await settle(s, START_S)  # a person looks at the page a moment before typing: it finishes setting up
    try:
        app = await find_adds(s, todo, names, trials)
    finally:
        todo.tables["add"] = trials.rows
    if on_adds is not None:
        on_adds(todo)
    rows, filters = Trials(cap=ROW_CAP), Trials(cap=24)
    todo.tables["rows"], todo.tables["filters"] = rows.rows, filters.rows
    # A gap in one phase is that phase's checks' (an `error` saying why), not the whole map's.
    await _phase(todo, "rows", explore_rows(s, app, todo, names, rows))
    await _phase(todo, "filters", explore_filters(s, app, todo, names, filters))
    await _phase(todo, "delete", delete_under_filter(s, app, todo, names))
    await _phase(todo, "reload", reload_phase(s, app, todo, names))
    return todo


async def _phase(todo: TodoMap, name: str, phase: Any) -> None:
    try:
        await phase
    except PageBroken:
        raise
    except AddBroken as exc:  # adding worked at first and then stopped: the add check's finding
        todo.add_threw.append(f"adding stopped working: {exc}")
        todo.phase_errors[name] = str(exc)
    except CheckError as exc:
        todo.phase_errors[name] = str(exc)
