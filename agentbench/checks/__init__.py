"""Checks: mechanical (syntax), browser probes, checklists."""

from ._model import CheckResult, CheckStatus, Evidence

__all__ = ["CheckResult", "CheckStatus", "Evidence"]
