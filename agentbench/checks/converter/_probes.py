"""Unit converter probes: length, weight, temperature, live-update, bad-input.

Each check runs in a fresh page and uses the converter as a person would (see
``_converter_page``): choose the category, the units, click the value field and type with the
keyboard, then read what the page shows. The result is found by what changes: the page's text is
read after typing two different values, and the elements whose text changed are the readings.

A category or unit the page does not offer is a finding (``fail``, saying what was looked for);
``error`` is kept for pages where we could not tell. live-update and bad-input are judged in
every category the page offers, on pairs that show a result for a valid value: a pair that shows
nothing at all (a branch the page never wrote) is set aside there, as are the exceptions it threw
(the category checks and runtime-errors report those). Exceptions thrown while the value field
holds no whole number (emptied before a value is typed, "3." on the way to "3.7") are bad-input's
finding and runtime-errors': the category checks and live-update keep their own verdict on them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from ...errors import CheckError
from .._model import CheckResult
from ..browser._find import Absent, click, dom, page_exceptions, press, run_checks_side_by_side, settle, value
from ..browser._registry import ProbeContext
from ._locale import typed_as
from ._page import SLOW_DEBOUNCE_S, ConverterPage, Thrown
from ._readings import convert, within_tolerance
from ._shown import Shown
from ._units import units_of

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["CHECK_IDS", "PAIRS", "probe_converter"]

CATEGORY_IDS = ("length", "weight", "temperature")
PAIRS: dict[str, list[tuple[str, str, str]]] = {  # (from, to, typed value)
    "length": [("km", "m", "1"), ("in", "cm", "5"), ("mi", "km", "3.7"), ("m", "ft", "2")],
    "weight": [("lb", "kg", "2.5"), ("oz", "g", "8"), ("kg", "lb", "3"), ("t", "kg", "2")],
    # Every ordered pair: a page may write one formula per pair (K -> C a slip where C -> K is right).
    "temperature": [("C", "F", "37"), ("F", "C", "212"), ("C", "K", "25"), ("C", "F", "-10"), ("K", "C", "300"),
                    ("F", "K", "50"), ("K", "F", "280")],
}
_SETTLE_S = 0.5
# NaN and Infinity may run into a unit ("NaNkm"); undefined and null are whole words.
_NONSENSE = re.compile(r"(?<![A-Za-z])(?:NaN|Infinity)|\b(?:undefined|null)\b")


def _right(number: Shown | None, expected: float) -> bool:
    """The number shown is the expected one (read either way where its decimal mark is ambiguous)."""
    return number is not None and (within_tolerance(number, expected) or (
        number.other is not None and within_tolerance(number.other, expected)))


async def _thrown(s: PageSession, since: int) -> int:
    """The page's exceptions since ``since``, once the browser has told all it threw so far."""
    await s.heard()
    return len(page_exceptions(s.errors[since:]))


def _pairs_to_try(conv: ConverterPage, category: str) -> list[tuple[str, str, str]]:
    """The task's pairs the page offers, then pairs for the offered units they leave out: two such
    units in one pair where the page offers it (issue 30: fewer pairs, every unit still tried), each
    pair the way round whose result is neither tiny nor huge (a page rounding to 2 decimals shows
    3 mm in yards as 0.00)."""
    out = [p for p in PAIRS[category] if conv.offers(p[0], p[1])]
    covered = {u for frm, to, _ in out for u in (frm, to)}
    left = [u for frm, to in conv.offered_pairs() for u in (frm, to) if u not in covered]
    left = list(dict.fromkeys(left))
    while left:
        unit = left.pop(0)
        # Never the value typed just before: a slowly debounced page still shows its result.
        typed = next(v for v in ("3", "4", "6") if not out or v != out[-1][2])
        ways = [(a, b) for other in [*left, *sorted(covered)] for a, b in ((unit, other), (other, unit))
                if conv.offers(a, b)]
        if not ways:
            continue
        frm, to = next((w for w in ways if 1 <= abs(convert(float(typed), *w)) <= 1e5), ways[0])
        out.append((frm, to, typed))
        covered |= {frm, to}
        left = [u for u in left if u not in covered]
    return out


async def _check_category(s: PageSession, category: str) -> CheckResult:
    start = len(s.errors)
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
        if not _right(number, expected) and "." in typed and conv.comma and conv.types_text():
            # A person of a decimal-comma language types "3,7": a page may read only that.
            comma_number, comma_text = await conv.reading(typed_as(typed, comma=True), to)
            if _right(comma_number, expected):
                number, text = comma_number, comma_text
        if number is None and text.startswith("could not tell"):
            unsure.append(f"{typed} {frm} -> {to}: {text}")
            continue
        ok = _right(number, expected)
        rows.append({"typed": f"{typed} {frm}", "to": to, "expected": round(expected, 6),
                     "shown": number.value if number else None, "text": text[:120], "ok": ok})
        if not ok:
            shown = (number.text if number.text in text else text[:80]) if number else text[:80]
            problems.append(f"{typed} {frm} -> {to}: expected {expected:.6g}, page showed {shown!r}")
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
    status = "fail" if problems else "pass"
    detail = "; ".join(problems) if problems else f"{len(rows)} {category} conversions right ({conv.commit} result)"
    return CheckResult(
        id=category, status=status, detail=detail, evidence=evidence,
        data={"commit": conv.commit, "mode": conv.mode, "offered": sorted(conv.offered_units()),
              **await _exceptions_data(s, start, conv.thrown.incomplete, status, detail)},
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
    if found[0] is None or _right(found[0], convert(float(typed), frm, to)):
        return found
    if not _right(found[0], convert(float(typed), to, frm)):
        return found  # not the other way round either: a wrong conversion, judged as shown
    conv.from_ctl, conv.to_ctl = conv.to_ctl, conv.from_ctl
    await conv.units(frm, to)
    swapped = await conv.reading(typed, to)
    if _right(swapped[0], convert(float(typed), frm, to)):
        return swapped
    conv.from_ctl, conv.to_ctl = conv.to_ctl, conv.from_ctl  # neither way is right: judged as found
    return None


async def _offered(s: PageSession, thrown: Thrown | None = None
                   ) -> AsyncIterator[tuple[str, ConverterPage, tuple[str, str], int]]:
    """Each category the page offers, chosen on the page (use it before asking for the next), with
    one pair to type into (the task's first, if offered) and how many exceptions the page threw as
    the category was chosen. ``thrown``: shared by the pages, counts what was thrown at incomplete input.

    Raises CheckError when no category could be set up although the page names some.
    """
    found, gaps = False, []
    for category in CATEGORY_IDS:
        mark = len(s.errors)
        conv = ConverterPage(s, thrown)
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
        found = True
        yield category, conv, pair, await _thrown(s, mark)
    if not found:
        raise CheckError("; ".join(gaps) or "found no category to convert in")


def _follows(category: str, pair: tuple[str, str], one: Any, twelve: Any) -> bool:
    """Typing 1 then 12 moved the result as the conversion does (not an echo of the input)."""
    if one is None or twelve is None:
        return False
    if category == "temperature":  # offsets: the result must move with the value, by the right slope
        want = convert(12, *pair) - convert(1, *pair)
        return abs((twelve.value - one.value) - want) <= 1e-3 * abs(want) + one.half_step + twelve.half_step
    return one.value != 0 and abs(twelve.value - 12 * one.value) <= (
        1e-3 * abs(12 * one.value) + 12 * one.half_step + twelve.half_step)


# How one pair answered typing: the result follows it, it changes only on some other action,
# it changes but not as the conversion does, or nothing shows a result at all.
LIVE, NOT_LIVE, DID_NOT_FOLLOW, NO_RESULT = "live", "not live", "did not follow", "no result"


async def _live_in(s: PageSession, category: str, conv: ConverterPage, pair: tuple[str, str], *,
                   again: bool) -> tuple[str, str, list]:
    if again:  # a pair tried before may have left the page elsewhere (Enter submitting a form)
        await conv.setup(category)
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
        # A person deletes too: Backspace back to "1" shows 1's result again (a page that listens
        # only to the keys of numbers keeps showing 12's).
        await press(s, "Backspace")
        await settle(s, SLOW_DEBOUNCE_S)
        back = await conv.snapshot()
        number, text = await conv.read(steps[2], back, pair[1], "1")
        rows.append({"category": category, "typed": f"1 {pair[0]} (Backspace after 12)",
                     "changed": [t for p, t in back.items() if steps[2].get(p) != t][:4],
                     f"reading ({pair[1]})": number.value if number else text})
        one = readings[0]
        if number is not None and one is not None and abs(number.value - one.value) <= (
                1e-3 * abs(one.value) + number.half_step + one.half_step):
            return LIVE, "", rows
        shown = f"showed {number.value:g}" if number is not None else "still showed the result for 12"
        return DID_NOT_FOLLOW, (f"{category}: after Backspace (12 -> 1 {pair[0]}) the page {shown}, "
                                f"not the result for 1 ({one.value:g} {pair[1]})"), rows
    typing_changed = steps[0] != steps[1] or steps[1] != steps[2]
    await press(s, "Tab")  # the field loses focus: a "change" listener fires now
    await settle(s, _SETTLE_S)
    tried = ["Tab"]
    if await conv.snapshot() != steps[2]:
        return NOT_LIVE, f"{category}: the result changes only when the field loses focus, not while typing", rows
    if conv.convert_button:
        await click(s, conv.convert_button, "the Convert button")
        await settle(s, _SETTLE_S)
        tried.append("the Convert button")
        if await conv.snapshot() != steps[2]:
            return NOT_LIVE, (f"{category}: the result changes only after clicking the Convert button, "
                              "not while typing"), rows
    elif not typing_changed:  # no button: a person presses Enter in the field, then tries the buttons near it
        assert conv.field is not None
        await click(s, conv.field, "the value field")
        await press(s, "Enter")
        await settle(s, _SETTLE_S)
        tried.append("Enter")
        if await conv.snapshot() != steps[2]:
            return NOT_LIVE, f"{category}: the result changes only after pressing Enter, not while typing", rows
        for button in conv.maybe_convert:
            await click(s, button, "a button near the value field")
            await settle(s, _SETTLE_S)
            tried.append(f"the button {await _label(s, button)}")
            if await conv.snapshot() != steps[2]:
                return NOT_LIVE, (f"{category}: the result changes only after clicking a button "
                                  f"({await _label(s, button)}), not while typing"), rows
    if not typing_changed:
        return await _after_units_again(s, category, conv, pair, tried, rows)
    return DID_NOT_FOLLOW, f"{category}: the result did not follow typing (1 {pair[0]}, then 12 {pair[0]})", rows


async def _after_units_again(s: PageSession, category: str, conv: ConverterPage, pair: tuple[str, str],
                             tried: list[str], rows: list) -> tuple[str, str, list]:
    """Typing changed nothing, nor did what was ``tried``: a person types another value and chooses a unit
    again. A page that then shows that value's result converts, but not as it is typed (an input listener
    lost when the category was chosen): not live, saying what was tried. Otherwise nothing showed a
    result at all. A second value is tried where the page already showed the first one's result (a
    value kept from another category)."""
    for typed in ("7", "8"):
        await conv.typed(typed)
        before = await conv.snapshot()
        chosen = await conv.choose_again(*pair)
        if chosen is None:
            break
        await settle(s, _SETTLE_S)
        after = await conv.snapshot()
        if after == before:
            continue
        number, text = await conv.read(before, after, pair[1], typed)
        rows.append({"category": category, "typed": f"{typed} {pair[0]} (then chose {chosen})",
                     "changed": [t for p, t in after.items() if before.get(p) != t][:4],
                     f"reading ({pair[1]})": number.value if number else text})
        if _right(number, convert(float(typed), *pair)):
            return NOT_LIVE, (f"{category}: the result changes only after choosing a unit again, not while "
                              f"typing: typing 1, then 12 {pair[0]} changed nothing on the page, nor did "
                              f"{' or '.join(tried)}; with {typed} {pair[0]} typed, choosing {chosen} showed "
                              f"its result"), rows
        break
    return NO_RESULT, f"{category}: nothing showed a result for {pair[0]} -> {pair[1]}", rows


async def _label(s: PageSession, path: str) -> str:
    texts = await dom(s, "contextOf", {"paths": [path], "levels": 1})
    return repr(texts[path][0]["text"][:40]) if texts.get(path) else "unnamed"


async def _check_live(s: PageSession) -> CheckResult:
    start = len(s.errors)
    rows, problems, live, aside, set_aside_thrown = [], [], [], [], 0
    thrown = Thrown()
    async for category, conv, pair, thrown_choosing in _offered(s, thrown):
        # A pair the page converts wrongly (no branch for it: the result stays put) says nothing
        # about live updates: another pair of the category is tried before judging.
        others = [p for p in conv.offered_pairs() if p != pair and p[::-1] != pair][:2]
        outcomes = []
        for i, attempt in enumerate([pair, *others]):
            mark, incomplete = len(s.errors), thrown.incomplete
            verdict, detail, steps = await _live_in(s, category, conv, attempt, again=i > 0)
            rows += steps
            outcomes.append((verdict, detail, await _thrown(s, mark), thrown.incomplete - incomplete))
            if verdict in (LIVE, NOT_LIVE):
                break
        verdict, detail, *_ = next((o for o in outcomes if o[0] in (LIVE, NOT_LIVE)), None) or next(
            (o for o in outcomes if o[0] == DID_NOT_FOLLOW), outcomes[-1])
        if verdict == NO_RESULT:  # no pair of the category shows anything: judged by the others
            aside.append(category)
            set_aside_thrown += thrown_choosing + sum(o[2] for o in outcomes)
            continue
        # Set aside: a pair's that showed nothing, and what was thrown at incomplete input (bad input's).
        set_aside_thrown += sum(n if v == NO_RESULT else at_incomplete for v, _, n, at_incomplete in outcomes)
        (live if verdict == LIVE else problems).append(detail or category)
    evidence = [value("typing", rows)]
    beside = f" ({', '.join(aside)} set aside: no pair there showed a result at all)" if aside else ""
    if problems:
        status, detail = "fail", "; ".join(problems) + beside
    elif live:
        status, detail = "pass", f"the result follows typing, no button needed ({', '.join(live)}){beside}"
    else:
        raise CheckError(f"no pair showed a result, neither while typing nor after Tab, Enter or Convert "
                         f"({', '.join(aside)}): could not tell whether results follow typing")
    return CheckResult(id="live-update", status=status, detail=detail, evidence=evidence,
                       data=await _exceptions_data(s, start, set_aside_thrown, status, detail))


async def _exceptions_data(s: PageSession, start: int, set_aside: int, status: str, detail: str) -> dict[str, Any]:
    """What the check concluded and how many of the page's exceptions came from pairs it set aside
    (read back by ``_set_aside_exceptions`` once the harness has judged the exceptions)."""
    return {"judged": {"status": status, "detail": detail},
            "exceptions": {"thrown": await _thrown(s, start), "set aside": set_aside}}


_BAD = ("", "-", "1e", "abc")  # "." is read as "abc" is by Number, parseFloat and a number field
_BAD_MORE = ("", "abc")  # on a further pair: the empty field and a word, where formulas part ways
_BAD_PAIRS = 2  # pairs judged per category: "" may read as 0 in one formula and NaN in another


def _bad_pairs(conv: ConverterPage, pair: tuple[str, str]) -> list[tuple[str, str]]:
    """The category's pair first, then pairs to other units (a formula of their own), at most four."""
    out, seen_to = [pair], {pair[1]}
    for p in conv.offered_pairs():
        if p not in out and p[1] not in seen_to:
            out.append(p)
            seen_to.add(p[1])
    return out[:4]


async def _bad_in(s: PageSession, category: str, conv: ConverterPage, pair: tuple[str, str]
                  ) -> tuple[list, list, int, int]:
    """(rows, problems, pairs judged, exceptions from pairs set aside) for one category."""
    rows, problems, judged, set_aside = [], [], 0, 0
    for attempt in _bad_pairs(conv, pair):  # the category is chosen: each pair needs only its units
        mark = len(s.errors)
        await conv.units(*attempt)
        conv.answered_by = None
        number, _ = await conv.reading("5", attempt[1])  # learns whether results need a button
        if number is None and conv.answered_by is None:  # nothing showed for a valid value: says nothing here
            set_aside += await _thrown(s, mark)
            continue
        if number is None:  # something showed, though not a number we could read: use the page the same way
            conv.commit, conv.convert_button = conv.answered_by
        judged += 1
        page = await dom(s, "pageText", {"exclude": conv.field})
        # Words the page shows for a valid value (help text saying "null") are not the bad input's doing.
        usual = _NONSENSE.findall(" ".join([page["text"], *page["values"]]))
        for bad in _BAD if judged == 1 else _BAD_MORE:
            await conv.typed(bad)
            page = await dom(s, "pageText", {"exclude": conv.field})
            words = _NONSENSE.findall(" ".join([page["text"], *page["values"]]))
            found = sorted({w for w in words if words.count(w) > usual.count(w)})
            rows.append({"category": category, "typed": bad or "(empty)", "unit pair": f"{attempt[0]} -> {attempt[1]}",
                         "field holds": page["field"], "nonsense shown": found})
            if found:
                problems.append(f"{category}: typing {bad or 'nothing'!r} ({attempt[0]} -> {attempt[1]}) "
                                f"showed {', '.join(found)}")
                break
        if problems or judged >= _BAD_PAIRS:
            break
    return rows, problems, judged, set_aside


async def _check_bad(s: PageSession) -> CheckResult:
    start = len(s.errors)
    rows, problems, aside, set_aside = [], [], [], 0
    async for category, conv, pair, thrown_choosing in _offered(s):
        more_rows, more_problems, judged, thrown = await _bad_in(s, category, conv, pair)
        rows += more_rows
        problems += more_problems
        set_aside += thrown
        if not judged:
            aside.append(category)
            set_aside += thrown_choosing
    if not problems and not rows:
        raise CheckError(f"no pair showed a result for a valid value ({', '.join(aside)}): could not try bad input")
    beside = f" ({', '.join(aside)} set aside: no pair there showed a result for a valid value)" if aside else ""
    status = "fail" if problems else "pass"
    detail = ("; ".join(problems) if problems else "no NaN/undefined/Infinity/null for bad input") + beside
    return CheckResult(id="bad-input", status=status, detail=detail, evidence=[value("bad input", rows)],
                       data=await _exceptions_data(s, start, set_aside, status, detail))


def _set_aside_exceptions(result: CheckResult) -> CheckResult:
    """A check the harness failed only for exceptions that all came from what the check set aside
    (pairs that showed no result, the field holding no whole number) keeps its own verdict (the
    exceptions stay in its evidence and in runtime-errors; bad input's are bad-input's finding)."""
    judged, thrown = result.data.get("judged"), result.data.get("exceptions")
    if (result.status == "fail" and judged and thrown and judged["status"] == "pass"
            and thrown["thrown"] and thrown["thrown"] == thrown["set aside"]):
        result.status = "pass"
        result.detail = (f"{judged['detail']}; the page threw {thrown['thrown']} exception(s), all while "
                         "using pairs that showed no result or while the field held no whole number (set aside)")
    elif result.status == "fail" and judged and thrown and judged["status"] == "pass" and thrown["set aside"]:
        # Failed for the rest: say how many were set aside, so the count a reader sees adds up.
        result.detail += (f" ({thrown['set aside']} of the {thrown['thrown']} while using pairs that showed no "
                          "result or while the field held no whole number)")
    return result


CHECKS = (
    ("length", lambda s: _check_category(s, "length")),
    ("weight", lambda s: _check_category(s, "weight")),
    ("temperature", lambda s: _check_category(s, "temperature")),
    ("live-update", _check_live),
    ("bad-input", _check_bad),
)
CHECK_IDS = tuple(check_id for check_id, _ in CHECKS)


async def probe_converter(ctx: ProbeContext, only: Iterable[str] | None = None) -> list[CheckResult]:
    """Use the converter like a person; one result per check id, each from a pristine page.

    `only` limits the run to some check ids (tests of a fixture built to break one check).
    """
    return [_set_aside_exceptions(r) for r in await run_checks_side_by_side(ctx, CHECKS, only)]
