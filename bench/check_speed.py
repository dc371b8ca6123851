"""How fast are the checks? By default: where a check's time goes, cold and warm, for all four tasks.

The default report (``bench/check_phases.py``, issue 30): cold CLI seconds and CPU-seconds, the CLI's
import, the checker container's start, Chromium's start, the syntax check, page load and each
probe, warm seconds and CPU-seconds (the container's, from its cgroup), and a batch with one
checker against the pool. ``--json out.json`` writes it for machines. Usage:
    python bench/check_speed.py [--tasks ...] [--repeats 3] [--warm 3] [--batch 6] [--batch-tasks flappy]
                                [--before OLD_CHECKOUT]

``--fixtures`` (the older report): for each fixture artefact (tests/checks/browser/fixtures/{flappy,ball}/*.html,
tests/checks/probes/fixtures/{todo,converter}/*.html) and the demo artefacts, run every browser
check (load, the task's probes, refresh-rate at 60 and 240 Hz where the task has it,
runtime-errors) and report:

- wall s: the whole check run for that artefact, Chromium launch included (as `agentbench check`
  does it), and with one shared Chromium (as a batch run could);
- virtual s: seconds of game time simulated across all its sessions; speed = virtual / wall.

Targets: <= 3 s per artefact, >= 10x faster than real time. Usage:
    python bench/check_speed.py --fixtures [--shared-only] [--tasks flappy,ball] [--json out.json] [NAME_FILTER]

``--container`` measures, in one run, today's host path (own /usr/bin/chromium per artefact, as
`agentbench check --host-browser` does) against the checker container: one flappy artefact from a
cold CLI (container start included; target <= 3 s wall), and warm per artefact in one container
(targets <= 2 s wall and <= 3 CPU-s of all processes: this one plus the container's cgroup).

AGENTBENCH_BROWSER_SESSIONS sets how many browser sessions a check run has open at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentbench.checks.browser import BrowserHarness, run_browser_checks_async  # noqa: E402 - after sys.path

FIXTURES = {"flappy": ROOT / "tests" / "checks" / "browser" / "fixtures" / "flappy",
            "ball": ROOT / "tests" / "checks" / "browser" / "fixtures" / "ball",
            "todo": ROOT / "tests" / "checks" / "probes" / "fixtures" / "todo",
            "converter": ROOT / "tests" / "checks" / "probes" / "fixtures" / "converter"}
DEMO = ROOT / "agentbench" / "models" / "demo_data"


def artefacts(name_filter: str, tasks: list[str]) -> list[tuple[str, Path, str]]:
    found = []
    for task in tasks:
        for path in sorted(FIXTURES[task].glob("*.html")):
            found.append((task, path.parent, path.name))
        for kind in ("careful", "rushed"):
            if (DEMO / kind / task / "index.html").is_file():
                found.append((task, DEMO / kind / task, "index.html"))
    return [a for a in found if name_filter in f"{a[1]}/{a[2]}"]


class TreeCpu:
    """CPU seconds of this process and all its descendants (Chromium, its renderers, the driver).

    rusage of children only counts processes already reaped, and Chromium's renderers are reaped
    by its zygote, so /proc is sampled every 20 ms while the measured code runs (a process that
    lives under 20 ms is missed; the pooled renderers live for the whole check).
    """

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        self._stop = asyncio.Event()

    def _sample(self) -> None:
        parents: dict[int, int] = {}
        times: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
            times[int(entry)] = (int(fields[11]) + int(fields[12])) / self.TICK
        me, mine = os.getpid(), set()
        for pid in times:
            p, hops = pid, 0
            while p > 1 and hops < 50:
                if p == me:
                    mine.add(pid)
                    break
                p, hops = parents.get(p, 0), hops + 1
        for pid in mine:
            self.seen[pid] = max(self.seen.get(pid, 0.0), times[pid])

    async def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            await asyncio.sleep(0.02)

    async def measure(self, coro: object) -> float:
        self._sample()
        before = dict(self.seen)
        task = asyncio.ensure_future(self._loop())
        try:
            await coro  # type: ignore[misc]
        finally:
            self._sample()
            self._stop.set()
            await task
        return sum(v - before.get(pid, 0.0) for pid, v in self.seen.items())


def label(task: str, folder: Path, entry: str) -> str:
    return f"{task}/{entry}" if entry != "index.html" else f"demo:{folder.parent.name}/{task}"


async def measure(items: list[tuple[str, Path, str]], shared_only: bool) -> list[dict[str, object]]:
    rows = []
    chromium = os.environ.get("AGENTBENCH_CHROMIUM")
    with tempfile.TemporaryDirectory() as tmp:
        async with BrowserHarness(chromium) as shared:
            for task, folder, entry in items:
                name = label(task, folder, entry)
                v0 = shared.virtual_s
                t0 = time.perf_counter()
                results = await run_browser_checks_async(task, folder, Path(tmp) / name.replace("/", "_"),
                                                         entry=entry, harness=shared)
                wall_shared = time.perf_counter() - t0
                virtual = shared.virtual_s - v0
                row: dict[str, object] = {
                    "task": task, "artefact": name, "virtual_s": round(virtual, 1),
                    "wall_shared_s": round(wall_shared, 2),
                    "speed_x": round(virtual / wall_shared, 1),
                    "verdicts": {r.id: r.status for r in results},
                }
                if not shared_only:
                    t0 = time.perf_counter()
                    cpu = await TreeCpu().measure(run_browser_checks_async(
                        task, folder, Path(tmp) / (name.replace("/", "_") + "-own"), entry=entry,
                        chromium_path=chromium))
                    row["wall_own_browser_s"] = round(time.perf_counter() - t0, 2)
                    # CPU seconds of this process, Chromium and the driver: what the check costs,
                    # however busy the machine is.
                    row["cpu_own_browser_s"] = round(cpu, 2)
                rows.append(row)
                print(f"{name:42s} virtual {virtual:5.1f} s  wall(shared) {wall_shared:5.2f} s  "
                      f"x{virtual / wall_shared:5.1f}" + (f"  wall(own browser) {row['wall_own_browser_s']:5.2f} s"
                                                         f"  cpu {row['cpu_own_browser_s']:5.2f} s"
                                                         if not shared_only else ""), flush=True)
    return rows


def _cli_wall(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "agentbench.cli", *args], cwd=ROOT, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=600, check=False)
    return time.perf_counter() - t0, proc.returncode


async def compare_container(items: list[tuple[str, Path, str]], repeats: int) -> list[dict[str, object]]:
    """Host path (own /usr/bin/chromium) vs the warm checker container, per artefact, in one run."""
    from agentbench.checks._checker import CheckerContainer

    flappy = str(DEMO / "careful" / "flappy")
    cold = {"host (/usr/bin/chromium)": ["check", "--task", "flappy", "--host-browser", flappy],
            "container": ["check", "--task", "flappy", flappy]}
    print("cold CLI, one flappy artefact (`agentbench check`), best and median of", repeats)
    for name, args in cold.items():
        walls = [_cli_wall(args, {"AGENTBENCH_CHROMIUM": "/usr/bin/chromium"})[0] for _ in range(repeats)]
        print(f"  {name:26s} best {min(walls):5.2f} s  median {statistics.median(walls):5.2f} s", flush=True)
    rows = []
    checker = CheckerContainer()
    with tempfile.TemporaryDirectory() as tmp:
        await checker.start()
        await checker.check("flappy", DEMO / "careful" / "flappy", Path(tmp) / "warmup" / "evidence")
        for task, folder, entry in items:
            name = label(task, folder, entry)
            host_results: list = []

            async def on_host(task: str = task, folder: Path = folder, entry: str = entry,
                              out: list = host_results) -> None:
                out.extend(await run_browser_checks_async(
                    task, folder, Path(tmp) / "host" / "evidence", entry=entry, chromium_path="/usr/bin/chromium"))

            t0 = time.perf_counter()
            cpu = await TreeCpu().measure(on_host())
            host_wall = time.perf_counter() - t0
            results: list = []

            async def in_container(task: str = task, folder: Path = folder, entry: str = entry,
                                   out: list = results) -> None:
                out.extend(await checker.check(task, folder, Path(tmp) / "c" / "evidence", entry=entry))

            before = checker.cpu_seconds()
            t0 = time.perf_counter()
            here = await TreeCpu().measure(in_container())
            wall = time.perf_counter() - t0
            box = checker.cpu_seconds() - before
            row = {"task": task, "artefact": name, "host_wall_s": round(host_wall, 2), "host_cpu_s": round(cpu, 2),
                   "warm_wall_s": round(wall, 2), "warm_cpu_s": round(box + here, 2),
                   "host_verdicts": {r.id: r.status for r in host_results},
                   "container_verdicts": {r.id: r.status for r in results}}
            row["same_verdicts"] = row["host_verdicts"] == row["container_verdicts"]
            rows.append(row)
            print(f"{name:42s} host {host_wall:5.2f} s {cpu:5.2f} CPU-s   warm container {wall:5.2f} s "
                  f"{box + here:5.2f} CPU-s" + ("" if row["same_verdicts"] else "   VERDICTS DIFFER"), flush=True)
        await checker.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("filter", nargs="?", default="")
    ap.add_argument("--shared-only", action="store_true", help="skip the runs with their own Chromium")
    ap.add_argument("--json", type=Path, help="write the rows as JSON here")
    ap.add_argument("--tasks", default="flappy,ball,todo,converter", help="comma-separated task ids")
    ap.add_argument("--container", action="store_true", help="host path vs checker container (see above)")
    ap.add_argument("--repeats", type=int, default=3, help="cold CLI runs (per path with --container)")
    ap.add_argument("--fixtures", action="store_true", help="the older report over the fixture artefacts")
    ap.add_argument("--warm", type=int, default=3, help="warm checks per task (phases)")
    ap.add_argument("--batch", type=int, default=6, help="copies in the batch measurement (phases)")
    ap.add_argument("--batch-tasks", default="flappy", help="tasks whose batch is measured (phases)")
    ap.add_argument("--before", type=Path, help="another checkout (e.g. `git archive` of an older commit) "
                    "measured the same way by CLI, in the same run (phases)")
    args = ap.parse_args()
    if not (args.fixtures or args.container or args.shared_only or args.filter):
        from check_phases import TASKS, run

        tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
        if set(tasks) - set(TASKS):
            ap.error(f"--tasks: choose from {', '.join(TASKS)}")
        run(tasks, args.repeats, args.warm, args.batch, [t for t in args.batch_tasks.split(",") if t], args.json,
            args.before)
        return
    load = os.getloadavg()[0]
    print(f"cores: {os.cpu_count()}, load average at start: {load:.1f}")
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in FIXTURES]
    if unknown:
        ap.error(f"--tasks: unknown task(s) {', '.join(unknown)}; choose from {', '.join(FIXTURES)}")
    if args.container:
        rows = asyncio.run(compare_container(artefacts(args.filter, tasks), args.repeats))
        for key in ("host_wall_s", "host_cpu_s", "warm_wall_s", "warm_cpu_s"):
            values = [float(r[key]) for r in rows]  # type: ignore[arg-type]
            print(f"  {key:12s} median {statistics.median(values):5.2f}  max {max(values):5.2f}")
        differ = [r["artefact"] for r in rows if not r["same_verdicts"]]
        print(f"  verdicts identical on {len(rows) - len(differ)} of {len(rows)}"
              + (f"; differ: {differ}" if differ else ""))
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2))
        return
    rows = asyncio.run(measure(artefacts(args.filter, tasks), args.shared_only))
    if rows:
        walls = [float(r["wall_shared_s"]) for r in rows]  # type: ignore[arg-type]
        speeds = [float(r["speed_x"]) for r in rows]  # type: ignore[arg-type]
        print(f"\nshared browser: median {statistics.median(walls):.2f} s per artefact (max {max(walls):.2f}), "
              f"median x{statistics.median(speeds):.1f} faster than real time")
        if not args.shared_only:
            own = [float(r["wall_own_browser_s"]) for r in rows]  # type: ignore[arg-type]
            cpu = [float(r["cpu_own_browser_s"]) for r in rows]  # type: ignore[arg-type]
            print(f"own browser:    median {statistics.median(own):.2f} s per artefact (max {max(own):.2f}); "
                  f"median {statistics.median(cpu):.2f} CPU s (all processes) per artefact")
        for task in tasks:
            mine = [r for r in rows if r["task"] == task]
            if not mine:
                continue
            line = (f"  {task:10s} n={len(mine):2d}  shared median "
                    f"{statistics.median(float(r['wall_shared_s']) for r in mine):.2f} s, "  # type: ignore[arg-type]
                    f"x{statistics.median(float(r['speed_x']) for r in mine):.1f}")  # type: ignore[arg-type]
            if not args.shared_only:
                line += (f"; own browser {statistics.median(float(r['wall_own_browser_s']) for r in mine):.2f} s, "  # type: ignore[arg-type]
                         f"{statistics.median(float(r['cpu_own_browser_s']) for r in mine):.2f} CPU s")  # type: ignore[arg-type]
            print(line)
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
