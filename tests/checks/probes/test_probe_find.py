"""Pure logic of the converter/to-do probes: unit names, numbers as printed, tolerance, picking."""

from __future__ import annotations

import math

import pytest

from agentbench.checks.browser._numbers import Number, parse_numbers
from agentbench.checks.converter._probes import PAIRS
from agentbench.checks.converter._readings import convert, pick_reading, within_tolerance
from agentbench.checks.converter._units import category_of, unit_mentions, unit_of


@pytest.mark.parametrize(
    ("label", "unit"),
    [
        ("Kilometre (km)", "km"),
        ("Meters", "m"),
        ("m", "m"),
        ("Inches (in)", "in"),
        ("Feet", "ft"),
        ("Metric ton (t)", "t"),
        ("Tonnes", "t"),
        ("lbs", "lb"),
        ("Pound", "lb"),
        ("Ounce (oz)", "oz"),
        ("Milligram", "mg"),
        ("kilogram", "kg"),
        ("°C", "C"),
        ("Celsius (°C)", "C"),
        ("℉", "F"),
        ("K", "K"),
        ("Kelvin", "K"),
        ("Yards (yd)", "yd"),
        ("Mile", "mi"),
        ("Nautical mile", None),
        ("Short ton", None),
        ("Micrometre (µm)", None),
        ("Length", None),
    ],
)
def test_unit_of_reads_names_and_symbols(label: str, unit: str | None) -> None:
    assert unit_of(label) == unit


def test_unit_of_uses_the_category_and_falls_back_to_the_value() -> None:
    assert unit_of("Centimeters", "cm", category="length") == "cm"
    assert unit_of("Option 3", "oz", category="weight") == "oz"
    assert unit_of("Ounce", category="length") is None


def test_symbols_in_free_text_count_only_next_to_numbers() -> None:
    assert [u for u, _, _ in unit_mentions("1 km = 1000 m")] == ["km", "m"]
    assert [u for u, _, _ in unit_mentions("Result in meters: 1000")] == ["m"]  # "in" is a word here
    assert unit_mentions("don't convert", category="weight") == []  # the "t" of don't
    assert [u for u, _, _ in unit_mentions("98.6 °F")] == ["F"]


def test_category_names() -> None:
    assert category_of("📏 Length") == "length"
    assert category_of("Mass") == "weight"
    assert category_of("Temperature") == "temperature"
    assert category_of("Kilometre") is None


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("1,000 m", [1000.0]),
        ("1 km = 1000 m", [1.0, 1000.0]),
        ("= 1.609344e+3", [1609.344]),
        ("4.8 × 10⁻³ kg", [0.0048]),
        ("−40 °F", [-40.0]),
        ("-10", [-10.0]),
        ("12.70", [12.7]),
        (".5 kg", [0.5]),
        ("1.2E-7", [1.2e-7]),
        ("no number", []),
    ],
)
def test_parse_numbers(text: str, values: list[float]) -> None:
    assert [n.value for n in parse_numbers(text)] == pytest.approx(values)


def test_half_step_follows_the_digits_shown() -> None:
    assert parse_numbers("12.70")[0].half_step == pytest.approx(0.005)
    assert parse_numbers("1000")[0].half_step == pytest.approx(0.5)
    assert parse_numbers("1.6093e+3")[0].half_step == pytest.approx(0.05)


def test_reference_conversions() -> None:
    assert convert(1, "km", "m") == pytest.approx(1000)
    assert convert(5, "in", "cm") == pytest.approx(12.7)
    assert convert(37, "C", "F") == pytest.approx(98.6)
    assert convert(212, "F", "C") == pytest.approx(100)
    assert convert(-40, "C", "F") == pytest.approx(-40)
    assert convert(25, "C", "K") == pytest.approx(298.15)
    assert convert(8, "oz", "g") == pytest.approx(226.796185)
    for category, pairs in PAIRS.items():
        assert len(pairs) >= 4, category


def test_tolerance_relative_and_rounding_but_not_a_wrong_factor() -> None:
    def shown(text: str) -> Number:
        return parse_numbers(text)[0]

    assert within_tolerance(shown("4.82803"), convert(3, "mi", "km"))
    assert within_tolerance(shown("4.83"), convert(3, "mi", "km"))  # rounded to what is shown
    assert within_tolerance(shown("1.13"), convert(2.5, "lb", "kg"))
    assert not within_tolerance(shown("5.92"), convert(3.7, "mi", "km"))  # a mile of 1.6 km
    assert not within_tolerance(shown("13"), convert(5, "in", "cm"))  # rounding may not hide 2 %
    assert not within_tolerance(shown("66.6"), convert(37, "C", "F"))  # no +32 offset
    assert not math.isnan(shown("0").value)


def test_pick_reading_single_output_and_table() -> None:
    one = pick_reading(
        {"p1": "1,000 m"},
        {"p1": [{"tag": "output", "hint": "result", "text": "1,000 m"}]},
        "m",
        "length",
        "1",
    )
    assert one[0] is not None and one[0].value == 1000
    table = {"a": "1", "b": "1,000", "c": "100,000"}
    ctx = {
        "a": [{"tag": "td", "hint": "", "text": "1"}, {"tag": "tr", "hint": "", "text": "Kilometres (km) 1"}],
        "b": [
            {"tag": "td", "hint": "", "text": "1,000"},
            {"tag": "tr", "hint": "", "text": "Metres (m) 1,000"},
        ],
        "c": [
            {"tag": "td", "hint": "", "text": "100,000"},
            {"tag": "tr", "hint": "", "text": "Centimetres (cm) 100,000"},
        ],
    }
    assert pick_reading(table, ctx, "cm", "length", "1")[0].value == 100000
    assert pick_reading(table, ctx, "m", "length", "1")[0].value == 1000
    split = {"x": "1", "y": "1000"}
    sctx = {
        "x": [{"tag": "span", "hint": "", "text": "1"}, {"tag": "p", "hint": "", "text": "1 km = 1000 m"}],
        "y": [{"tag": "span", "hint": "", "text": "1000"}, {"tag": "p", "hint": "", "text": "1 km = 1000 m"}],
    }
    assert pick_reading(split, sctx, "m", "length", "1")[0].value == 1000


def test_pick_reading_says_when_it_cannot_tell() -> None:
    number, why = pick_reading({"a": "12", "b": "34"}, {}, "m", "length", "7")
    assert number is None and "could not tell" in why


def test_an_echo_of_the_typed_value_is_not_a_result() -> None:
    number, why = pick_reading({"echo": "Value: 12"}, {}, "m", "length", "12")
    assert number is None and "no number" in why
    number, _ = pick_reading({"echo": "Value: 12", "out": "12000"}, {}, "m", "length", "12")
    assert number is not None and number.value == 12000
