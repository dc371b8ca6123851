"""verdict_of: an error keeps the verdict from pass and from a score of 1.0; errors-only is told apart."""

from __future__ import annotations

from agentbench.checks._model import CheckResult
from agentbench.checks._run import rests_on_errors, verdict_of


def _c(cid: str, status: str) -> CheckResult:
    return CheckResult(id=cid, status=status, detail="")


def test_all_pass_is_pass_with_full_score() -> None:
    assert verdict_of([_c("a", "pass"), _c("b", "skip")]) == ("pass", 1.0)


def test_a_failing_verdict_never_scores_one() -> None:
    verdict, score = verdict_of([_c("a", "pass"), _c("b", "pass"), _c("c", "error")])
    assert verdict == "fail"
    assert score < 1.0
    assert score == round(2 / 3, 4)


def test_errors_only_is_marked_and_a_real_fail_is_not() -> None:
    assert rests_on_errors([_c("a", "pass"), _c("b", "error")])
    assert not rests_on_errors([_c("a", "fail"), _c("b", "error")])
    assert not rests_on_errors([_c("a", "pass")])


def test_nothing_decided_is_not_a_pass() -> None:
    assert verdict_of([_c("a", "skip")])[0] == "fail"
    assert verdict_of([])[0] == "fail"
