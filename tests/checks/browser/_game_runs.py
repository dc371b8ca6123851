"""Shared by the flappy and ball probe tests: run a task's probes and refresh-rate once per fixture."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentbench.checks import CheckResult
from agentbench.checks._tasks import probe_module
from agentbench.checks.browser import BrowserHarness, ProbeContext, load_probes
from agentbench.checks.browser._refresh import refresh_rate_check

FIXTURES = Path(__file__).parent / "fixtures"
DEMO = Path(__file__).resolve().parents[3] / "agentbench" / "models" / "demo_data"


class GameRuns:
    """Caches results per (fixture, what) so several tests can assert on one run."""

    def __init__(self, harness: BrowserHarness, task: str, evidence_root: Path) -> None:
        self.harness, self.task, self.root = harness, task, evidence_root
        self.registered = load_probes(task, probe_module(task))
        self._probes: dict[str, dict[str, CheckResult]] = {}
        self._refresh: dict[str, CheckResult] = {}
        self._ctxs: dict[str, ProbeContext] = {}

    def _ctx(self, name: str) -> ProbeContext:
        # One context per fixture, as one `agentbench check` run: the probes hand refresh-rate
        # what they learnt (how the game starts).
        if name not in self._ctxs:
            path = FIXTURES / self.task / name
            self._ctxs[name] = ProbeContext(harness=self.harness, artefact_dir=path.parent, entry=path.name,
                                            evidence_dir=self.root / name.replace(".html", "") / "evidence")
        return self._ctxs[name]

    async def probes(self, name: str) -> dict[str, CheckResult]:
        if name not in self._probes:
            results = await self.registered.probes(self._ctx(name))
            self._probes[name] = {r.id: r for r in results}
        return self._probes[name]

    async def refresh(self, name: str) -> CheckResult:
        if name not in self._refresh:
            plan = self.registered.refresh
            adapt = plan.adapt
            check = refresh_rate_check(self._ctx(name), list(plan.steps), adapt, plan.script)
            if adapt is not None and name not in self._probes:
                _, self._refresh[name] = await asyncio.gather(self.probes(name), check)
            else:
                self._refresh[name] = await check
        return self._refresh[name]


def explain(results: dict[str, CheckResult] | CheckResult) -> str:
    items = [results] if isinstance(results, CheckResult) else list(results.values())
    return "\n".join(f"{r.id}: {r.status} - {r.detail} {r.data}" for r in items)
