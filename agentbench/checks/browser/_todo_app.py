"""Driving a to-do app in one page: find its controls, add, toggle, delete, filter, read the list.

Tasks are found by their (distinctive) text whatever markup the app chose; reading goes through
``_find.js`` and every action is real input (see ``_find``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ._find import Absent, click, dom, hover, mouse_away, press, select_index, settle, type_into

if TYPE_CHECKING:
    from ._page import PageSession

__all__ = ["AddBroken", "TodoApp"]


class AddBroken(Absent):
    """No task can be added at all: every feature that needs a task is unusable (a ``fail``)."""


class TodoApp:
    """One to-do app in one page: its controls, the tasks added so far, and how to use them."""

    def __init__(self, session: PageSession, controls: dict[str, Any]) -> None:
        self.s = session
        self.input: str = controls["input"]
        self.add_button: str | None = controls["add"]
        self.max_length: int = controls.get("maxLength", -1)  # the field's maxlength, -1 when none
        self.filters: dict[str, dict[str, Any]] = {}
        self.tasks: list[str] = []
        self.how = "Enter"

    @classmethod
    async def open(cls, session: PageSession) -> TodoApp:
        controls = await dom(session, "todoControls", {"markers": []})
        if not controls["input"]:
            if not controls.get("anyField"):
                raise AddBroken("the page has no field to type a task into, so no task can be added")
            raise CheckError("found no visible text field to type a task into")
        return cls(session, controls)

    # ---- reading ----------------------------------------------------------------------------
    async def state(self, extra: tuple[str, ...] = ()) -> dict[str, Any]:
        stops = [p for p in [self.add_button, *(f["path"] for f in self.filters.values())] if p]
        return await dom(self.s, "todoState", {"markers": [*self.tasks, *extra], "input": self.input, "stops": stops})

    @staticmethod
    def shown(state: dict[str, Any]) -> dict[str, int]:
        """How many times each task is visible (0 = not shown, 2 = shown twice)."""
        return {m: sum(1 for i in infos if i["visible"]) for m, infos in state["items"].items()}

    @staticmethod
    def visible_in_order(state: dict[str, Any]) -> list[str]:
        seen = [(i["top"], i["left"], m) for m, infos in state["items"].items() for i in infos if i["visible"]]
        return [m for _, _, m in sorted(seen)]

    def done(self, state: dict[str, Any], reference: str | None = None) -> dict[str, bool]:
        """Done state of each visible task, as a person reads it.

        A checked checkbox, a done/completed class or strike-through decide when the app uses any
        of them; otherwise a task counts as done when it looks different (colour, opacity, italics,
        a mark) from `reference`, a task known never to have been marked done.
        """
        first = {m: next((i for i in infos if i["visible"]), None) for m, infos in state["items"].items()}
        first = {m: i for m, i in first.items() if i is not None}

        def strong(i: dict[str, Any]) -> bool:
            return bool((i["checkbox"] and i["checkbox"]["checked"]) or i["classDone"] or i["strike"])

        if any(strong(i) for i in first.values()) or reference not in first:
            return {m: strong(i) for m, i in first.items()}
        ref = first[reference]["sig"]
        return {m: i["sig"] != ref for m, i in first.items()}

    def _first(self, state: dict[str, Any], task: str) -> dict[str, Any]:
        info = next((i for i in state["items"].get(task, []) if i["visible"]), None)
        if info is None:
            raise CheckError(f"task '{task}' is not shown, so it cannot be used")
        return info

    # ---- using ------------------------------------------------------------------------------
    async def type_task(self, text: str, how: str | None = None) -> None:
        await type_into(self.s, self.input, text, "the task field")
        if (how or self.how) == "Enter":
            await press(self.s, "Enter")
        else:
            if not self.add_button:
                raise CheckError("found no Add button")
            await click(self.s, self.add_button, "the Add button")
        await settle(self.s, 0.2)

    async def add(self, *texts: str) -> None:
        """Add tasks, learning on the first one whether Enter or the Add button works."""
        for text in texts:
            self.tasks.append(text)
            await self.type_task(text)
            if self.shown(await self.state()).get(text):
                continue
            if self.how == "Enter" and self.add_button:
                self.how = "Add button"
                await self.type_task(text)
                if self.shown(await self.state()).get(text):
                    continue
            tried = "pressed Enter and clicked the Add button" if self.add_button else (
                "pressed Enter (no Add button found)")
            raise AddBroken(
                f"no task can be added: typed '{text}' and {tried}, but it was not shown (see the add check), "
                "so this could not be used"
            )
        if len(self.tasks) >= 2 and not self.filters:
            controls = await dom(self.s, "todoControls", {"markers": self.tasks})
            self.filters = controls["filters"]

    async def toggle(self, task: str) -> str:
        """Mark a task done/undone with its checkbox, else its done button, else a click on its text."""
        info = self._first(await self.state(), task)
        box = info["checkbox"]
        if box and (box["visible"] or box["label"]):
            how, path = "its checkbox", box["path"] if box["visible"] else box["label"]
        elif info["toggles"]:
            how, path = "its done button", info["toggles"][0]
        else:
            how, path = "its text", info["holder"]
        await click(self.s, path, f"{how} of '{task}'")
        await settle(self.s, 0.2)
        await mouse_away(self.s)  # hover styling must not read as "done"
        return how

    async def delete(self, task: str) -> None:
        info = self._first(await self.state(), task)
        # Delete buttons shown only on hover appear when the mouse is over the task.
        await hover(self.s, info["root"], f"task '{task}'")
        info = self._first(await self.state(), task)
        if info["deletes"]:
            target, what = info["deletes"][0], f"the delete button of '{task}'"
        elif info["unlabelled"]:  # an icon that did not load: judged by what a click does
            target, what = info["unlabelled"][-1], f"the unlabelled button of '{task}'"
        else:
            raise Absent(f"found no way to delete task '{task}' (looked for ×, 🗑, Delete, Remove, trash icons, "
                         "titles and aria-labels, and unlabelled buttons in its row)")
        dialogs = len(self.s.dialogs)
        await click(self.s, target, what)
        await settle(self.s, 0.2)
        await mouse_away(self.s)
        await self.s.refresh()
        if len(self.s.dialogs) > dialogs and self.shown(await self.state()).get(task):
            raise CheckError(
                "deleting asks for confirmation; the harness answers dialogs with Cancel, "
                f"so the deletion cannot be judged ({self.s.dialogs[-1]})"
            )
        if not info["deletes"] and self.shown(await self.state()).get(task):
            raise CheckError(f"found no labelled delete control on '{task}', and its unlabelled button did not "
                             "delete it")

    def has_filters(self, *keys: str) -> bool:
        return all(k in self.filters for k in keys)

    async def show(self, key: str) -> None:
        f = self.filters.get(key)
        if f is None:
            raise CheckError(f"found no '{key}' filter control")
        if f["kind"] == "select":
            await select_index(self.s, f["path"], f["index"], f"the '{f['text']}' filter")
        else:
            await click(self.s, f["path"], f"the '{f['text']}' filter")
        await settle(self.s, 0.2)
        await mouse_away(self.s)
