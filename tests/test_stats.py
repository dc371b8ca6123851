"""Statistics against hand-computed values."""

from __future__ import annotations

import pytest

from agentbench.checks import CheckResult
from agentbench.stats import compute_stats, mcnemar_exact, wilson
from agentbench.store import AttemptResult, InfraError


def test_wilson_matches_hand_computed_values() -> None:
    # 8/10: p=0.8, z=1.96 -> (0.4902, 0.9433) (standard tables)
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    lo, hi = wilson(0, 5)
    assert lo == 0.0 and hi == pytest.approx(0.4345, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_mcnemar_exact() -> None:
    # 11 vs 3 discordant: 2 * P(X <= 3 | n=14, p=.5) = 2 * 470/16384 = 0.05737
    assert mcnemar_exact(11, 3) == pytest.approx(0.057373, abs=1e-6)
    assert mcnemar_exact(3, 11) == mcnemar_exact(11, 3)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0


def _r(model: str, repeat: int, verdict: str | None, outcome: str = "scored", checks=()) -> AttemptResult:
    return AttemptResult(
        run_id="r", task="flappy", model=model, repeat=repeat, outcome=outcome, verdict=verdict,
        checks=[CheckResult(id=i, status=s) for i, s in checks],
        error=InfraError(kind="model-endpoint", message="500 on prompt shape") if outcome == "infra-error" else None,
    )


def test_infra_errors_are_never_in_a_denominator_and_flips_are_found() -> None:
    results = [
        _r("a", 1, "pass", checks=[("restart", "pass"), ("load", "pass")]),
        _r("a", 2, "fail", checks=[("restart", "fail"), ("load", "pass")]),
        _r("a", 3, None, outcome="infra-error"),
        _r("a", 4, "fail", outcome="budget"),
        _r("b", 1, "fail"), _r("b", 2, "fail"), _r("b", 3, "pass"), _r("b", 4, "fail"),
    ]
    stats = compute_stats(results)
    a = next(c for c in stats.cells if c.model == "a")
    assert (a.attempts, a.scored, a.passed, a.infra_errors, a.budget_hits) == (4, 3, 1, 1, 1)
    assert a.pass_rate == pytest.approx(1 / 3, abs=1e-4)
    assert a.flipping_checks == {"restart": "1/2 pass"}
    assert stats.infra == ["flappy/a/r3: 500 on prompt shape"]
    (pair,) = stats.pairs
    # shared non-infra cells: repeats 1, 2, 4 -> a: P F F, b: F F F
    assert (pair.pairs, pair.both_pass, pair.only_a, pair.only_b, pair.neither) == (3, 0, 1, 0, 2)
    assert pair.p_value == 1.0
