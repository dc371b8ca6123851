"""Driving a to-do app in one page with what the explorer learnt: add, mark done, delete, filter, read.

Tasks are found by their (distinctive) text whatever markup the app chose; a row's controls are
named by their place in the row (the same place in every row), so a recipe learnt on one task
works on any other. Reading goes through ``_explore.js``; every action is real input.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import field as _field
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ..browser._explore import Control, act
from ..browser._find import Absent, dom, page_exceptions, press, rendered, settle, shown_now, type_into
from ..browser._page import ORIGIN
from ._swipe import SWIPES, swipe, wait_uncovered

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["NAMES", "OPEN", "AddBroken", "AddPath", "Names", "Recipe", "TodoApp", "TodoMap", "changed_keys",
           "look_diff", "reverted", "use_filter"]


NAMES = ("Ant 41", "Bee 52", "Cat 63", "Dog 74", "Elk 85", "Fox 96", "Gnu 17", "Hen 28", "Owl 39", "Yak 50",
         "Cod 61", "Emu 72")


class Names:
    """Fresh task texts for one exploration."""

    def __init__(self) -> None:
        self._left = list(NAMES)
        self._more = 100

    def next(self) -> str:
        if self._left:
            return self._left.pop(0)
        self._more += 1  # three digits: no name is part of another
        return f"Kiwi {self._more}"


IDB_LIMIT_S = 10.0  # real seconds for IndexedDB to answer after a reload: only a stuck page reaches this


async def _has_indexeddb(s: PageSession) -> bool:
    """Whether the page's origin has IndexedDB databases (read over CDP, where the page cannot lie)."""
    try:
        got = await s.cdp("IndexedDB.requestDatabaseNames", {"securityOrigin": ORIGIN})
    except CheckError:
        return False
    return bool(got.get("databaseNames"))


OPEN = "open:"  # a filter's action "open:<path>": click the control at <path> first (a dropdown's head)


async def use_filter(s: PageSession, control: Control, action: str, what: str = "") -> None:
    """Use a filter control as a person does; one in a menu (``OPEN``) is first shown by clicking
    what opens it, unless it is shown already (a second click would close the menu)."""
    if action.startswith(OPEN):
        if not await shown_now(s, control.target):
            await act(s, action[len(OPEN):], "click", f"what opens {what or control.describe()}")
        action = "click"
    await act(s, control, action, what)


class AddBroken(Absent):
    """No task can be added at all: every feature that needs a task is unusable (a ``fail``)."""


@dataclass(frozen=True)
class AddPath:
    """One way to add a task: Enter in the task field, or a control clicked after typing."""

    how: str  # "Enter" | "button"
    control: Control | None = None

    @property
    def label(self) -> str:
        return "Enter" if self.how == "Enter" else f"clicking {self.control.describe() if self.control else '?'}"


@dataclass(frozen=True)
class Recipe:
    """An action on a task's row: on the part at ``rel`` under the row ("" = the row itself)."""

    rel: str
    action: str  # click | dblclick | a drag sideways (_swipe.SWIPES: swipe-left, touch-swipe-right...)
    what: str  # how a person would say it: "its checkbox", "button '×'", "double-click on its text"
    found_by: str
    hover: bool = False  # the part shows only while the mouse is over the row
    confirm: str = ""  # then the page asks in a box of its own: the button with this name is clicked
    opener: str = ""  # first click the part at this place, which shows the part at ``rel`` (a row's menu)


@dataclass
class TodoMap:
    """What one exploration learnt about a to-do app (shared by every check of the page)."""

    field: str | None = None
    max_length: int = -1
    add_paths: list[AddPath] = _field(default_factory=list)  # those that add exactly one task
    add_tries: dict[str, int] = _field(default_factory=dict)  # add path label -> times the task was shown
    add_controls: list[str] = _field(default_factory=list)  # page controls tried as Add buttons
    add_threw: list[str] = _field(default_factory=list)  # adds during the exploration that threw
    add_prompt: str = ""  # a control tried as Add asked in a prompt() (answered Cancel by the harness)
    toggle: Recipe | None = None  # marks done, and a second use marks not done again
    one_way: Recipe | None = None  # marks done, but a second use does not undo it
    toggle_facts: dict[str, Any] = _field(default_factory=dict)
    undone_look: dict[str, Any] = _field(default_factory=dict)
    done_look: dict[str, Any] = _field(default_factory=dict)
    delete: Recipe | None = None
    delete_facts: dict[str, Any] = _field(default_factory=dict)
    persist_facts: dict[str, Any] = _field(default_factory=dict)
    row_tried: int = 0
    row_capped: bool = False
    filters: dict[str, tuple[Control, str]] = _field(default_factory=dict)  # done/active/all -> (control, action)
    filter_facts: dict[str, Any] = _field(default_factory=dict)
    tables: dict[str, list[dict[str, str]]] = _field(default_factory=dict)  # phase -> its effect table
    problem: str = ""  # why the exploration stopped early (the page broke, a dialog...)
    phase_errors: dict[str, str] = _field(default_factory=dict)  # phase -> why it could not finish

    @property
    def marks_done(self) -> Recipe | None:
        return self.toggle or self.one_way

    def is_done(self, look: dict[str, Any] | None) -> bool | None:
        """Whether a row looks like the explored task did once marked done (None: no way to tell)."""
        if not look or not self.done_look:
            return None
        keys = [k for k in set(self.undone_look) | set(self.done_look)
                if self.undone_look.get(k) != self.done_look.get(k)]
        like_done = sum(look.get(k) == self.done_look.get(k) for k in keys)
        like_undone = sum(look.get(k) == self.undone_look.get(k) for k in keys)
        return like_done > like_undone


def changed_keys(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """The parts of a row's look that differ (an opacity step under 0.05 is no change)."""
    out = set()
    for key in set(before) | set(after):
        b, a = before.get(key), after.get(key)
        if b == a or key.startswith("o") and b is not None and a is not None and abs(float(b) - float(a)) < 0.05:
            continue
        out.add(key)
    return out


def reverted(before: dict[str, Any], done: dict[str, Any], back: dict[str, Any]) -> bool:
    """Whether a row marked done (``before`` -> ``done``) was changed back: every part the marking
    changed left its done value. It need not be byte for byte as before: a component that writes
    completed="false" where there was no attribute shows the task not done all the same."""
    marked = changed_keys(before, done)
    return bool(marked) and marked <= changed_keys(done, back)


def look_diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed in a row's look, in words ("class 'completed' added", "ticked", "line-through")."""
    out: list[str] = []
    keys = changed_keys(before, after)
    for key in sorted(keys):
        b, a = before.get(key), after.get(key)
        kind = key[:1] if key != "parent" else "parent"
        if kind == "c":
            bs, as_ = set(str(b or "").split()), set(str(a or "").split())
            words = [f"class '{c}' added" for c in sorted(as_ - bs)]
            words += [f"class '{c}' removed" for c in sorted(bs - as_)]
            out += words or ["classes changed"]
        elif kind == "k":
            out.append("ticked" if a else "unticked" if a is not None else "checkbox gone")
        elif kind == "a":
            name = key[1:].lstrip("0123456789/")
            out.append(f"'{name}' set" if a == "" else f"'{name}' removed" if a is None else f"{name}={a}")
        elif kind == "d":
            out.append("struck through" if "line-through" in str(a) else "no longer struck through"
                       if "line-through" in str(b) else f"text decoration {a}")
        elif kind == "o":
            out.append(f"opacity {b} -> {a}")
        elif kind == "s":
            out.append("colour or style changed")
        elif kind == "t":
            out.append(f"text '{b or ''}' -> '{a or ''}'")
        elif kind == "v":
            out.append(f"a part {'hidden' if a == 'hidden' else 'shown' if a == 'shown' else 'changed'}")
        elif kind == "parent":
            out.append("moved to another list")
    seen: list[str] = []
    for word in out:
        if word not in seen:
            seen.append(word)
    return seen


class TodoApp:
    """One to-do app in one page: the explored map, the tasks added so far, and how to use them."""

    def __init__(self, session: PageSession, todo: TodoMap, *, exploring: bool = False) -> None:
        if not todo.field:
            raise CheckError("no task field is known for this page")
        self.s = session
        self.map = todo
        self.field: str = todo.field
        self.tasks: list[str] = []
        self.path: AddPath | None = todo.add_paths[0] if todo.add_paths else None
        self.exploring = exploring  # adds that throw are recorded in the map (for the add check)

    # ---- reading ----------------------------------------------------------------------------
    def stops(self) -> list[str]:
        paths = [c.path for c, _ in self.map.filters.values()]
        paths += [p.control.path for p in self.map.add_paths if p.control]
        return paths

    async def state(self, extra: tuple[str, ...] = (), *, look: bool = False) -> dict[str, Any]:
        return await dom(self.s, "rows", {"markers": [*self.tasks, *extra], "input": self.field,
                                          "stops": self.stops(), "look": look})

    @staticmethod
    def shown(state: dict[str, Any]) -> dict[str, int]:
        """How many times each task is visible (0 = not shown, 2 = shown twice)."""
        return {m: sum(1 for i in infos if i["shown"]) for m, infos in state["items"].items()}

    @staticmethod
    def shown_tasks(state: dict[str, Any]) -> list[str]:
        return sorted(m for m, infos in state["items"].items() if any(i["shown"] for i in infos))

    @staticmethod
    def visible_in_order(state: dict[str, Any]) -> list[str]:
        seen = [(i["top"], i["left"], m) for m, infos in state["items"].items() for i in infos if i["shown"]]
        return [m for _, _, m in sorted(seen)]

    @staticmethod
    def item(state: dict[str, Any], task: str, nth: int = 0) -> dict[str, Any] | None:
        """The task's row as shown (``nth``: of a text shown more than once, the nth from the top)."""
        if not nth:
            return next((i for i in state["items"].get(task, []) if i["shown"]), None)
        copies = TodoApp.copies(state, task)
        return copies[nth] if nth < len(copies) else None

    @staticmethod
    def copies(state: dict[str, Any], task: str) -> list[dict[str, Any]]:
        """Every shown row with the task's text, top to bottom (left to right)."""
        return sorted((i for i in state["items"].get(task, []) if i["shown"]), key=lambda i: (i["top"], i["left"]))

    def done(self, state: dict[str, Any]) -> dict[str, bool | None]:
        """Done state of each shown task, read from how the explored task looked once marked done."""
        out: dict[str, bool | None] = {}
        for m in state["items"]:
            info = self.item(state, m)
            if info is not None:
                out[m] = self.map.is_done(info["look"])
        return out

    # ---- using ------------------------------------------------------------------------------
    async def type_task(self, text: str, path: AddPath | None = None) -> None:
        path = path or self.path
        if path is None:
            raise AddBroken("no way to add a task was found (see the add check)")
        await type_into(self.s, self.field, text, "the task field")
        if path.how == "Enter":
            await press(self.s, "Enter")
            await settle(self.s, 0.2)
        else:
            assert path.control is not None
            await act(self.s, path.control, "click")

    async def add(self, *texts: str) -> None:
        """Add tasks by the first way the exploration found to work; AddBroken when it does not."""
        for text in texts:
            self.tasks.append(text)
            errors = len(self.s.errors)
            await self.type_task(text)
            thrown = page_exceptions(self.s.errors[errors:])
            if thrown and self.exploring:
                how = self.path.label if self.path else "?"
                self.map.add_threw.append(f"adding '{text}' by {how} threw {thrown[0]}")
            if not self.shown(await self.state()).get(text):
                how = self.path.label if self.path else "no known way"
                raise AddBroken(f"typed '{text}' and added it by {how}, but it was not shown")

    async def use(self, recipe: Recipe, task: str, state: dict[str, Any] | None = None, nth: int = 0) -> None:
        """Use a row recipe on a task's row (hovering the row first when the part shows on hover).

        ``state``: the page as just read, when the caller has it (saves a read). ``nth``: of a
        text shown more than once, the row that many from the top.
        """
        state = state or await self.state()
        info = self.item(state, task, nth)
        if info is None:
            raise CheckError(f"task '{task}' is not shown, so it cannot be used")
        if recipe.hover:
            await act(self.s, info["row"], "hover", f"the row of '{task}'")
        target = await dom(self.s, "fromRel", {"root": info["row"], "rel": recipe.rel})
        # A part in the row's menu is shown first by what opens it (unless open: a click would close it).
        if recipe.opener and not await shown_now(self.s, target):
            opener = await dom(self.s, "fromRel", {"root": info["row"], "rel": recipe.opener})
            if opener is None:
                raise CheckError(f"the row of '{task}' has no part that opens {recipe.what}")
            await act(self.s, opener, "click", f"what opens {recipe.what} of '{task}'")
            await settle(self.s, 0.15)
            target = await dom(self.s, "fromRel", {"root": info["row"], "rel": recipe.rel})
        if target is None:
            raise CheckError(f"the row of '{task}' has no {recipe.what}")
        if recipe.action in SWIPES:  # the row dragged sideways (no control of its own deleted it)
            await swipe(self.s, target, recipe.action, f"the row of '{task}'")
        else:
            await wait_uncovered(self.s, info["row"], target)
            await act(self.s, target, recipe.action, f"{recipe.what} of '{task}'")
        # A click handler that first waits out a possible double-click (~250 ms) has acted by now.
        await settle(self.s, 0.15)
        if recipe.confirm:
            await self.answer(recipe.confirm, state["page"]["confirm"])

    async def answer(self, name: str, before: list[dict[str, str]]) -> bool:
        """Click the button called ``name`` that an action just showed (an in-page "Are you sure?")."""
        seen = {c["path"] for c in before}
        now = (await self.state())["page"]["confirm"]
        button = next((c for c in now if c["name"] == name and c["path"] not in seen), None)
        if button is None:
            return False
        await act(self.s, button["path"], "click", f"'{name}'")
        await settle(self.s, 0.15)
        return True

    async def reload(self, expect: list[str] | tuple[str, ...] = ()) -> None:
        """Reload as a person does: a pause first (debounced saves run), then a real reload.

        An app that keeps its tasks in IndexedDB shows them only when its read answers, outside
        the virtual clock: when some of ``expect`` are missing and the page has IndexedDB
        databases, the browser's frames and the clock run until they show (a condition); a read
        that never answers is a CheckError (could not tell), not a loss.
        """
        await settle(self.s, 1.0)
        await self.s.reload()
        await settle(self.s, 0.5)
        if not expect or await self._all_shown(expect) or not await _has_indexeddb(self.s):
            return
        deadline = time.monotonic() + IDB_LIMIT_S
        while not await self._all_shown(expect):
            if time.monotonic() > deadline:
                raise CheckError(f"after a reload the page's IndexedDB did not give back {list(expect)} within "
                                 f"{IDB_LIMIT_S:g} s, so whether they were kept could not be told")
            await rendered(self.s)
            await settle(self.s, 0.1)

    async def _all_shown(self, tasks: list[str] | tuple[str, ...]) -> bool:
        shown = self.shown(await self.state())
        return all(shown.get(m) for m in tasks)

    def has_filters(self, *keys: str) -> bool:
        return all(k in self.map.filters for k in keys)

    def filter_name(self, key: str) -> str:
        control, action = self.map.filters[key]
        if action.startswith("select:"):
            return f"'{control.options[int(action[7:])]}'"
        return f"'{control.name}'" if control.name else control.describe()

    async def show(self, key: str) -> None:
        if key not in self.map.filters:
            raise CheckError(f"found no '{key}' filter control")
        control, action = self.map.filters[key]
        await use_filter(self.s, control, action, f"the {self.filter_name(key)} filter")
