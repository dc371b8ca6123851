"""Unit and category names as a converter's page writes them: words or symbols ("Kilometre (km)", "°F", "lbs").

Pure functions (no browser), unit-tested directly.
"""

from __future__ import annotations

import re

__all__ = ["CATEGORIES", "category_of", "unit_mentions", "unit_of", "unit_pair_of", "units_of"]

CATEGORIES = {
    "length": re.compile(r"\b(length|distance)s?\b"),
    "weight": re.compile(r"\b(weight|mass)(es)?\b"),
    "temperature": re.compile(r"\btemp(erature)?s?\b"),
}

# unit id -> (category, names as a word regex, symbols as whole tokens)
_UNITS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "m": ("length", r"met(?:er|re)s?|mtrs?", ("m",)),
    "km": ("length", r"kilo-?met(?:er|re)s?", ("km", "kms")),
    "cm": ("length", r"cent[ie]-?met(?:er|re)s?", ("cm", "cms")),
    "mm": ("length", r"mill?i-?met(?:er|re)s?", ("mm",)),
    "mi": ("length", r"(?<!nautical )miles?", ("mi",)),
    "yd": ("length", r"yards?", ("yd", "yds")),
    "ft": ("length", r"foot|feet", ("ft",)),
    "in": ("length", r"inch(?:es)?", ("in",)),
    "kg": ("weight", r"kilo(?:-?gram(?:me)?s?|s)?", ("kg", "kgs")),
    "g": ("weight", r"gram(?:me)?s?", ("g", "gr")),
    "mg": ("weight", r"mill?i-?gram(?:me)?s?", ("mg",)),
    "lb": ("weight", r"pounds?", ("lb", "lbs")),
    "oz": ("weight", r"ounces?", ("oz",)),
    "t": ("weight", r"tonnes?|metric tons?|(?<!short )(?<!long )(?<!us )tons?", ("t",)),
    "C": ("temperature", r"cel[cs]{1,2}i?us|centigrade", ("c", "degc")),
    "F": ("temperature", r"fah?rh?enh?e?it", ("f", "degf")),
    "K": ("temperature", r"kelvins?", ("k",)),
}
_WORD = {u: re.compile(rf"(?<![^\W\d_])(?:{w})(?![^\W\d_])") for u, (_, w, _) in _UNITS.items()}
_TOKEN = re.compile(r"[^\W\d_]+")


def _clean(text: str) -> str:
    return text.lower().replace("℃", "°c").replace("℉", "°f").replace("º", "°").replace("\u00a0", " ")


def unit_of(*texts: str, category: str | None = None) -> str | None:
    """The one unit a control's label names ("Kilometre (km)" -> "km"), else None.

    Each text is tried in turn (an option's label, then its value); a text naming several units
    says nothing.
    """
    for text in texts:
        found = {u for u, _, _ in unit_mentions(text, category=category, loose=True)}
        if len(found) == 1:
            return found.pop()
    return None


def unit_pair_of(*texts: str, category: str | None = None) -> tuple[str, str] | None:
    """The (from, to) pair a label names ("Meters to Feet" -> ("m", "ft")), else None."""
    for text in texts:
        named = []
        for u, _, _ in unit_mentions(text, category=category, loose=True):
            if u not in named:
                named.append(u)
        if len(named) == 2:
            return named[0], named[1]
    return None


def units_of(category: str) -> list[str]:
    """Every unit of a category, in the task's order (m, km, cm, ...)."""
    return [u for u, (cat, _, _) in _UNITS.items() if cat == category]


def unit_mentions(text: str, *, category: str | None = None, loose: bool = False) -> list[tuple[str, int, int]]:
    """Units named in `text` as (unit, start, end), in order.

    Names ("metres") count anywhere. Symbols ("m", "in", "t") are ordinary words too, so in free
    text (loose=False) they count only next to a number, in brackets, before ":"/"=", or as the
    first word of a short text; in a control's label (loose=True) any whole token counts.
    """
    t = _clean(text)
    out: dict[tuple[int, int], str] = {}
    for unit, (cat, _, _symbols) in _UNITS.items():
        if category and cat != category:
            continue
        for m in _WORD[unit].finditer(t):
            out[(m.start(), m.end())] = unit
    tokens = list(_TOKEN.finditer(t))
    for i, tok in enumerate(tokens):
        if any(s <= tok.start() < e for s, e in out):
            continue
        for unit, (cat, _, symbols) in _UNITS.items():
            if (category and cat != category) or tok.group() not in symbols:
                continue
            before, after = t[: tok.start()].rstrip(" °"), t[tok.end() :].lstrip()
            ok = loose or (
                before[-1:].isdigit()
                or before.endswith("(")
                or after[:1] in {")", ":", "="}
                or (i == 0 and len(t) <= 40)
            )
            if ok:
                out[(tok.start(), tok.end())] = unit
    return [(u, s, e) for (s, e), u in sorted(out.items())]


def category_of(*texts: str) -> str | None:
    """The category a label names ("📏 Length" -> "length"), else None."""
    for text in texts:
        found = [c for c, rx in CATEGORIES.items() if rx.search(text.lower())]
        if len(found) == 1:
            return found[0]
    return None
