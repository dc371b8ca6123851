"""The converter probes on real Chromium: artefacts written the way different models write them.

Every check id has at least one artefact that must fail it and one that must pass it: select vs
tabs vs radios vs links for the category; selects, radio groups, a table of every unit or one
field per unit for the units; live, debounced or Convert-button results. Numbers as people write
them (a German page's "12,7" and "1.609,344"), radios named only by the word beside them, NaN that
shows only after the page's own Convert button, and pairs that throw beside pairs that work.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from _probe_helpers import ProbeRuns, explain

from agentbench.checks.browser import BrowserHarness
from agentbench.checks.converter._probes import CHECK_IDS, probe_converter

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

_MORE = Path(__file__).parents[1] / "browser" / "fixtures" / "converter"


def _more(name: str) -> str:
    """A fixture of tests/checks/browser/fixtures/converter, as an absolute spec."""
    return str(_MORE / name)


CONTENTEDITABLE = _more("good_contenteditable_amount.html")
OWN_KEYS = _more("good_spinbutton_own_keys.html")  # draws its own digits: no select-all
WRONG_FOOT = _more("bad_contenteditable_wrong_foot.html")
LISTENER_LOST = _more("bad_listener_lost_after_category.html")

GOOD = [
    "converter/good_select_output.html",
    "converter/good_tabs_table.html",
    "converter/good_radios_readonly.html",
    "converter/good_fields_per_unit.html",
    "converter/good_div_tabs_slow_debounce.html",
    "converter/good_german_chips_comma.html",
    "converter/good_scrolling_unit_menus.html",
    "converter/good_category_in_a_click_menu.html",
    "demo:careful/converter",
    CONTENTEDITABLE,
    OWN_KEYS,
]
BROKEN = {
    "converter/bad_button_only.html": {"live-update": "fail", "length": "pass", "temperature": "pass"},
    "converter/bad_typeerror_length.html": {"length": "fail", "weight": "fail", "temperature": "pass"},
    "converter/bad_no_offset.html": {"temperature": "fail", "length": "pass"},
    "converter/bad_nan_empty.html": {"bad-input": "fail", "live-update": "pass"},
    "converter/bad_wrong_factors.html": {"length": "fail", "weight": "fail", "bad-input": "pass"},
    "demo:rushed/converter": {"length": "fail", "weight": "fail", "temperature": "pass"},
    "converter/bad_comma_numbers_wrong_inch.html": {"length": "fail", "weight": "pass", "temperature": "pass"},
    "converter/bad_bare_radios_button_nan.html": {"length": "fail", "weight": "fail", "temperature": "pass",
                                                  "live-update": "fail", "bad-input": "fail"},
    "converter/bad_nan_after_convert_one_formula.html": {"live-update": "fail", "bad-input": "fail",
                                                         "length": "pass", "temperature": "pass"},
    "converter/bad_length_throws_rest_live.html": {"length": "fail", "weight": "pass", "temperature": "pass",
                                                   "live-update": "pass", "bad-input": "pass"},
    "converter/bad_submit_button_nan.html": {"length": "pass", "weight": "pass", "temperature": "pass",
                                             "live-update": "fail", "bad-input": "fail"},
    "converter/bad_german_umrechnen_strict_comma.html": {"length": "pass", "weight": "pass", "temperature": "pass",
                                                         "live-update": "fail", "bad-input": "pass"},
    "converter/bad_pairwise_kelvin_to_celsius.html": {"temperature": "fail", "length": "pass", "weight": "pass",
                                                      "live-update": "pass"},
    "converter/bad_keyup_number_keys_only.html": {"live-update": "fail", "length": "pass", "temperature": "pass"},
    WRONG_FOOT: {"length": "fail", "weight": "pass", "temperature": "pass", "live-update": "pass", "bad-input": "pass"},
    LISTENER_LOST: {"live-update": "fail"},
    # Throws (a RangeError from its number format) whenever the field holds no number: emptied, or
    # "3." on the way to "3.7"; the previous result then stays. Every whole number converts right,
    # live: only bad-input (and runtime-errors) has a finding.
    "converter/bad_throws_on_empty_field.html": {"length": "pass", "weight": "pass", "temperature": "pass",
                                                 "live-update": "pass", "bad-input": "fail"},
}


def _ids(specs) -> list[str]:
    return [Path(s).name if s.startswith("/") else s for s in specs]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runs(chromium_path: str, tmp_path_factory: pytest.TempPathFactory):
    async with BrowserHarness(chromium_path) as harness:
        yield ProbeRuns(harness, tmp_path_factory.mktemp("converter-evidence"), probe_converter)


async def test_every_check_has_a_failing_and_a_passing_artefact() -> None:
    failing = {c for checks in BROKEN.values() for c, s in checks.items() if s == "fail"}
    assert set(CHECK_IDS) <= failing


@pytest.mark.parametrize("spec", GOOD, ids=_ids(GOOD))
async def test_good_converters_pass_every_check(runs: ProbeRuns, spec: str) -> None:
    results, _ = await runs.run(spec)
    assert list(results) == list(CHECK_IDS)
    assert all(r.status == "pass" for r in results.values()), explain(results)
    assert all(r.evidence for r in results.values())


@pytest.mark.parametrize("spec", list(BROKEN), ids=_ids(BROKEN))
async def test_broken_converters_fail_what_they_break(runs: ProbeRuns, spec: str) -> None:
    expected = BROKEN[spec]
    results, _ = await runs.run(spec, expected)
    assert {c: r.status for c, r in results.items()} == expected, explain(results)


async def test_exceptions_on_keystrokes_are_the_evidence(runs: ProbeRuns) -> None:
    results, ctx = await runs.run("demo:rushed/converter", BROKEN["demo:rushed/converter"])
    length = results["length"]
    assert "TypeError" in length.detail
    thrown = next(e.value for e in length.evidence if e.label == "page exceptions")
    assert "TypeError" in thrown[0]["error"] and thrown[0]["times"] >= 1
    assert any("TypeError" in e for e in ctx.page_errors)
    assert not any(e.label == "page exceptions" for e in results["temperature"].evidence)


async def test_conversion_evidence_is_expected_vs_shown(runs: ProbeRuns) -> None:
    results, _ = await runs.run("converter/bad_no_offset.html", BROKEN["converter/bad_no_offset.html"])
    rows = next(e.value for e in results["temperature"].evidence if e.label == "conversions")
    c_to_f = next(r for r in rows if r["typed"] == "37 C" and r["to"] == "F")
    assert c_to_f["expected"] == pytest.approx(98.6) and c_to_f["shown"] == pytest.approx(66.6)
    assert c_to_f["ok"] is False
    assert any(r["typed"].startswith("-") for r in rows)  # a negative temperature is covered


async def test_convert_button_only_is_named_in_the_verdict(runs: ProbeRuns) -> None:
    results, _ = await runs.run("converter/bad_button_only.html", BROKEN["converter/bad_button_only.html"])
    assert "Convert" in results["live-update"].detail
    assert results["length"].data["commit"] == "button"


async def test_nan_evidence_names_the_input(runs: ProbeRuns) -> None:
    results, _ = await runs.run("converter/bad_nan_empty.html", BROKEN["converter/bad_nan_empty.html"])
    rows = results["bad-input"].evidence[0].value
    assert any(r["typed"] == "(empty)" and "NaN" in r["nonsense shown"] for r in rows)


async def test_a_page_without_units_fails_saying_what_was_looked_for(runs: ProbeRuns) -> None:
    # Issue 11: a unit the page does not offer is a finding a person sees, not a harness gap.
    results, _ = await runs.run("converter/gap_no_units.html", ["length", "weight", "temperature"])
    assert {r.status for r in results.values()} == {"fail"}, explain(results)
    assert "offers no length conversion" in results["length"].detail
    assert "km" in results["length"].evidence[0].value


async def test_units_named_but_no_control_found_is_an_error(runs: ProbeRuns) -> None:
    # The page names its units but picks them on a canvas: we could not tell, so error, never fail.
    results, _ = await runs.run("converter/gap_canvas_unit_picker.html", ["length", "weight", "temperature"])
    assert {r.status for r in results.values()} == {"error"}, explain(results)
    assert "names length" in results["length"].detail


async def test_a_decimal_comma_is_read_as_the_page_writes_it(runs: ProbeRuns) -> None:
    # Issue 27: a German page's "12,7" is 12.7 (never 7) and "1.609,344" is 1609.344; its unit words
    # ("Zoll", "Meile") and chips with a listener on their row are found.
    results, _ = await runs.run("converter/good_german_chips_comma.html")
    rows = next(e.value for e in results["length"].evidence if e.label == "conversions")
    inch = next(r for r in rows if r["typed"] == "5 in" and r["to"] == "cm")
    assert inch["shown"] == pytest.approx(12.7) and "12,7" in inch["text"]
    assert {"in", "mi", "ft", "cm"} <= set(results["length"].data["offered"])


async def test_a_wrong_factor_is_still_wrong_in_decimal_commas(runs: ProbeRuns) -> None:
    spec = "converter/bad_comma_numbers_wrong_inch.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    assert "12,25" in results["length"].detail and "expected 12.7" in results["length"].detail


async def test_nan_after_the_pages_own_convert_button_is_found(runs: ProbeRuns) -> None:
    # Issue 27: the empty field shows 0 for one formula and NaN for another, only once Convert is clicked.
    spec = "converter/bad_nan_after_convert_one_formula.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    rows = results["bad-input"].evidence[0].value
    assert any(r["typed"] == "(empty)" and r["unit pair"] == "C -> K" and "NaN" in r["nonsense shown"] for r in rows)


async def test_radios_named_by_the_word_beside_them(runs: ProbeRuns) -> None:
    spec = "converter/bad_bare_radios_button_nan.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    assert results["temperature"].data["commit"] == "button"
    assert "Convert" in results["live-update"].detail
    assert "offers no length conversion" in results["length"].detail  # an inline script's ".length" names nothing


async def test_pairs_that_show_nothing_are_set_aside_with_their_exceptions(runs: ProbeRuns) -> None:
    spec = "converter/bad_length_throws_rest_live.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    for check_id in ("live-update", "bad-input"):
        assert "length set aside" in results[check_id].detail
        assert any(e.label == "page exceptions" for e in results[check_id].evidence)
    assert "TypeError" in results["length"].detail


async def test_a_button_not_named_convert_is_found_by_what_it_does(runs: ProbeRuns) -> None:
    # Issue 27: NaN shown only after the page's own button was missed when the probe never pressed it.
    spec = "converter/bad_submit_button_nan.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    assert results["length"].data["commit"] == "button"
    assert "Submit" in results["live-update"].detail
    assert "NaN" in results["bad-input"].detail


async def test_a_decimal_comma_page_is_typed_to_as_its_people_type(runs: ProbeRuns) -> None:
    # The page reads "3.7" as 37 (dots group thousands in German): 3,7 is typed, as a person there would;
    # "2 743,2" (de-AT groups with a space) is 2743.2.
    spec = "converter/bad_german_umrechnen_strict_comma.html"
    results, _ = await runs.run(spec, BROKEN[spec])
    rows = next(e.value for e in results["length"].evidence if e.label == "conversions")
    assert next(r for r in rows if r["typed"] == "3.7 mi")["shown"] == pytest.approx(5.95457)
    assert results["length"].data["commit"] == "button"  # "Umrechnen" is its Convert button


async def test_a_contenteditable_value_is_typed_into_and_read_by_its_text(runs: ProbeRuns) -> None:
    # No <input> on the page: the amount is a contenteditable span a person clicks, selects and types over.
    results, _ = await runs.run(CONTENTEDITABLE)
    rows = next(e.value for e in results["length"].evidence if e.label == "conversions")
    mile = next(r for r in rows if r["typed"] == "3.7 mi" and r["to"] == "km")
    assert mile["shown"] == pytest.approx(5.9546, abs=1e-3) and mile["ok"]
    assert results["length"].data["commit"] == "live"


async def test_a_wrong_factor_behind_a_contenteditable_value_fails(runs: ProbeRuns) -> None:
    results, _ = await runs.run(WRONG_FOOT, BROKEN[WRONG_FOOT])
    assert "2 m -> ft: expected 6.56168" in results["length"].detail, explain(results)


async def test_typing_that_changes_nothing_after_a_category_is_a_failure_saying_what_was_tried(
        runs: ProbeRuns) -> None:
    # The field's listener is lost once a category is chosen: typing changes nothing, and only choosing
    # a unit shows the typed value's result. That is a finding (fail), never "could not tell".
    results, _ = await runs.run(LISTENER_LOST, BROKEN[LISTENER_LOST])
    live = results["live-update"]
    assert live.status == "fail", explain(results)
    assert "unit" in live.detail and "not while typing" in live.detail, live.detail
    # Every category, though the field keeps 12 from the one before: the result shown is 12's already.
    assert all(f"{c}: the result changes only after choosing a unit again" in live.detail
               for c in ("length", "weight", "temperature")), live.detail
    assert "set aside" not in live.detail
