"""Shared bits of the probe tests: fixture paths and a cached runner (one probe run per artefact)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from agentbench.checks import CheckResult
from agentbench.checks.browser import ProbeContext

FIXTURES = Path(__file__).parent / "fixtures"
DEMO = Path(__file__).resolve().parents[3] / "agentbench" / "models" / "demo_data"


def artefact(spec: str) -> tuple[Path, str]:
    """'todo/good_plain.html' -> fixture file; 'demo:careful/todo' -> the demo artefact's index.html."""
    if spec.startswith("demo:"):
        return DEMO / spec[5:], "index.html"
    path = FIXTURES / spec  # an absolute spec stays as it is
    return path.parent, path.name


class ProbeRuns:
    """Runs a probe on an artefact once per (artefact, checks) and keeps the results."""

    def __init__(self, harness: Any, evidence_root: Path, probe: Callable[..., Awaitable[list[CheckResult]]]) -> None:
        self.harness, self.evidence_root, self.probe = harness, evidence_root, probe
        self._done: dict[tuple[str, tuple[str, ...] | None], tuple[dict[str, CheckResult], ProbeContext]] = {}

    async def run(self, spec: str, only: Iterable[str] | None = None) -> tuple[dict[str, CheckResult], ProbeContext]:
        key = (spec, tuple(sorted(only)) if only is not None else None)
        if key not in self._done:
            folder, entry = artefact(spec)
            name = spec.replace("/", "_").replace(":", "_").replace(".html", "")
            ctx = ProbeContext(
                harness=self.harness,
                artefact_dir=folder,
                entry=entry,
                evidence_dir=self.evidence_root / name / "evidence",
            )
            results = await self.probe(ctx, only)
            self._done[key] = ({r.id: r for r in results}, ctx)
        return self._done[key]


def explain(results: dict[str, CheckResult]) -> str:
    return "\n".join(
        f"{r.id}: {r.status} - {r.detail} {[e.value for e in r.evidence if e.kind == 'value']}"
        for r in results.values()
    )
