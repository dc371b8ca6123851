"""The counter's probes: click what a person could click, read the numbers shown, judge by what changed.

Nothing here knows the artefact's names: a control adds one because each click on it raised a
number on the page by one, not because it says "+". One exploration per check run clicks every
control twice and records what its clicks did to the numbers shown; then each check plays its
feature on a fresh page and reads the numbers after every click:

- ``increment``: three clicks on a control raise a number shown by one each;
- ``decrement``: three clicks from the start lower it by one each, below zero too;
- ``reset``: with the count moved well away from 0, one click sets it back to 0.

No control has the effect after every one was tried: ``fail``, with the effect table as evidence.
More controls than the cap, numbers that came and went so the clicks could not be read, or a page
that could not be explored: ``error`` (could not tell).

It registers with the engine at the bottom (``register_task``); agentbench imports this module by
the name the plug-in's ``TaskPlugin.probes`` gives, on the host and in the checker container.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from agentbench.checks._model import CheckResult, Evidence
from agentbench.checks.browser import PageBroken, PageSession, ProbeContext, register_task
from agentbench.checks.browser._explore import Control, act, controls
from agentbench.checks.browser._find import dom, run_checks_side_by_side, value
from agentbench.checks.browser._numbers import parse_numbers

CHECKS = ("increment", "decrement", "reset")
CAP = 12  # controls tried at most; a page with more is "could not tell" when none had the effect
CLICKS = 3  # clicks per check
_NOT_BUTTONS = {"field", "editable", "select"}  # typed into or chosen from, not clicked to count
_WHAT = {"increment": "adds one to a number shown", "decrement": "subtracts one from a number shown",
         "reset": "sets the count back to 0"}

Readings = list[list[float]]  # the numbers shown before the first click and after each click


async def numbers(session: PageSession) -> list[float]:
    """Every number a person sees on the page, in reading order (text, then field values)."""
    shown = await dom(session, "pageText")
    out = [n.value for n in parse_numbers(shown["text"])]
    for text in shown["values"]:
        out += [n.value for n in parse_numbers(str(text))]
    return out


def readable(readings: Readings) -> bool:
    """The same numbers were shown throughout (none came or went), so they can be followed one by one."""
    return len({len(r) for r in readings}) == 1


def stepped(readings: Readings, step: float) -> set[int]:
    """The numbers shown (by position) that moved by ``step`` on every click."""
    if not readable(readings) or len(readings) < 2:
        return set()
    return {i for i in range(len(readings[0]))
            if all(round(b[i] - a[i], 9) == step for a, b in zip(readings, readings[1:], strict=False))}


def back_to_zero(start: list[float], moved: list[float], after: list[float]) -> bool:
    """A number that was moved from ``start`` to at least 2 away from 0 reads 0 ``after``."""
    if not readable([start, moved, after]):
        return False
    return any(m != s and abs(m) >= 2 and a == 0 for s, m, a in zip(start, moved, after, strict=True))


def said(readings: Readings) -> str:
    """What each click did, as a person would say it: "+1", "nothing", "-2, +1" (several numbers)."""
    if not readable(readings):
        return "numbers came or went"
    out = []
    for a, b in zip(readings, readings[1:], strict=False):
        steps = sorted({round(y - x, 9) for x, y in zip(a, b, strict=True) if y != x})
        out.append(" and ".join(f"{s:+g}" for s in steps) or "nothing")
    return ", ".join(out)


def _shown(readings: Readings) -> str:
    return " -> ".join("[" + ", ".join(f"{v:g}" for v in r[:6]) + "]" for r in readings)


async def clicks(session: PageSession, control: Control, times: int) -> Readings:
    """Click ``control`` ``times`` times with the real mouse; the numbers shown before and after each."""
    readings = [await numbers(session)]
    for _ in range(times):
        await act(session, control, "click")
        readings.append(await numbers(session))
    return readings


async def move(session: PageSession, mover: Control) -> Readings:
    """Click ``mover`` until what it moves reads at least 2 away from 0 (at most 6 clicks), so a
    click that then brings it to 0 is a reset, not one step down from 1."""
    readings = [await numbers(session)]
    for _ in range(6):
        await act(session, mover, "click")
        readings.append(await numbers(session))
        if readable(readings):
            moved = [b for a, b in zip(readings[0], readings[-1], strict=True) if b != a]
            if moved and all(abs(b) >= 2 for b in moved):
                break
    return readings


@dataclass
class Found:
    """The exploration: which control does what, and the effect table shown as evidence."""

    roles: dict[str, Control] = field(default_factory=dict)
    rows: list[dict[str, str]] = field(default_factory=list)
    tried: int = 0
    capped: bool = False
    unreadable: bool = False  # some clicks changed which numbers were shown: they could not be followed

    def note(self, control: Control, readings: Readings, did: str) -> None:
        self.rows.append({"control": control.describe(), "found by": control.found_by,
                          "numbers shown": _shown(readings), "did": did})
        self.unreadable |= not readable(readings)


def _roles(tried: list[tuple[Control, set[int], set[int]]]) -> dict[str, Control]:
    """Which control adds one and which subtracts one, from (control, numbers it raised by one per
    click, numbers it lowered by one per click): preferably a pair moving the same number (the count;
    a tally of clicks rises whatever is clicked), else the first of each."""
    for up, ups, _ in tried:
        for down, _, downs in tried:
            if up is not down and ups & downs:
                return {"increment": up, "decrement": down}
    roles: dict[str, Control] = {}
    for control, ups, downs in tried:
        if downs:
            roles.setdefault("decrement", control)
        elif ups:
            roles.setdefault("increment", control)
    return roles


async def explore(ctx: ProbeContext) -> Found:
    """Click each control twice on one page and see which numbers moved by one per click. The
    controls that neither add nor subtract one are then clicked once each after the count was
    moved well away from 0 (a reset does nothing at 0, and one step down from 1 is 0 too): one
    that brings what moved back to 0 resets."""
    found = Found()
    session = await ctx.harness.open(ctx.artefact_dir, ctx.entry)
    try:
        candidates = [c for c in await controls(session) if c.kind not in _NOT_BUTTONS and not c.away]
        found.capped = len(candidates) > CAP
        tried: list[tuple[Control, set[int], set[int]]] = []
        for control in candidates[:CAP]:
            found.tried += 1
            readings = await clicks(session, control, 2)
            tried.append((control, stepped(readings, 1.0), stepped(readings, -1.0)))
            found.note(control, readings, said(readings))
        found.roles = _roles(tried)
        mover = found.roles.get("increment") or found.roles.get("decrement")
        others = [c for c, _, _ in tried if c not in found.roles.values()] if mover is not None else []
        for control in others:
            moved = await move(session, mover)
            after = await clicks(session, control, 1)
            if back_to_zero(moved[0], moved[-1], after[-1]):
                found.roles["reset"] = control
            found.note(control, [moved[-1], after[-1]], "reset" if "reset" in found.roles else said(after))
            if "reset" in found.roles:
                break
    finally:
        ctx.page_errors.extend(e for e in session.errors if e not in ctx.page_errors)
        await session.close()
    return found


def _absent(check_id: str, found: Found) -> CheckResult:
    table = value("controls tried and what their clicks did", found.rows)
    what = _WHAT[check_id]
    if found.capped:
        return CheckResult(id=check_id, status="error", evidence=[table],
                           detail=f"no control {what} among the first {CAP} tried; the page has more")
    if found.unreadable:
        return CheckResult(id=check_id, status="error", evidence=[table],
                           detail=f"no control {what} could be seen: numbers came or went as controls were clicked")
    if not found.tried:
        return CheckResult(id=check_id, status="fail", detail="the page has no control a person could click")
    return CheckResult(id=check_id, status="fail", evidence=[table],
                       detail=f"none of the {found.tried} controls {what}")


def check_body(check_id: str, found: Found) -> Callable[[PageSession], Awaitable[CheckResult]]:
    """The body ``run_check`` runs on a fresh page: play the feature and read the numbers shown."""
    control = found.roles.get(check_id)

    async def body(session: PageSession) -> CheckResult:
        if control is None:
            return _absent(check_id, found)
        if check_id == "reset":
            mover = found.roles.get("increment") or found.roles["decrement"]
            moved = await move(session, mover)
            after = await clicks(session, control, 1)
            readings = [moved[0], moved[-1], after[-1]]
            ok = back_to_zero(moved[0], moved[-1], after[-1])
            want = f"after {len(moved) - 1} clicks on {mover.describe()}, a click on {control.describe()} shows 0"
            did = said(after)
        else:
            step = 1.0 if check_id == "increment" else -1.0
            readings = await clicks(session, control, CLICKS)
            ok = bool(stepped(readings, step))
            want = f"each of {CLICKS} clicks on {control.describe()} changes the count by {step:+g}"
            did = said(readings)
        evidence = [Evidence(kind="value", label="numbers shown, click by click", value=_shown(readings))]
        if ok:
            return CheckResult(id=check_id, status="pass", detail=want, evidence=evidence)
        status = "fail" if readable(readings) else "error"
        return CheckResult(id=check_id, status=status, evidence=evidence,
                           detail=f"expected: {want}; the clicks did: {did}")

    return body


async def counter_probes(ctx: ProbeContext) -> list[CheckResult]:
    """The task's probe coroutine: one exploration, then the three checks side by side on fresh pages."""
    try:
        found = await explore(ctx)
    except PageBroken as exc:  # hung, crashed or navigated away under a person's clicks: the page's defect
        return [CheckResult(id=c, status="fail", detail=f"the page broke while its controls were tried: {exc}")
                for c in CHECKS]
    except Exception as exc:  # noqa: BLE001 - could not tell, and why
        return [CheckResult(id=c, status="error", detail=f"the page could not be explored: {type(exc).__name__}: "
                            f"{exc}") for c in CHECKS]
    return await run_checks_side_by_side(ctx, [(c, check_body(c, found)) for c in CHECKS])


# The registration: agentbench imports this module by the name in TaskPlugin.probes, which runs it.
register_task("counter", checks=CHECKS, probes=counter_probes)
