"""How fast are the full browser checks? Wall seconds and virtual seconds played per wall second.

For each fixture artefact (tests/checks/browser/fixtures/{flappy,ball}/*.html) and the demo
artefacts, run every browser check (load, the task's probes, refresh-rate at 60 and 240 Hz,
runtime-errors) and report:

- wall s: the whole check run for that artefact, Chromium launch included (as `agentbench check`
  does it), and with one shared Chromium (as a batch run could);
- virtual s: seconds of game time simulated across all its sessions; speed = virtual / wall.

Targets: <= 3 s per artefact, >= 10x faster than real time. Usage:
    python bench/check_speed.py [--shared-only] [--json out.json] [NAME_FILTER]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentbench.checks.browser import BrowserHarness, run_browser_checks_async  # noqa: E402 - after sys.path

FIXTURES = ROOT / "tests" / "checks" / "browser" / "fixtures"
DEMO = ROOT / "agentbench" / "models" / "demo_data"


def artefacts(name_filter: str) -> list[tuple[str, Path, str]]:
    found = []
    for task in ("flappy", "ball"):
        for path in sorted((FIXTURES / task).glob("*.html")):
            found.append((task, path.parent, path.name))
        for kind in ("careful", "rushed"):
            if (DEMO / kind / task / "index.html").is_file():
                found.append((task, DEMO / kind / task, "index.html"))
    return [a for a in found if name_filter in f"{a[1]}/{a[2]}"]


def cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


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
                    "artefact": name, "virtual_s": round(virtual, 1), "wall_shared_s": round(wall_shared, 2),
                    "speed_x": round(virtual / wall_shared, 1),
                    "verdicts": {r.id: r.status for r in results},
                }
                if not shared_only:
                    c0 = cpu_s()
                    t0 = time.perf_counter()
                    await run_browser_checks_async(task, folder, Path(tmp) / (name.replace("/", "_") + "-own"),
                                                   entry=entry, chromium_path=chromium)
                    row["wall_own_browser_s"] = round(time.perf_counter() - t0, 2)
                    # CPU seconds of this process and of Chromium + driver (reaped when the run closed
                    # its browser): independent of how busy the machine is.
                    row["cpu_own_browser_s"] = round(cpu_s() - c0, 2)
                rows.append(row)
                print(f"{name:42s} virtual {virtual:5.1f} s  wall(shared) {wall_shared:5.2f} s  "
                      f"x{virtual / wall_shared:5.1f}" + (f"  wall(own browser) {row['wall_own_browser_s']:5.2f} s"
                                                         f"  cpu {row['cpu_own_browser_s']:5.2f} s"
                                                         if not shared_only else ""), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("filter", nargs="?", default="")
    ap.add_argument("--shared-only", action="store_true", help="skip the runs with their own Chromium")
    ap.add_argument("--json", type=Path, help="write the rows as JSON here")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"cores: {os.cpu_count()}, load average at start: {load:.1f}")
    rows = asyncio.run(measure(artefacts(args.filter), args.shared_only))
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
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
