"""Human verdicts (``<run>/verdicts.json``) and the ledger that holds each automatic scorer to them.

A person's pass/fail on an attempt is the reference.  Each automatic scorer (the overall check
verdict, every check, the checklist verdict and its static-only reading, every reviewer) is
counted against it: agreements, too strict (scorer fail, person pass) and too generous (scorer
pass, person fail), with the attempts listed so anyone can look.  A scorer that did not decide
(check ``error``/``skip``) is counted apart, never as an agreement.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import AgentbenchError, StoreError
from ..store import load_manifest, utcnow, write_json
from ._load import LoadedAttempt, LoadedRun, load_run

__all__ = [
    "AttemptRef",
    "HumanVerdict",
    "Ledger",
    "ScorerTally",
    "VerdictBook",
    "compute_ledger",
    "load_verdicts",
    "record_verdict",
    "scorer_verdicts",
    "verdicts_path",
]

VERDICTS_FILE = "verdicts.json"
Verdict = Literal["pass", "fail"]
_lock = threading.Lock()  # the server records from several threads; flock covers other processes


class HumanVerdict(BaseModel):
    """A person's verdict on one attempt."""

    model_config = ConfigDict(extra="forbid")

    task: str
    model: str
    repeat: int
    verdict: Verdict
    note: str = ""
    at: str = Field(default_factory=utcnow)


class VerdictBook(BaseModel):
    """verdicts.json: the human verdicts of one run, keyed ``task/model/rK``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    run_id: str
    verdicts: dict[str, HumanVerdict] = Field(default_factory=dict)

    def get(self, task: str, model: str, repeat: int) -> HumanVerdict | None:
        return self.verdicts.get(f"{task}/{model}/r{repeat}")


def verdicts_path(run_dir: Path) -> Path:
    return run_dir / VERDICTS_FILE


def load_verdicts(run_dir: Path) -> VerdictBook:
    """The run's verdict book; empty when no one has judged anything yet."""
    path = verdicts_path(run_dir)
    if not path.is_file():
        return VerdictBook(run_id=load_manifest(run_dir).run_id)
    try:
        return VerdictBook.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise StoreError(f"{path}: unreadable verdicts file: {exc}. Fix or delete it.") from exc


@contextmanager
def _locked(run_dir: Path) -> Iterator[None]:
    with _lock, open(run_dir / ".verdicts.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def record_verdict(run_dir: Path, task: str, model: str, repeat: int, verdict: str, note: str = "") -> HumanVerdict:
    """Save a person's verdict on one attempt (replacing an earlier one), atomically."""
    if verdict not in ("pass", "fail"):
        raise AgentbenchError(f"A verdict is 'pass' or 'fail', not '{verdict}'.")
    if len(note) > 4000:
        raise AgentbenchError("The note is too long (4000 characters at most).")
    run = load_run(run_dir)
    known = {a.key for a in run.attempts}
    key = f"{task}/{model}/r{repeat}"
    if key not in known:
        raise AgentbenchError(
            f"Run '{run.run_id}' has no attempt {key}. Attempts: {', '.join(sorted(known)) or '(none)'}."
        )
    entry = HumanVerdict(task=task, model=model, repeat=repeat, verdict=verdict, note=note.strip())
    with _locked(run_dir):
        book = load_verdicts(run_dir)
        book.verdicts[key] = entry
        write_json(verdicts_path(run_dir), book)
    return entry


# ---- the ledger ----------------------------------------------------------------------------------


class AttemptRef(BaseModel):
    """One attempt where a scorer and the person disagreed."""

    run_id: str
    task: str
    model: str
    repeat: int
    scorer_says: Verdict
    person_says: Verdict
    note: str = ""
    detail: str = ""

    @property
    def uid(self) -> str:
        return f"{self.run_id}/{self.task}/{self.model}/r{self.repeat}"


class ScorerTally(BaseModel):
    scorer: str  # "verdict", "check:<id>", "checklist", "checklist:static", "reviewer:<name>"
    compared: int = 0  # attempts the person judged and the scorer decided
    agree: int = 0
    too_strict: list[AttemptRef] = Field(default_factory=list)  # scorer fail, person pass
    too_generous: list[AttemptRef] = Field(default_factory=list)  # scorer pass, person fail
    undecided: int = 0  # the person judged, the scorer could not decide


class Ledger(BaseModel):
    judged: int = 0  # attempts with a human verdict
    scorers: list[ScorerTally] = Field(default_factory=list)


def _pass_fail(value: Any) -> str | None:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, str) and value.lower() in ("pass", "fail"):
        return value.lower()
    return None


def read_verdict(data: dict[str, Any]) -> str | None:
    for key in ("verdict", "passed", "pass"):
        if key in data:
            v = _pass_fail(data[key])
            if v is not None:
                return v
    return None


def _checklist_verdict(items: list[dict[str, Any]], summary: dict[str, Any]) -> tuple[str | None, str]:
    """Pass when no required item fails; undecided while a required item is unknown."""
    explicit = read_verdict(summary)
    if explicit is not None:
        return explicit, ""
    required = [i for i in items if i.get("required", True)]
    failed = ([str(i.get("id")) for i in required if i.get("status") == "fail"]
              or list(summary.get("required_failed") or []))
    if failed:
        return "fail", "required items failed: " + ", ".join(failed)
    unknown = [str(i.get("id")) for i in required if i.get("status") not in ("pass", "fail")]
    if unknown or not required:
        return None, ("undecided: " + ", ".join(unknown)) if unknown else "no required items"
    return "pass", ""


def _static_verdict(items: list[dict[str, Any]]) -> tuple[str | None, str] | None:
    """What reading the source alone says: the required items that have a static detector."""
    judged = [i for i in items if i.get("required", True) and i.get("static") in ("pass", "fail")]
    if not judged:
        return None
    failed = [str(i.get("id")) for i in judged if i["static"] == "fail"]
    return ("fail", "static detectors failed: " + ", ".join(failed)) if failed else ("pass", "")


def scorer_verdicts(attempt: LoadedAttempt) -> dict[str, tuple[str | None, str]]:
    """Every automatic scorer's say on an attempt: scorer -> (pass | fail | None if undecided, detail)."""
    out: dict[str, tuple[str | None, str]] = {}
    r = attempt.result
    if r is None:
        return out
    if r.verdict is not None:
        out["verdict"] = (r.verdict, f"score {r.score:.2f}" if r.score is not None else "")
    elif r.outcome == "no-artefact":  # counted as a fail everywhere else (stats), so here too
        out["verdict"] = ("fail", "no artefact")
    for c in r.checks:
        out[f"check:{c.id}"] = (c.status if c.status in ("pass", "fail") else None, c.detail)
    items = [i for i in (getattr(r, "checklist", None) or []) if isinstance(i, dict)]
    summary = getattr(r, "checklist_summary", None)
    if items or summary:
        out["checklist"] = _checklist_verdict(items, summary if isinstance(summary, dict) else {})
        static = _static_verdict(items)
        if static is not None:
            out["checklist:static"] = static
    for name, review in attempt.reviews.items():
        out[f"reviewer:{name}"] = (read_verdict(review), str(review.get("summary", "") or ""))
    return out


def _scorer_rank(name: str) -> int:
    """Overall verdict first, then checks (in the order met), the checklist, the reviewers."""
    return {"verdict": 0, "check": 1, "checklist": 2, "reviewer": 3}.get(name.split(":", 1)[0], 4)


def compute_ledger(runs: list[LoadedRun], books: dict[str, VerdictBook] | None = None) -> Ledger:
    """Count each scorer against the human verdicts of the given runs (loaded from disk if not given)."""
    books = books if books is not None else {run.run_id: load_verdicts(run.run_dir) for run in runs}
    tallies: dict[str, ScorerTally] = {}
    ledger = Ledger()
    for run in runs:
        book = books.get(run.run_id) or VerdictBook(run_id=run.run_id)
        for att in run.attempts:
            human = book.get(att.task, att.model, att.repeat)
            if human is None:
                continue
            ledger.judged += 1
            for scorer, (says, detail) in scorer_verdicts(att).items():
                tally = tallies.setdefault(scorer, ScorerTally(scorer=scorer))
                if says is None:
                    tally.undecided += 1
                    continue
                tally.compared += 1
                if says == human.verdict:
                    tally.agree += 1
                    continue
                ref = AttemptRef(run_id=att.run_id, task=att.task, model=att.model, repeat=att.repeat,
                                 scorer_says=says, person_says=human.verdict, note=human.note, detail=detail)
                (tally.too_strict if says == "fail" else tally.too_generous).append(ref)
    ledger.scorers = sorted(tallies.values(), key=lambda t: _scorer_rank(t.scorer))
    return ledger
