"""Driving one converter page: its category control, unit controls, value field and results.

Converters come in many shapes; each is found by what a person would use:

- ``controls``: a "from" and a "to" unit control (selects, buttons, tabs or radios), or one unit
  control beside a table of every unit;
- ``pairs``: one control of fixed pairs ("Meters to Feet", "°C → °F"), no free choice of units;
- ``fields``: one linked field per unit (type in metres, read feet).

Categories may be a select, tabs, buttons, radios or links to other pages (each page a category).
A result may need no action (live), a Convert button, Enter, or the field losing focus; a form
hidden after Convert comes back with its Reset button.

A page is read in its own language (``_converter_locale``): its unit and category words are put in
English before they are matched, and its numbers are read with the decimal mark its language or
their shape says ("12,7" is 12.7 on any page; "1.609" follows the page's lang, the other reading
kept as an alternative). A radio with no label of its own is named by the word beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from ._converter_locale import (
    ambiguous_alternatives,
    comma_decimal_language,
    english,
    plain_numbers,
    shows_decimal_comma,
)
from ._converter_reader import page_language, radio_names, words_offered
from ._explore import act, listeners
from ._find import (
    Absent,
    Number,
    category_of,
    click,
    dom,
    mouse_away,
    parse_numbers,
    press,
    select_index,
    settle,
    type_into,
    unit_mentions,
    unit_of,
    unit_pair_of,
)
from ._readings import pick_reading, tree_distance

if TYPE_CHECKING:
    from ._page import PageSession

__all__ = ["NOTHING_CHANGED", "Absent", "ConverterPage", "Shown"]

_SETTLE_S = 0.5  # virtual seconds after each input: debounced handlers (<= 500 ms) have run
SLOW_DEBOUNCE_S = 1.5
NOTHING_CHANGED = "nothing on the page changed when another value was typed"
# A Convert button says just that ("Convert", "🔄 Convert units", "="), never "Go to the docs".
_CONVERT = re.compile(r"^\W*(convert|calculate|compute)(\s+\w+)?\W*$|^\W*(go|=)\W*$", re.IGNORECASE)
_RESET = re.compile(r"^\W*(reset|clear|back|again|new|start over|convert again|another)(\s+\w+)?\W*$|^\W*[↺⟲↻]\W*$",
                    re.IGNORECASE)
_TO_HINT = re.compile(r"(?<![A-Za-z])[Tt]o(?![a-z])|[Tt]arget|[Oo]utput|[Rr]esult|[Ii]nto")  # "To", "toUnit"
_CATEGORY_WORDS = {
    "length": re.compile(r"\b(length|distance)s?\b", re.IGNORECASE),
    "weight": re.compile(r"\b(weight|mass)(es)?\b", re.IGNORECASE),
    "temperature": re.compile(r"\btemp(erature)?s?\b", re.IGNORECASE),
}


@dataclass(frozen=True)
class Shown(Number):
    """A number read from the page, with the other reading of an ambiguous "1,609" / "1.609" (or None)."""

    other: Number | None = None


class ConverterPage:
    """One converter page: its value field, category control, unit controls and how results show."""

    def __init__(self, session: PageSession) -> None:
        self.s = session
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
        if any(c["kind"] == "radio" and not c["label"] for c in ctl["choices"]):
            await self._name_radios(ctl)
        return self._in_english(ctl)

    async def _language(self) -> None:
        if self.lang is None:
            self.lang = await page_language(self.s)
            self.comma = self.comma or comma_decimal_language(self.lang)

    def _english(self, text: str) -> str:
        return english(text, self.lang)

    def _in_english(self, ctl: dict[str, Any]) -> dict[str, Any]:
        """The controls' words in English (a German page's "Zoll", "Gewicht", "Umrechnen")."""
        en = self._english
        for f in ctl["fields"]:
            f["hint"] = en(f["hint"])
        for sel in ctl["selects"]:
            sel["hint"] = en(sel["hint"])
            for o in sel["options"]:
                o["text"], o["value"] = en(o["text"]), en(o["value"])
        for c in [*ctl["choices"], *ctl["texts"]]:
            c["label"], c["value"] = en(c["label"]), en(c["value"])
        return ctl

    async def _name_radios(self, ctl: dict[str, Any]) -> None:
        """A radio without a label is named by the word beside it ("( ) Celsius"); the word, when an
        element of its own (an unlinked <label>), stops being a choice: clicking it does nothing."""
        names = {r["path"]: r for r in await radio_names(self.s)}
        used = {r["from"] for r in names.values() if r["from"]}
        kept = []
        for c in ctl["choices"]:
            if c["kind"] == "radio" and not c["label"] and c["path"] in names:
                c["label"] = names[c["path"]]["name"]
            elif c["path"] in used:
                continue
            kept.append(c)
        ctl["choices"] = kept

    async def _reveal_menus(self, ctl: dict[str, Any], category: str) -> bool:
        """Open menus of units hidden until hovered (or clicked) and add their items as choices."""
        shown = {c["path"] for c in ctl["choices"]}
        added = False
        for menu in await dom(self.s, "hiddenChoices"):
            if sum(1 for t in menu["texts"] if unit_of(self._english(t), category=category)) < 2:
                continue
            for how in ("hover", "click"):
                await act(self.s, menu["anchor"], how, "the unit menu")
                now = await self.controls(listening=True)
                new = [c for c in now["choices"] if c["path"] not in shown and unit_of(c["label"], category=category)]
                await press(self.s, "Escape")
                await mouse_away(self.s)
                if new and how == "click" and any(await dom(self.s, "shownPaths", {"paths": [new[0]["path"]]})):
                    await act(self.s, menu["anchor"], "click", "the unit menu")  # a toggle: closed as it was
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
            if how == "hover" or not any(await dom(self.s, "shownPaths", {"paths": [target]})):
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
            if not groups and await self._reveal_menus(ctl, category):
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
        self._buttons(ctl)

    def _buttons(self, ctl: dict[str, Any]) -> None:
        kinds = {"button", "input", "a", "button-role"}
        convert = [c for c in ctl["choices"] if _CONVERT.search(c["label"]) and c["kind"] in kinds]
        self.convert_button = convert[0]["path"] if convert else self.convert_button

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
        await type_into(self.s, self.field, text, "the value field", clear=clear)
        if self.commit == "button" and self.convert_button:
            await click(self.s, self.convert_button, "the Convert button")
        elif self.commit == "enter":
            await press(self.s, "Enter")
        elif self.commit == "blur":
            await press(self.s, "Tab")
        await settle(self.s, _SETTLE_S)

    async def snapshot(self) -> dict[str, str]:
        return await dom(self.s, "snapshot", {"exclude": self.field})

    async def reading(self, typed: str, to: str) -> tuple[Number | None, str]:
        """Type a value and read the result for unit `to`: (number, text it was read from)."""
        other = "7" if typed != "7" else "8"
        found: tuple[Number | None, str] = (None, NOTHING_CHANGED)
        for commit in [self.commit] if self.commit else ["live", "button", "enter", "blur"]:
            if commit == "button" and not self.convert_button:
                continue
            self.commit = commit
            await self.typed(other)
            before = await self.snapshot()
            await self.typed(typed)
            after = await self.snapshot()
            if commit == "live" and after == before:
                await settle(self.s, SLOW_DEBOUNCE_S)  # a person pauses; a slow debounce fires
                after = await self.snapshot()
            if after == before:
                continue
            found = await self.read(before, after, to, typed)
            if found[0] is not None:  # typing may change only an echo while Convert shows the result
                return found
        self.commit = None
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
            nums = parse_numbers(plain_numbers(shown, self.comma))
            alt = parse_numbers(ambiguous_alternatives(shown, self.comma) or "")
            return (Shown(**vars(nums[-1]), other=alt[-1] if alt else None) if nums else None), shown
        changed = {p: t for p, t in after.items() if before.get(p) != t}
        if not changed:
            return None, NOTHING_CHANGED
        self.comma = self.comma or any(shows_decimal_comma(t) for t in changed.values())
        raw = await dom(self.s, "contextOf", {"paths": list(changed)[:40]})
        typed_plain = plain_numbers(typed, self.comma)

        def as_read(numbers) -> tuple[dict[str, str], dict[str, list[dict[str, Any]]]]:
            texts = {p: numbers(self._english(t)) for p, t in changed.items()}
            contexts = {p: [{**c, "text": numbers(self._english(c["text"]))} for c in chain]
                        for p, chain in raw.items()}
            return texts, contexts

        texts, contexts = as_read(lambda t: plain_numbers(t, self.comma))
        number, text = pick_reading(texts, contexts, to, self.category, typed_plain)
        if number is None:
            return None, text
        page_text = next((changed[p] for p, t in texts.items() if t == text), text)
        other = None
        if any(ambiguous_alternatives(t, self.comma) for t in changed.values()):
            texts, contexts = as_read(lambda t: ambiguous_alternatives(t, self.comma) or plain_numbers(t, self.comma))
            other, _ = pick_reading(texts, contexts, to, self.category, typed_plain)
        if other is not None and other.value == number.value:
            other = None
        return Shown(**vars(number), other=other), page_text
