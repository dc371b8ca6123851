"""Plan a run (models x tasks x repeats), run each cell in a fresh sandbox, check and store it.

One cell's attempt is ``_cell.run_cell``; this module opens the engines, writes run.json, preflights
the endpoints, builds the agents' images and runs the cells under the concurrency limits.

A failure inside one cell is recorded as that cell's outcome and never aborts the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from . import __version__
from ._cell import drain_closes, infra_result, run_cell
from .config import ModelConfig, resolve_api_key
from .errors import AgentbenchError
from .store import (
    AttemptResult,
    CellRef,
    InfraError,
    RunManifest,
    attempt_dir,
    load_manifest,
    load_result,
    new_run_id,
    resolve_run_dir,
    utcnow,
    write_json,
)
from .tasks import Task

__all__ = ["RunOptions", "RunSummary", "run"]

log = structlog.get_logger()


@dataclass
class RunOptions:
    out_dir: Path
    repeats: int = 1
    concurrency: int = 1
    max_tokens: int | None = None  # per request; overrides the model config
    resume: str | None = None  # run id or folder to resume
    retry_infra: bool = False
    run_id: str | None = None
    checks: bool = True  # False: store artefacts unchecked (benchmarks; `agentbench check` later)
    preflight: bool = True  # check each real endpoint before its cells spend anything
    engines: list[Any] | None = None  # EngineConfig list (None: settings.toml, else DOCKER_HOST's engine)
    notice: Callable[[str], None] | None = None  # one-line progress notes (engine images, lost engines)
    agent: str | None = None  # builtin / opencode / aider / crush; None: each model's `agent`


@dataclass
class RunSummary:
    run_id: str
    run_dir: Path
    results: list[AttemptResult] = field(default_factory=list)
    skipped: int = 0  # cells already done (resume)


ProgressFn = Callable[[str, CellRef, AttemptResult | None], None]


async def _preflight_models(models: list[ModelConfig]) -> dict[str, InfraError]:
    """Preflight every real endpoint at once; the failed ones map to the reason their cells get."""
    from .models import ChatClient
    from .models._preflight import preflight

    async def one(model: ModelConfig) -> tuple[str, InfraError | None]:
        try:
            async with ChatClient(model, api_key=resolve_api_key(model)) as client:
                items = await preflight(client)
        except AgentbenchError as exc:
            return model.name, InfraError(kind="preflight", message=str(exc))
        bad = [i for i in items if not i.ok and i.blocks]  # the model's own failings are for its cells
        if not bad:
            for item in (i for i in items if not i.ok):
                log.info("preflight.model_finding", model=model.name, item=item.name, detail=item.detail)
            return model.name, None
        detail = "; ".join(f"{i.name}: {i.detail}" for i in bad)
        log.warning("preflight.failed", model=model.name, detail=detail)
        return model.name, InfraError(kind="preflight", message=f"preflight of '{model.name}' failed: {detail}")

    results = await asyncio.gather(*(one(m) for m in models if not m.demo))
    return {name: err for name, err in results if err is not None}


def _run_agent(cells: list[CellRef]) -> str:
    agents = {c.agent for c in cells}
    return agents.pop() if len(agents) == 1 else "per-model"


def _check_agents(names: set[str]) -> None:
    """An unknown agent (a typo in --agent or models.toml) stops the run before anything is written."""
    from .agents import get_agent

    for name in sorted(names - {"builtin"}):
        get_agent(name)


async def _prepare_agent_images(cells: list[CellRef], notice: Callable[[str], None] | None,
                                engines: list[Any]) -> dict[str, InfraError]:
    """The image of every external agent these cells use, built now on first use (with progress lines).

    Built before any cell starts, so the build never eats into an attempt's wall-clock budget and
    happens once, not once per cell. A run with the builtin agent only (the demo) builds nothing.
    External agents run on an engine of this machine only (their gateway socket is bind-mounted):
    without one, nothing is built here and their cells say why. Returns the agents whose image
    could not be made, with the reason their cells get.
    """
    from .agents import ensure_agent_image, get_agent
    from .sandbox._engines import bind_engine

    names = sorted({c.agent for c in cells} - {"builtin"})
    local = next((e for e in engines if e.config.address is None or e.config.address.startswith("unix://")), None)
    failed: dict[str, InfraError] = {}
    if not names or local is None:
        return failed
    say = notice or (lambda m: log.info("agent.image", msg=m))
    for name in names:
        try:
            with bind_engine(local):  # the thread below inherits the binding
                await asyncio.to_thread(ensure_agent_image, get_agent(name).image(), log=say)
        except AgentbenchError as exc:
            failed[name] = InfraError(kind="sandbox", message=f"the {name} agent's image could not be built: {exc}")
    return failed


def _check_images(options: RunOptions) -> list[Any]:
    """The checker's runtime image, on every engine whose cells are checked in a container there."""
    from .checks._checker import host_browser_opted_in

    if not options.checks or host_browser_opted_in():
        return []
    from .sandbox._checker_image import CHECKER_RUNTIME_TAG, build_checker_image
    from .sandbox._engines import EngineImage

    return [EngineImage(CHECKER_RUNTIME_TAG, lambda client, notice: build_checker_image(client, log=notice))]


def _engine_configs(options: RunOptions) -> list[Any]:
    if options.engines:
        return list(options.engines)
    from ._settings import load_settings
    from .sandbox._engine_config import select_engines

    return select_engines(None, load_settings().engines)


async def run(
    models: list[ModelConfig],
    tasks: list[Task],
    options: RunOptions,
    *,
    progress: ProgressFn | None = None,
) -> RunSummary:
    """Run the matrix; returns when every cell has a stored result."""
    from ._limits import raise_fd_limit
    from ._scheduler import NoEngineLeft, open_pool
    from .models import DemoServer

    raise_fd_limit()  # many cells' gateways, engine clients and checkers share this process

    # An engine that does not answer stops the run before anything is written, naming it.
    pool = await open_pool(_engine_configs(options), options.notice, _check_images(options))
    if options.checks:  # a malformed checklist is a usage error now, before any token is spent
        from .checks._checklist import load_checklist

        for t in tasks:
            load_checklist(t.id, task=t)
    if options.resume:
        run_dir = resolve_run_dir(options.out_dir, options.resume)
        manifest = load_manifest(run_dir)
        run_id = manifest.run_id
        # A run killed hard (kill -9) leaves its containers behind: remove this run's, and only its.
        await pool.sweep({"agentbench.run": run_id})
    else:
        run_id = options.run_id or new_run_id()
        run_dir = options.out_dir / run_id
        cells = [
            CellRef(task=t.id, model=m.name, repeat=r, agent=options.agent or m.agent)
            for r in range(1, options.repeats + 1) for t in tasks for m in models
        ]
        _check_agents({c.agent for c in cells})
        manifest = RunManifest(
            run_id=run_id, agentbench_version=__version__, command=sys.argv,
            models={m.name: m.model_dump(mode="json") for m in models}, tasks=[t.id for t in tasks],
            repeats=options.repeats, max_tokens=options.max_tokens, checks=options.checks,
            concurrency=options.concurrency, cells=cells, agent=_run_agent(cells),
        )
        write_json(run_dir / "run.json", manifest)
    by_model = {m.name: m for m in models}
    by_task = {t.id: t for t in tasks}
    summary = RunSummary(run_id=run_id, run_dir=run_dir)
    todo: list[CellRef] = []
    for cell in manifest.cells:
        done = load_result(attempt_dir(run_dir, cell) / "result.json")
        if done is not None and not (options.retry_infra and done.outcome == "infra-error"):
            summary.results.append(done)
            summary.skipped += 1
            continue
        todo.append(cell)
    if options.preflight:
        failed = await _preflight_models([by_model[n] for n in sorted({c.model for c in todo})])
        for cell in [c for c in todo if c.model in failed]:
            res = infra_result(run_id, run_dir, cell, by_task[cell.task], by_model[cell.model],
                                options.max_tokens, failed[cell.model])
            summary.results.append(res)
            if progress:
                progress("done", cell, res)
        todo = [c for c in todo if c.model not in failed]
    failed_agents = await _prepare_agent_images(todo, options.notice, pool.live())
    for cell in [c for c in todo if c.agent in failed_agents]:
        res = infra_result(run_id, run_dir, cell, by_task[cell.task], by_model[cell.model], options.max_tokens,
                            failed_agents[cell.agent])
        summary.results.append(res)
        if progress:
            progress("done", cell, res)
    todo = [c for c in todo if c.agent not in failed_agents]
    demo_needed = any(by_model[c.model].demo for c in todo)
    gate = asyncio.Semaphore(max(1, options.concurrency))
    per_model = {m.name: asyncio.Semaphore(m.max_concurrency) for m in models}

    async def one(cell: CellRef, base_urls: dict[str, str]) -> None:
        from .sandbox._binding import bind_engine

        async with gate, per_model[cell.model]:
            try:
                async with pool.place() as engine:
                    if progress:
                        progress("start", cell, None)
                    with bind_engine(engine):  # the cell's sandboxes (the checks' too) go to its engine
                        res = await run_cell(
                            cell, by_model[cell.model], by_task[cell.task], run_id, run_dir,
                            base_url=base_urls.get(cell.model), max_tokens=options.max_tokens,
                            checks=options.checks, engine=engine,
                        )
                    res = await pool.settle(engine, res, attempt_dir(run_dir, cell) / "result.json")
            except NoEngineLeft as exc:
                res = infra_result(run_id, run_dir, cell, by_task[cell.task], by_model[cell.model],
                                    options.max_tokens, InfraError(kind="engine", message=str(exc)))
            summary.results.append(res)
            if progress:
                progress("done", cell, res)

    async with contextlib.AsyncExitStack() as stack:
        base_urls: dict[str, str] = {}
        if demo_needed:
            demo = stack.enter_context(DemoServer({t.id: t.prompt for t in tasks}))
            base_urls = {m.name: demo.base_url for m in models if m.demo}
        try:
            await asyncio.gather(*(one(c, base_urls) for c in todo))
        except BaseException:
            manifest.status = "interrupted"
            manifest.updated_at = utcnow()
            write_json(run_dir / "run.json", manifest)
            raise
        finally:
            await asyncio.shield(drain_closes())
    manifest.status = "completed"
    manifest.updated_at = utcnow()
    write_json(run_dir / "run.json", manifest)
    order = {c.key: i for i, c in enumerate(manifest.cells)}
    summary.results.sort(key=lambda r: order.get(r.cell.key, 0))
    return summary
