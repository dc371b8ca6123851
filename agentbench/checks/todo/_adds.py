"""The to-do exploration's first phase: which field takes a task, and which ways add it (Enter, an Add button).

See ``_map.py`` for the whole exploration; names only rank the candidates.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ..browser._explore import Control, Trials, act, controls, opaque_parts, return_to
from ..browser._find import dom, page_exceptions, tree_distance, type_into
from ._app import AddBroken, AddPath, Names, TodoApp, TodoMap

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["ADD_CAP", "answered", "find_adds", "rank_add"]

ADD_CAP = 14  # controls tried as the Add button when Enter adds nothing
_DEL = re.compile(r"delete|remove|trash|destroy|discard|erase|\bdel\b|✕|✖|×|✗|❌|🗑|^\s*x\s*$|xmark|close", re.I)
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
