"""CLI commands for the second-model reviewer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer

from ._cli_app import app, err, out
from ._cli_app import fail as _fail
from ._numbers import human_number
from .errors import AgentbenchError

# ---- second-model review (agentbench.review) -----------------------------------------------------


def _reviewer(name: str, artefact_models: list[str] | None = None):
    """The reviewer's config (ConfigError for demo models or a missing key); warns on self-review."""
    from rich.markup import escape

    from .review import resolve_reviewer

    cfg = resolve_reviewer(name)
    if artefact_models and cfg.name in artefact_models:
        err.print(f"[yellow]warning:[/] reviewer '{escape(cfg.name)}' also wrote artefacts in this run; "
                  "a model tends to favour its own work.", highlight=False)
    return cfg


def _print_reviews(summary, *, quiet: bool = False) -> None:
    """A table of the stored reviews (on stderr when stdout carries JSON), then warnings."""
    from rich.markup import escape
    from rich.table import Table

    console = err if quiet else out
    table = Table("task", "model", "r", "status", "score", "passed", "criteria met", "tokens", "cost $", "wall s",
                  "verdict", title=f"reviews by {escape(summary.reviewer)}")
    for _, r in summary.reviews:
        met = f"{sum(c.met for c in r.criteria)}/{len(r.criteria)}" if r.criteria else "-"
        table.add_row(escape(r.task), escape(r.lane), str(r.repeat), r.status,
                      "-" if r.score is None else human_number(r.score),
                      "-" if r.passed is None else ("pass" if r.passed else "fail"), met,
                      str(r.usage.prompt_tokens + r.usage.completion_tokens), f"{r.cost_usd:.4f}", f"{r.wall_s:.1f}",
                      escape(r.verdict or (r.error.message[:160] if r.error else "")))
    console.print(table)
    for _, r in summary.reviews:
        if r.same_model_warning:
            console.print(f"[yellow]warning:[/] {escape(r.reviewer)} reviewed its own artefact "
                          f"{escape(r.task)}/{escape(r.lane)}/r{r.repeat}", highlight=False)
    for line in summary.skipped:
        console.print(f"not reviewed: {escape(line)}", highlight=False)


def _review_after_run(run_dir: Path, reviewer, *, quiet: bool) -> None:
    from .review import review_run

    try:
        summary = asyncio.run(review_run(run_dir, reviewer))
    except AgentbenchError as exc:
        _fail(exc)
    _print_reviews(summary, quiet=quiet)


@app.command("review")
def review_cmd(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or run folder."),
    reviewer: str | None = typer.Option(None, "--reviewer", "-r", envvar="AGENTBENCH_REVIEWER",
                                           help="Reviewer model from models.toml (not a demo model)."),
    blind: bool = typer.Option(False, "--blind",
                               help="Withhold the probe results (saved as review-<reviewer>-blind.json)."),
    pairwise: bool = typer.Option(False, "--pairwise", help="Compare two models' artefacts of --task, in both orders."),
    task: str | None = typer.Option(None, "--task", "-t",
                                    help="Only these task(s), comma-separated; one with --pairwise."),
    model: str | None = typer.Option(None, "--models", "-m",
                                     help="Only these models' (or lanes', model@agent) artefacts, comma-separated."),
    missing: bool = typer.Option(False, "--missing", help="Only attempts without an ok review by this reviewer."),
    max_reasks: int = typer.Option(1, "--max-reasks", min=0, help="Re-asks after an invalid answer."),
    concurrency: int = typer.Option(1, "--concurrency", "-j", min=1, help="Attempts reviewed at once."),
    runs_dir: Path = typer.Option(Path("artefacts"), "--out", "--runs", help="Folder that holds run folders."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A second model scores each artefact against reviewers/<task>.toml. Exit 1 if any review failed."""
    from .review import ReviewOptions, pairwise_task, review_run
    from .store import load_manifest, resolve_run_dir

    tasks = [t.strip() for t in task.split(",") if t.strip()] if task else None
    models = [m.strip() for m in model.split(",") if m.strip()] if model else None
    try:
        if not reviewer:
            raise AgentbenchError("Give the reviewer model: --reviewer NAME (a model in models.toml), "
                                  "or set AGENTBENCH_REVIEWER.")
        run_dir = resolve_run_dir(runs_dir, run_ref)
        cfg = _reviewer(reviewer, list(load_manifest(run_dir).models))
        options = ReviewOptions(max_reasks=max_reasks, concurrency=concurrency, missing_only=missing)
        if pairwise:
            if not tasks or len(tasks) != 1:
                raise AgentbenchError("--pairwise compares one task: give --task TASK.")
            path, record = asyncio.run(pairwise_task(run_dir, tasks[0], cfg, models=models, blind=blind,
                                                     options=options))
        else:
            summary = asyncio.run(review_run(run_dir, cfg, blind=blind, tasks=tasks, models=models, options=options))
    except AgentbenchError as exc:
        _fail(exc)
    if pairwise:
        if json_out:
            typer.echo(record.model_dump_json(indent=2))
        else:
            wins = ", ".join(f"{m} {n}" for m, n in record.wins.items())
            out.print(f"{record.task}: {len(record.comparisons)} comparison(s), each asked in both orders; wins: "
                      f"{wins}; ties {record.ties} (position bias {record.position_bias}); reviewer errors "
                      f"{record.errors}; cost ${record.cost_usd:.4f}; saved to {path}", highlight=False, markup=False)
        raise typer.Exit(1 if record.errors else 0)
    if json_out:
        typer.echo(json.dumps({"run_dir": str(summary.run_dir), "reviewer": summary.reviewer,
                               "reviews": [{"path": str(p), **r.model_dump(mode="json")} for p, r in summary.reviews],
                               "skipped": summary.skipped}, indent=2))
    _print_reviews(summary, quiet=json_out)
    raise typer.Exit(1 if summary.errors else 0)
