"""A converter's answer read as the page writes it: its words and decimal marks (pure, no browser).

``pick_reading`` (``_readings``) finds the result among the texts that changed; here those texts
are first put in English and their numbers written plainly (``_converter_locale``), and where a
number's decimal mark is ambiguous ("1.609") the other reading comes along as ``Shown.other``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..browser._numbers import Number, parse_numbers
from ._locale import ambiguous_alternatives, english, plain_numbers
from ._readings import pick_reading

__all__ = ["Shown", "field_number", "pick_as_written"]


@dataclass(frozen=True)
class Shown(Number):
    """A number read from the page, with the other reading of an ambiguous "1,609" / "1.609" (or None)."""

    other: Number | None = None


def field_number(shown: str, comma: bool) -> Shown | None:
    """The last number in a field's value ("1.609,344" on a decimal-comma page is 1609.344)."""
    nums = parse_numbers(plain_numbers(shown, comma))
    if not nums:
        return None
    alt = parse_numbers(ambiguous_alternatives(shown, comma) or "")
    other = alt[-1] if alt and alt[-1].value != nums[-1].value else None
    return Shown(**vars(nums[-1]), other=other)


def pick_as_written(changed: dict[str, str], contexts: dict[str, list[dict[str, Any]]], to: str, category: str,
                    typed: str, *, lang: str | None, comma: bool) -> tuple[Shown | None, str]:
    """``pick_reading`` on the page's texts in English with plain numbers; the text returned is the
    page's own ("5 Zoll = 12,7 Zentimeter")."""
    typed_plain = plain_numbers(typed, comma)

    def as_read(numbers: Callable[[str], str]) -> tuple[dict[str, str], dict[str, list[dict[str, Any]]]]:
        texts = {p: numbers(english(t, lang)) for p, t in changed.items()}
        chains = {p: [{**c, "text": numbers(english(c["text"], lang))} for c in chain] for p, chain in contexts.items()}
        return texts, chains

    texts, chains = as_read(lambda t: plain_numbers(t, comma))
    number, text = pick_reading(texts, chains, to, category, typed_plain)
    if number is None:
        return None, text
    page_text = next((changed[p] for p, t in texts.items() if t == text), text)
    other = None
    if any(ambiguous_alternatives(t, comma) for t in changed.values()):
        texts, chains = as_read(lambda t: ambiguous_alternatives(t, comma) or plain_numbers(t, comma))
        other, _ = pick_reading(texts, chains, to, category, typed_plain)
    if other is not None and other.value == number.value:
        other = None
    return Shown(**vars(number), other=other), page_text
