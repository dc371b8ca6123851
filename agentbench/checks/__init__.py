"""Checks: mechanical (syntax), browser probes, checklists."""

from ._checklist import (
    Checklist,
    ChecklistItem,
    ChecklistResult,
    ItemResult,
    evaluate_checklist,
    load_checklist,
)
from ._model import CheckResult, CheckStatus, Evidence

__all__ = [
    "CheckResult",
    "CheckStatus",
    "Checklist",
    "ChecklistItem",
    "ChecklistResult",
    "Evidence",
    "ItemResult",
    "evaluate_checklist",
    "load_checklist",
]
