"""A converter read in its own language: unit and category words, and numbers with a decimal comma.

Pure functions (no browser). The unit finder (``_units.unit_of`` and friends) knows English names
and symbols; a page in German ("Zoll", "Fuß", "Gewicht") or French ("pouce", "poids") is read by
putting its words in English first (``english``). Words that are also English ones ("pie", "once",
"peso") are read so only where the page's language (``<html lang>``) is theirs.

Numbers are written as the page's language writes them: ``12,7`` and ``1.609,344`` in German,
``1 609,344`` in French, ``1,609.344`` in English. ``plain_numbers`` rewrites every number of a
text as ``12.7`` / ``1609.344``, so ``12,7`` is never read as 12 and 7. The shape of a number
decides where it can: a comma followed by other than three digits (``12,7``), more than three
digits before it (``1609,344``), or both marks in one number (``1.609,344``). Only ``1,609`` and
``1.609`` are ambiguous (one group of three digits); they follow the page's convention, and the
other reading is kept as an alternative (``ambiguous_alternatives``), the way a person reading
"1.609 km" for a mile knows which one is meant.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["COMMA_LANGUAGES", "ambiguous_alternatives", "comma_decimal_language", "controls_in_english", "english",
           "plain_numbers", "shows_decimal_comma", "typed_as"]

# Languages whose numbers use a decimal comma (CLDR): the page's lang decides ambiguous numbers.
COMMA_LANGUAGES = frozenset(
    "de fr es it pt nl ru pl cs sk sl hr sr bs uk be bg ro hu da sv nb nn no fi et lv lt el tr az "
    "id vi ca eu gl is ka kk ky mn uz af sq mk hy".split()
)

# (language or "" for any page, foreign word pattern, English word). Longer words are matched first.
_GLOSSARY: tuple[tuple[str, str, str], ...] = (
    # German
    ("", r"längen?|laenge", "length"), ("", r"entfernung|distanz", "distance"),
    ("", r"gewichte?", "weight"), ("de fr", r"masse", "mass"), ("", r"temperatur(?:en)?", "temperature"),
    ("", r"zentimeter", "centimeter"), ("", r"meilen?", "mile"), ("", r"fu(?:ß|ss)", "foot"),
    ("", r"zoll", "inch"), ("", r"milligramm", "milligram"), ("", r"kilogramm", "kilogram"),
    ("", r"gramm", "gram"), ("", r"pfund", "pound"), ("", r"unzen?", "ounce"), ("", r"tonnen", "tonnes"),
    ("", r"umrechnen|berechnen|konvertieren|umwandeln", "convert"),
    ("", r"zurücksetzen|löschen", "reset"),
    # French
    ("", r"longueur", "length"), ("", r"poids", "weight"), ("", r"température", "temperature"),
    ("", r"kilomètres?", "kilometer"), ("", r"centimètres?", "centimeter"), ("", r"millimètres?", "millimeter"),
    ("", r"mètres?", "meter"), ("fr", r"pieds?", "foot"), ("fr", r"pouces?", "inch"),
    ("fr", r"milles?", "mile"), ("fr", r"verges?", "yard"), ("fr", r"livres?", "pound"),
    ("fr", r"onces?", "ounce"), ("fr", r"convertir|calculer", "convert"), ("fr", r"effacer", "reset"),
    # Spanish, Portuguese, Italian
    ("", r"longitud|comprimento|lunghezza", "length"), ("es pt it", r"pesos?", "weight"),
    ("es pt it", r"temperatura", "temperature"), ("es pt it", r"masa|massa", "mass"),
    ("", r"kil[oó]metros?|quil[oô]metros?|chilometr[oi]", "kilometer"),
    ("", r"cent[ií]metros?|centimetr[oi]", "centimeter"), ("", r"mil[ií]metros?|millimetr[oi]", "millimeter"),
    ("es pt it", r"metros?|metri", "meter"), ("", r"millas?|milhas?|miglia|miglio", "mile"),
    ("", r"yardas?|jardas?|iard[ae]", "yard"), ("es", r"pies?", "foot"), ("pt", r"pés?", "foot"),
    ("it", r"pied[ei]", "foot"), ("", r"pulgadas?|polegadas?|pollic[ei]", "inch"),
    ("", r"kilogramos?|quilogramas?|chilogramm[oi]", "kilogram"),
    ("", r"miligramos?|miligramas?|milligramm[oi]", "milligram"),
    ("es pt it", r"gramos?|gramas?|gramm[oi]", "gram"), ("es pt", r"libras?", "pound"), ("it", r"libbr[ae]", "pound"),
    ("", r"onzas?|onças?", "ounce"), ("it", r"once|oncia", "ounce"),
    ("", r"toneladas?|tonnellat[ae]", "tonne"),
    ("es pt", r"convertir|converter|calcular", "convert"), ("it", r"converti|calcola", "convert"),
    # Dutch
    ("", r"lengte", "length"), ("", r"temperatuur", "temperature"), ("", r"mijlen|mijl", "mile"),
    ("nl", r"voet", "foot"), ("nl", r"duim", "inch"), ("nl", r"pond", "pound"),
    ("nl", r"omrekenen|berekenen", "convert"),
)
_COMPILED: dict[str, re.Pattern[str] | None] = {}
_ENGLISH: dict[str, list[str]] = {}  # language -> the English word of each group of its pattern


def _language(lang: str | None) -> str:
    return (lang or "").strip().lower().replace("_", "-").split("-")[0]


def comma_decimal_language(lang: str | None) -> bool:
    """Whether the page's language (``de``, ``de-AT``, ``fr_CA``) writes decimals with a comma."""
    return _language(lang) in COMMA_LANGUAGES


def _glossary(lang: str) -> re.Pattern[str] | None:
    if lang not in _COMPILED:
        entries = [(w, en) for langs, w, en in _GLOSSARY if not langs or lang in langs.split()]
        # Whole words only ("Zollstock" is no inch): each alternative is bounded by non-letters.
        _COMPILED[lang] = re.compile(
            "|".join(rf"(?P<g{i}>(?<![^\W\d_])(?:{w})(?![^\W\d_]))" for i, (w, _) in enumerate(entries)),
            re.IGNORECASE,
        ) if entries else None
        _ENGLISH[lang] = [en for _, en in entries]
    return _COMPILED[lang]


def english(text: str, lang: str | None = None) -> str:
    """`text` with its unit, category and button words in English ("12,7 Zentimeter" -> "12,7 centimeter")."""
    if not text or text.isascii() and not re.search(r"[a-z]{3}", text, re.IGNORECASE):
        return text
    key = _language(lang)
    rx = _glossary(key)
    if rx is None:
        return text
    words = _ENGLISH[key]
    return rx.sub(lambda m: words[int(str(m.lastgroup)[1:])], text)


def controls_in_english(ctl: dict[str, Any], lang: str | None) -> dict[str, Any]:
    """A page's controls (as ``convControls`` lists them) with their words in English, in place."""
    for f in ctl["fields"]:
        f["hint"] = english(f["hint"], lang)
    for sel in ctl["selects"]:
        sel["hint"] = english(sel["hint"], lang)
        for o in sel["options"]:
            o["text"], o["value"] = english(o["text"], lang), english(o["value"], lang)
    for c in [*ctl["choices"], *ctl["texts"]]:
        c["label"], c["value"] = english(c["label"], lang), english(c["value"], lang)
    return ctl


# ---- numbers -------------------------------------------------------------------------------

# Digits joined by marks: "1.609,344", "12,7", "1 609,344" (a space, narrow or not: pages' text is read
# with its spaces made plain), "1’609.344". A space or apostrophe joins only a group of three digits.
_JOINED = re.compile(r"(?<![\w.,])\d+(?:(?:[.,]|[ \u202f\u00a0\u2019'](?=\d{3}(?!\d)))\d+)+(?!\d)")
_GROUP_MARKS = " \u202f\u00a0\u2019'"
_MARK = re.compile(r"[., \u202f\u00a0\u2019']")


def _read(token: str, comma: bool) -> tuple[str, str | None]:
    """(the token with a dot decimal and no grouping, the other reading if its shape is ambiguous)."""
    runs, marks = _MARK.split(token), _MARK.findall(token)
    grouped = lambda rest: all(len(r) == 3 for r in rest)  # noqa: E731 - a tiny predicate
    head = runs[0]
    if any(m in _GROUP_MARKS for m in marks):  # spaces/apostrophes only ever group
        if len(head) > 3:
            return token, None
        if marks[-1] in ".," and all(m in _GROUP_MARKS for m in marks[:-1]) and grouped(runs[1:-1]):
            return "".join(runs[:-1]) + "." + runs[-1], None  # "2 743,2", "1 609.344"
        if not all(m in _GROUP_MARKS for m in marks) or not grouped(runs[1:]):
            return token, None
        if " " in marks and not comma:  # "1 000" on an English page: two numbers, or one in SI style
            return token, "".join(runs)
        return "".join(runs), None
    kinds = set(marks)
    if len(kinds) == 2:  # both: the last mark is the decimal one, the other groups ("1.609,344", "1,609.344")
        last = marks[-1]
        if marks.count(last) == 1 and grouped(runs[1:-1]) and len(head) <= 3:
            return "".join(runs[:-1]) + "." + runs[-1], None
        return token, None  # not a number as anyone writes one: left as it is
    mark = marks[0]
    if len(marks) > 1:  # "1.000.000", "1,000,000": grouping only
        return ("".join(runs), None) if grouped(runs[1:]) and len(head) <= 3 else (token, None)
    frac = runs[1]
    decimal = head + "." + frac
    if len(frac) != 3 or len(head) > 3 or head == "0" or head.startswith("0"):
        return decimal, None  # "12,7", "1609,344", "0,500": the shape says decimal
    as_comma_page = decimal if mark == "," else head + frac  # ambiguous "1,609" / "1.609"
    as_dot_page = decimal if mark == "." else head + frac
    first, other = (as_comma_page, as_dot_page) if comma else (as_dot_page, as_comma_page)
    return first, other


def plain_numbers(text: str, comma: bool) -> str:
    """`text` with every number written plainly ("1.609,344" -> "1609.344"); `comma`: the page's
    convention for the ambiguous ``1,609`` / ``1.609``."""
    if not text or not any(c.isdigit() for c in text):
        return text
    return _JOINED.sub(lambda m: _read(m.group(0), comma)[0], text)


def ambiguous_alternatives(text: str, comma: bool) -> str | None:
    """`text` read with the other convention where a number's shape allows both, else None."""
    if not text or not any(c.isdigit() for c in text):
        return None
    changed = False

    def other(m: re.Match[str]) -> str:
        nonlocal changed
        first, alt = _read(m.group(0), comma)
        if alt is None:
            return first
        changed = True
        return alt

    out = _JOINED.sub(other, text)
    return out if changed else None


def shows_decimal_comma(text: str) -> bool:
    """Whether `text` holds a number that only a decimal comma explains ("12,7", "1.609,344")."""
    for m in _JOINED.finditer(text or ""):
        token = m.group(0)
        if "," not in token:
            continue
        first, alt = _read(token, comma=False)
        if alt is None and first != token and "." in first and first.split(".")[-1] == token.split(",")[-1]:
            return True
    return False


def typed_as(typed: str, comma: bool) -> str:
    """A value as a person of the page's language types it ("3.7" -> "3,7" where decimals take a comma)."""
    return typed.replace(".", ",") if comma else typed
