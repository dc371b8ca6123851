"""The agentbench command line: parse, call one function, print."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import typer

from ._cli_app import app, err, fail, models_app, out, sandbox_app
from ._logging import configure_logging
from .errors import AgentbenchError

# The app and consoles live in _cli_app, so the command modules need not import this one.
_fail = fail


_HOST_BROWSER_HELP = ("Run Chromium on this host instead of the checker container (the artefact's code is then "
                      "NOT contained; for trusted artefacts only). Same as AGENTBENCH_HOST_BROWSER=1.")


@app.callback()
def main(verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="More logs (-vv for debug).")) -> None:
    configure_logging(verbose)


@app.command("run")
def run_cmd(
    model: str = typer.Option("demo", "--model", "-m",
                              help="Model name(s), comma-separated (see `agentbench models`)."),
    task: str = typer.Option("flappy", "--task", "-t", help="Task id(s), comma-separated, or 'all'."),
    repeats: int = typer.Option(1, "--repeats", "-n", min=1, help="Attempts per model and task."),
    concurrency: int = typer.Option(1, "--concurrency", "-j", min=1, help="Cells run at once."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Max tokens per request."),
    out_dir: Path = typer.Option(Path("artefacts"), "--out", help="Folder that holds run folders."),
    resume: str | None = typer.Option(None, "--resume", help="Run id (or folder) to finish."),
    retry: str | None = typer.Option(None, "--retry", help="With --resume: 'infra' reruns infra errors."),
    json_out: bool = typer.Option(False, "--json", help="Print the results as JSON instead of a table."),
    checks: bool = typer.Option(True, "--checks/--no-checks", help="Check artefacts (or only store them)."),
    preflight: bool = typer.Option(True, "--preflight/--no-preflight", help="Check each endpoint before its cells."),
    review: str | None = typer.Option(None, "--review", help="Reviewer model: review every artefact after the run."),
    agent: str | None = typer.Option(
        None, "--agent", "-a", help="builtin, opencode, aider or crush (default: each model's `agent`, else builtin)."),
    host_browser: bool = typer.Option(False, "--host-browser", help=_HOST_BROWSER_HELP),
    engine: str | None = typer.Option(None, "--engine", help="Docker engine(s), comma-separated: names from "
                                      "settings.toml or addresses (unix://, ssh://user@host, tcp://host:2376). "
                                      "Default: settings.toml, else DOCKER_HOST."),
) -> None:
    """Run models on tasks in fresh sandboxes, check the artefacts, store everything."""
    if host_browser:
        os.environ["AGENTBENCH_HOST_BROWSER"] = "1"
    from ._summary import print_summary, progress_reporter
    from .config import ModelConfig, load_models, resolve_api_key, resolve_model
    from .runner import RunOptions, run
    from .store import load_manifest
    from .tasks import resolve_tasks

    try:
        if retry not in (None, "infra"):
            raise AgentbenchError(f"--retry accepts only 'infra', not '{retry}'.")
        if resume:
            from .store import resolve_run_dir

            manifest = load_manifest(resolve_run_dir(out_dir, resume))
            models = [ModelConfig.model_validate(m) for m in manifest.models.values()]
            tasks = resolve_tasks(",".join(manifest.tasks))
            max_tokens = max_tokens or manifest.max_tokens
            checks = checks and manifest.checks  # a run started with --no-checks stays unchecked
            concurrency = concurrency if concurrency != 1 else manifest.concurrency
        else:
            known = load_models()
            models = [resolve_model(n.strip(), known) for n in model.split(",") if n.strip()]
            if not models:
                raise AgentbenchError("No model given. Try --model demo.")
            tasks = resolve_tasks(task)
        for m in models:  # fail before spending anything when a key is missing
            resolve_api_key(m)
        from ._cli_review import _review_after_run, _reviewer
        from .store import new_run_id

        reviewer = _reviewer(review, [m.name for m in models]) if review else None
        from ._settings import load_settings
        from .sandbox._engine_config import select_engines

        engines = select_engines(engine, load_settings().engines)
        run_id = resume or new_run_id()
        options = RunOptions(out_dir=out_dir, repeats=repeats, concurrency=concurrency, max_tokens=max_tokens,
                             resume=resume, retry_infra=retry == "infra", checks=checks,
                             preflight=preflight, run_id=None if resume else run_id, engines=engines,
                             notice=lambda msg: err.print(msg, highlight=False, markup=False), agent=agent)
        totals = None if resume else {m.name: len(tasks) * repeats for m in models}
        with progress_reporter(err, totals, disabled=json_out) as progress:
            summary = asyncio.run(run(models, tasks, options, progress=progress))
    except KeyboardInterrupt:
        err.print(f"[yellow]Interrupted.[/] Finish it later with `agentbench run --resume {run_id}"
                  f"{'' if out_dir == Path('artefacts') else f' --out {out_dir}'}`.", highlight=False)
        raise typer.Exit(130) from None
    except AgentbenchError as exc:
        _fail(exc)
    if json_out:
        typer.echo(json.dumps({"run_id": summary.run_id, "run_dir": str(summary.run_dir),
                               "results": [r.model_dump(mode="json") for r in summary.results]}, indent=2))
    else:
        print_summary(out, summary)
    if summary.results and all(r.outcome == "infra-error" for r in summary.results):
        err.print(f"[red]Nothing was measured:[/] all {len(summary.results)} cell(s) ended in infra-error; fix the "
                  f"cause above, then `agentbench run --resume {summary.run_id} --retry infra`.", highlight=False)
        raise typer.Exit(1)
    if reviewer is not None:
        _review_after_run(summary.run_dir, reviewer, quiet=json_out)


@app.command("check")
def check_cmd(
    paths: list[Path] = typer.Argument(..., help="Artefact folder(s) (with index.html) or HTML file(s)."),
    task: str = typer.Option(..., "--task", "-t", help="Task id the artefacts were built for."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object (a list of them for several paths)."),
    evidence: Path | None = typer.Option(None, "--evidence", help="Folder for evidence files (default: not kept)."),
    host_browser: bool = typer.Option(False, "--host-browser", help=_HOST_BROWSER_HELP),
) -> None:
    """Score existing artefacts without any agent. Exit 0 all pass, 1 a fail, 2 could not check.

    The browser checks of several paths run side by side, one per core (a checker container each).
    """
    import contextlib

    from rich.markup import escape

    from ._files_copy import staged_artefact
    from ._summary import print_checks
    from .checks._checker_pool import close_shared_checker, shared_checker
    from .checks._run import batch_limit, check_batch, run_checks
    from .tasks import load_task

    if host_browser:
        os.environ["AGENTBENCH_HOST_BROWSER"] = "1"

    async def check_all(t, stack: contextlib.ExitStack) -> list:
        if not host_browser:  # the container starts while the first artefact is copied and parsed
            warm = asyncio.ensure_future(shared_checker().start())

        async def one(item: tuple[int, Path]) -> tuple:
            i, path = item
            # Only the artefact's plain files are checked, from a private copy removed on every way out.
            work, copied = stack.enter_context(staged_artefact(path, t.entry))
            for rel, why in copied.skipped:
                err.print(f"[yellow]left out[/] {escape(str(path))}/{escape(rel)}: {escape(why)}", highlight=False)
            attempt = (evidence if len(paths) == 1 else evidence / f"{i + 1}-{path.name}") if evidence else work
            return path, attempt, await run_checks(t, work / "artefact", attempt)

        reports = await check_batch(list(enumerate(paths)), one, await batch_limit(len(paths)))
        if not host_browser:
            await asyncio.gather(warm, return_exceptions=True)
        return reports

    try:
        t = load_task(task)
        for path in paths:
            if not path.exists():
                raise AgentbenchError(f"{path}: no such file or folder.")
        with contextlib.ExitStack() as stack:
            try:
                reports = asyncio.run(check_all(t, stack))
            finally:
                close_shared_checker()
    except (AgentbenchError, FileNotFoundError) as exc:
        _fail(exc)
    if json_out:
        docs = [{**report.to_json(), **({"path": str(path)} if len(paths) > 1 else {})} for path, _, report in reports]
        typer.echo(json.dumps(docs[0] if len(paths) == 1 else docs, indent=2))
    else:
        for path, attempt, report in reports:
            if len(paths) > 1:
                out.print(f"[bold]{path}[/]", highlight=False)
            print_checks(out, report, attempt / "evidence" if evidence else "not kept (--evidence DIR keeps it)")
    checks = [c for _, _, report in reports for c in report.checks]
    if all(report.verdict == "pass" for _, _, report in reports):
        raise typer.Exit(0)
    # Any real failure is a verdict (1); only harness errors and nothing failed: could not check (2).
    raise typer.Exit(1 if any(c.status == "fail" for c in checks) else 2)


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
        mark = "[green]ok[/]" if item.ok else "[red]FAIL[/]" if item.blocks else "[yellow]WARN[/]"
        out.print(f"{mark} {item.name}: {item.detail}", highlight=False)
    raise typer.Exit(0 if all(i.ok or not i.blocks for i in items) else 1)


@sandbox_app.command("build")
def sandbox_build(
    agent: list[str] = typer.Option(None, "--agent", help="Build this external agent's image instead (repeatable)."),
) -> None:
    """Build the sandbox and checker images (bootstrapping Debian bases when no registry can be reached).

    With ``--agent opencode`` (aider, crush) the agent's image is built instead, on the sandbox
    image (built first only when missing), once per pinned version and base: an existing one is reused.
    """
    from .sandbox import IMAGE_TAG, build_image, connect_docker, image_exists
    from .sandbox._checker_image import build_checker_image

    try:
        if not agent:
            tag = build_image(log=lambda msg: err.print(msg, highlight=False))
            checker = build_checker_image(log=lambda msg: err.print(msg, highlight=False))
            out.print(f"built {tag} and {checker}")
            return
        if not image_exists(connect_docker(), IMAGE_TAG):
            out.print(f"built {build_image(log=lambda msg: err.print(msg, highlight=False))}")
        from .agents import ensure_agent_image, get_agent

        for name in agent:
            built = ensure_agent_image(get_agent(name).image(), log=lambda m: err.print(m, highlight=False))
            out.print(f"ready {built}")
    except AgentbenchError as exc:
        _fail(exc)


@app.command("tasks")
def tasks_cmd() -> None:
    """List the tasks: the built-in ones and the installed plug-ins (entry points ``agentbench.tasks``)."""
    from rich.markup import escape

    from .tasks import list_tasks, load_task

    try:
        ids = list_tasks()
    except AgentbenchError as exc:
        _fail(exc)
    broken = []
    for tid in ids:
        try:
            t = load_task(tid)
        except AgentbenchError as exc:  # a plug-in that does not load: said, the others still listed
            broken.append(tid)
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            continue
        out.print(f"{tid:10} {t.title:18} checks: {', '.join(t.checks)}", highlight=False)
    if broken:
        raise typer.Exit(2)


@app.command("stats")
def stats_cmd(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or run folder."),
    out_dir: Path = typer.Option(Path("artefacts"), "--out", help="Folder that holds run folders."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Pass rates with Wilson 95% intervals, flipping checks, paired comparisons (McNemar exact)."""
    from rich.table import Table

    from .stats import compute_stats, load_results
    from .store import resolve_run_dir

    try:
        stats = compute_stats(load_results(resolve_run_dir(out_dir, run_ref)))
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


@app.command("export")
def export_cmd(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or run folder."),
    fmt: str = typer.Option("inspect", "--format", "-f", help="Output format: inspect (Inspect AI .eval logs)."),
    out_dir: Path = typer.Option(Path("artefacts"), "--out", "--runs", help="Folder that holds run folders."),
    to: Path | None = typer.Option(None, "--to", help="Folder for the exported files (default: <run>/inspect)."),
) -> None:
    """Export a run for other tools: one Inspect eval log per task and lane (open with `inspect view`)."""
    from .export import FORMATS, export_inspect
    from .store import resolve_run_dir

    try:
        if fmt not in FORMATS:
            raise AgentbenchError(f"Unknown export format '{fmt}'; choose one of: {', '.join(FORMATS)}.")
        paths = export_inspect(resolve_run_dir(out_dir, run_ref), to)
    except AgentbenchError as exc:
        _fail(exc)
    for path in paths:
        out.print(f"wrote {path}", highlight=False)
    if paths:
        out.print(f"open them with: inspect view --log-dir {paths[0].parent}", highlight=False)


# Commands in their own modules register on the shared app (_cli_app) when imported; last, so
# `--help` lists run, check, ... first.
from . import _cli_report, _cli_review  # noqa: E402, F401

if __name__ == "__main__":  # pragma: no cover - `python -m agentbench.cli`
    sys.exit(app())
