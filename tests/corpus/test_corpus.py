"""Every labelled real artefact in ../shared/corpus: right verdict, each defect named, nothing spurious.

The artefacts are people's pages (not written for our prompts), read in place, never copied into
the project. Each is checked by the browser probes on real Chromium and judged by
``agentbench.corpus.judge`` (the same scorer ``python -m agentbench.corpus`` reports with).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import pytest_asyncio

from agentbench.checks._run import verdict_of
from agentbench.checks.browser import BrowserHarness, run_browser_checks_async
from agentbench.corpus import DEFECT_CHECKS, artefacts, judge

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
FOUND = artefacts(CORPUS) if CORPUS.is_dir() else []

pytestmark = pytest.mark.browser

# Known gaps (issue 27): artefact -> the class of misjudgement it shows. Strict both ways: a listed
# artefact that comes right fails until it is taken off the list, and nothing unlisted may be wrong.
# Empty when issue 27 is resolved.
KNOWN_GAPS: dict[str, str] = {}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(chromium_path: str):
    async with BrowserHarness(chromium_path) as h:
        yield h


def test_the_corpus_is_there() -> None:
    if not FOUND:
        msg = f"no labelled artefacts under {CORPUS} (<task>/<name>/expect.json)"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)


def test_known_gaps_name_corpus_artefacts() -> None:
    names = {f"{t}/{n}" for t, n, _ in FOUND}
    assert not FOUND or set(KNOWN_GAPS) <= names, sorted(set(KNOWN_GAPS) - names)


def test_every_labelled_defect_is_one_the_scorer_knows() -> None:
    tags = {t for _, _, folder in FOUND for t in json.loads((folder / "expect.json").read_text())["defects"]}
    assert tags <= set(DEFECT_CHECKS), sorted(tags - set(DEFECT_CHECKS))


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("task", "name", "folder"), FOUND, ids=[f"{t}/{n}" for t, n, _ in FOUND])
async def test_corpus_artefact(harness: BrowserHarness, tmp_path: Path, task: str, name: str, folder: Path) -> None:
    expect = json.loads((folder / "expect.json").read_text(encoding="utf-8"))
    checks = await run_browser_checks_async(task, folder, tmp_path / "evidence", harness=harness)
    verdict, score = verdict_of(checks)
    result = {"verdict": verdict, "score": score, "checks": [c.model_dump() for c in checks]}
    j = judge(task, name, expect, result)
    shown = "\n".join(f"  {c.id}: {c.status} - {c.detail[:300]}" for c in checks)
    gap = KNOWN_GAPS.get(f"{task}/{name}")
    if gap is not None:
        right = j.verdict_ok and not j.unnamed and not j.unexplained and not j.errors
        assert not right, f"{task}/{name} is judged right now: take it off KNOWN_GAPS ({gap})"
        pytest.xfail(f"known gap (issue 27): {gap}")
    assert j.verdict_ok, f"verdict {verdict}, labelled {j.expected}\n{shown}"
    assert not j.unnamed, f"labelled defects no failing check names: {j.unnamed}\n{shown}"
    assert not j.unexplained, f"failing checks the labels do not explain: {j.unexplained}\n{shown}"
    assert not j.errors, f"checks that could not tell: {j.errors}\n{shown}"
    if verdict == "fail":
        assert score < 1.0
