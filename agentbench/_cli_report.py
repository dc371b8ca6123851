"""CLI commands for the report, the local viewer, human verdicts and the agreement ledger."""

from __future__ import annotations

from pathlib import Path

import typer

from ._cli_app import app, out
from ._cli_app import fail as _fail
from .errors import AgentbenchError

# ---- report, local viewer, human verdicts, scorer ledger (agentbench.report) ---------------------


def _report_run_dirs(refs: list[str], out_dir: Path) -> list[Path]:
    from .store import resolve_run_dir

    return [resolve_run_dir(out_dir, ref) for ref in refs]


@app.command("report")
def report_cmd(
    runs: list[str] = typer.Argument(..., metavar="RUN...", help="Run id(s) or folder(s); several share one matrix."),
    out_file: Path | None = typer.Option(None, "--out", help="Report file (default: <run>/report.html)."),
    runs_dir: Path = typer.Option(Path("artefacts"), "--runs", help="Folder that holds run folders."),
) -> None:
    """Write a self-contained report.html: matrix, artefacts live side by side, evidence, ledger."""
    from .report import write_report

    try:
        path = write_report(_report_run_dirs(runs, runs_dir), out_file)
    except AgentbenchError as exc:
        _fail(exc)
    out.print(f"wrote {path}", highlight=False)


@app.command("open")
def open_cmd(
    runs: list[str] = typer.Argument(..., metavar="RUN...", help="Run id(s) or run folder(s)."),
    runs_dir: Path = typer.Option(Path("artefacts"), "--out", "--runs", help="Folder that holds run folders."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one)."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Only print the URL."),
) -> None:
    """Serve the report on 127.0.0.1 with pass/fail buttons per attempt; Ctrl-C stops it."""
    from .report import serve_until_interrupted

    try:
        serve_until_interrupted(_report_run_dirs(runs, runs_dir), port=port, browser=not no_browser,
                                echo=lambda line: print(line, flush=True))
    except (AgentbenchError, OSError) as exc:
        _fail(exc)


@app.command("verdict")
def verdict_cmd(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or run folder."),
    task: str = typer.Argument(..., help="Task id."),
    model: str = typer.Argument(..., help="Model name, or lane model@agent for an external agent's attempt."),
    rest: list[str] = typer.Argument(..., metavar="[REPEAT] pass|fail", help="Repeat (default 1), then the verdict."),
    note: str = typer.Option("", "--note", help="Why: what you saw."),
    runs_dir: Path = typer.Option(Path("artefacts"), "--out", "--runs", help="Folder that holds run folders."),
) -> None:
    """Record a person's verdict on one attempt in <run>/verdicts.json."""
    from .report import record_verdict

    try:
        if len(rest) not in (1, 2) or (len(rest) == 2 and not rest[0].lstrip("r").isdigit()):
            raise AgentbenchError("Give [REPEAT] pass|fail, e.g. `agentbench verdict RUN flappy demo 2 fail`.")
        repeat = int(rest[0].lstrip("r")) if len(rest) == 2 else 1
        (run_dir,) = _report_run_dirs([run_ref], runs_dir)
        saved = record_verdict(run_dir, task, model, repeat, rest[-1], note)
    except AgentbenchError as exc:
        _fail(exc)
    out.print(f"{task}/{model}/r{repeat}: {saved.verdict} (saved to {run_dir / 'verdicts.json'})", highlight=False)


@app.command("agreement")
def agreement_cmd(
    runs: list[str] = typer.Argument(..., metavar="RUN...", help="Run id(s) or run folder(s)."),
    runs_dir: Path = typer.Option(Path("artefacts"), "--out", "--runs", help="Folder that holds run folders."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Each automatic scorer against the human verdicts: agreements, too strict, too generous."""
    from rich.table import Table

    from .report import compute_ledger, load_runs

    try:
        ledger = compute_ledger(load_runs(_report_run_dirs(runs, runs_dir)))
    except AgentbenchError as exc:
        _fail(exc)
    if json_out:
        typer.echo(ledger.model_dump_json(indent=2))
        return
    if not ledger.judged:
        out.print("No human verdicts yet: `agentbench open RUN` or `agentbench verdict RUN TASK MODEL pass|fail`.")
        return
    table = Table("scorer", "compared", "agree", "too strict", "too generous", "undecided",
                  title=f"{ledger.judged} attempts judged by a person")
    for s in ledger.scorers:
        table.add_row(s.scorer, str(s.compared), str(s.agree), str(len(s.too_strict)), str(len(s.too_generous)),
                      str(s.undecided))
    out.print(table)
    for s in ledger.scorers:
        for kind, refs in (("too strict", s.too_strict), ("too generous", s.too_generous)):
            for ref in refs:
                why = f' (person: "{ref.note}")' if ref.note else ""
                out.print(f"{kind}: {s.scorer} on {ref.uid}: scorer {ref.scorer_says}, person {ref.person_says}{why}",
                          highlight=False, markup=False)
