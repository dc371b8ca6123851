"""The agentbench command line: parse, call one function, print."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from ._logging import configure_logging
from .errors import AgentbenchError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Which model writes software that actually works.")
models_app = typer.Typer(help="List and check the configured models.", invoke_without_command=True)
sandbox_app = typer.Typer(help="Build and inspect the sandbox image.", no_args_is_help=True)
app.add_typer(models_app, name="models")
app.add_typer(sandbox_app, name="sandbox")

# Piped output (CI logs, files) gets a wide table instead of rich's 80-column default.
out = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


def _fail(exc: Exception, code: int = 2) -> None:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
    raise typer.Exit(code)


@app.callback()
def main(verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="More logs (-vv for debug).")) -> None:
    configure_logging(verbose)


@app.command("run")
def run_cmd(
    model: str = typer.Option("demo", "--model", "-m", help="Model name(s), comma-separated (see `agentbench models`)."),
    task: str = typer.Option("flappy", "--task", "-t", help="Task id(s), comma-separated, or 'all'."),
    repeats: int = typer.Option(1, "--repeats", "-n", min=1, help="Attempts per model and task."),
    concurrency: int = typer.Option(1, "--concurrency", "-j", min=1, help="Cells run at once."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, help="Max tokens per request."),
    out_dir: Path = typer.Option(Path("artefacts"), "--out", help="Folder that holds run folders."),
    resume: Optional[str] = typer.Option(None, "--resume", help="Run id (or folder) to finish."),
    retry: Optional[str] = typer.Option(None, "--retry", help="With --resume: 'infra' reruns infra errors."),
    json_out: bool = typer.Option(False, "--json", help="Print the results as JSON instead of a table."),
    checks: bool = typer.Option(True, "--checks/--no-checks", help="Check artefacts (or only store them)."),
    preflight: bool = typer.Option(True, "--preflight/--no-preflight", help="Check each endpoint before its cells."),
    review: Optional[str] = typer.Option(None, "--review", help="Reviewer model: review every artefact after the run."),
) -> None:
    """Run models on tasks in fresh sandboxes, check the artefacts, store everything."""
    from ._summary import print_summary, progress_reporter
    from .config import ModelConfig, load_models, resolve_api_key, resolve_model
    from .runner import RunOptions, run
    from .store import load_manifest
    from .tasks import resolve_tasks

    try:
        if retry not in (None, "infra"):
            raise AgentbenchError(f"--retry accepts only 'infra', not '{retry}'.")
        if resume:
            from .runner import _resolve_run_dir

            manifest = load_manifest(_resolve_run_dir(out_dir, resume))
            models = [ModelConfig.model_validate(m) for m in manifest.models.values()]
            tasks = resolve_tasks(",".join(manifest.tasks))
            max_tokens = max_tokens or manifest.max_tokens
        else:
            known = load_models()
            models = [resolve_model(n.strip(), known) for n in model.split(",") if n.strip()]
            if not models:
                raise AgentbenchError("No model given. Try --model demo.")
            tasks = resolve_tasks(task)
        for m in models:  # fail before spending anything when a key is missing
            resolve_api_key(m)
        reviewer = _reviewer(review, [m.name for m in models]) if review else None
        options = RunOptions(out_dir=out_dir, repeats=repeats, concurrency=concurrency, max_tokens=max_tokens,
                             resume=resume, retry_infra=retry == "infra", checks=checks,
                             preflight=preflight)
        totals = None if resume else {m.name: len(tasks) * repeats for m in models}
        with progress_reporter(err, totals, disabled=json_out) as progress:
            summary = asyncio.run(run(models, tasks, options, progress=progress))
    except KeyboardInterrupt:
        err.print("[yellow]Interrupted.[/] Finish it later with `agentbench run --resume RUN_ID`.")
        raise typer.Exit(130)
    except AgentbenchError as exc:
        _fail(exc)
    if json_out:
        typer.echo(json.dumps({"run_id": summary.run_id, "run_dir": str(summary.run_dir),
                               "results": [r.model_dump(mode="json") for r in summary.results]}, indent=2))
    else:
        print_summary(out, summary)
    if reviewer is not None:
        _review_after_run(summary.run_dir, reviewer, quiet=json_out)


@app.command("check")
def check_cmd(
    path: Path = typer.Argument(..., help="Artefact folder (with index.html) or the HTML file."),
    task: str = typer.Option(..., "--task", "-t", help="Task id the artefact was built for."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    evidence: Optional[Path] = typer.Option(None, "--evidence", help="Folder for evidence files (default: a temp folder)."),
) -> None:
    """Score an existing artefact without any agent. Exit 0 pass, 1 fail, 2 could not check."""
    import shutil
    import tempfile

    from ._summary import print_checks
    from .checks._run import run_checks
    from .tasks import load_task

    try:
        t = load_task(task)
        if not path.exists():
            raise AgentbenchError(f"{path}: no such file or folder.")
        work = Path(tempfile.mkdtemp(prefix="agentbench-check-"))
        if path.is_file():
            (work / "artefact").mkdir()
            shutil.copy(path, work / "artefact" / t.entry)
        else:
            shutil.copytree(path, work / "artefact")
        attempt = evidence or work
        report = asyncio.run(run_checks(t, work / "artefact", attempt))
    except AgentbenchError as exc:
        _fail(exc)
    if json_out:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        print_checks(out, report, attempt / "evidence")
    if report.checks and all(c.status == "error" for c in report.checks):
        raise typer.Exit(2)
    raise typer.Exit(0 if report.verdict == "pass" else 1)


@models_app.callback()
def models_list(ctx: typer.Context) -> None:
    """List the models: built-in demos and those in models.toml."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    from .config import find_models_file, load_models

    try:
        models = load_models()
    except AgentbenchError as exc:
        _fail(exc)
    table = Table("name", "model", "base_url", "key variable", "thinking", "max conc.")
    for m in models.values():
        table.add_row(m.name, m.model, "(built-in replay)" if m.demo else m.base_url, m.api_key_env or "-",
                      m.thinking or "-", str(m.max_concurrency))
    out.print(table)
    where = find_models_file()
    out.print(f"models.toml: {where}" if where else "No models.toml found (copy models.example.toml to ./models.toml).")


@models_app.command("check")
def models_check(name: str = typer.Argument(..., help="Model name from models.toml.")) -> None:
    """Preflight an endpoint: reachable, model listed, tool call, streaming, thinking setting."""
    from .config import resolve_api_key, resolve_model
    from .models import ChatClient
    from .models._preflight import preflight

    async def go():
        m = resolve_model(name)
        if m.demo:
            from .models import DemoServer
            from .tasks import list_tasks, load_task

            with DemoServer({t: load_task(t).prompt for t in list_tasks()}) as demo:
                async with ChatClient(m, base_url=demo.base_url) as client:
                    return await preflight(client)
        async with ChatClient(m, api_key=resolve_api_key(m)) as client:
            return await preflight(client)

    try:
        items = asyncio.run(go())
    except AgentbenchError as exc:
        _fail(exc)
    for item in items:
        mark = "[green]ok[/]" if item.ok else "[red]FAIL[/]"
        out.print(f"{mark} {item.name}: {item.detail}", highlight=False)
    raise typer.Exit(0 if all(i.ok for i in items) else 1)


@sandbox_app.command("build")
def sandbox_build() -> None:
    """Build the sandbox image (bootstrapping a Debian base when no registry can be reached)."""
    from .sandbox import build_image

    try:
        tag = build_image(log=lambda msg: err.print(msg, highlight=False))
    except AgentbenchError as exc:
        _fail(exc)
    out.print(f"built {tag}")


@app.command("tasks")
def tasks_cmd() -> None:
    """List the tasks."""
    from .tasks import list_tasks, load_task

    for tid in list_tasks():
        t = load_task(tid)
        out.print(f"{tid:10} {t.title:18} checks: {', '.join(t.checks)}", highlight=False)


@app.command("stats")
def stats_cmd(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or run folder."),
    out_dir: Path = typer.Option(Path("artefacts"), "--out", help="Folder that holds run folders."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Pass rates with Wilson 95% intervals, flipping checks, paired comparisons (McNemar exact)."""
    from rich.table import Table

    from .runner import _resolve_run_dir
    from .stats import compute_stats, load_results

    try:
        stats = compute_stats(load_results(_resolve_run_dir(out_dir, run_ref)))
    except AgentbenchError as exc:
        _fail(exc)
    if json_out:
        typer.echo(stats.model_dump_json(indent=2))
        return
    table = Table("model", "task", "pass", "rate [95% CI]", "infra", "budget", "flipping checks", "tokens", "tok/s",
                  "wall s", "cost $")
    for c in stats.cells:
        rate = "-" if c.pass_rate is None else f"{c.pass_rate:.0%} [{c.ci_low:.0%}, {c.ci_high:.0%}]"
        table.add_row(c.model, c.task, f"{c.passed}/{c.scored}", rate, str(c.infra_errors), str(c.budget_hits),
                      ", ".join(f"{k} {v}" for k, v in c.flipping_checks.items()) or "-",
                      f"{c.mean_tokens:.0f}" if c.mean_tokens else "-", f"{c.mean_tok_s:.0f}" if c.mean_tok_s else "-",
                      f"{c.mean_wall_s:.1f}" if c.mean_wall_s else "-",
                      f"{c.mean_cost_usd:.4f}" if c.mean_cost_usd is not None else "-")
    out.print(table)
    for p in stats.pairs:
        out.print(f"{p.model_a} vs {p.model_b}: agree on {p.agree} of {p.pairs}; {p.model_a} alone {p.only_a}, "
                  f"{p.model_b} alone {p.only_b}; McNemar exact p = {p.p_value:.3g}", highlight=False)
    for line in stats.infra:
        out.print(f"[yellow]infra error (not counted):[/] {line}", highlight=False)


# ---- report, local viewer, human verdicts, scorer ledger (agentbench.report) ---------------------


def _report_run_dirs(refs: list[str], out_dir: Path) -> list[Path]:
    from .runner import _resolve_run_dir

    return [_resolve_run_dir(out_dir, ref) for ref in refs]


@app.command("report")
def report_cmd(
    runs: list[str] = typer.Argument(..., metavar="RUN...", help="Run id(s) or folder(s); several share one matrix."),
    out_file: Optional[Path] = typer.Option(None, "--out", help="Report file (default: <run>/report.html)."),
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
    model: str = typer.Argument(..., help="Model name."),
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


# ---- second-model review (agentbench.review) -----------------------------------------------------


def _reviewer(name: str, artefact_models: list[str] | None = None):
    """The reviewer's config (ConfigError for demo models or a missing key); warns on self-review."""
    from .review import resolve_reviewer

    from rich.markup import escape

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
        table.add_row(escape(r.task), escape(r.model_of_artefact), str(r.repeat), r.status,
                      "-" if r.score is None else f"{r.score:g}",
                      "-" if r.passed is None else ("pass" if r.passed else "fail"), met,
                      str(r.usage.prompt_tokens + r.usage.completion_tokens), f"{r.cost_usd:.4f}", f"{r.wall_s:.1f}",
                      escape(r.verdict or (r.error.message[:160] if r.error else "")))
    console.print(table)
    for _, r in summary.reviews:
        if r.same_model_warning:
            console.print(f"[yellow]warning:[/] {escape(r.reviewer)} reviewed its own artefact "
                          f"{escape(r.task)}/{escape(r.model_of_artefact)}/r{r.repeat}", highlight=False)
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
    reviewer: Optional[str] = typer.Option(None, "--reviewer", "-r", envvar="AGENTBENCH_REVIEWER",
                                           help="Reviewer model from models.toml (not a demo model)."),
    blind: bool = typer.Option(False, "--blind", help="Withhold the probe results (saved as review-<reviewer>-blind.json)."),
    pairwise: bool = typer.Option(False, "--pairwise", help="Compare two models' artefacts of --task, in both orders."),
    task: Optional[str] = typer.Option(None, "--task", "-t", help="Only these task(s), comma-separated; one with --pairwise."),
    model: Optional[str] = typer.Option(None, "--models", "-m", help="Only these models' artefacts, comma-separated."),
    missing: bool = typer.Option(False, "--missing", help="Only attempts without an ok review by this reviewer."),
    max_reasks: int = typer.Option(1, "--max-reasks", min=0, help="Re-asks after an invalid answer."),
    concurrency: int = typer.Option(1, "--concurrency", "-j", min=1, help="Attempts reviewed at once."),
    runs_dir: Path = typer.Option(Path("artefacts"), "--out", "--runs", help="Folder that holds run folders."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A second model scores each artefact against reviewers/<task>.toml. Exit 1 if any review failed."""
    from .review import ReviewOptions, pairwise_task, review_run
    from .runner import _resolve_run_dir
    from .store import load_manifest

    tasks = [t.strip() for t in task.split(",") if t.strip()] if task else None
    models = [m.strip() for m in model.split(",") if m.strip()] if model else None
    try:
        if not reviewer:
            raise AgentbenchError("Give the reviewer model: --reviewer NAME (a model in models.toml), "
                                  "or set AGENTBENCH_REVIEWER.")
        run_dir = _resolve_run_dir(runs_dir, run_ref)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
