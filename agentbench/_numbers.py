"""Numbers as people read them: ``4`` not ``3.9999999999999973``, ``1.2k tok``, ``67% [21-94%]``.

Only what is printed goes through here (report, CLI tables); result.json and every ``--json``
output keep full precision.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["for_people", "human_count", "human_number", "human_pct", "human_seconds", "rounded"]


def rounded(x: float) -> float | int:
    """x rounded for reading: 3 decimals (2 significant digits below 0.001), whole numbers as int."""
    if not math.isfinite(x):
        return x
    if x != 0 and abs(x) < 0.001:
        return float(f"{x:.2g}")
    r = round(x, 3)
    if r == int(r) and abs(r) < 2**53:
        return int(r)  # -0.0 becomes 0 as well
    return r


def human_number(x: Any) -> str:
    """A number as text for people; anything else as ``str``. Booleans stay ``true``/``false``."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        r = rounded(x)
        if isinstance(r, float) and math.isfinite(r) and abs(r) >= 0.001:
            return f"{r:.3f}".rstrip("0").rstrip(".")
        return str(r)
    return str(x)


def for_people(value: Any) -> Any:
    """A JSON value with every float rounded (for display only: never store the result)."""
    if isinstance(value, float):
        return rounded(value)
    if isinstance(value, dict):
        return {k: for_people(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [for_people(v) for v in value]
    return value


def human_count(n: float | None) -> str:
    """``980``, ``12.3k``, ``1.2M``: token counts at a glance."""
    if n is None:
        return "—"
    a = abs(n)
    if a >= 999_500:
        return f"{n / 1e6:.1f}M".replace(".0M", "M")
    if a >= 9_995:
        return f"{n / 1e3:.0f}k"
    if a >= 1_000:
        return f"{n / 1e3:.1f}k".replace(".0k", "k")
    return f"{n:.0f}"


def human_seconds(s: float | None) -> str:
    """``0.4 s``, ``42 s``, ``3m05s``."""
    if s is None:
        return "—"
    if s < 10:
        return f"{s:.0f} s" if s == int(s) else f"{s:.1f} s"
    if s < 600:
        return f"{s:.0f} s"
    m, sec = divmod(round(s), 60)
    return f"{m}m{sec:02d}s"


def human_pct(x: float | None) -> str:
    """A fraction as a whole percentage: ``0.6667`` -> ``67%``."""
    return "—" if x is None else f"{x * 100:.0f}%"
