"""Unit converter probes: length, weight, temperature, live-update, bad-input.

Each check runs in a fresh page and uses the converter as a person would (see
``_converter_page``): choose the category, the units, click the value field and type with the
keyboard, then read what the page shows. The result is found by what changes: the page's text is
read after typing two different values, and the elements whose text changed are the readings.

A category or unit the page does not offer is a finding (``fail``, saying what was looked for);
``error`` is kept for pages where we could not tell. live-update and bad-input are judged in
every category the page offers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from .._model import CheckResult
from ._converter_page import SLOW_DEBOUNCE_S, ConverterPage
from ._find import Absent, click, dom, press, run_checks_side_by_side, settle, units_of, value
from ._readings import convert, within_tolerance
from ._registry import ProbeContext, task_probes

if TYPE_CHECKING:
    from ._page import PageSession

__all__ = ["CHECK_IDS", "PAIRS", "probe_converter"]

CATEGORY_IDS = ("length", "weight", "temperature")
PAIRS: dict[str, list[tuple[str, str, str]]] = {  # (from, to, typed value)
    "length": [("km", "m", "1"), ("in", "cm", "5"), ("mi", "km", "3.7"), ("m", "ft", "2")],
    "weight": [("lb", "kg", "2.5"), ("oz", "g", "8"), ("kg", "lb", "3"), ("t", "kg", "2")],
    "temperature": [("C", "F", "37"), ("F", "C", "212"), ("C", "K", "25"), ("C", "F", "-10")],
}
_SETTLE_S = 0.5
# NaN and Infinity may run into a unit ("NaNkm"); undefined and null are whole words.
_NONSENSE = re.compile(r"(?<![A-Za-z])(?:NaN|Infinity)|\b(?:undefined|null)\b")


def _pairs_to_try(conv: ConverterPage, category: str) -> list[tuple[str, str, str]]:
    """The task's pairs the page offers, then one more for each offered unit they leave out."""
    out = [p for p in PAIRS[category] if conv.offers(p[0], p[1])]
    covered = {u for frm, to, _ in out for u in (frm, to)}
    for frm, to in conv.offered_pairs():
        if (frm not in covered or to not in covered) and (frm, to) not in {(a, b) for a, b, _ in out}:
            # Never the value typed just before: a slowly debounced page still shows its result.
            typed = next(v for v in ("3", "4", "6") if not out or v != out[-1][2])
            out.append((frm, to, typed))
            covered |= {frm, to}
    return out


async def _check_category(s: PageSession, category: str) -> CheckResult:
    conv = ConverterPage(s)
    try:
        await conv.setup(category)
    except Absent as exc:
        return CheckResult(id=category, status="fail", detail=str(exc),
                           evidence=[value("looked for", units_of(category))])
    rows, problems, unsure = [], [], []
    missing = [u for u in units_of(category) if u not in conv.offered_units()]
    pairs = _pairs_to_try(conv, category)
    first = await _orient(conv, *pairs[0]) if pairs else None
    for frm, to, typed in pairs:
        expected = convert(float(typed), frm, to)
        if first is not None:  # read already (a slow debounce shows a value read twice as unchanged)
            (number, text), first = first, None
        else:
            await conv.units(frm, to)
            number, text = await conv.reading(typed, to)
        if number is None and text.startswith("could not tell"):
            unsure.append(f"{typed} {frm} -> {to}: {text}")
            continue
        ok = number is not None and within_tolerance(number, expected)
        rows.append({"typed": f"{typed} {frm}", "to": to, "expected": round(expected, 6),
                     "shown": number.value if number else None, "text": text[:120], "ok": ok})
        if not ok:
            problems.append(
                f"{typed} {frm} -> {to}: expected {expected:.6g}, page showed {number.text if number else text[:80]!r}"
            )
    if missing:
        problems.append(f"units not offered: {', '.join(missing)} (the page offers {conv.describe()})")
    evidence = [value("conversions", rows)]
    if unsure:
        evidence.append(value("not decided", unsure))
    if not problems:
        if unsure:  # a gap of the probe, not a verdict on the page
            raise CheckError(
                f"{len(rows)} {category} conversions right, but not every pair could be judged: " + "; ".join(unsure)
            )
        if not rows:
            raise CheckError(f"could not try any {category} conversion")
    return CheckResult(
        id=category,
        status="fail" if problems else "pass",
        detail="; ".join(problems) if problems else f"{len(rows)} {category} conversions right ({conv.commit} result)",
        evidence=evidence,
        data={"commit": conv.commit, "mode": conv.mode, "offered": sorted(conv.offered_units())},
    )


async def _orient(conv: ConverterPage, frm: str, to: str, typed: str) -> tuple[Any, str] | None:
    """Which unit control is "from" is told by what it does: when the first pair converts the wrong
    way round and swapping the two controls makes it right, they were the other way round.

    Returns the first pair's reading under the orientation kept (None when it must be read anew).
    """
    if conv.mode != "controls" or conv.to_ctl is None or not conv.offers(to, frm):
        return None
    await conv.units(frm, to)
    found = await conv.reading(typed, to)
    if found[0] is None or within_tolerance(found[0], convert(float(typed), frm, to)):
        return found
    if not within_tolerance(found[0], convert(float(typed), to, frm)):
        return found  # not the other way round either: a wrong conversion, judged as shown
    conv.from_ctl, conv.to_ctl = conv.to_ctl, conv.from_ctl
    await conv.units(frm, to)
    swapped = await conv.reading(typed, to)
    if swapped[0] is not None and within_tolerance(swapped[0], convert(float(typed), frm, to)):
        return swapped
    conv.from_ctl, conv.to_ctl = conv.to_ctl, conv.from_ctl  # neither way is right: judged as found
    return None


async def _offered(s: PageSession) -> list[tuple[str, ConverterPage, tuple[str, str]]]:
    """Each category the page offers, set up with one pair to type into (the task's first, if offered).

    Raises CheckError when no category could be set up although the page names some.
    """
    out, gaps = [], []
    for category in CATEGORY_IDS:
        conv = ConverterPage(s)
        try:
            await conv.setup(category)
        except Absent:
            continue
        except CheckError as exc:
            gaps.append(f"{category}: {exc}")
            continue
        pair = next(((f, t) for f, t, _ in PAIRS[category] if conv.offers(f, t)), None) or next(
            iter(conv.offered_pairs()), None)
        if pair is None:
            gaps.append(f"{category}: no pair of units to convert between")
            continue
        out.append((category, conv, pair))
    if not out:
        raise CheckError("; ".join(gaps) or "found no category to convert in")
    return out


def _follows(category: str, pair: tuple[str, str], one: Any, twelve: Any) -> bool:
    """Typing 1 then 12 moved the result as the conversion does (not an echo of the input)."""
    if one is None or twelve is None:
        return False
    if category == "temperature":  # offsets: the result must move with the value, by the right slope
        want = convert(12, *pair) - convert(1, *pair)
        return abs((twelve.value - one.value) - want) <= 1e-3 * abs(want) + one.half_step + twelve.half_step
    return one.value != 0 and abs(twelve.value - 12 * one.value) <= (
        1e-3 * abs(12 * one.value) + 12 * one.half_step + twelve.half_step)


async def _live_in(s: PageSession, category: str, conv: ConverterPage, pair: tuple[str, str]) -> tuple[bool, str, list]:
    await conv.setup(category)  # again: another category's set-up may have moved the page on
    await conv.units(*pair)
    conv.commit = "live"
    await conv.typed("")
    steps = [await conv.snapshot()]
    for key in ("1", "2"):  # "1", then "12": typed, never submitted
        await conv.typed(key, clear=False)
        await settle(s, SLOW_DEBOUNCE_S - _SETTLE_S)  # a person's pause after a key
        steps.append(await conv.snapshot())
    rows, readings = [], []
    for typed, before, after in (("1", steps[0], steps[1]), ("12", steps[1], steps[2])):
        changed = [t for p, t in after.items() if before.get(p) != t]
        number, text = await conv.read(before, after, pair[1], typed)
        readings.append(number)
        rows.append({"category": category, "typed": f"{typed} {pair[0]}", "changed": changed[:4],
                     f"reading ({pair[1]})": number.value if number else text})
    if _follows(category, pair, *readings):
        return True, "", rows
    detail = f"{category}: the result did not follow typing (1 {pair[0]}, then 12 {pair[0]})"
    await press(s, "Tab")  # the field loses focus: a "change" listener fires now
    await settle(s, _SETTLE_S)
    if await conv.snapshot() != steps[2]:
        return False, f"{category}: the result changes only when the field loses focus, not while typing", rows
    if conv.convert_button:
        await click(s, conv.convert_button, "the Convert button")
        await settle(s, _SETTLE_S)
        if await conv.snapshot() != steps[2]:
            detail = f"{category}: the result changes only after clicking the Convert button, not while typing"
    return False, detail, rows


async def _check_live(s: PageSession) -> CheckResult:
    rows, problems, live = [], [], []
    for category, conv, pair in await _offered(s):
        # A pair the page converts wrongly (no branch for it: the result stays put) says nothing
        # about live updates: another pair of the category is tried before judging.
        others = [p for p in conv.offered_pairs() if p != pair and p[::-1] != pair][:2]
        for attempt in [pair, *others]:
            ok, detail, steps = await _live_in(s, category, conv, attempt)
            rows += steps
            if ok or "did not follow" not in detail:
                break
        (live if ok else problems).append(detail or category)
    if problems:
        return CheckResult(id="live-update", status="fail", detail="; ".join(problems),
                           evidence=[value("typing", rows)])
    return CheckResult(id="live-update", status="pass",
                       detail=f"the result follows typing, no button needed ({', '.join(live)})",
                       evidence=[value("typing", rows)])


_BAD = ("", "-", "1e", "abc", ".")


async def _bad_in(s: PageSession, category: str, conv: ConverterPage, pair: tuple[str, str]) -> tuple[list, list]:
    await conv.setup(category)
    await conv.units(*pair)
    await conv.reading("5", pair[1])  # learns whether results need a button
    page = await dom(s, "pageText", {"exclude": conv.field})
    # Words the page shows for a valid value (help text saying "null") are not the bad input's doing.
    usual = _NONSENSE.findall(" ".join([page["text"], *page["values"]]))
    rows, problems = [], []
    for bad in _BAD:
        await conv.typed(bad)
        page = await dom(s, "pageText", {"exclude": conv.field})
        words = _NONSENSE.findall(" ".join([page["text"], *page["values"]]))
        found = sorted({w for w in words if words.count(w) > usual.count(w)})
        rows.append({"category": category, "typed": bad or "(empty)", "field holds": page["field"],
                     "nonsense shown": found})
        if found:
            problems.append(f"{category}: typing {bad or 'nothing'!r} showed {', '.join(found)}")
    return rows, problems


async def _check_bad(s: PageSession) -> CheckResult:
    rows, problems = [], []
    for category, conv, pair in await _offered(s):
        more_rows, more_problems = await _bad_in(s, category, conv, pair)
        rows += more_rows
        problems += more_problems
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
