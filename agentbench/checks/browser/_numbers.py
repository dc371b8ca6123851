"""Numbers as pages print them ("1,000.5", "1.2e-3", "4.8 × 10³", "−3"): their value and shown precision.

Pure functions (no browser), unit-tested directly.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["Number", "parse_numbers"]

_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUM = re.compile(
    r"(?<![\w.])(?P<sign>[-+−])?"
    r"(?P<int>\d{1,3}(?:[,\u202f]\d{3})+(?!\d)|\d+)?(?P<frac>\.\d+)?"
    r"(?:\s*(?:[eE](?P<exp>[-+−]?\d+)|[×x·*]\s*10\s*\^?\s*(?P<exp2>[-+−]?\d+)))?"
)


@dataclass(frozen=True)
class Number:
    """A number as printed: its value, where it stood, and half a unit of its last shown digit."""

    value: float
    start: int
    end: int
    text: str
    half_step: float


def parse_numbers(text: str) -> list[Number]:
    """Every number printed in `text`: thousands separators, exponents, "× 10⁻³", "−" minus."""
    t = text.translate(_SUPER).replace("\u00a0", " ")
    out: list[Number] = []
    for m in _NUM.finditer(t):
        if not (m.group("int") or m.group("frac")):
            continue
        digits = (m.group("int") or "0").replace(",", "").replace("\u202f", "")
        frac = m.group("frac") or ""
        exp_s = (m.group("exp") or m.group("exp2") or "0").replace("−", "-")
        exp = int(exp_s)
        try:
            value = float(f"{digits}{frac}") * 10.0**exp
        except OverflowError:
            value = math.inf
        if m.group("sign") in {"-", "−"}:
            value = -value
        decimals = max(len(frac) - 1, 0)
        out.append(Number(value, m.start(), m.end(), m.group(0), 0.5 * 10.0 ** (exp - decimals)))
    return out
