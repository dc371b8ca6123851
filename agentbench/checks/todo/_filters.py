"""Exploring a to-do app's filters by effect: which control shows only done, only not-done, or all tasks.

With some tasks marked done (by the action the row exploration found), every control outside the
rows is used once (each option of a select): the one after which exactly the done tasks are shown
is the Done filter, exactly the others the Active filter, all of them again the All filter. Names
rank the candidates (a control called "Completed" is tried first, "Clear completed" last) and
label the evidence; a control named for one filter that shows another's tasks is noted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ..browser._explore import Control, Trials, controls, return_to
from ..browser._find import page_exceptions, tree_distance
from ._app import OPEN, use_filter

if TYPE_CHECKING:
    from ..browser._page import PageSession
    from ._app import Names, TodoApp, TodoMap

__all__ = ["explore_filters", "filter_key"]

_FILTER_RE = {
    "done": re.compile(r"^(show )?(done|completed?|finished|closed|checked|selesai|erledigt|termin[ée]e?s?|"
                       r"hechas?|completadas?|conclu[ií]das?)( (tasks|items|todos|ones))?( \d+)?$"),
    "active": re.compile(r"^(show )?(active|pending|remaining|to ?do|todo|open|incomplete|not done|undone|"
                         r"uncompleted?|in progress|belum( selesai)?|offen|actives?|pendientes?|pendentes?)"
                         r"( (tasks|items|todos|ones))?( \d+)?$"),
    "all": re.compile(r"^(show )?(all|semua|alle|tous|toutes|todas?|todos)( (tasks|items|todos))?( \d+)?$"),
}
_DESTRUCTIVE = re.compile(r"clear|delete|remove|reset|toggle.?all|mark.?all|all.?(as )?(done|complete)|"
                          r"complete.?all|check.?all|select.?all|\bundo\b|trash|destroy", re.I)
_ORDER = ("done", "active", "all")


def filter_key(*texts: str) -> str | None:
    """The filter a name says ("Completed" -> "done", "#/active" -> "active"), else None."""
    for text in texts:
        t = re.sub(r"[^\w ]+", " ", text.lower().replace("#/", " "))
        t = re.sub(r"\s+", " ", t).strip()
        for key, rx in _FILTER_RE.items():
            if t and rx.match(t):
                return key
    return None


def _actions(cands: list[Control], near: str = "") -> list[tuple[int, Control, str, str]]:
    """(rank, control, action, name) for every way to use each candidate, likeliest filter first;
    among equals, the ones nearest the list (``near``) first."""
    out = []
    for c in cands:
        if c.kind in {"field", "editable"}:
            continue
        if c.kind == "select":
            for i, option in enumerate(c.options[:8]):
                key = filter_key(option)
                out.append((_ORDER.index(key) if key else 4, c, f"select:{i}", option))
            continue
        key = filter_key(c.name, c.href)
        if _DESTRUCTIVE.search(f"{c.name} {c.cls}") and not key:
            rank = 9
        elif c.away and not key:
            rank = 8  # another page of the artefact: tried last
        elif key:
            rank = _ORDER.index(key)
        elif c.kind in {"radio", "tab", "link", "button", "option", "menuitem"}:
            rank = 5
        else:
            rank = 6 if c.how != "delegated" else 7
        out.append((rank, c, "click", c.name))
    return sorted(out, key=lambda x: (x[0], tree_distance(x[1].target, near) if near else 0))


async def _set_up(s: PageSession, app: TodoApp, todo: TodoMap, names: Names) -> tuple[set[str], set[str]] | str:
    """At least three tasks not done and two done, read as they show; or why that could not be."""
    recipe = todo.marks_done
    assert recipe is not None
    state = await app.state(look=True)
    shown = {m for m, n in app.shown(state).items() if n == 1}
    done = app.done(state)
    active = [m for m in app.tasks if m in shown and done.get(m) is False]
    while len(active) < 4:
        task = names.next()
        await app.add(task)
        active.append(task)
    marked = sum(1 for m in shown if done.get(m))
    for task in active[1:4:2][: max(0, 2 - marked)]:
        await app.use(recipe, task)
    state = await app.state(look=True)
    shown = {m for m, n in app.shown(state).items() if n == 1}
    done = app.done(state)
    done_set = {m for m in shown if done.get(m)}
    active_set = {m for m in shown if done.get(m) is False}
    if not done_set or len(active_set) < 2:
        return f"could not get tasks both done and not done to try filters (read as done: {sorted(done_set)})"
    return done_set, active_set


async def explore_filters(s: PageSession, app: TodoApp, todo: TodoMap, names: Names, trials: Trials) -> None:
    """Try the page's controls until one shows only done, one only not-done and one all tasks."""
    facts: dict[str, Any] = todo.filter_facts
    if todo.marks_done is None:
        facts["skipped"] = "no way to mark a task done was found (see the complete check)"
        return
    got = await _set_up(s, app, todo, names)
    if isinstance(got, str):
        facts["skipped"] = got
        return
    done_set, active_set = got
    known = done_set | active_set
    facts.update(done=sorted(done_set), active=sorted(active_set), named={}, misnamed=[])
    state = await app.state()
    rows = [i["row"] for infos in state["items"].values() for i in infos]
    exclude = [app.field, *app.stops(), *rows]
    near = (state.get("list") or {}).get("path", "")
    ranked = _actions(await controls(s, exclude=exclude), near)
    facts["candidates"] = len(ranked)
    listed = {c.path for _, c, _, _ in ranked}
    view, idle = known, []
    while ranked:
        _, control, action, name = ranked.pop(0)
        if all(k in todo.filters for k in _ORDER):
            break
        if not trials.take():
            break
        view = await _try(s, app, todo, trials, control, action, name, known, done_set, active_set, view)
        if view is None:
            return
        if view == known and len(idle) < 6:
            idle.append((control, action, name))
        if view == known and action == "click":
            # Nothing changed but controls may have appeared (a dropdown's menu): tried next, each
            # opened the same way first.
            shown = [c for c in await controls(s, exclude=exclude) if c.path not in listed]
            listed |= {c.path for c in shown}
            more = [(r, c, OPEN + control.target, n) for r, c, a, n in _actions(shown, near) if a == "click"]
            facts["candidates"] += len(more)
            ranked = sorted(more + ranked, key=lambda x: x[0])
    # "All" may do nothing while every task is shown: try those again from a filtered view.
    start = todo.filters.get("done") or todo.filters.get("active")
    for control, action, name in idle if start and "all" not in todo.filters else []:
        if not trials.take():
            break
        await use_filter(s, start[0], start[1])
        view = await _try(s, app, todo, trials, control, action, name, known, done_set, active_set, None)
        if view is None or "all" in todo.filters:
            break
    facts["tried"] = len(trials.rows)
    facts["capped"] = trials.capped and not all(k in todo.filters for k in _ORDER)


async def _try(s: PageSession, app: TodoApp, todo: TodoMap, trials: Trials, control: Control, action: str,
               name: str, known: set[str], done_set: set[str], active_set: set[str],
               view: set[str] | None) -> set[str] | None:
    """Use one candidate and read which tasks show; returns the new view (None: the state is lost)."""
    url, errors = s.page.url, len(s.errors)
    what = (control.describe() if action == "click" else f"{control.describe()}, shown by a click on another control"
            if action.startswith(OPEN) else f"{control.describe()} option '{name}'")
    try:
        await use_filter(s, control, action, f"'{name}'" if name else control.describe())
    except CheckError as exc:
        trials.add(what, "click", f"could not be used: {exc}", found=control.found_by)
        return view
    state = await app.state(look=True)
    shown = {m for m, n in app.shown(state).items() if n} & known
    done = app.done(state)
    flipped = sorted(m for m in shown if done.get(m) is not None and done[m] != (m in done_set))
    if shown == done_set:
        effect, key = f"showed only the done tasks {sorted(shown)}", "done"
    elif shown == active_set:
        effect, key = f"showed only the not-done tasks {sorted(shown)}", "active"
    elif shown == known:
        effect, key = ("nothing changed" if view == known else "showed every task again"), "all"
    elif not shown:
        effect, key = "showed no task", None
    else:
        effect, key = f"showed {sorted(shown)}", None
    if s.page.url != url:
        effect += f" (address now {s.page.url.rsplit('/', 1)[-1]})"
        if not shown and await return_to(s, url):  # another document, not a view of this one
            effect += "; went back"
            trials.add(what, action.split(":")[0].replace("open", "click"), effect, found=control.found_by)
            return view
    if flipped:
        effect += f"; changed whether {flipped} are done"
    trials.add(what, action.split(":")[0].replace("open", "click"), effect, found=control.found_by)
    named = filter_key(name, control.href)
    if named and named not in todo.filter_facts["named"]:
        todo.filter_facts["named"][named] = {"name": name, "shown": sorted(shown)}
    if flipped:
        if named and all(m in done_set for m in flipped):
            # A filter that brings the marked tasks back unmarked: the app never kept the marks.
            todo.filter_facts["forgot"] = f"after {what}, the tasks marked done ({flipped}) showed as not done again"
            return None
        if not await _restore(s, app, todo, flipped):
            todo.filter_facts["lost"] = f"{what} changed which tasks are done and they could not be set back"
            return None
    if key and key not in todo.filters and not (key == "all" and view == known):
        todo.filters[key] = (control, action)
        thrown = page_exceptions(s.errors[errors:])
        if thrown:
            todo.filter_facts.setdefault("threw", []).append(thrown[0])
        if named and named != key:
            todo.filter_facts["misnamed"].append(f"'{name}' showed {'the ' + key if key != 'all' else 'all'} tasks")
    return shown


async def _restore(s: PageSession, app: TodoApp, todo: TodoMap, flipped: list[str]) -> bool:
    """Set tasks a control marked or unmarked (a "mark all" box) back, with the row's own toggle."""
    if todo.toggle is None:
        return False
    for task in flipped:
        await app.use(todo.toggle, task)
    state = await app.state(look=True)
    done = app.done(state)
    want = set(todo.filter_facts.get("done", []))
    return all(done.get(m) == (m in want) for m in flipped)
