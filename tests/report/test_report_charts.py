"""The report's charts: the counts they draw, the numbers they print, and how they look in Chromium."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agentbench._numbers import for_people, human_count, human_number, human_seconds
from agentbench.checks._model import CheckResult, Evidence
from agentbench.report import write_report
from agentbench.stats import wilson
from agentbench.store import CellRef, attempt_dir, load_result, write_json


class _Rows(HTMLParser):
    """Every chart row (``<g class="row">``) and check row (``<tr data-check>``) with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []
        self.checks: list[dict[str, str | None]] = []
        self.svgs: list[dict[str, str | None]] = []
        self.titles: list[str] = []
        self._in_title = False
        self._chart: str | None = None

    def handle_starttag(self, tag, attrs) -> None:
        a = dict(attrs)
        if tag == "svg" and "chart-svg" in (a.get("class") or ""):
            self._chart = a.get("id")
            self.svgs.append(a)
        if tag == "g" and a.get("class") == "row":
            self.rows.append({**a, "chart": self._chart})
        if tag == "tr" and "data-check" in a:
            self.checks.append(a)
        self._in_title = tag == "title"

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.titles.append(data)

    def handle_endtag(self, tag) -> None:
        self._in_title = False
        if tag == "svg":
            self._chart = None


def _parse(text: str) -> _Rows:
    p = _Rows()
    p.feed(text)
    return p


def test_pass_rate_chart_counts_like_the_stats(run_dir: Path) -> None:
    text = write_report([run_dir]).read_text()
    p = _parse(text)
    assert [s["id"] for s in p.svgs] == ["chart-pass-rate", "chart-tokens", "chart-wall"]
    for svg in p.svgs:  # accessible: a title and a description name the chart
        assert svg["role"] == "img" and svg["aria-labelledby"] == f"{svg['id']}-t {svg['id']}-d"
    rates = [r for r in p.rows if r["chart"] == "chart-pass-rate"]
    got = [(r["data-lane"], r["data-passed"], r["data-n"], r.get("data-rate")) for r in rates]
    # flappy alpha 2/2, beta 0/1; todo alpha fail, beta no-artefact (a fail); converter alpha fail,
    # beta infra-error only: nothing counted, nothing drawn but the note.
    assert got == [("alpha", "2", "2", "1.0000"), ("beta", "0", "1", "0.0000"),
                   ("alpha", "0", "1", "0.0000"), ("beta", "0", "1", "0.0000"),
                   ("alpha", "0", "1", "0.0000"), ("beta", "0", "0", None)]
    lo, hi = wilson(2, 2)
    assert f"alpha: 2/2 · 100% [{lo * 100:.0f}%–{hi * 100:.0f}%]" in p.titles
    assert "beta: no scored attempt (1 infra error not counted)" in p.titles
    assert ">0/1 · 0% [0%–79%]</text>" in text


def test_check_table_shows_which_checks_separate(run_dir: Path) -> None:
    p = _parse(write_report([run_dir]).read_text())
    seps = {c["data-check"]: c["data-separation"] for c in p.checks}
    # flappy: runtime-errors and refresh-rate passed 2/2 for alpha, failed 0/1 for beta (intervals overlap)
    assert seps["flappy/refresh-rate"] == "differs" and seps["flappy/runtime-errors"] == "differs"
    assert seps["flappy/load"] == "same"
    # todo: only alpha has checks (beta had no artefact): one lane measured
    assert seps["todo/persistence"] == "one lane" and seps["todo/filter"] == "one lane"
    order = [c["data-check"] for c in p.checks]
    assert order.index("flappy/refresh-rate") < order.index("flappy/load")  # telling checks first


def test_checks_apart_when_intervals_do_not_overlap(tmp_path: Path) -> None:
    from agentbench.report._charts import build_charts

    class A:  # the fields the charts read from an attempt view
        def __init__(self, ok: bool, repeat: int) -> None:
            self.outcome, self.verdict, self.repeat = "scored", "pass" if ok else "fail", repeat
            self.tokens, self.wall_s = 1000 + repeat, 10.0 * repeat
            self.checks = [CheckResult(id="motion", status="pass" if ok else "fail")]

    matrix = {"ball": {"good": [A(True, r) for r in range(1, 9)], "bad": [A(False, r) for r in range(1, 9)]}}
    charts = build_charts(["ball"], ["good", "bad"], matrix)
    (row,) = charts.checks
    assert row.separation == "clear" and row.spread == 1.0
    assert [r.text for r in row.rates] == ["8/8 · 100% [68%–100%]", "0/8 · 0% [0%–32%]"]
    assert charts.tokens is not None and charts.wall is not None
    assert [t for _, t in charts.wall.ticks] == ["0 s", "20 s", "40 s", "60 s", "80 s"]


def test_numbers_are_rounded_for_people_and_kept_whole_in_json(run_dir: Path) -> None:
    cell = CellRef(task="flappy", model="beta", repeat=1)
    path = attempt_dir(run_dir, cell) / "result.json"
    result = load_result(path)
    assert result is not None
    raw = {"s": 3.9999999999999973, "b": -1.4999999999999987, "r2": 0.99912345, "tiny": 0.000123456}
    result.checks.append(CheckResult(id="fit", status="pass", detail="fit", data=raw, evidence=[
        Evidence(kind="value", label="samples", value=[{"t": 0.1 + 0.2, "tau": 1 / 3}])]))
    write_json(path, result)
    text = write_report([run_dir]).read_text()
    assert "3.9999999999999973" not in text and "1.4999999999999987" not in text and "0.30000000000000004" not in text
    assert re.search(r"<th>s</th><td>4</td>", text) and re.search(r"<th>b</th><td>-1.5</td>", text)
    assert "<td>0.3</td><td>0.333</td>" in text and "<th>tiny</th><td>0.00012</td>" in text
    stored = json.loads(path.read_text())
    assert stored["checks"][-1]["data"] == raw  # the JSON keeps full precision


def test_number_helpers() -> None:
    assert [human_number(x) for x in (3.9999999999999973, -1.4999999999999987, 2.0, -0.0, 1609.344, 1e-7, True, 7)] \
        == ["4", "-1.5", "2", "0", "1609.344", "1e-07", "true", "7"]
    assert for_people({"a": [0.1 + 0.2, {"b": 2.00000001}], "c": "x"}) == {"a": [0.3, {"b": 2}], "c": "x"}
    assert [human_count(n) for n in (None, 980, 1000, 1234, 12_345, 2_500_000)] == \
        ["—", "980", "1k", "1.2k", "12k", "2.5M"]
    assert [human_seconds(s) for s in (0.44, 5, 42.4, 725)] == ["0.4 s", "5 s", "42 s", "12m05s"]


def test_agent_lanes_are_their_own_rows(tmp_path: Path) -> None:
    """A model under an external agent is its own lane (``model@agent``), drawn apart from the builtin one."""
    from agentbench.report._charts import build_charts

    class A:
        def __init__(self, verdict: str) -> None:
            self.outcome, self.verdict, self.repeat, self.tokens, self.wall_s = "scored", verdict, 1, 10, 1.0
            self.checks = []

    charts = build_charts(["todo"], ["m", "m@aider"], {"todo": {"m": [A("pass")], "m@aider": [A("fail")]}})
    assert [(r.label, r.rate.passed if r.rate else None) for r in charts.pass_rate.rows] == \
        [("todo", None), ("m", 1), ("m@aider", 0)]


@pytest.mark.browser
def test_charts_render_under_the_csp(run_dir: Path, chromium_path: str) -> None:
    """Drawn in Chromium under the report's own policy: visible boxes, no policy violation, no page error."""
    from playwright.sync_api import sync_playwright

    report = write_report([run_dir])
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text))
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.as_uri())
            page.wait_for_load_state("load")  # the charts are SVG in the HTML: laid out once it has loaded
            for cid in ("chart-pass-rate", "chart-tokens", "chart-wall"):
                box = page.locator(f"#{cid}").bounding_box()
                assert box and box["width"] > 400 and box["height"] > 100, (cid, box)
            bars = page.locator("#chart-pass-rate g.row rect")
            widths = [bars.nth(i).bounding_box()["width"] for i in range(bars.count())]
            assert max(widths) > 300 and min(widths) == 0  # 100% and 0% drawn as such
        finally:
            browser.close()
    # The planted hostile artefact's own forged POST is refused by the policy, as it must be; nothing else is.
    refused = [m for m in console if "Content Security Policy" in m and "/api/verdict" not in m]
    assert not refused, refused
    assert not [e for e in errors if e != "planted once"], errors  # the probe artefact throws that one itself
