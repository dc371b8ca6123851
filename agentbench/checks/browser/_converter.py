"""Unit converter probes: length, weight, temperature, live-update, bad-input.

Each check runs in a fresh page: choose the category (select, tabs, buttons or radios), choose the
units, click the value field and type with the keyboard, then read what the page shows. The
result is found by what changes: the page's text is read after typing two different values, and
the elements whose text changed are the readings (a single output, a read-only field, or a table
with a row per unit, matched to its unit by the labels around it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from .._model import CheckResult
from ._find import (
    Number,
    category_of,
    click,
    dom,
    parse_numbers,
    press,
    run_checks_side_by_side,
    select_index,
    settle,
    type_into,
    unit_of,
    value,
)
from ._readings import convert, pick_reading, tree_distance, within_tolerance
from ._registry import ProbeContext, task_probes

if TYPE_CHECKING:
    from ._page import PageSession

__all__ = ["CHECK_IDS", "PAIRS", "probe_converter"]

PAIRS: dict[str, list[tuple[str, str, str]]] = {  # (from, to, typed value)
    "length": [("km", "m", "1"), ("in", "cm", "5"), ("mi", "km", "3.7"), ("m", "ft", "2")],
    "weight": [("lb", "kg", "2.5"), ("oz", "g", "8"), ("kg", "lb", "3"), ("t", "kg", "2")],
    "temperature": [("C", "F", "37"), ("F", "C", "212"), ("C", "K", "25"), ("C", "F", "-10")],
}
_SETTLE_S = 0.5  # virtual seconds after each input: debounced handlers (<= 500 ms) have run
_SLOW_DEBOUNCE_S = 1.5
NOTHING_CHANGED = "nothing on the page changed when another value was typed"
_NONSENSE = re.compile(r"\b(NaN|undefined|Infinity|null)\b")
# A Convert button says just that ("Convert", "🔄 Convert units", "="), never "Go to the docs".
_CONVERT = re.compile(r"^\W*(convert|calculate|compute)(\s+\w+)?\W*$|^\W*(go|=)\W*$", re.IGNORECASE)
_TO_HINT = re.compile(r"(?<![A-Za-z])[Tt]o(?![a-z])|[Tt]arget|[Oo]utput|[Rr]esult|[Ii]nto")  # "To", "toUnit"


class _Converter:
    """One converter page: its value field, category control, unit controls and how results show."""

    def __init__(self, session: PageSession) -> None:
        self.s = session
        self.field: str | None = None
        self.mode = "controls"  # or "fields": one field per unit
        self.unit_fields: dict[str, str] = {}
        self.from_ctl: dict[str, Any] | None = None
        self.to_ctl: dict[str, Any] | None = None
        self.convert_button: str | None = None
        self.commit: str | None = None  # "live" | "button" | "enter" once learnt

    async def controls(self) -> dict[str, Any]:
        return await dom(self.s, "convControls")

    @staticmethod
    def _groups(ctl: dict[str, Any], name_of) -> list[dict[str, Any]]:
        """Selects and groups of buttons/tabs/radios as {kind, path, members: {name: index|path}}."""
        out = []
        for sel in ctl["selects"]:
            members: dict[str, int] = {}
            for i, o in enumerate(sel["options"]):
                name = name_of(o["text"], o["value"])
                if name and not o["disabled"]:
                    members.setdefault(name, i)
            out.append({"kind": "select", "path": sel["path"], "hint": sel["hint"], "members": members})
        groups: dict[str, dict[str, Any]] = {}
        for c in ctl["choices"]:
            name = name_of(c["label"], c["value"])
            if name:
                g = groups.setdefault(c["group"], {"kind": "click", "path": c["group"], "hint": "", "members": {}})
                g["members"].setdefault(name, c["path"])
        return [g for g in [*out, *groups.values()] if len(g["members"]) >= 2]

    async def _choose(self, group: dict[str, Any], name: str, what: str) -> None:
        target = group["members"][name]
        if group["kind"] == "select":
            await select_index(self.s, group["path"], target, what)
        else:
            await click(self.s, target, what)
        await settle(self.s, 0.2)

    async def setup(self, category: str, frm: str | None, to: str | None) -> None:
        ctl = await self.controls()
        cats = self._groups(ctl, category_of) or self._groups(
            {**ctl, "selects": [], "choices": ctl["texts"]}, category_of
        )  # tabs of plain elements
        chooser = next((g for g in cats if category in g["members"]), None)
        if chooser:
            await self._choose(chooser, category, f"the category {category}")
            ctl = await self.controls()
        editable = [f for f in ctl["fields"] if not f["readonly"]]
        if not editable:
            raise CheckError("found no field to type a value into")
        per_unit = {}
        for f in editable:
            u = unit_of(f["hint"], category=category)
            if u:
                per_unit.setdefault(u, f["path"])

        def unit_name(*texts: str) -> str | None:
            return unit_of(*texts, category=category)

        groups = [g for g in self._groups(ctl, unit_name) if g not in cats]
        if len(per_unit) >= 3 or (not groups and len(per_unit) >= 2):  # a field per unit
            self.mode, self.unit_fields = "fields", per_unit
            self.field = next(iter(per_unit.values()))
        elif not groups:
            raise CheckError(
                f"found no control to choose {category} units (looked for selects, buttons, "
                "tabs and radios naming units)"
            )
        else:
            if len(groups) >= 2 and _TO_HINT.search(groups[0]["hint"]) and not _TO_HINT.search(groups[1]["hint"]):
                groups[0], groups[1] = groups[1], groups[0]
            self.from_ctl, self.to_ctl = groups[0], (groups[1] if len(groups) > 1 else None)
            # The field next to the from-unit control (a page may hold one converter per category).
            self.field = min(editable, key=lambda f: tree_distance(f["path"], self.from_ctl["path"]))["path"]
        buttons = [
            c
            for c in ctl["choices"]
            if _CONVERT.search(c["label"]) and c["kind"] in {"button", "input", "a", "button-role"}
        ]
        self.convert_button = buttons[0]["path"] if buttons else None
        if frm and to:
            await self.units(frm, to)

    async def units(self, frm: str, to: str) -> None:
        if self.mode == "fields":
            for u in (frm, to):
                if u not in self.unit_fields:
                    raise CheckError(f"found no field for unit {u}")
            self.field = self.unit_fields[frm]
            return
        assert self.from_ctl is not None
        for ctl, unit in ((self.from_ctl, frm), (self.to_ctl, to)):
            if ctl is None:
                continue  # a table of every unit: nothing to choose
            if unit not in ctl["members"]:
                raise CheckError(f"unit {unit} is not offered (found {sorted(ctl['members'])})")
            await self._choose(ctl, unit, f"the unit {unit}")

    async def typed(self, text: str, *, clear: bool = True) -> None:
        assert self.field is not None
        await type_into(self.s, self.field, text, "the value field", clear=clear)
        if self.commit == "button" and self.convert_button:
            await click(self.s, self.convert_button, "the Convert button")
        elif self.commit == "enter":
            await press(self.s, "Enter")
        await settle(self.s, _SETTLE_S)

    async def snapshot(self) -> dict[str, str]:
        return await dom(self.s, "snapshot", {"exclude": self.field})

    async def reading(self, typed: str, category: str, to: str) -> tuple[Number | None, str]:
        """Type a value and read the result for unit `to`: (number, text it was read from)."""
        other = "7" if typed != "7" else "8"
        found: tuple[Number | None, str] = (None, NOTHING_CHANGED)
        for commit in [self.commit] if self.commit else ["live", "button", "enter"]:
            if commit == "button" and not self.convert_button:
                continue
            self.commit = commit
            await self.typed(other)
            before = await self.snapshot()
            await self.typed(typed)
            after = await self.snapshot()
            if commit == "live" and after == before:
                await settle(self.s, _SLOW_DEBOUNCE_S)  # a person pauses; a slow debounce fires
                after = await self.snapshot()
            if after == before:
                continue
            found = await self.read(before, after, to, category, typed)
            if found[0] is not None:  # typing may change only an echo while Convert shows the result
                return found
        self.commit = None
        return found

    async def read(
        self, before: dict[str, str], after: dict[str, str], to: str, category: str, typed: str
    ) -> tuple[Number | None, str]:
        """The number shown for unit `to` in `after`, among what changed since `before`."""
        if self.mode == "fields":
            shown = after.get(self.unit_fields[to], "")
            nums = parse_numbers(shown)
            return (nums[-1] if nums and shown != before.get(self.unit_fields[to]) else None), shown
        changed = {p: t for p, t in after.items() if before.get(p) != t}
        if not changed:
            return None, NOTHING_CHANGED
        contexts = await dom(self.s, "contextOf", {"paths": list(changed)[:40]})
        return pick_reading(changed, contexts, to, category, typed)


async def _check_category(s: PageSession, category: str) -> CheckResult:
    conv = _Converter(s)
    await conv.setup(category, None, None)
    rows, problems, missing, unsure = [], [], [], []
    for frm, to, typed in PAIRS[category]:
        expected = convert(float(typed), frm, to)
        try:
            await conv.units(frm, to)
        except CheckError as exc:
            missing.append(str(exc))
            continue
        number, text = await conv.reading(typed, category, to)
        if number is None and text.startswith("could not tell"):
            unsure.append(f"{typed} {frm} -> {to}: {text}")
            continue
        ok = number is not None and within_tolerance(number, expected)
        rows.append(
            {
                "typed": f"{typed} {frm}",
                "to": to,
                "expected": round(expected, 6),
                "shown": number.value if number else None,
                "text": text[:120],
                "ok": ok,
            }
        )
        if not ok:
            problems.append(
                f"{typed} {frm} -> {to}: expected {expected:.6g}, page showed {number.text if number else text[:80]!r}"
            )
    if not rows and not unsure:
        raise CheckError("; ".join(missing) or f"could not try any {category} conversion")
    evidence = [value("conversions", rows)]
    if missing or unsure:
        evidence.append(value("not decided", missing + unsure))
    if not problems and (missing or unsure):  # a gap of the probe, not a verdict on the page
        raise CheckError(
            f"{len(rows) - len(problems)} {category} conversions right, but not every pair could be judged: "
            + "; ".join(missing + unsure)
        )
    return CheckResult(
        id=category,
        status="fail" if problems else "pass",
        detail="; ".join(problems) if problems else f"{len(rows)} {category} conversions right ({conv.commit} result)",
        evidence=evidence,
        data={"commit": conv.commit},
    )


async def _check_live(s: PageSession) -> CheckResult:
    conv = _Converter(s)
    await conv.setup("length", None, None)
    try:
        await conv.units("km", "m")
        pair = True
    except CheckError:
        pair = False  # any units: then only "the page follows typing" can be judged
    conv.commit = "live"
    await conv.typed("")
    steps = [await conv.snapshot()]
    for key in ("1", "2"):  # "1", then "12": typed, never submitted
        await conv.typed(key, clear=False)
        await settle(s, _SLOW_DEBOUNCE_S - _SETTLE_S)  # a person's pause after a key
        steps.append(await conv.snapshot())
    rows: list[dict[str, Any]] = []
    readings = []
    for typed, before, after in (("1", steps[0], steps[1]), ("12", steps[1], steps[2])):
        changed = [t for p, t in after.items() if before.get(p) != t]
        number, text = await conv.read(before, after, "m", "length", typed) if pair else (None, "")
        readings.append(number)
        rows.append({"typed": typed, "changed": changed[:4], "reading (m)": number.value if number else text})
    one, twelve = readings
    if pair:
        # The result, not an echo of the input: 12 km must read 12 times what 1 km read.
        live = (
            one is not None
            and twelve is not None
            and (
                abs(twelve.value - 12 * one.value) <= 1e-3 * abs(12 * one.value) + 12 * one.half_step + twelve.half_step
            )
            and one.value != 0
        )
    else:
        live = all(r["changed"] for r in rows)
    if live:
        return CheckResult(
            id="live-update",
            status="pass",
            detail="the result follows typing, no button needed",
            evidence=[value("typing", rows)],
        )
    detail = "the result did not follow typing (1 km, then 12 km)"
    if conv.convert_button:
        await click(s, conv.convert_button, "the Convert button")
        await settle(s, _SETTLE_S)
        if await conv.snapshot() != steps[2]:
            detail = "the result changes only after clicking the Convert button, not while typing"
    return CheckResult(id="live-update", status="fail", detail=detail, evidence=[value("typing", rows)])


_BAD = ("", "-", "1e", "abc", ".")


async def _check_bad(s: PageSession) -> CheckResult:
    conv = _Converter(s)
    await conv.setup("length", None, None)
    try:
        await conv.units("km", "m")
    except CheckError:
        pass  # any units will do to see what bad input shows
    await conv.reading("5", "length", "m")  # learns whether results need a button
    page = await dom(s, "pageText", {"exclude": conv.field})
    # Words the page shows for a valid value (help text saying "null") are not the bad input's doing.
    usual = _NONSENSE.findall(" ".join([page["text"], *page["values"]]))
    rows, problems = [], []
    for bad in _BAD:
        await conv.typed(bad)
        page = await dom(s, "pageText", {"exclude": conv.field})
        words = _NONSENSE.findall(" ".join([page["text"], *page["values"]]))
        found = sorted({w for w in words if words.count(w) > usual.count(w)})
        rows.append({"typed": bad or "(empty)", "field holds": page["field"], "nonsense shown": found})
        if found:
            problems.append(f"typing {bad or 'nothing'!r} showed {', '.join(found)}")
    return CheckResult(
        id="bad-input",
        status="fail" if problems else "pass",
        detail="; ".join(problems) if problems else "no NaN/undefined/Infinity/null for bad input",
        evidence=[value("bad input", rows)],
    )


CHECKS = (
    ("length", lambda s: _check_category(s, "length")),
    ("weight", lambda s: _check_category(s, "weight")),
    ("temperature", lambda s: _check_category(s, "temperature")),
    ("live-update", _check_live),
    ("bad-input", _check_bad),
)
CHECK_IDS = tuple(check_id for check_id, _ in CHECKS)


@task_probes("converter")
async def probe_converter(ctx: ProbeContext, only: Iterable[str] | None = None) -> list[CheckResult]:
    """Use the converter like a person; one result per check id, each from a pristine page.

    `only` limits the run to some check ids (tests of a fixture built to break one check).
    """
    return await run_checks_side_by_side(ctx, CHECKS, only)
