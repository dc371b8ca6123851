"""Reading a converter's answer: reference conversions, tolerance, and which shown number is the result.

Pure functions (no browser), so the tricky parts are unit-tested directly.
"""

from __future__ import annotations

import re
from typing import Any

from ..browser._numbers import Number, parse_numbers
from ._units import unit_mentions

__all__ = ["convert", "pick_reading", "within_tolerance"]

_TO_BASE = {  # metres and kilograms
    "m": 1.0,
    "km": 1000.0,
    "cm": 0.01,
    "mm": 0.001,
    "mi": 1609.344,
    "yd": 0.9144,
    "ft": 0.3048,
    "in": 0.0254,
    "kg": 1.0,
    "g": 0.001,
    "mg": 1e-6,
    "lb": 0.45359237,
    "oz": 0.028349523125,
    "t": 1000.0,
}
_OUTPUT_HINT = re.compile(r"result|output|answer|converted", re.IGNORECASE)


def convert(x: float, frm: str, to: str) -> float:
    """Reference conversion (temperature with its offsets)."""
    if frm in _TO_BASE:
        return x * _TO_BASE[frm] / _TO_BASE[to]
    kelvin = {"C": x + 273.15, "F": (x - 32) * 5 / 9 + 273.15, "K": x}[frm]
    return {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}[to]


def within_tolerance(shown: Number, expected: float) -> bool:
    """Right within 1e-3 relative, or within the rounding the page shows (at most 1 % off).

    The 1 % cap keeps a coarse display (whole numbers) from hiding a wrong factor.
    """
    err = abs(shown.value - expected)
    return err <= 1e-3 * abs(expected) + 1e-12 or (err <= shown.half_step * 1.000001 and err <= 0.01 * abs(expected))


def _unit_next_to(text: str, n: Number, category: str) -> str | None:
    for unit, start, _ in unit_mentions(text, category=category):
        gap = text[n.end : start]
        if start >= n.end and len(gap) <= 3 and not gap.strip(" °"):
            return unit
    return None


def pick_reading(
    changed: dict[str, str], contexts: dict[str, list[dict[str, Any]]], to: str, category: str, typed: str
) -> tuple[Number | None, str]:
    """The number the page shows for unit `to` among the elements that changed with the value.

    Returns (number, where it was read) or (None, why not).
    """
    target, unknown = [], []
    for path, text in changed.items():
        nums = parse_numbers(text)
        if not nums:
            continue
        beside = [(n, _unit_next_to(text, n, category)) for n in nums]
        hit = [n for n, u in beside if u == to]
        if hit:
            target.append((path, hit[-1], text))
            continue
        if any(u for _, u in beside) or len({u for u, _, _ in unit_mentions(text, category=category)}) > 1:
            continue  # the element names another unit: an echo of the input, another row
        unit = None
        for ctx in contexts.get(path, [])[1:]:
            named = unit_mentions(ctx["text"], category=category)
            if not named:
                continue
            if len({u for u, _, _ in named}) == 1:
                unit = named[0][0]
            else:  # "1 km = 1000 m" split over elements: match the number in the ancestor's text
                unit = next(
                    (
                        _unit_next_to(ctx["text"], n, category)
                        for n in parse_numbers(ctx["text"])
                        if n.text == nums[-1].text
                    ),
                    None,
                )
                unit = unit or "?"
            break
        if unit == to:
            target.append((path, nums[-1], text))
        elif unit is None:
            unknown.append((path, nums[-1], text))
    if not target:
        # The typed value echoed back ("You typed 7") is never the result: no pair maps x to x.
        typed_value = parse_numbers(typed)[0].value if parse_numbers(typed) else None
        rest = [c for c in unknown if c[1].value != typed_value]
        if len(rest) > 1:
            hinted = [
                c
                for c in rest
                if _OUTPUT_HINT.search(" ".join(x["hint"] + " " + x["tag"] for x in contexts.get(c[0], [])[:2]))
            ]
            rest = hinted or rest
        if len(rest) != 1:
            shown = [c[2] for c in rest][:6]
            return None, (
                f"could not tell which number is the result among {shown}"
                if rest
                else "no number for this unit changed with the typed value"
            )
        target = rest
    path, number, text = target[0]
    return number, text
