"""Check results: the evidence-carrying verdicts every check returns."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CheckResult", "CheckStatus", "Evidence"]

CheckStatus = Literal["pass", "fail", "error", "skip"]


class Evidence(BaseModel):
    """One piece of evidence: a file next to result.json (PNG filmstrip, log) or an inline value."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["file", "value", "text"] = "text"
    label: str
    path: str | None = None  # relative to the attempt folder, for kind="file"
    value: Any = None


class CheckResult(BaseModel):
    """The verdict of one check on one artefact.

    status: ``pass``/``fail`` are verdicts about the artefact; ``error`` means the harness could
    not decide (a harness gap, shown apart; it keeps the verdict from pass); ``skip`` means not applicable.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    status: CheckStatus
    detail: str = ""
    evidence: list[Evidence] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)
    duration_s: float = 0.0
