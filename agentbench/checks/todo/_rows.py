"""The to-do exploration's second phase: on one task's row, which part marks it done and which deletes it.

See ``_map.py`` for the whole exploration; names only rank the candidates.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ..browser._explore import Control, Trials, act, controls, listeners, return_to
from ..browser._find import dom, mouse_away, page_exceptions, press, settle
from ._adds import _DEL, answered
from ._app import Names, Recipe, TodoApp, TodoMap, changed_keys, look_diff, reverted
from ._swipe import SWIPES, TOUCHED

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["ROW_CAP", "explore_rows", "rank_row"]

ROW_CAP = 16  # actions tried on rows
REVEALED_CAP = 4  # parts an action showed in a row (a menu's items), tried after opening it the same way
_TOG = re.compile(r"\bdone\b|complete|finish|\bcheck|toggle|\bmark|✓|✔|☐|☑|✅|undo|reopen|uncheck|restore", re.I)
_EDIT = re.compile(r"edit|pencil|rename|✎|✏|\bsave\b|cancel", re.I)


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


def swipe_recipes(listening: dict[str, list[str]]) -> list[Recipe]:
    """The drags to try on a row, in order: the mouse left and right; then a finger left and right,
    only where some element listens for touch (else a finger sends what the mouse did: pointer events)."""
    touch = any(TOUCHED & set(kinds) for kinds in listening.values())
    out = []
    for action, (way, finger) in SWIPES.items():
        if finger and not touch:
            continue
        side = "left" if way < 0 else "right"
        out.append(Recipe("", action, f"a {'finger' if finger else 'mouse'} swipe of its row to the {side}",
                          "no part of the row deleted it" + (" (the page listens for touch)" if finger else "")))
    return out


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
    known = {(r.rel, r.action) for _, r in cands}
    last: dict[str, Any] | None = None  # the page as the last action left it, when that changed nothing
    swiped = False
    while True:
        if not cands:
            # Nothing on the row deleted it: a person then drags the row aside (a swipe list). Tried
            # last and bounded (SWIPES: at most four drags, each a line of the table).
            if todo.delete is not None or swiped:
                break
            swiped = True
            cands = [(10, r) for r in swipe_recipes(await listeners(s))]
            last = None  # a drag starts from the page as it is, read afresh
            continue
        _, recipe = cands.pop(0)
        if todo.toggle and todo.delete:
            break
        if recipe.action in SWIPES:
            if todo.delete is not None:
                break
        elif (todo.toggle and recipe.rel == todo.toggle.rel and recipe.action == "click") or not trials.take():
            continue
        if target not in fresh:
            fresh = [t for t in fresh if app.shown(await app.state()).get(t) == 1]
            while len(fresh) < 3:
                task = names.next()
                await app.add(task)
                fresh.append(task)
            target = fresh[1]
        todo.row_tried += 1
        shown: list[tuple[float, Recipe]] = []
        done, last = await _try_on_row(s, app, todo, recipe, target, trials, last, shown)
        # Parts the action showed (a menu opened by a row's '⋯'): tried next, each opened the same way.
        fresh_parts = [(rank, r) for rank, r in shown if (r.rel, r.action) not in known][:REVEALED_CAP]
        known |= {(r.rel, r.action) for _, r in fresh_parts}
        cands = sorted(fresh_parts + cands, key=lambda x: x[0])
        if done:
            fresh.remove(target)
            last = None
    todo.row_capped = trials.capped and not (todo.toggle and todo.delete)


async def _revealed(s: PageSession, app: TodoApp, opener: Recipe, task: str,
                    state: dict[str, Any]) -> list[tuple[float, Recipe]]:
    """The row's parts a person could act on now, each as a recipe that first uses ``opener`` (the
    click that showed them, a menu's '⋯') on the row; those known before are left out by the caller."""
    info = app.item(state, task)
    if info is None:
        return []
    row = info["row"]
    out: list[tuple[float, Recipe]] = []
    for c in await controls(s, scope=row):
        if c.kind in {"field", "select"} and not c.hidden_input:
            continue
        rel = await dom(s, "relOf", {"root": row, "el": c.target})
        if rel == opener.rel:
            continue
        out.append((rank_row(c, ""), Recipe(rel, "click", f"{opener.what}, then {c.describe()}",
                                            f"{c.found_by}, shown by {opener.what}", opener.hover, opener=opener.rel)))
    return out


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


def _wrong(todo: TodoMap, recipe: Recipe, task: str, effect: str) -> None:
    """A row's action removed other tasks than its own: the delete check's finding when no action
    removes exactly the chosen task (the wrong task deleted, not 'no way to delete')."""
    todo.delete_facts.setdefault("wrong", []).append(f"{recipe.what} used on '{task}' {effect}")


async def _try_on_row(s: PageSession, app: TodoApp, todo: TodoMap, recipe: Recipe, task: str,
                      trials: Trials, before: dict[str, Any] | None,
                      shown: list[tuple[float, Recipe]]) -> tuple[bool, dict[str, Any] | None]:
    """Use one recipe on a fresh task's row and record its effect.

    Returns (whether the task is no longer fresh, the page as read after when nothing changed).
    ``before``: the page as the last action left it (it changed nothing), else None. ``shown``
    receives the row's parts a click showed (a menu it opened), to be tried after that click.
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
            _wrong(todo, recipe, task, f"removed '{task}' and also {gone}")
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
        gone = [m for m in others if not app.shown(after).get(m)]
    if not diff and gone:  # the task is as it was, but others went: it deleted the wrong one
        trials.add(recipe.what, say, f"removed {gone} instead of '{task}'", found=recipe.found_by)
        _wrong(todo, recipe, task, f"removed {gone} instead of '{task}'")
        return True, None
    if not diff:
        answer = answered(s, asked[0]) if asked else ""
        words = "nothing changed" + (f" (asked '{asked[0]}', answered {answer})" if asked else "")
        if answer == "Cancel":
            todo.delete_facts.setdefault("asked", asked[0])
        trials.add(recipe.what, say, words, found=recipe.found_by)
        return False, after
    also = f"; also changed {gone}" if gone else ""
    trials.add(recipe.what, say, "; ".join(diff[:4]) + also, found=recipe.found_by)
    if "a part shown" in diff and recipe.action == "click" and not recipe.opener and not recipe.confirm:
        shown.extend(await _revealed(s, app, recipe, task, after))
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
