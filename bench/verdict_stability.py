"""Does a verdict depend on how busy the machine is? The corpus checked twice: alone, then beside busy processes.

Every labelled artefact under a corpus folder (``<task>/<name>/expect.json``) is checked with
``agentbench check --task T DIR --json`` (the path a user takes) once on a quiet machine and once
while ``--busy`` processes spin on the CPU (default 2: every core of a 2-core laptop taken). It
reports every artefact whose verdict, or any check's status, differs between the two passes; the
target is none. Wall seconds of both passes are reported too (the busy pass is slower, of course:
only the verdicts must not move).

    python bench/verdict_stability.py ../shared/corpus                 # all tasks
    python bench/verdict_stability.py ../shared/corpus --task todo --busy 3 --json out.json

Exit status: 0 when nothing differs, 1 when something does (2: bad arguments).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentbench.corpus import _check, artefacts  # noqa: E402 - after sys.path


def _spin() -> None:
    while True:
        pass


def _statuses(result: dict[str, Any] | None) -> dict[str, str]:
    if result is None:
        return {}
    return {c["id"]: c["status"] for c in result.get("checks", [])}


def check_all(found: list[tuple[str, str, Path]], timeout_s: float, label: str,
              save: Path | None = None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for k, (task, name, folder) in enumerate(found, 1):
        t0 = time.monotonic()
        result, problem = _check(task, folder, timeout_s)
        wall = time.monotonic() - t0
        key = f"{task}/{name}"
        if save is not None and result is not None:
            (save / task).mkdir(parents=True, exist_ok=True)
            (save / task / f"{name}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        out[key] = {"verdict": (result or {}).get("verdict"), "checks": _statuses(result), "problem": problem,
                    "wall_s": round(wall, 2),
                    "details": {c["id"]: c.get("detail", "")[:200] for c in (result or {}).get("checks", [])}}
        tail = f" {problem}" if problem else ""
        print(f"[{label} {k}/{len(found)}] {key}: {out[key]['verdict']} ({wall:.1f} s){tail}",
              file=sys.stderr, flush=True)
    return out


def compare(quiet: dict[str, dict[str, Any]], busy: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    diffs = []
    for key, q in quiet.items():
        b = busy.get(key, {})
        moved = {cid: (q["checks"].get(cid), b.get("checks", {}).get(cid))
                 for cid in sorted(set(q["checks"]) | set(b.get("checks", {})))
                 if q["checks"].get(cid) != b.get("checks", {}).get(cid)}
        if q["verdict"] != b.get("verdict") or moved or q["problem"] != b.get("problem", ""):
            diffs.append({"artefact": key, "verdict": (q["verdict"], b.get("verdict")),
                          "checks": {cid: {"quiet": s[0], "busy": s[1], "quiet_detail": q["details"].get(cid, ""),
                                           "busy_detail": b.get("details", {}).get(cid, "")}
                                     for cid, s in moved.items()},
                          "problem": (q["problem"], b.get("problem", ""))})
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="corpus folder: <task>/<name>/expect.json")
    ap.add_argument("--task", action="append", help="only these tasks")
    ap.add_argument("--busy", type=int, default=2, help="busy processes beside the second pass (default 2)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per artefact check")
    ap.add_argument("--json", type=Path, help="write both passes and the differences here")
    ap.add_argument("--save", type=Path, help="write each quiet-pass result to <save>/<task>/<name>.json "
                    "(then: python -m agentbench.corpus ROOT --results SAVE)")
    args = ap.parse_args(argv)
    found = [a for a in artefacts(args.root) if not args.task or a[0] in args.task]
    if not found:
        print(f"no <task>/<name>/expect.json under {args.root}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    quiet = check_all(found, args.timeout, "quiet", args.save)
    quiet_wall = time.monotonic() - t0
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for p in spinners:
        p.start()
    try:
        t0 = time.monotonic()
        busy = check_all(found, args.timeout, f"busy x{args.busy}")
        busy_wall = time.monotonic() - t0
    finally:
        for p in spinners:
            p.terminate()
        for p in spinners:
            p.join()
    diffs = compare(quiet, busy)
    print(f"{len(found)} artefacts; quiet pass {quiet_wall:.0f} s, beside {args.busy} busy processes "
          f"{busy_wall:.0f} s; verdicts or checks that differ: {len(diffs)}")
    for d in diffs:
        print(f"  DIFFERS {d['artefact']}: verdict {d['verdict'][0]} -> {d['verdict'][1]}")
        for cid, c in d["checks"].items():
            print(f"    {cid}: {c['quiet']} -> {c['busy']}")
            print(f"      quiet: {c['quiet_detail']}\n      busy:  {c['busy_detail']}")
        if d["problem"][0] or d["problem"][1]:
            print(f"    problem: {d['problem'][0]!r} -> {d['problem'][1]!r}")
    if args.json:
        args.json.write_text(json.dumps({"quiet": quiet, "busy": busy, "differs": diffs,
                                         "quiet_wall_s": round(quiet_wall, 1), "busy_wall_s": round(busy_wall, 1)},
                                        indent=1), encoding="utf-8")
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
