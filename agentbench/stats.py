"""Honest statistics over stored attempts: pass rates with Wilson intervals, flips, paired tests.

Infra errors are listed, never in a denominator. ``budget`` and ``no-artefact`` attempts count as
fails (the model did not deliver), and budget hits are counted so they are never hidden.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from pathlib import Path

from pydantic import BaseModel, Field

from .store import AttemptResult, attempt_dir, load_manifest, load_result

__all__ = ["CellStats", "PairStats", "RunStats", "compute_stats", "load_results", "mcnemar_exact", "wilson"]


def wilson(passed: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default); (0, 1) when n == 0."""
    if n == 0:
        return 0.0, 1.0
    p = passed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at p = 0.5."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


class CellStats(BaseModel):
    model: str  # the lane: the model, or ``model@agent`` under an external agent
    task: str
    attempts: int  # all stored attempts, infra errors included
    scored: int  # attempts in the denominator (everything but infra errors)
    passed: int
    pass_rate: float | None
    ci_low: float
    ci_high: float
    infra_errors: int
    budget_hits: int
    no_artefact: int
    mean_tokens: float | None = None
    mean_wall_s: float | None = None
    mean_tok_s: float | None = None
    mean_cost_usd: float | None = None
    flipping_checks: dict[str, str] = Field(default_factory=dict)  # check id -> "2/3 pass"


class PairStats(BaseModel):
    model_a: str
    model_b: str
    pairs: int
    both_pass: int
    only_a: int
    only_b: int
    neither: int
    p_value: float

    @property
    def agree(self) -> int:
        return self.both_pass + self.neither


class RunStats(BaseModel):
    cells: list[CellStats]
    pairs: list[PairStats]
    infra: list[str]  # "task/model/rk: message"


def load_results(run_dir: Path) -> list[AttemptResult]:
    manifest = load_manifest(run_dir)
    out = []
    for cell in manifest.cells:
        r = load_result(attempt_dir(run_dir, cell) / "result.json")
        if r is not None:
            out.append(r)
    return out


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 3) if xs else None


def compute_stats(results: list[AttemptResult]) -> RunStats:
    groups: dict[tuple[str, str], list[AttemptResult]] = defaultdict(list)
    for r in results:
        groups[(r.lane, r.task)].append(r)  # a model under two agents is two lanes
    cells = []
    for (model, task), rs in sorted(groups.items()):
        counted = [r for r in rs if r.outcome != "infra-error"]
        passed = sum(1 for r in counted if r.verdict == "pass")
        lo, hi = wilson(passed, len(counted))
        flips: dict[str, str] = {}
        per_check: dict[str, list[str]] = defaultdict(list)
        for r in counted:
            for c in r.checks:
                if c.status in ("pass", "fail"):
                    per_check[c.id].append(c.status)
        for cid, statuses in per_check.items():
            if len(set(statuses)) > 1:
                flips[cid] = f"{statuses.count('pass')}/{len(statuses)} pass"
        with_req = [r for r in counted if r.speed.requests]
        cells.append(CellStats(
            model=model, task=task, attempts=len(rs), scored=len(counted), passed=passed,
            pass_rate=round(passed / len(counted), 4) if counted else None, ci_low=round(lo, 4), ci_high=round(hi, 4),
            infra_errors=len(rs) - len(counted), budget_hits=sum(1 for r in counted if r.outcome == "budget"),
            no_artefact=sum(1 for r in counted if r.outcome == "no-artefact"),
            mean_tokens=_mean([r.speed.prompt_tokens + r.speed.completion_tokens for r in with_req]),
            mean_wall_s=_mean([r.wall_s for r in counted]),
            mean_tok_s=_mean([r.speed.decode_tok_s for r in with_req if r.speed.decode_tok_s]),
            mean_cost_usd=_mean([r.cost_usd for r in counted]),
            flipping_checks=flips,
        ))
    # Pairwise on the same cells (task, repeat), infra errors on either side drop the pair.
    by_key: dict[str, dict[tuple[str, int], AttemptResult]] = defaultdict(dict)
    for r in results:
        if r.outcome != "infra-error":
            by_key[r.lane][(r.task, r.repeat)] = r
    pairs = []
    for a, b in combinations(sorted(by_key), 2):
        shared = sorted(set(by_key[a]) & set(by_key[b]))
        pa = [by_key[a][k].verdict == "pass" for k in shared]
        pb = [by_key[b][k].verdict == "pass" for k in shared]
        both = sum(x and y for x, y in zip(pa, pb, strict=True))
        only_a = sum(x and not y for x, y in zip(pa, pb, strict=True))
        only_b = sum(y and not x for x, y in zip(pa, pb, strict=True))
        pairs.append(PairStats(model_a=a, model_b=b, pairs=len(shared), both_pass=both, only_a=only_a,
                               only_b=only_b, neither=len(shared) - both - only_a - only_b,
                               p_value=round(mcnemar_exact(only_a, only_b), 6)))
    infra = [f"{r.cell.key}: {r.error.message if r.error else 'infra error'}"
             for r in results if r.outcome == "infra-error"]
    return RunStats(cells=cells, pairs=pairs, infra=infra)
