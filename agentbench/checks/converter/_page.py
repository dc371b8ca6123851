"""Driving one converter page: its category control, unit controls, value field and results.

Converters come in many shapes; each is found by what a person would use:

- ``controls``: a "from" and a "to" unit control (selects, buttons, tabs or radios), or one unit
  control beside a table of every unit;
- ``pairs``: one control of fixed pairs ("Meters to Feet", "°C → °F"), no free choice of units;
- ``fields``: one linked field per unit (type in metres, read feet).

Categories may be a select, tabs, buttons, radios or links to other pages (each page a category).
The value field is an ``<input>``/``<textarea>`` or an editable element (a contenteditable host,
role=textbox/spinbutton): clicked, emptied with select-all and Backspace, typed into with real keys,
and read back by its text. A result may need no action (live), a Convert button, Enter, or the field
losing focus; a form hidden after Convert comes back with its Reset button.

A page is read in its own language (``_converter_locale``): its unit and category words are put in
English before they are matched, and its numbers are read with the decimal mark its language or
their shape says ("12,7" is 12.7 on any page; "1.609" follows the page's lang, the other reading
kept as an alternative). A radio with no label of its own is named by the word beside it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ..browser._explore import act, listeners
from ..browser._find import (
    Absent,
    click,
    dom,
    mouse_away,
    page_exceptions,
    press,
    select_index,
    settle,
    shown_now,
    tree_distance,
    type_into,
)
from ..browser._numbers import Number
from ._locale import comma_decimal_language, controls_in_english, english, shows_decimal_comma
from ._reader import name_radios, page_language, words_offered
from ._shown import Shown, field_number, pick_as_written
from ._units import category_of, unit_mentions, unit_of, unit_pair_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..browser._page import PageSession

__all__ = ["NOTHING_CHANGED", "Absent", "ConverterPage", "Shown", "Thrown"]

_SETTLE_S = 0.5  # virtual seconds after each input: debounced handlers (<= 500 ms) have run
SLOW_DEBOUNCE_S = 1.5
NOTHING_CHANGED = "nothing on the page changed when another value was typed"
# A Convert button says just that ("Convert", "🔄 Convert units", "="), never "Go to the docs".
_CONVERT = re.compile(r"^\W*(convert|calculate|compute)(\s+\w+)?\W*$|^\W*(go|=)\W*$", re.IGNORECASE)
_RESET = re.compile(r"^\W*(reset|clear|back|again|new|start over|convert again|another)(\s+\w+)?\W*$|^\W*[↺⟲↻]\W*$",
                    re.IGNORECASE)
_NOT_CONVERT = re.compile(r"swap|switch|revers|[⇄⇆↔⇅⇵↕⇌⇋⟷↹]|copy|history|theme|dark|light|mode|help|about|menu|"
                          r"close|delete|remove|share|print|^\W*[×✕✖xX]\W*$", re.IGNORECASE)
_TO_HINT = re.compile(r"(?<![A-Za-z])[Tt]o(?![a-z])|[Tt]arget|[Oo]utput|[Rr]esult|[Ii]nto")  # "To", "toUnit"
_CATEGORY_WORDS = {
    "length": re.compile(r"\b(length|distance)s?\b", re.IGNORECASE),
    "weight": re.compile(r"\b(weight|mass)(es)?\b", re.IGNORECASE),
    "temperature": re.compile(r"\btemp(erature)?s?\b", re.IGNORECASE),
}


# A whole number as a person types it ("12", "-10", "3.7", "3,7"): what the field holds between
# keys may not be one ("", "-", "3.").
_WHOLE_NUMBER = re.compile(r"^\s*[-+]?\d+(?:[.,]\d+)?\s*$")


class Thrown:
    """The exceptions a page threw while its value field held no whole number: emptied before a value
    is typed, or "3." on the way to "3.7". They are the bad-input check's finding (and
    runtime-errors'); a conversion or live update judged on whole numbers is not failed by them.
    One per check, shared by the check's pages of each category."""

    def __init__(self) -> None:
        self.incomplete = 0


class ConverterPage:
    """One converter page: its value field, category control, unit controls and how results show."""

    def __init__(self, session: PageSession, thrown: Thrown | None = None) -> None:
        self.s = session
        self.thrown = thrown or Thrown()
        self.category: str | None = None
        self.field: str | None = None
        self.mode = "controls"  # or "pairs" (fixed pairs) or "fields" (one field per unit)
        self.unit_fields: dict[str, str] = {}
        self.from_ctl: dict[str, Any] | None = None
        self.to_ctl: dict[str, Any] | None = None
        self.pair_ctl: dict[str, Any] | None = None
        self.convert_button: str | None = None
        self.reset_button: str | None = None
        self.commit: str | None = None  # "live" | "button" | "enter" | "blur" once learnt
        self.answered_by: tuple[str, str | None] | None = None  # (commit, button) under which the page changed
        self.maybe_convert: list[str] = []  # buttons not named Convert that may be one (tried last)
        self.chosen: tuple[str, str] | None = None
        self.revealed: list[dict[str, Any]] = []  # unit choices found inside menus opened on hover/click
        self.lang: str | None = None  # the page's declared language, once read
        self.comma = False  # the page writes decimals with a comma (its language, or a number only that explains)
        self.field_types: dict[str, str] = {}  # value field path -> input type ("number", "text"...)

    async def controls(self, *, listening: bool = False) -> dict[str, Any]:
        """The page's fields, selects and choices; with ``listening``, also elements that have (or sit
        under) a click listener and nothing else saying they can be clicked (read over CDP: slower)."""
        ctl = await dom(self.s, "convControls", {"listeners": await listeners(self.s) if listening else {}})
        ctl["choices"] += self.revealed
        await name_radios(self.s, ctl)
        return controls_in_english(ctl, self.lang)

    async def _language(self) -> None:
        if self.lang is None:
            self.lang = await page_language(self.s)
            self.comma = self.comma or comma_decimal_language(self.lang)

    def _english(self, text: str) -> str:
        return english(text, self.lang)

    async def _reveal_menus(self, ctl: dict[str, Any], name_of: Callable[[str], Any], what: str) -> bool:
        """Open menus hidden until hovered (or clicked) whose items ``name_of`` names (units of the
        category, or categories) and add their items as choices."""
        shown = {c["path"] for c in ctl["choices"]}
        added = False
        for menu in await dom(self.s, "hiddenChoices"):
            if sum(1 for t in menu["texts"] if name_of(self._english(t))) < 2:
                continue
            for how in ("hover", "click"):
                await act(self.s, menu["anchor"], how, what)
                now = await self.controls(listening=True)
                new = [c for c in now["choices"] if c["path"] not in shown and name_of(c["label"])]
                await press(self.s, "Escape")
                await mouse_away(self.s)
                if new and how == "click" and await shown_now(self.s, new[0]["path"]):
                    await act(self.s, menu["anchor"], "click", what)  # a toggle: closed as it was
                if new:
                    for c in new:
                        c["reveal"] = {"action": how, "path": menu["anchor"]}
                        c["group"] = f"menu {menu['anchor']}"
                    self.revealed += new
                    shown |= {c["path"] for c in new}
                    added = True
                    break
        return added

    # ---- finding ----------------------------------------------------------------------------
    @staticmethod
    def _groups(ctl: dict[str, Any], name_of, least: int = 2) -> list[dict[str, Any]]:
        """Selects and groups of buttons/tabs/radios as {kind, path, members: {name: index|path}}."""
        out = []
        for sel in ctl["selects"]:
            members: dict[Any, int] = {}
            for i, o in enumerate(sel["options"]):
                name = name_of(o["text"], o["value"])
                if name and not o["disabled"]:
                    members.setdefault(name, i)
            out.append({"kind": "select", "path": sel["path"], "hint": sel["hint"], "members": members})
        groups: dict[str, dict[str, Any]] = {}
        for c in ctl["choices"]:
            name = name_of(c["label"], c["value"])
            if name:
                g = groups.setdefault(c["group"], {"kind": "click", "path": c["group"], "hint": "", "members": {},
                                                   "reveal": c.get("reveal")})
                g["members"].setdefault(name, c["path"])
        return [g for g in [*out, *groups.values()] if len(g["members"]) >= least]

    def _category_chooser(self, ctl: dict[str, Any], category: str) -> dict[str, Any] | None:
        cats = self._groups(ctl, category_of) or self._groups(
            {**ctl, "selects": [], "choices": ctl["texts"]}, category_of
        )  # tabs of plain elements
        chooser = next((g for g in cats if category in g["members"]), None)
        if chooser is None:
            # Links or buttons each in its own box (a nav bar of <li><a>, one page per category).
            loose: dict[str, str] = {}
            for c in ctl["choices"]:
                name = category_of(c["label"], c["value"])
                if name and c["kind"] in {"a", "button", "button-role", "tab-role", "input", "li", "div", "span"}:
                    loose.setdefault(name, c["path"])
            if category in loose and len(loose) >= 2:
                chooser = {"kind": "click", "path": "", "hint": "", "members": loose}
        return chooser

    async def _choose(self, group: dict[str, Any], name: Any, what: str) -> None:
        target = group["members"][name]
        if group["kind"] == "select":
            await select_index(self.s, group["path"], target, what)
        elif group.get("reveal"):  # a menu that opens on hover or click: open it (unless open), then pick
            how = group["reveal"]["action"]
            if how == "hover" or not await shown_now(self.s, target):
                await act(self.s, group["reveal"]["path"], how, "the unit menu")
            await act(self.s, target, "click", what)
            await mouse_away(self.s)
        else:
            await click(self.s, target, what)
        await settle(self.s, 0.2)

    async def _names(self, category: str) -> bool:
        """Whether anything on the page (hidden parts and option lists too) names the category or a unit of it."""
        words = self._english(await words_offered(self.s))
        return bool(unit_mentions(words, category=category) or _CATEGORY_WORDS[category].search(words))

    async def _absent_or_unfound(self, category: str, what: str) -> CheckError:
        """Absent when nothing on the page names the category or any of its units; else a gap."""
        if not await self._names(category):
            return Absent(f"the page offers no {category} conversion: {what}, and nothing on it names "
                          f"{category} or any of its units")
        return CheckError(f"{what}, although the page names {category} or its units")

    async def setup(self, category: str) -> None:
        """Choose the category and find the controls; raises Absent when the page has none."""
        self.category = category
        self.revealed = []
        await self._language()
        ctl = await self.controls()
        chooser = self._category_chooser(ctl, category)
        if chooser is None and await self._reveal_menus(ctl, category_of, "the category menu"):
            # The categories inside a menu opened on hover or click ("Length ▾").
            ctl = await self.controls(listening=True)
            chooser = self._category_chooser(ctl, category)
        if chooser:
            await self._choose(chooser, category, f"the category {category}")
            ctl = await self.controls()
        editable = [f for f in ctl["fields"] if not f["readonly"]]
        self.field_types = {f["path"]: f["type"] for f in editable}
        if not editable:
            raise await self._absent_or_unfound(category, "found no field to type a value into")
        per_unit: dict[str, str] = {}
        for f in editable:
            u = unit_of(f["hint"], category=category)
            if u:
                per_unit.setdefault(u, f["path"])

        def unit_name(*texts: str) -> str | None:
            return unit_of(*texts, category=category)

        def pair_name(*texts: str) -> tuple[str, str] | None:
            return unit_pair_of(*texts, category=category)

        cat_paths = {chooser["path"]} if chooser else set()
        groups = [g for g in self._groups(ctl, unit_name) if g["path"] not in cat_paths]
        # A select of "Meters to Feet", "Kilograms to Pounds" is a category and a pair control at once.
        pairs = self._groups(ctl, pair_name, least=1)
        if not groups and not pairs and len(per_unit) < 2 and await self._names(category):
            # Nothing says "click me": look again with the listeners, then inside menus opened on hover.
            ctl = await self.controls(listening=True)
            groups = [g for g in self._groups(ctl, unit_name) if g["path"] not in cat_paths]
            if not groups and await self._reveal_menus(ctl, unit_name, "the unit menu"):
                ctl = await self.controls(listening=True)
                groups = [g for g in self._groups(ctl, unit_name) if g["path"] not in cat_paths]
        if len(per_unit) >= 3 or (not groups and len(per_unit) >= 2):  # a field per unit
            self.mode, self.unit_fields = "fields", per_unit
            self.field = next(iter(per_unit.values()))
        elif groups:
            if len(groups) >= 2 and _TO_HINT.search(groups[0]["hint"]) and not _TO_HINT.search(groups[1]["hint"]):
                groups[0], groups[1] = groups[1], groups[0]
            self.mode = "controls"
            self.from_ctl, self.to_ctl = groups[0], (groups[1] if len(groups) > 1 else None)
            # The field next to the from-unit control (a page may hold one converter per category).
            self.field = min(editable, key=lambda f: tree_distance(f["path"], self.from_ctl["path"]))["path"]
        elif pairs:
            self.mode, self.pair_ctl = "pairs", pairs[0]
            self.field = min(editable, key=lambda f: tree_distance(f["path"], self.pair_ctl["path"]))["path"]
        else:
            raise await self._absent_or_unfound(
                category, f"found no control to choose {category} units (looked for selects, buttons, tabs, "
                "radios, fixed pairs and a field per unit)")
        taken = {p for g in [*groups, *pairs, *([chooser] if chooser else [])] if g["kind"] == "click"
                 for p in g["members"].values()}
        self._buttons(ctl, taken)

    def _buttons(self, ctl: dict[str, Any], taken: set[str]) -> None:
        """The Convert button (named so), and else the buttons nearest the field that could be one
        (not a unit or category, not Reset/Swap/Copy...): tried for what they do."""
        kinds = {"button", "input", "a", "button-role"}
        convert = [c for c in ctl["choices"] if _CONVERT.search(c["label"]) and c["kind"] in kinds]
        self.convert_button = convert[0]["path"] if convert else self.convert_button
        assert self.field is not None
        field = self.field
        maybe = [c["path"] for c in ctl["choices"] if c["kind"] in kinds - {"a"} and c["path"] not in taken
                 and not _RESET.search(c["label"]) and not _NOT_CONVERT.search(c["label"])]
        self.maybe_convert = sorted(maybe, key=lambda p: tree_distance(p, field))[:2]

    def types_text(self) -> bool:
        """The value field takes any text (a number field takes only what the browser reads as one)."""
        return self.field_types.get(self.field or "", "text") != "number"

    # ---- what the page offers -------------------------------------------------------------
    def offered_units(self) -> set[str]:
        if self.mode == "fields":
            return set(self.unit_fields)
        if self.mode == "pairs":
            assert self.pair_ctl is not None
            return {u for pair in self.pair_ctl["members"] for u in pair}
        assert self.from_ctl is not None
        return set(self.from_ctl["members"]) | set(self.to_ctl["members"] if self.to_ctl else ())

    def offers(self, frm: str, to: str) -> bool:
        if self.mode == "fields":
            return frm in self.unit_fields and to in self.unit_fields
        if self.mode == "pairs":
            assert self.pair_ctl is not None
            return (frm, to) in self.pair_ctl["members"]
        assert self.from_ctl is not None
        return frm in self.from_ctl["members"] and (self.to_ctl is None or to in self.to_ctl["members"])

    def offered_pairs(self) -> list[tuple[str, str]]:
        if self.mode == "pairs":
            assert self.pair_ctl is not None
            return list(self.pair_ctl["members"])
        units = sorted(self.offered_units())
        return [(a, b) for a in units for b in units if a != b and self.offers(a, b)]

    def describe(self) -> str:
        if self.mode == "pairs":
            return "only the fixed pairs " + ", ".join(f"{a} → {b}" for a, b in self.offered_pairs())
        return "the units " + ", ".join(sorted(self.offered_units()))

    # ---- using ------------------------------------------------------------------------------
    async def units(self, frm: str, to: str) -> None:
        if not self.offers(frm, to):
            raise CheckError(f"the pair {frm} → {to} is not offered (the page offers {self.describe()})")
        self.chosen = (frm, to)
        await self._reveal()
        await self._apply(frm, to)

    async def _apply(self, frm: str, to: str) -> None:
        if self.mode == "fields":
            self.field = self.unit_fields[frm]
            return
        if self.mode == "pairs":
            assert self.pair_ctl is not None
            await self._choose(self.pair_ctl, (frm, to), f"the pair {frm} → {to}")
            return
        assert self.from_ctl is not None
        for ctl, unit in ((self.from_ctl, frm), (self.to_ctl, to)):
            if ctl is not None:  # None: a table of every unit, nothing to choose
                await self._choose(ctl, unit, f"the unit {unit}")

    async def choose_again(self, frm: str, to: str) -> str | None:
        """Choose the pair's units again, as a person does to make a page convert what its field holds:
        another unit first, then the pair's own (choosing what is chosen already may do nothing). Returns
        what was chosen, or None where there is nothing to choose (a field per unit, a single pair)."""
        if self.mode == "fields":
            return None
        if self.mode == "pairs":
            assert self.pair_ctl is not None
            other = next((p for p in self.pair_ctl["members"] if p != (frm, to)), None)
            if other is None:
                return None
            await self._choose(self.pair_ctl, other, f"the pair {other[0]} → {other[1]}")
            await self._choose(self.pair_ctl, (frm, to), f"the pair {frm} → {to}")
            return f"the pair {other[0]} → {other[1]}, then {frm} → {to}"
        assert self.from_ctl is not None
        group, unit = (self.to_ctl, to) if self.to_ctl is not None else (self.from_ctl, frm)
        members = list(group["members"])
        other = next((u for u in members if u not in (frm, to)), None) or next((u for u in members if u != unit), None)
        if other is None:
            return None
        await self._choose(group, other, f"the unit {other}")
        await self._choose(group, unit, f"the unit {unit}")
        return f"the unit {other}, then {unit}"

    async def _reveal(self) -> bool:
        """A form hidden after Convert (result shown, Reset offered): Reset brings it back.

        Returns True when Reset was clicked (the units may be back at their defaults).
        """
        assert self.field is not None
        if (await dom(self.s, "shownNow", {"paths": [self.field]}))[0]:
            return False
        ctl = await self.controls()
        kinds = {"button", "input", "a", "button-role"}
        resets = [c for c in ctl["choices"] if _RESET.search(c["label"]) and c["kind"] in kinds]
        if not resets:
            raise CheckError("the value field is hidden after converting and no Reset button was found")
        await click(self.s, resets[0]["path"], "the Reset button")
        await settle(self.s, 0.2)
        self.reset_button = resets[0]["path"]
        if not (await dom(self.s, "shownNow", {"paths": [self.field]}))[0]:
            raise CheckError("the value field stayed hidden after clicking Reset")
        return True

    async def typed(self, text: str, *, clear: bool = True) -> None:
        assert self.field is not None
        if await self._reveal() and self.chosen:
            await self._apply(*self.chosen)
        held: str | None = "" if clear else None
        if clear and self.field_types.get(self.field) == "editable":
            mark = len(self.s.errors)
            await self._clear_editable()
            await self.s.heard()
            self.thrown.incomplete += len(page_exceptions(self.s.errors[mark:]))
            clear = False
        await self._type_keys(text, clear=clear, held=held)
        if self.commit == "button" and self.convert_button:
            await click(self.s, self.convert_button, "the Convert button")
        elif self.commit == "enter":
            await press(self.s, "Enter")
        elif self.commit == "blur":
            await press(self.s, "Tab")
        await settle(self.s, _SETTLE_S)

    async def _type_keys(self, text: str, *, clear: bool, held: str | None) -> None:
        """Focus the field (emptied where ``clear``) and type ``text`` key by key, as type_into does,
        counting in ``thrown`` the exceptions thrown while the field held no whole number.
        ``held``: what the field holds once focused ("" once emptied; None: read it)."""
        assert self.field is not None
        mark = len(self.s.errors)
        await type_into(self.s, self.field, "", "the value field", clear=clear)
        if held is None:
            held = (await dom(self.s, "pageText", {"exclude": self.field}))["field"] or ""
        for key in text:
            await self._count_incomplete(held, mark)
            mark = len(self.s.errors)
            await press(self.s, key)
            held += key
        await self._count_incomplete(held, mark)

    async def _count_incomplete(self, held: str, mark: int) -> None:
        await self.s.heard()  # an exception the last key threw may still be on its way
        if not _WHOLE_NUMBER.match(held):
            self.thrown.incomplete += len(page_exceptions(self.s.errors[mark:]))

    async def _clear_editable(self) -> None:
        """Empty an editable value field as a person does: select-all and Backspace, and where text is
        left (a widget drawing its own digits selects nothing), Backspace once for each character left."""
        assert self.field is not None
        await type_into(self.s, self.field, "", "the value field")
        left = (await dom(self.s, "pageText", {"exclude": self.field}))["field"] or ""
        if left:
            await press(self.s, "End")
            for _ in left:
                await press(self.s, "Backspace")

    async def snapshot(self) -> dict[str, str]:
        return await dom(self.s, "snapshot", {"exclude": self.field})

    async def reading(self, typed: str, to: str) -> tuple[Number | None, str]:
        """Type a value and read the result for unit `to`: (number, text it was read from).

        Until it is known how the page commits a value, each way is tried: live, its Convert
        button, Enter, the field losing focus, then a button nearest the field that is not named
        Convert ("Submit", "→"), kept when it shows the result. ``answered_by`` keeps the first way
        under which the page changed at all, even where no number could be read.
        """
        other = "7" if typed != "7" else "8"
        found: tuple[Number | None, str] = (None, NOTHING_CHANGED)
        ways = [(self.commit, self.convert_button)] if self.commit else [
            ("live", None), ("button", self.convert_button), ("enter", None), ("blur", None),
            *(("button", b) for b in ([] if self.convert_button else self.maybe_convert))]
        for commit, button in ways:
            if commit == "button" and not button:
                continue
            self.commit, self.convert_button = commit, button or self.convert_button
            await self.typed(other)
            before = await self.snapshot()
            await self.typed(typed)
            after = await self.snapshot()
            if commit == "live" and after == before:
                await settle(self.s, SLOW_DEBOUNCE_S)  # a person pauses; a slow debounce fires
                after = await self.snapshot()
            if after == before:
                continue
            self.answered_by = self.answered_by or (commit, self.convert_button)
            found = await self.read(before, after, to, typed)
            if found[0] is not None:  # typing may change only an echo while Convert shows the result
                return found
        self.commit = None
        if self.convert_button in self.maybe_convert:
            self.convert_button = None  # an unnamed button that showed no result is no Convert button
        return found

    async def read(self, before: dict[str, str], after: dict[str, str], to: str, typed: str
                   ) -> tuple[Shown | None, str]:
        """The number shown for unit `to` in `after`, among what changed since `before`; the text
        returned is the page's own (its language, its decimal marks)."""
        assert self.category is not None
        if self.mode == "fields":
            shown = after.get(self.unit_fields[to], "")
            if shown == before.get(self.unit_fields[to]):
                return None, shown
            self.comma = self.comma or shows_decimal_comma(shown)
            return field_number(shown, self.comma), shown
        changed = {p: t for p, t in after.items() if before.get(p) != t}
        if not changed:
            return None, NOTHING_CHANGED
        self.comma = self.comma or any(shows_decimal_comma(t) for t in changed.values())
        contexts = await dom(self.s, "contextOf", {"paths": list(changed)[:40]})
        return pick_as_written(changed, contexts, to, self.category, typed, lang=self.lang, comma=self.comma)
