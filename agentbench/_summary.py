"""What `agentbench run` and `agentbench check` print: progress while working, tables after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from .store import AttemptResult, CellRef, attempt_dir

__all__ = ["print_checklist", "print_checks", "print_summary", "progress_reporter"]

_STYLE = {"pass": "green", "fail": "red", "error": "yellow", "skip": "dim"}


@contextlib.contextmanager
def progress_reporter(console: Console, totals: dict[str, int] | None, *, disabled: bool = False) -> Iterator:
    """Progress per model and overall; ``totals`` maps model name to its cell count (None: unknown)."""
    if disabled:
        yield None
        return
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=False,
    ) as progress:
        overall = progress.add_task("all", total=sum(totals.values()) if totals else None)
        bars: dict[str, int] = {}
        running: dict[str, set[str]] = {}

        def bar(model: str) -> int:
            if model not in bars:
                bars[model] = progress.add_task(model, total=(totals or {}).get(model))
                running[model] = set()
            return bars[model]

        for name in totals or {}:
            bar(name)

        def report(event: str, cell: CellRef, result: AttemptResult | None) -> None:
            b = bar(cell.model)
            if event == "start":
                running[cell.model].add(f"{cell.task}/r{cell.repeat}")
            else:
                running[cell.model].discard(f"{cell.task}/r{cell.repeat}")
                progress.advance(b)
                progress.advance(overall)
                if result is not None:
                    verdict = result.verdict or ""
                    progress.console.print(escape(f"  {cell.key}: {result.outcome} {verdict} ({result.wall_s:.1f}s)"),
                                           highlight=False)
            now = ", ".join(sorted(running[cell.model]))
            progress.update(b, description=f"{cell.model}" + (f" [{escape(now)}]" if now else ""))

        yield report


def _fmt_tokens(r: AttemptResult) -> str:
    s = r.speed
    return f"{s.prompt_tokens:,}/{s.completion_tokens:,}" if s.requests else "-"


def print_summary(console: Console, summary) -> None:
    console.print(f"run id: [bold]{summary.run_id}[/]  folder: {summary.run_dir}", highlight=False)
    table = Table("task", "model", "r", "outcome", "verdict", "checks", "failing", "tokens in/out", "tok/s",
                  "wall s", "cost $")
    for r in summary.results:
        decided = [c for c in r.checks if c.status in ("pass", "fail")]
        passed = sum(c.status == "pass" for c in decided)
        failing = [c.id for c in r.checks if c.status == "fail"] + [f"{c.id}?" for c in r.checks if c.status == "error"]
        outcome = r.outcome + (f" ({r.agent.budget_hit})" if r.agent.budget_hit else "")
        verdict = r.verdict or "-"
        table.add_row(
            r.task, r.lane, str(r.repeat), outcome, f"[{_STYLE.get(verdict, 'white')}]{verdict}[/]",
            f"{passed}/{len(decided)}" if r.checks else "-", ", ".join(failing) or "-", _fmt_tokens(r),
            f"{r.speed.decode_tok_s:.0f}" if r.speed.decode_tok_s else "-", f"{r.wall_s:.1f}", f"{r.cost_usd:.4f}",
        )
    console.print(table)
    for r in summary.results:
        where = attempt_dir(summary.run_dir, r.cell)
        line = f"{r.cell.key}: artefact at {where / 'artefact'}"
        if r.error:
            line = f"{r.cell.key}: INFRA ERROR ({r.error.kind}): {r.error.message}"
        console.print(escape(line), highlight=False)
        for c in r.checks:  # what a person would see, in one line per failing check
            if c.status == "fail":
                detail = c.detail if len(c.detail) <= 160 else c.detail[:157] + "..."
                console.print(f"  [red]{c.id}[/]: {escape(detail)}", highlight=False)
    infra = [r for r in summary.results if r.outcome == "infra-error"]
    if infra:
        console.print(f"[yellow]{len(infra)} infra error(s): not the model's fault, excluded from pass rates. "
                      f"Retry with `agentbench run --resume {summary.run_id} --retry infra`.[/]")
    if summary.skipped:
        console.print(f"{summary.skipped} cell(s) were already done and kept.")


def print_checks(console: Console, report, evidence_dir: Path) -> None:
    table = Table("check", "status", "detail")
    for c in report.checks:
        table.add_row(c.id, f"[{_STYLE[c.status]}]{c.status}[/]", escape(c.detail))
    console.print(table)
    console.print(f"verdict: [{_STYLE.get(report.verdict, 'white')}]{report.verdict}[/]  score: {report.score:.2f}  "
                  f"({report.duration_s:.1f}s)  evidence: {evidence_dir}", highlight=False)
    if getattr(report, "rests_on_errors", False):
        ids = ", ".join(c.id for c in report.checks if c.status == "error")
        console.print(f"[yellow]no check failed: this verdict rests only on checks the harness could not "
                      f"decide ({ids}); a harness gap, not a finding about the artefact[/]", highlight=False)
    if getattr(report, "checklist", None) is not None:
        print_checklist(console, report.checklist)


def print_checklist(console: Console, checklist) -> None:
    """The checklist items (how each was decided and on what evidence), scores and disagreements."""
    item_style = {"pass": "green", "fail": "red", "unknown": "yellow"}
    wide = console.width >= 110  # the evidence line only where it can be read
    table = Table(title="checklist (* required)", title_justify="left")
    for name in ("item", "w", "status", "decided by", "static"):
        table.add_column(name, no_wrap=True)
    if wide:  # the other columns are short and stay whole; the evidence line takes what is left
        table.add_column("evidence", no_wrap=True, overflow="ellipsis", max_width=max(20, console.width - 80))
    for kind in ("feature", "finish"):
        items = [i for i in checklist.items if i.kind == kind]
        if items:
            table.add_row(f"[bold]{kind}[/]")
        for i in items:
            row = [i.id + ("*" if i.required else ""), f"{i.weight:g}", f"[{item_style[i.status]}]{i.status}[/]",
                   i.decided_by, i.static or "-"]
            table.add_row(*row, *([i.evidence.splitlines()[0] if i.evidence else ""] if wide else []))
    console.print(table)

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.0%}"

    line = f"feature: {pct(checklist.feature_score)}  finish: {pct(checklist.finish_score)}"
    if checklist.required_failed:
        line += f"  required items failing: {', '.join(checklist.required_failed)}"
    if checklist.unknown:
        line += f"  undecided: {', '.join(checklist.unknown)}"
    console.print(line, highlight=False)
    for d in checklist.disagreements:
        console.print(f"[yellow]source and behaviour disagree[/] {d}", highlight=False)
