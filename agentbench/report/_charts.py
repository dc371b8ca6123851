"""The report's charts, laid out here and drawn as inline SVG by ``_charts.html.j2``.

Inline SVG is markup, not a resource: it loads nothing, so it works offline and under the report's
``default-src 'none'`` policy. Every chart carries a ``<title>``/``<desc>`` and prints its numbers
as text beside the marks, and a table with the same numbers follows it.

What is counted is what ``stats.py`` counts: infra errors are never in a denominator (they are
noted beside the lane), ``budget`` and ``no-artefact`` attempts are fails, unfinished or unreadable
attempts are left out. A check's rate counts the attempts where that check decided pass or fail;
``error`` (the harness could not tell) is shown as undecided, never as a fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._numbers import human_count, human_pct, human_seconds
from ..stats import wilson

__all__ = ["Charts", "build_charts"]

# Okabe-Ito: told apart by people with the common colour-vision deficiencies (yellow left out: too
# pale on white); lanes past the eighth reuse them, and every mark is also labelled in text.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#8C564B")

# Geometry of the horizontal charts (SVG user units = CSS px at 100%).
LABEL_W, PLOT_W, TEXT_W = 210, 380, 250
ROW_H, HEAD_H, AXIS_H, PAD = 20, 22, 26, 8


@dataclass
class Lane:
    label: str
    color: str


@dataclass
class Rate:
    """passed of n with its Wilson 95% interval, for one lane in one group."""

    lane: Lane
    passed: int
    n: int
    lo: float
    hi: float
    infra: int = 0
    undecided: int = 0

    @property
    def rate(self) -> float | None:
        return self.passed / self.n if self.n else None

    @property
    def text(self) -> str:
        if not self.n:
            return "no scored attempt" + self.extra
        interval = f"[{human_pct(self.lo)}–{human_pct(self.hi)}]"
        return f"{self.passed}/{self.n} · {human_pct(self.rate)} {interval}{self.extra}"

    @property
    def extra(self) -> str:
        bits = []
        if self.infra:
            bits.append(f"{self.infra} infra error{'s' if self.infra != 1 else ''} not counted")
        if self.undecided:
            bits.append(f"{self.undecided} undecided")
        return f" ({'; '.join(bits)})" if bits else ""


def _rate(lane: Lane, outcomes: list[bool], infra: int = 0, undecided: int = 0) -> Rate:
    passed = sum(outcomes)
    lo, hi = wilson(passed, len(outcomes))
    return Rate(lane=lane, passed=passed, n=len(outcomes), lo=lo, hi=hi, infra=infra, undecided=undecided)


@dataclass
class Row:
    """One drawn row: a group heading (``rate`` None, ``values`` empty) or one lane's marks."""

    y: float
    label: str
    heading: bool = False
    rate: Rate | None = None
    # value charts: every attempt's value (x, passed) and the mean as a bar
    dots: list[tuple[float, bool, str]] = field(default_factory=list)  # (x, passed, tooltip)
    bar_w: float = 0.0
    text: str = ""
    color: str = "#000"


@dataclass
class Chart:
    id: str
    title: str
    desc: str
    width: int
    height: int
    rows: list[Row]
    ticks: list[tuple[float, str]]  # (x, label) along the bottom axis
    x0: int = LABEL_W
    plot_w: int = PLOT_W
    axis_y: float = 0.0

    def x(self, frac: float) -> float:
        return round(self.x0 + max(0.0, min(1.0, frac)) * self.plot_w, 1)


@dataclass
class CheckRow:
    """One check within a task: every lane's rate, and whether the lanes are told apart."""

    task: str
    check: str
    rates: list[Rate]
    separation: str  # "clear" (intervals apart) | "differs" (within noise) | "same" | "one lane"
    spread: float


@dataclass
class ValueRow:
    task: str
    lane: Lane
    values: list[float]
    mean: float | None
    fmt: Callable[[float | None], str]

    @property
    def mean_text(self) -> str:
        return self.fmt(self.mean)

    @property
    def each_text(self) -> str:
        return ", ".join(self.fmt(v) for v in self.values)


@dataclass
class Charts:
    lanes: list[Lane]
    pass_rate: Chart | None
    checks: list[CheckRow]
    tokens: Chart | None
    wall: Chart | None
    token_rows: list[ValueRow]
    wall_rows: list[ValueRow]

    @property
    def empty(self) -> bool:
        return self.pass_rate is None


def _counted(attempts: list[Any]) -> tuple[list[Any], int]:
    """Finished attempts that count, and how many infra errors were left out."""
    done = [a for a in attempts if a.outcome in ("scored", "budget", "no-artefact")]
    return done, sum(1 for a in attempts if a.outcome == "infra-error")


def _rate_chart(tasks: list[str], lanes: list[Lane], matrix: dict[str, dict[str, list[Any]]]) -> Chart:
    rows: list[Row] = []
    y = PAD
    for task in tasks:
        rows.append(Row(y=y, label=task, heading=True))
        y += HEAD_H
        for lane in lanes:
            atts = matrix.get(task, {}).get(lane.label, [])
            if not atts:
                continue
            done, infra = _counted(atts)
            rate = _rate(lane, [a.verdict == "pass" for a in done], infra)
            rows.append(Row(y=y, label=lane.label, rate=rate, text=rate.text, color=lane.color))
            y += ROW_H
    ticks = [(LABEL_W + PLOT_W * f, f"{f:.0%}") for f in (0, 0.25, 0.5, 0.75, 1)]
    chart = Chart(id="chart-pass-rate", title="Pass rate per task and model",
                  desc="For each task, each model's share of attempts whose verdict is pass, as a bar, with its "
                       "Wilson 95% interval as a line; the numbers are printed to the right.",
                  width=LABEL_W + PLOT_W + TEXT_W, height=int(y + AXIS_H), rows=rows, ticks=ticks, axis_y=y)
    return chart


def _axis(top_value: float) -> tuple[float, float]:
    """(axis end, tick step) for values up to top_value: steps of 1, 2, 2.5 or 5 x 10^k, 3 to 6 ticks."""
    import math

    if top_value <= 0:
        return 1.0, 0.25
    raw = top_value / 4
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return math.ceil(top_value / step - 1e-9) * step, step


def _value_chart(cid: str, title: str, desc: str, rows_in: list[ValueRow], tasks: list[str],
                 attempts: dict[tuple[str, str], list[tuple[float, bool, str]]], fmt) -> Chart | None:
    values = [v for r in rows_in for v in r.values]
    if not values:
        return None
    top, step = _axis(max(values))
    rows: list[Row] = []
    y = PAD
    for task in tasks:
        mine = [r for r in rows_in if r.task == task]
        if not mine:
            continue
        rows.append(Row(y=y, label=task, heading=True))
        y += HEAD_H
        for r in mine:
            dots = [(round(LABEL_W + PLOT_W * v / top, 1), ok, tip)
                    for v, ok, tip in attempts[(task, r.lane.label)]]
            mean = r.mean or 0.0
            n = len(r.values)
            text = f"mean {fmt(r.mean)} ({n} attempt{'s' if n != 1 else ''})"
            rows.append(Row(y=y, label=r.lane.label, dots=dots, bar_w=round(PLOT_W * mean / top, 1),
                            text=text, color=r.lane.color))
            y += ROW_H
    ticks = [(round(LABEL_W + PLOT_W * i * step / top, 1), fmt(i * step)) for i in range(round(top / step) + 1)]
    return Chart(id=cid, title=title, desc=desc, width=LABEL_W + PLOT_W + TEXT_W, height=int(y + AXIS_H),
                 rows=rows, ticks=ticks, axis_y=y)


def _check_rows(tasks: list[str], lanes: list[Lane], matrix: dict[str, dict[str, list[Any]]]) -> list[CheckRow]:
    out: list[CheckRow] = []
    for task in tasks:
        ids: list[str] = []
        for lane in lanes:
            for a in matrix.get(task, {}).get(lane.label, []):
                ids += [c.id for c in a.checks if c.id not in ids]
        rows = []
        for cid in ids:
            rates = []
            for lane in lanes:
                atts = matrix.get(task, {}).get(lane.label, [])
                if not atts:
                    continue
                done, infra = _counted(atts)
                statuses = [c.status for a in done for c in a.checks if c.id == cid]
                decided = [s == "pass" for s in statuses if s in ("pass", "fail")]
                rates.append(_rate(lane, decided, infra, undecided=statuses.count("error")))
            rows.append(_separation(task, cid, rates))
        order = {"clear": 0, "differs": 1, "same": 2, "one lane": 3}
        out += sorted(rows, key=lambda r: (order[r.separation], -r.spread))
    return out


def _separation(task: str, cid: str, rates: list[Rate]) -> CheckRow:
    measured = [r for r in rates if r.n]
    if len(measured) < 2:
        return CheckRow(task, cid, rates, "one lane", 0.0)
    best = max(measured, key=lambda r: r.rate or 0.0)
    worst = min(measured, key=lambda r: r.rate or 0.0)
    spread = (best.rate or 0.0) - (worst.rate or 0.0)
    if worst.hi < best.lo:
        kind = "clear"
    elif spread > 0:
        kind = "differs"
    else:
        kind = "same"
    return CheckRow(task, cid, rates, kind, spread)


def _values(tasks: list[str], lanes: list[Lane], matrix: dict[str, dict[str, list[Any]]], attr: str, fmt
            ) -> tuple[list[ValueRow], dict[tuple[str, str], list[tuple[float, bool, str]]]]:
    rows: list[ValueRow] = []
    dots: dict[tuple[str, str], list[tuple[float, bool, str]]] = {}
    for task in tasks:
        for lane in lanes:
            atts = matrix.get(task, {}).get(lane.label, [])
            if not atts:
                continue
            done, _ = _counted(atts)
            have = [(float(getattr(a, attr)), a.verdict == "pass", a) for a in done if getattr(a, attr) is not None]
            if not have:
                continue
            vals = [v for v, _, _ in have]
            dots[(task, lane.label)] = [
                (v, ok, f"{lane.label} r{a.repeat}: {fmt(v)}, {a.verdict or a.outcome}") for v, ok, a in have]
            rows.append(ValueRow(task=task, lane=lane, values=vals, mean=sum(vals) / len(vals), fmt=fmt))
    return rows, dots


def build_charts(tasks: list[str], labels: list[str], matrix: dict[str, dict[str, list[Any]]]) -> Charts:
    """Charts for a report: ``matrix`` maps task -> lane label -> attempt views (``_render.AttemptView``)."""
    lanes = [Lane(label, PALETTE[i % len(PALETTE)]) for i, label in enumerate(labels)]
    if not any(matrix.get(t, {}).get(lane.label) for t in tasks for lane in lanes):
        return Charts(lanes, None, [], None, None, [], [])
    token_rows, token_dots = _values(tasks, lanes, matrix, "tokens", human_count)
    wall_rows, wall_dots = _values(tasks, lanes, matrix, "wall_s", human_seconds)
    return Charts(
        lanes=lanes,
        pass_rate=_rate_chart(tasks, lanes, matrix),
        checks=_check_rows(tasks, lanes, matrix),
        tokens=_value_chart("chart-tokens", "Tokens per artefact",
                            "Prompt plus completion tokens of each attempt as a dot (filled: the attempt passed, "
                            "hollow: it did not) and the mean per model as a bar.",
                            token_rows, tasks, token_dots, human_count),
        wall=_value_chart("chart-wall", "Wall time per artefact",
                          "Wall-clock time of each attempt, from sandbox start to stored result, as a dot (filled: "
                          "passed, hollow: not) and the mean per model as a bar.",
                          wall_rows, tasks, wall_dots, human_seconds),
        token_rows=token_rows, wall_rows=wall_rows,
    )
