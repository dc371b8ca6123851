"""A converter read in its own language: decimal commas and foreign unit words (pure, no browser)."""

from __future__ import annotations

import pytest

from agentbench.checks.browser._numbers import parse_numbers
from agentbench.checks.converter._locale import (
    ambiguous_alternatives,
    comma_decimal_language,
    english,
    plain_numbers,
    shows_decimal_comma,
)
from agentbench.checks.converter._units import category_of, unit_of


@pytest.mark.parametrize(
    ("shown", "dot_page", "comma_page"),
    [
        ("12,7", 12.7, 12.7),  # the shape says decimal: never 12 and 7
        ("1609,344", 1609.344, 1609.344),  # four digits before the comma: no thousands group
        ("1.609,344", 1609.344, 1609.344),  # both marks: the last one is the decimal
        ("1,609.344", 1609.344, 1609.344),
        ("0,500", 0.5, 0.5),  # a leading 0 is no group
        ("1\u202f609,344", 1609.344, 1609.344),  # French: a narrow no-break space groups
        ("1.000.000", 1e6, 1e6),
        ("1,609", 1609, 1.609),  # ambiguous: the page's language decides
        ("1.609", 1.609, 1609),
        ("-3,75", -3.75, -3.75),
        ("2 743,2", 2743.2, 2743.2),  # de-AT/fr: a space groups (pages' spaces are read as plain ones)
        ("1 609.344", 1609.344, 1609.344),
        ("12.7", 12.7, 12.7),
    ],
)
def test_numbers_as_pages_write_them(shown: str, dot_page: float, comma_page: float) -> None:
    for comma, want in ((False, dot_page), (True, comma_page)):
        numbers = parse_numbers(plain_numbers(f"= {shown} km", comma))
        assert [n.value for n in numbers] == pytest.approx([want])


def test_an_ambiguous_number_keeps_its_other_reading() -> None:
    assert ambiguous_alternatives("1.609 km", comma=False) == "1609 km"
    assert plain_numbers("1 000 m", comma=True) == "1000 m"  # a space groups where the page's language does
    assert plain_numbers("1 000 m", comma=False) == "1 000 m" and ambiguous_alternatives("1 000 m", False) == "1000 m"
    assert ambiguous_alternatives("1,609 km", comma=True) == "1609 km"
    assert ambiguous_alternatives("12,7 cm and 1.609,344 m", comma=True) is None


def test_precision_follows_the_digits_shown() -> None:
    assert parse_numbers(plain_numbers("12,70", comma=True))[0].half_step == pytest.approx(0.005)


@pytest.mark.parametrize("text", ["1,2,3", "06.12.2026", "v1.2.3", "1e3"])
def test_what_is_no_number_of_a_locale_stays_as_it_is(text: str) -> None:
    assert plain_numbers(text, comma=True) == text


def test_a_decimal_comma_shown_or_declared() -> None:
    assert shows_decimal_comma("= 12,7 cm") and shows_decimal_comma("1.609,344 m")
    assert not shows_decimal_comma("1,609.344 m") and not shows_decimal_comma("1,000 m")
    assert comma_decimal_language("de-AT") and comma_decimal_language("fr_CA")
    assert not comma_decimal_language("en") and not comma_decimal_language("")


@pytest.mark.parametrize(
    ("label", "lang", "unit"),
    [
        ("Zoll", "de", "in"), ("Fuß", "de", "ft"), ("Meile", "de", "mi"), ("Zentimeter", "de", "cm"),
        ("Kilogramm", "en", "kg"), ("Milligramm", "", "mg"), ("Pfund", "de", "lb"), ("Unzen", "de", "oz"),
        ("Tonnen", "de", "t"), ("pouces", "fr", "in"), ("livre", "fr", "lb"), ("kilómetros", "es", "km"),
        ("pies", "es", "ft"), ("libras", "pt", "lb"), ("mijl", "nl", "mi"),
    ],
)
def test_unit_words_of_other_languages(label: str, lang: str, unit: str) -> None:
    assert unit_of(english(label, lang)) == unit


def test_words_that_are_english_too_need_the_pages_language() -> None:
    assert english("once more", "en") == "once more" and english("1 pie", "en") == "1 pie"
    assert english("Zollstock", "de") == "Zollstock"  # whole words only


@pytest.mark.parametrize(("label", "lang", "category"), [
    ("📏 Länge", "de", "length"), ("⚖️ Gewicht", "de", "weight"), ("Temperatur", "de", "temperature"),
    ("Poids", "fr", "weight"), ("Masse", "de", "weight"), ("Masse", "fr", "weight"), ("Massa", "it", "weight"),
    ("Masa", "es", "weight"),
])
def test_category_words_of_other_languages(label: str, lang: str, category: str) -> None:
    assert category_of(english(label, lang)) == category
