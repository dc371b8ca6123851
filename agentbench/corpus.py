"""Score agentbench's checks against artefacts people labelled: results in, figures out.

A corpus is a folder ``<task>/<name>/`` per artefact: the files as served plus ``expect.json``
(``verdict``, ``defects`` tags, ``how_to_see_it``). For each artefact the checks' JSON (as
``agentbench check --json`` prints it) is judged on three counts:

- the verdict is the labelled one;
- every labelled defect is named by a failing check (a tag maps to the checks that can show it);
- no check fails that the labels do not explain (a failing check a person would not see).

``error`` checks are counted apart: they are "we could not tell", never a finding.

    python -m agentbench.corpus ../shared/corpus              # runs `agentbench check` on each
    python -m agentbench.corpus ../shared/corpus --results D  # reads D/<task>/<name>.json instead
    python -m agentbench.corpus ... --json                    # the figures as JSON
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DEFECT_CHECKS", "Judgement", "artefacts", "judge", "main", "summarise"]

_CATEGORY = ("length", "weight", "temperature")
# Which failing checks can show a labelled defect. A tag not listed here explains nothing and
# is reported as unmapped, so a new tag in a corpus is seen, not silently passed.
DEFECT_CHECKS: dict[str, frozenset[str]] = {
    tag: frozenset(checks)
    for tag, checks in {
        # any task
        "runtime-error": ("runtime-errors", "load"),
        "syntax-error": ("syntax", "load", "runtime-errors"),
        "blank-page": ("load",),
        "no-render": ("load",),
        "frame-locked": ("refresh-rate",),
        "refresh-rate": ("refresh-rate",),
        "frame-rate-dependent": ("refresh-rate",),
        # flappy
        "no-flap": ("flap-input",),
        "flap-broken": ("flap-input",),
        "no-start": ("flap-input",),
        "input-dead": ("flap-input",),
        "no-score": ("score",),
        "no-game-over": ("game-over",),
        "game-over-broken": ("game-over",),
        "no-restart": ("restart",),
        "restart-broken": ("restart",),
        # ball
        "no-motion": ("motion",),
        "ball-escapes": ("bounds",),
        "leaves-canvas": ("bounds",),
        "sinks-through-floor": ("bounds",),
        "out-of-bounds": ("bounds",),
        "escapes-bounds": ("bounds",),
        "single-ball": ("ball-count",),
        "no-energy-loss": ("energy-loss",),
        "gains-energy": ("energy-loss",),
        "energy-gain": ("energy-loss",),  # balls that never settle or gain height
        # to-do
        "add-broken": ("add",),
        "duplicate-add": ("add", "empty-input"),
        "complete-broken": ("complete",),
        "no-undo": ("complete",),
        "delete-broken": ("delete",),
        "wrong-item-deleted": ("delete",),
        "filter-broken": ("filter",),
        "no-filter": ("filter",),
        "missing-filter": ("filter",),
        "filter-missing": ("filter",),
        "persistence-broken": ("persistence",),
        "no-persistence": ("persistence",),
        "xss": ("escaping",),
        "not-escaped": ("escaping",),
        "html-injection": ("escaping",),
        "accepts-empty": ("empty-input",),
        # converter
        "missing-units": _CATEGORY,
        "missing-category": _CATEGORY,
        "wrong-result": _CATEGORY,
        "wrong-conversion": _CATEGORY,
        "no-live-update": ("live-update",),
        "nan-shown": ("bad-input",),
        "bad-input": ("bad-input",),
    }.items()
}


@dataclass
class Judgement:
    """How one artefact's checks compare with its labels."""

    task: str
    name: str
    expected: str
    verdict: str | None
    defects: list[str]
    named: dict[str, list[str]] = field(default_factory=dict)  # defect -> failing checks naming it
    unnamed: list[str] = field(default_factory=list)  # labelled defects no failing check shows
    unexplained: list[str] = field(default_factory=list)  # failing checks no label explains
    unmapped: list[str] = field(default_factory=list)  # tags this scorer does not know
    errors: list[str] = field(default_factory=list)  # checks that could not tell
    problem: str = ""  # the check itself could not run

    @property
    def verdict_ok(self) -> bool:
        return self.verdict == self.expected

    @property
    def ok(self) -> bool:
        return self.verdict_ok and not self.unnamed and not self.unexplained and not self.problem


def judge(task: str, name: str, expect: dict[str, Any], result: dict[str, Any] | None, problem: str = "") -> Judgement:
    """Compare one ``agentbench check --json`` result with its ``expect.json``."""
    defects = list(expect.get("defects") or [])
    j = Judgement(task, name, expect.get("verdict", "?"), (result or {}).get("verdict"), defects, problem=problem)
    if result is None:
        j.unnamed = defects
        return j
    failing = {c["id"] for c in result.get("checks", []) if c.get("status") == "fail"}
    j.errors = sorted(c["id"] for c in result.get("checks", []) if c.get("status") == "error")
    explained: set[str] = set()
    for tag in defects:
        can = DEFECT_CHECKS.get(tag)
        if can is None:
            j.unmapped.append(tag)
            continue
        explained |= can
        hits = sorted(failing & can)
        if hits:
            j.named[tag] = hits
        else:
            j.unnamed.append(tag)
    # An unmapped tag may explain anything: its failing checks are not counted against us.
    j.unexplained = [] if j.unmapped else sorted(failing - explained)
    return j


def artefacts(root: Path) -> list[tuple[str, str, Path]]:
    """(task, name, folder) of every artefact with an expect.json under ``root``."""
    return sorted(
        (p.parent.parent.name, p.parent.name, p.parent) for p in root.glob("*/*/expect.json") if p.is_file()
    )


def _check(task: str, folder: Path, timeout_s: float) -> tuple[dict[str, Any] | None, str]:
    cmd = [sys.executable, "-m", "agentbench", "check", "--task", task, str(folder), "--json"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return None, f"agentbench check did not finish within {timeout_s:g} s"
    try:
        return json.loads(out.stdout), ""
    except json.JSONDecodeError:
        return None, f"agentbench check exited {out.returncode}: {(out.stderr or out.stdout).strip()[-300:]}"


def summarise(judgements: list[Judgement]) -> dict[str, Any]:
    """The figures: verdicts right, defects named, spurious failing checks, error checks."""
    n = len(judgements)
    defects = sum(len(j.defects) for j in judgements)
    return {
        "artefacts": n,
        "verdict_right": sum(j.verdict_ok for j in judgements),
        "too_generous": sum(j.verdict == "pass" and j.expected == "fail" for j in judgements),
        "too_strict": sum(j.verdict == "fail" and j.expected == "pass" for j in judgements),
        "defects": defects,
        "defects_named": sum(len(j.named) for j in judgements),
        "spurious_failing_checks": sum(len(j.unexplained) for j in judgements),
        "error_checks": sum(len(j.errors) for j in judgements),
        "unmapped_tags": sorted({t for j in judgements for t in j.unmapped}),
        "all_right": sum(j.ok for j in judgements),
    }


def _print(judgements: list[Judgement], figures: dict[str, Any]) -> None:
    for j in judgements:
        mark = "ok  " if j.ok else "MISS"
        print(f"{mark} {j.task}/{j.name}: verdict {j.verdict} (expected {j.expected})")
        for tag, checks in j.named.items():
            print(f"       named   {tag}: {', '.join(checks)}")
        for tag in j.unnamed:
            print(f"       UNNAMED {tag}")
        for cid in j.unexplained:
            print(f"       SPURIOUS failing check {cid}")
        if j.errors:
            print(f"       error checks: {', '.join(j.errors)}")
        if j.problem:
            print(f"       PROBLEM {j.problem}")
    f = figures
    print(
        f"\n{f['all_right']}/{f['artefacts']} artefacts all right; verdicts {f['verdict_right']}/{f['artefacts']} "
        f"(too generous {f['too_generous']}, too strict {f['too_strict']}); defects named "
        f"{f['defects_named']}/{f['defects']}; spurious failing checks {f['spurious_failing_checks']}; "
        f"error checks {f['error_checks']}"
        + (f"; unmapped tags {', '.join(f['unmapped_tags'])}" if f["unmapped_tags"] else "")
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m agentbench.corpus", description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="corpus folder: <task>/<name>/expect.json")
    ap.add_argument("--results", type=Path, help="read <results>/<task>/<name>.json instead of running checks")
    ap.add_argument("--save", type=Path, help="write each check result to <save>/<task>/<name>.json")
    ap.add_argument("--task", action="append", help="only these tasks")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per artefact check")
    ap.add_argument("--json", action="store_true", help="print the figures and judgements as JSON")
    args = ap.parse_args(argv)
    found = [a for a in artefacts(args.root) if not args.task or a[0] in args.task]
    if not found:
        print(f"no <task>/<name>/expect.json under {args.root}", file=sys.stderr)
        return 2
    judgements = []
    for task, name, folder in found:
        expect = json.loads((folder / "expect.json").read_text(encoding="utf-8"))
        if args.results:
            path = args.results / task / f"{name}.json"
            result, problem = (json.loads(path.read_text(encoding="utf-8")), "") if path.is_file() else (
                None, f"no result file {path}")
        else:
            result, problem = _check(task, folder, args.timeout)
        if args.save and result is not None:
            (args.save / task).mkdir(parents=True, exist_ok=True)
            (args.save / task / f"{name}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        judgements.append(judge(task, name, expect, result, problem))
    figures = summarise(judgements)
    if args.json:
        print(json.dumps({"figures": figures, "artefacts": [asdict(j) | {"ok": j.ok} for j in judgements]}, indent=1))
    else:
        _print(judgements, figures)
    return 0 if figures["all_right"] == figures["artefacts"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
