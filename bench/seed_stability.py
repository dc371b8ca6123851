"""Does a verdict hang on the seed? Each labelled artefact checked under several Math.random seeds.

A check's seed (``Math.random``, the document's start time) is a digest of the artefact's folder:
the same folder always gets the same verdict, but a folder with one byte more gets another seed.
A check whose verdict moves with the seed is a coin toss on every artefact we have not seen (a good
fixed-step Flappy Bird failed refresh-rate under 2 seeds of 12 until frames were matched in time
order). This checks every artefact under ``root`` (``<task>/<name>/expect.json``, or ``--fixtures``:
any ``*.html`` under a folder, with ``--task``) with ``--seeds`` seeds on the host's Chromium, in
process (the probes are the same as in the checker container; the container is not what varies
here), and reports every artefact whose verdict or any check's status differs between seeds. The
target is none.

    python bench/seed_stability.py ../shared/corpus --task flappy --seeds 4
    python bench/seed_stability.py --fixtures tests/checks/browser/fixtures/ball --task ball --seeds 3

Exit status: 0 when nothing differs, 1 when something does (2: bad arguments).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentbench.checks._run import verdict_of  # noqa: E402 - after sys.path
from agentbench.checks.browser import BrowserHarness, run_browser_checks_async  # noqa: E402
from agentbench.corpus import artefacts  # noqa: E402

SEEDS = [1, 0x9E3779B9, 0x2545F491, 0x6C8E9CF5, 0x1B873593, 0x85EBCA6B, 0xC2B2AE35, 0x27D4EB2F]


def _targets(args: argparse.Namespace) -> list[tuple[str, str, Path, str]]:
    """(task, name, folder, entry) of each artefact to check."""
    if args.fixtures:
        if not args.task or len(args.task) != 1:
            raise SystemExit("--fixtures needs exactly one --task")
        return [(args.task[0], p.name, p.parent, p.name) for p in sorted(args.fixtures.glob("*.html"))]
    if args.root is None:
        raise SystemExit("give a corpus folder or --fixtures DIR")
    return [(t, n, f, "index.html") for t, n, f in artefacts(args.root) if not args.task or t in args.task]


async def _run(targets: list[tuple[str, str, Path, str]], seeds: list[int], chromium: str | None,
               timeout_s: float) -> dict[str, dict[int, dict[str, Any]]]:
    out: dict[str, dict[int, dict[str, Any]]] = {}
    scratch = Path(tempfile.mkdtemp(prefix="seed-stability-"))
    try:
        async with BrowserHarness(chromium) as harness:
            for k, (task, name, folder, entry) in enumerate(targets, 1):
                key = f"{task}/{name}"
                out[key] = {}
                for seed in seeds:
                    t0 = time.monotonic()
                    evidence = scratch / f"{k}-{seed}"
                    try:
                        results = await asyncio.wait_for(run_browser_checks_async(
                            task, folder, evidence, entry=entry, harness=harness, seed=seed), timeout_s)
                        verdict = verdict_of(results)[0]
                        checks = {r.id: r.status for r in results}
                        details = {r.id: r.detail[:200] for r in results}
                    except TimeoutError:
                        verdict, checks, details = "timeout", {}, {}
                    shutil.rmtree(evidence, ignore_errors=True)
                    out[key][seed] = {"verdict": verdict, "checks": checks, "details": details}
                    print(f"[{k}/{len(targets)}] {key} seed {seed:#x}: {verdict} ({time.monotonic() - t0:.1f} s)",
                          file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def differences(runs: dict[str, dict[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    diffs = []
    for key, by_seed in runs.items():
        ids = sorted({cid for r in by_seed.values() for cid in r["checks"]})
        moved = {cid: {f"{s:#x}": r["checks"].get(cid) for s, r in by_seed.items()} for cid in ids
                 if len({r["checks"].get(cid) for r in by_seed.values()}) > 1}
        verdicts = {f"{s:#x}": r["verdict"] for s, r in by_seed.items()}
        if moved or len(set(verdicts.values())) > 1:
            details = {cid: {f"{s:#x}": r["details"].get(cid, "") for s, r in by_seed.items()} for cid in moved}
            diffs.append({"artefact": key, "verdicts": verdicts, "checks": moved, "details": details})
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, nargs="?", help="corpus folder: <task>/<name>/expect.json")
    ap.add_argument("--fixtures", type=Path, help="a folder of single-page fixtures (*.html) instead")
    ap.add_argument("--task", action="append", help="only these tasks (one with --fixtures)")
    ap.add_argument("--seeds", type=int, default=4, help=f"seeds per artefact (2-{len(SEEDS)}, default 4)")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium to drive (default /usr/bin/chromium)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per check")
    ap.add_argument("--json", type=Path, help="write every run and the differences here")
    args = ap.parse_args(argv)
    if not 2 <= args.seeds <= len(SEEDS):
        print(f"--seeds must be 2-{len(SEEDS)}", file=sys.stderr)
        return 2
    targets = _targets(args)
    if not targets:
        print("nothing to check", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    runs = asyncio.run(_run(targets, SEEDS[:args.seeds], args.chromium, args.timeout))
    diffs = differences(runs)
    print(f"{len(targets)} artefacts x {args.seeds} seeds in {time.monotonic() - t0:.0f} s; "
          f"verdicts or checks that differ between seeds: {len(diffs)}")
    for d in diffs:
        print(f"  DIFFERS {d['artefact']}: verdicts {d['verdicts']}")
        for cid, by in d["checks"].items():
            print(f"    {cid}: {by}")
            for s, detail in d["details"][cid].items():
                print(f"      {s}: {detail}")
    if args.json:
        args.json.write_text(json.dumps({"runs": {k: {f"{s:#x}": r for s, r in v.items()} for k, v in runs.items()},
                                         "differs": diffs}, indent=1), encoding="utf-8")
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
