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
4. under Active: a task is deleted, and another marked done: exactly that one changes; a task's
   text is added a second time and the second copy marked done, then deleted: exactly it changes.
   Then reloads.

Names only rank the candidates (a "Delete" button is tried before a bare span) and label the
evidence. All of it is recorded in the effect table the checks show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ..browser._explore import Trials
from ..browser._find import settle
from ..browser._page import PageBroken
from ._adds import ADD_CAP, find_adds
from ._app import AddBroken, Names, TodoMap
from ._filters import explore_filters
from ._reload import delete_under_filter, reload_phase, toggle_under_filter
from ._rows import ROW_CAP, explore_rows
from ._twins import twins_phase

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["START_S", "explore_todo"]

START_S = 0.5  # virtual seconds a page runs before the first input (a "document ready" that waits a timer)


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
    await _phase(todo, "toggle", toggle_under_filter(s, app, todo, names))
    await _phase(todo, "twins", twins_phase(s, app, todo, names))
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
