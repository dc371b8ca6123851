"""Where a check's time goes, cold and warm, for every task; and a batch on every core (issue 30).

For each task's good prompt-shaped artefact (the careful demo), in one run:

- cold CLI: ``python -m agentbench check --task T DIR --json`` from a fresh process, best and
  median of ``--repeats``, with that process's CPU seconds (its children's rusage: the CLI and its
  Docker client; the containers' CPU is counted below, from their cgroups);
- CLI import: ``python -c "import agentbench.cli"``, best of ``--repeats``;
- cold breakdown, in this process as the CLI does it: a new checker (image found, container run,
  worker and Chromium ready: the worker's import and browser start), then the syntax check beside
  the browser checks: page load (the load check) and each probe (each check's own seconds from the
  start of the browser checks: they run side by side, so they overlap), evidence sent back;
- warm: the same artefact again in the warm checker, ``--warm`` times: median wall and the
  container's CPU seconds (its cgroup's cpu usage, read from the engine's cgroup files or stats)
  plus this process's;
- batch (``--batch N`` copies of each ``--batch-tasks`` artefact in one ``agentbench check``):
  wall and CPU (the CLI's and its containers') with the pool (min(cores, N) at once) and with one
  checker (``AGENTBENCH_CHECKERS=1``: one after another, as before), in the same run;
- ``--before DIR``: another checkout (``git archive`` of an older commit) measured by the same
  cold and batch CLI runs, interleaved in the same run, so the ratios are fair.

One run on a quiet machine is the measurement; never a timed test. CPU seconds are disturbed less
by a busy machine than wall seconds: compare those when others share it.

    python bench/check_speed.py [--tasks flappy,ball,todo,converter] [--repeats 3] [--warm 3]
                                [--batch 6] [--batch-tasks flappy,converter] [--json out.json]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "agentbench" / "models" / "demo_data" / "careful"
TASKS = ["flappy", "ball", "todo", "converter"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_CGROUPS = ("/sys/fs/cgroup/cpuacct/docker/{id}/cpuacct.usage",  # cgroup v1: nanoseconds
            "/sys/fs/cgroup/system.slice/docker-{id}.scope/cpu.stat",  # v2 (systemd driver)
            "/sys/fs/cgroup/docker/{id}/cpu.stat")  # v2 (cgroupfs driver)


def _cgroup_cpu(cid: str) -> float | None:
    for pattern in _CGROUPS:
        try:
            text = Path(pattern.format(id=cid)).read_text()
        except OSError:
            continue
        if pattern.endswith("cpuacct.usage"):
            return int(text.strip()) / 1e9
        for line in text.splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
    return None


class ContainerCpu(threading.Thread):
    """CPU seconds of every container a process owns (its owner-pid label), from their cgroups.

    The containers of a CLI run (checkers, syntax sandboxes) are removed before it ends, so their
    cgroups are read every 50 ms while it runs (the last 50 ms of a container's life are missed).
    """

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        import docker

        from agentbench.sandbox._owner import PID

        self._client, self._label = docker.from_env(), f"{PID}={pid}"
        self._done, self.seen = threading.Event(), {}
        self._ours: dict[str, bool] = {}

    def _ids(self) -> list[str]:
        for folder in ("/sys/fs/cgroup/cpuacct/docker", "/sys/fs/cgroup/docker"):
            with contextlib.suppress(OSError):
                return [n for n in os.listdir(folder) if len(n) == 64]
        with contextlib.suppress(OSError):
            return [n[7:-6] for n in os.listdir("/sys/fs/cgroup/system.slice") if n.startswith("docker-")]
        return []

    def _sample(self) -> None:
        for cid in self._ids():
            if cid not in self._ours:
                self._ours[cid] = bool(self._client.containers.list(all=True, filters={"id": cid,
                                                                                   "label": self._label}))
            if self._ours[cid]:
                cpu = _cgroup_cpu(cid)
                if cpu is not None:
                    self.seen[cid] = max(self.seen.get(cid, 0.0), cpu)

    def run(self) -> None:
        while not self._done.is_set():
            with contextlib.suppress(Exception):
                self._sample()
            self._done.wait(0.05)

    def stop(self) -> float:
        self._done.set()
        self.join()
        return sum(self.seen.values())


def _python(args: list[str], env: dict[str, str] | None = None, tree: Path = ROOT,
            containers: bool = False) -> dict[str, Any]:
    """Wall s, CPU s (the process and its reaped children; with ``containers``, the containers it
    owned), exit status and stdout of one python run from ``tree``."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ, "PYTHONPATH": str(tree), **(env or {})})
    sampler = ContainerCpu(proc.pid) if containers else None
    if sampler is not None:
        sampler.start()
    out, _ = proc.communicate(timeout=900)
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "cli_cpu_s": _children_cpu() - cpu0, "code": proc.returncode, "out": out,
            "container_cpu_s": sampler.stop() if sampler is not None else None}


def _verdicts(out: str) -> list[str]:
    try:
        doc = json.loads(out)
    except ValueError:
        return ["no answer"]
    return sorted({d["verdict"] for d in (doc if isinstance(doc, list) else [doc])})


def cold_cli(task: str, repeats: int, tree: Path = ROOT) -> dict[str, Any]:
    """A fresh ``agentbench check`` process per run: wall, the CLI's CPU and its containers' CPU."""
    runs = [_python(["-m", "agentbench", "check", "--task", task, str(DEMO / task), "--json"], tree=tree,
                    containers=True) for _ in range(repeats)]
    imports = [_python(["-c", "import agentbench.cli"], tree=tree)["wall_s"] for _ in range(repeats)]
    walls = [r["wall_s"] for r in runs]
    return {"cold_best_s": min(walls), "cold_median_s": statistics.median(walls),
            "cold_cli_cpu_s": statistics.median(r["cli_cpu_s"] for r in runs),
            "cold_container_cpu_s": statistics.median(r["container_cpu_s"] for r in runs),
            "cli_import_s": min(imports), "cold_verdicts": sorted({v for r in runs for v in _verdicts(r["out"])})}


def batch_cli(task: str, n: int, tmp: Path, tree: Path = ROOT, checkers: str = "") -> dict[str, Any]:
    """``agentbench check`` of N copies in one process: wall and CPU (CLI and containers)."""
    copies = []
    for i in range(n):
        folder = tmp / f"{task}-cli-copy{i}"
        if not folder.exists():
            shutil.copytree(DEMO / task, folder)
        copies.append(str(folder))
    got = _python(["-m", "agentbench", "check", "--task", task, *copies, "--json"], tree=tree, containers=True,
                  env={"AGENTBENCH_CHECKERS": checkers} if checkers else None)
    return {"n": n, "wall_s": got["wall_s"], "cpu_s": got["cli_cpu_s"] + got["container_cpu_s"],
            "verdicts": _verdicts(got["out"]), "checkers": checkers or "pool"}


def _process_cpu() -> float:
    return time.process_time()


async def _one_check(pool: Any, task: str, folder: Path, out: Path) -> dict[str, Any]:
    """Syntax beside the browser checks, as ``run_checks`` does; wall, CPU and the worker's timings."""
    from agentbench.checks.static._syntax import check_syntax

    timings: dict[str, Any] = {}
    cpu0, here0, t0 = pool.cpu_seconds(), _process_cpu(), time.perf_counter()

    async def syntax() -> tuple[Any, float]:
        s0 = time.perf_counter()
        result = await check_syntax(folder)
        return result, time.perf_counter() - s0

    async def browser() -> tuple[list, float]:
        b0 = time.perf_counter()
        results = await pool.check(task, folder, out / "evidence", timings=timings)
        return results, time.perf_counter() - b0

    (parsed, syntax_s), (results, browser_s) = await asyncio.gather(syntax(), browser())
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "syntax_s": syntax_s, "browser_s": browser_s,
            "container_cpu_s": pool.cpu_seconds() - cpu0, "host_cpu_s": _process_cpu() - here0,
            "worker": timings, "checks": {r.id: round(r.duration_s or 0.0, 3) for r in results},
            "statuses": {"syntax": parsed.status, **{r.id: r.status for r in results}}}


async def breakdown(task: str, warm: int, tmp: Path) -> dict[str, Any]:
    from agentbench.checks._checker_pool import CheckerPool

    pool = CheckerPool(1)
    try:
        t0 = time.perf_counter()
        await pool.start()
        start_wall = time.perf_counter() - t0
        start_cpu = pool.cpu_seconds()
        start = dict(pool.containers[0].start_timings)
        cold = await _one_check(pool, task, DEMO / task, tmp / f"{task}-cold")
        warms = [await _one_check(pool, task, DEMO / task, tmp / f"{task}-warm{i}") for i in range(warm)]
    finally:
        await pool.close()
    mid = sorted(warms, key=lambda w: w["wall_s"])[len(warms) // 2] if warms else cold
    return {"start_wall_s": start_wall, "start_cpu_s": start_cpu, "start": start, "cold_check": cold,
            "warm_median": mid, "warm_walls_s": [w["wall_s"] for w in warms],
            "warm_cpu_s": statistics.median(w["container_cpu_s"] + w["host_cpu_s"] for w in warms) if warms else None,
            "same_verdicts": all(w["statuses"] == cold["statuses"] for w in warms)}


def _f(value: Any) -> str:
    return f"{value:6.2f}" if isinstance(value, (int, float)) else f"{'-':>6s}"


def print_table(rows: dict[str, dict[str, Any]], before: bool) -> None:
    print("\nseconds; CPU = CPU-seconds (CLI: the process; box: its containers' cgroups); probes overlap")
    head = ["cold", "CLI CPU", "box CPU", "import", "contnr", "browser", "check", "syntax", "load", "warm",
            "warm CPU"]
    print(f"{'task':16s} " + " ".join(f"{h:>8s}" for h in head))
    for task, row in rows.items():
        b = row.get("breakdown", {})
        start, warm = b.get("start", {}), b.get("warm_median", {})
        cells = [row.get("cold_best_s"), row.get("cold_cli_cpu_s"), row.get("cold_container_cpu_s"),
                 row.get("cli_import_s"), start.get("container_s"), start.get("ready_s"), warm.get("browser_s"),
                 warm.get("syntax_s"), warm.get("checks", {}).get("load"), warm.get("wall_s"), b.get("warm_cpu_s")]
        print(f"{task:16s} " + " ".join(f"{_f(c):>8s}" for c in cells))
        old = row.get("before")
        if before and old:
            cells = [old.get("cold_best_s"), old.get("cold_cli_cpu_s"), old.get("cold_container_cpu_s"),
                     old.get("cli_import_s")]
            print(f"{'  (before)':16s} " + " ".join(f"{_f(c):>8s}" for c in cells))
    print("\nwarm: each check's seconds from the start of the browser checks; the worker's phases")
    for task, row in rows.items():
        warm = row.get("breakdown", {}).get("warm_median", {})
        print(f"  {task:10s} " + " ".join(f"{k} {v:.2f}" for k, v in warm.get("checks", {}).items()))
        print(f"  {'':10s} worker: " + " ".join(f"{k} {v}" for k, v in warm.get("worker", {}).items()))
    for task, row in rows.items():
        for label, b in row.get("batch", {}).items():
            print(f"batch of {b['n']} {task:10s} {label:22s} {b['wall_s']:6.2f} s {b['cpu_s']:6.2f} CPU-s "
                  f"({b['wall_s'] / b['n']:.2f} s per artefact) verdicts {b['verdicts']}")


def run(tasks: list[str], repeats: int, warm: int, batch_n: int, batch_tasks: list[str],
        json_out: Path | None, before: Path | None = None) -> dict[str, Any]:
    """Measure (see the module docstring); ``before``: another checkout measured the same way by CLI."""
    sys.path.insert(0, str(ROOT))
    from agentbench.checks._checker_pool import close_shared_checker

    print(f"cores: {os.cpu_count()}, load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            row = rows[task] = cold_cli(task, repeats) if repeats else {}
            if before is not None and repeats:
                row["before"] = cold_cli(task, repeats, tree=before)
            row["breakdown"] = asyncio.run(breakdown(task, warm, Path(tmp)))
            if task in batch_tasks and batch_n > 1:
                row["batch"] = {"pool": batch_cli(task, batch_n, Path(tmp)),
                                "one checker": batch_cli(task, batch_n, Path(tmp), checkers="1")}
                if before is not None:
                    row["batch"]["before"] = batch_cli(task, batch_n, Path(tmp), tree=before)
            print(f"  {task}: done (load {os.getloadavg()[0]:.1f})", flush=True)
    close_shared_checker()
    print_table(rows, before is not None)
    load = os.getloadavg()[0]
    print(f"load average at end: {load:.1f}")
    doc = {"cores": os.cpu_count(), "load_end": load, "tasks": rows}
    if json_out:
        json_out.write_text(json.dumps(doc, indent=2, default=str))
    return doc
