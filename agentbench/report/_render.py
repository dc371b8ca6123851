"""Render stored runs into one self-contained report.html (jinja2, StrictUndefined, autoescape).

Data flows one way: this module only reads runs.  Artefacts are embedded as iframe ``srcdoc``
with ``sandbox="allow-scripts"`` (never ``allow-same-origin``), evidence images as data: URIs,
so the file works offline; transcripts and large files are linked relative to the report.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from .. import __version__
from ..store import atomic_write_text
from ._artefact import REPLAY_INPUT, artefact_entry, build_srcdoc, entry_for, read_artefact
from ._charts import Charts, build_charts
from ._load import LoadedAttempt, LoadedRun, load_runs
from ._verdicts import HumanVerdict, Ledger, VerdictBook, compute_ledger, load_verdicts
from ._views import ChecklistView, EvidenceView, ValueView, checklist_view, evidence_view, value_view

__all__ = ["REPLAY_RATES", "default_report_path", "render_report", "report_csp", "run_relative", "write_report"]

REPLAY_RATES = (60, 120, 144, 240)
_HERE = Path(__file__).parent
_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(_HERE / "templates"),
    autoescape=True,  # every template, whatever its name: artefact text and model output are untrusted
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["tojson_attr"] = lambda v: json.dumps(v, separators=(",", ":"))

FileLink = Callable[[LoadedRun, Path], str]  # (run, absolute file inside it) -> href


@dataclass
class CheckView:
    id: str
    status: str
    detail: str
    evidence: list[EvidenceView]
    warp: float | None  # refresh-rate: how much faster the page runs at 240 Hz than at 60 Hz
    page_errors: list[str]
    data: ValueView | None


@dataclass
class ReviewView:
    name: str
    verdict: str | None
    fields: ValueView


@dataclass
class AttemptView:
    uid: str
    anchor: str
    run_id: str
    task: str
    model: str
    repeat: int
    outcome: str
    verdict: str | None
    score: float | None
    failing: list[str]
    undecided: list[str]  # checks in error: the harness could not decide
    tokens: int | None
    tok_s: float | None
    wall_s: float | None
    cost_usd: float | None
    note: str  # infra error, load error, agent status worth knowing
    srcdoc: str | None
    no_artefact: str
    artefact_link: str | None
    checks: list[CheckView]
    checklist: ChecklistView | None
    reviews: list[ReviewView]
    transcript: str | None
    human: HumanVerdict | None


@dataclass
class Tile:
    """One model (of one run) within a task: its attempts, one shown at a time."""

    label: str
    attempts: list[AttemptView]


@dataclass
class TaskSection:
    task: str
    title: str
    input: list[dict[str, Any]]
    tiles: list[Tile]


@dataclass
class Column:
    run_id: str
    model: str
    label: str


@dataclass
class ReportView:
    title: str
    generated_at: str
    version: str
    runs: list[dict[str, Any]]
    columns: list[Column]
    tasks: list[str]
    matrix: dict[str, dict[str, list[AttemptView]]]  # task -> column label -> attempts
    sections: list[TaskSection]
    ledger: Ledger
    attempt_anchors: dict[str, str]  # uid -> anchor, for ledger links
    rates: tuple[int, ...] = REPLAY_RATES
    api_token: str | None = None
    csp: str = ""
    cli_run: dict[str, str] = field(default_factory=dict)  # run id -> how to name it on the shell
    charts: Charts | None = None


def _anchor(uid: str) -> str:
    return "a-" + re.sub(r"[^A-Za-z0-9_-]+", "-", uid)


def _task_title(task: str) -> str:
    from ..errors import TaskError
    from ..tasks import load_task

    try:
        return load_task(task).title
    except TaskError:
        return task


def _check_view(check: Any, att: LoadedAttempt, link: Callable[[Path], str], embed: bool) -> CheckView:
    data = dict(check.data or {})
    warp = data.pop("factor", None)
    if warp is None and check.id == "refresh-rate":
        warp = data.get("s")  # the fitted slope tau = s*t + b: how much faster 240 Hz runs than 60 Hz
    errors: list[str] = []
    for key in ("errors", "page_errors"):
        if isinstance(data.get(key), list):
            errors += [str(e) for e in data.pop(key)]
    return CheckView(
        id=check.id, status=check.status, detail=check.detail,
        evidence=[evidence_view(ev, att.dir, att.run_dir, link, embed=embed) for ev in check.evidence],
        warp=float(warp) if isinstance(warp, (int, float)) else None, page_errors=errors,
        data=value_view(data) if data else None,
    )


def _attempt_view(att: LoadedAttempt, run: LoadedRun, human: HumanVerdict | None, link: FileLink,
                  embed: bool) -> AttemptView:
    r = att.result
    def rel_link(p: Path) -> str:
        return link(run, p)

    notes: list[str] = []
    if att.load_error:
        notes.append(att.load_error)
    srcdoc: str | None = None
    why = "not finished yet" if r is None and not att.load_error else "no artefact stored"
    artefact_link = None
    if r is not None:
        if r.error is not None:
            notes.append(f"infra error ({r.error.kind}): {r.error.message}")
        if r.agent.budget_hit:
            notes.append(f"budget hit: {r.agent.budget_hit}")
        folder = f"{att.dir.relative_to(att.run_dir).as_posix()}/{r.artefact_path or 'artefact'}"
        entry = entry_for(att.task)
        html, why = read_artefact(att.run_dir, folder, entry)
        if r.outcome in ("no-artefact", "infra-error") and html is None:
            why = f"no artefact: the agent ended without {entry}" if r.outcome == "no-artefact" else \
                "no artefact: the attempt hit an infrastructure error"
        if (entry_rel := artefact_entry(att.run_dir, folder, entry)) is not None:
            artefact_link = rel_link(att.run_dir / entry_rel)
        if html is not None:
            cfg = {"fps": 60, "seed": 1, "input": [], "start_at": 0, "id": att.uid}
            srcdoc = build_srcdoc(html, cfg, _clock_js())
    tokens = (r.speed.prompt_tokens + r.speed.completion_tokens) if r and r.speed.requests else None
    summary = getattr(r, "checklist_summary", None) if r else None
    transcript = att.dir / "transcript.jsonl"
    rel_dir = att.dir.relative_to(att.run_dir).as_posix()
    return AttemptView(
        uid=att.uid, anchor=_anchor(att.uid), run_id=att.run_id, task=att.task, model=att.model,
        repeat=att.repeat, outcome=r.outcome if r else ("unreadable" if att.load_error else "pending"),
        verdict=r.verdict if r else None, score=r.score if r else None,
        failing=[c.id for c in r.checks if c.status == "fail"] if r else [],
        undecided=[c.id for c in r.checks if c.status == "error"] if r else [],
        tokens=tokens, tok_s=r.speed.decode_tok_s if r else None, wall_s=r.wall_s if r else None,
        cost_usd=r.cost_usd if r else None, note="; ".join(notes), srcdoc=srcdoc, no_artefact=why,
        artefact_link=artefact_link,
        checks=[_check_view(c, att, rel_link, embed) for c in r.checks] if r else [],
        checklist=checklist_view(getattr(r, "checklist", None), summary if isinstance(summary, dict) else None,
                                 lambda rel: _file_href(att, rel, rel_link)) if r else None,
        reviews=[_review_view(name, data) for name, data in att.reviews.items()],
        transcript=rel_link(transcript) if _plain_file(att.run_dir, f"{rel_dir}/transcript.jsonl") else None,
        human=human,
    )


def _file_href(att: LoadedAttempt, rel: str, link: Callable[[Path], str]) -> str | None:
    """An href for a file named relative to the attempt folder, if it is one inside the run."""
    path = _plain_file(att.run_dir, f"{att.dir.relative_to(att.run_dir).as_posix()}/{rel}")
    return None if path is None else link(path)


def _plain_file(run_dir: Path, rel: str) -> Path | None:
    """run_dir/rel when it is a plain file inside the run reached without a link (no escape, no link)."""
    import posixpath
    import stat

    from .._files import lookup

    rel = posixpath.normpath(rel)
    st = lookup(run_dir, rel)
    return run_dir / rel if st is not None and stat.S_ISREG(st.st_mode) else None


def run_relative(run: LoadedRun, path: Path) -> str:
    """A path built under the run folder, relative to it (never resolved: links are not followed)."""
    return path.relative_to(run.run_dir).as_posix()


def _review_view(name: str, data: dict[str, Any]) -> ReviewView:
    from ._verdicts import read_verdict

    rest = {k: v for k, v in data.items() if k not in ("verdict", "passed", "pass")}
    return ReviewView(name=name, verdict=read_verdict(data), fields=value_view(rest))


_CLOCK: list[str] = []


def _clock_js() -> str:
    if not _CLOCK:
        _CLOCK.append((_HERE / "replay_clock.js").read_text(encoding="utf-8"))
    return _CLOCK[0]


def build_view(runs: list[LoadedRun], link: FileLink, *, api_token: str | None = None,
               books: dict[str, VerdictBook] | None = None, embed_images: bool = True) -> ReportView:
    books = books if books is not None else {run.run_id: load_verdicts(run.run_dir) for run in runs}
    several = len(runs) > 1
    columns = [Column(run.run_id, m, f"{m} ({run.run_id})" if several else m) for run in runs for m in run.models]
    tasks = list(dict.fromkeys(t for run in runs for t in run.tasks))
    matrix: dict[str, dict[str, list[AttemptView]]] = {t: {c.label: [] for c in columns} for t in tasks}
    tiles: dict[str, dict[str, Tile]] = {t: {} for t in tasks}
    anchors: dict[str, str] = {}
    for run in runs:
        book = books.get(run.run_id) or VerdictBook(run_id=run.run_id)
        for att in run.attempts:
            view = _attempt_view(att, run, book.get(att.task, att.model, att.repeat), link, embed_images)
            label = f"{att.model} ({run.run_id})" if several else att.model
            matrix[att.task][label].append(view)
            tiles[att.task].setdefault(label, Tile(label=label, attempts=[])).attempts.append(view)
            anchors[att.uid] = view.anchor
    order = {c.label: i for i, c in enumerate(columns)}
    sections = [
        TaskSection(task=t, title=_task_title(t), input=REPLAY_INPUT.get(t, []),
                    tiles=sorted(tiles[t].values(), key=lambda tile: order.get(tile.label, 0)))
        for t in tasks
    ]
    return ReportView(
        title="agentbench report: " + ", ".join(r.run_id for r in runs),
        generated_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), version=__version__,
        runs=[{"id": r.run_id, "status": r.manifest.status, "created_at": r.manifest.created_at,
               "repeats": r.manifest.repeats, "agent": r.manifest.agent} for r in runs],
        columns=columns, tasks=tasks, matrix=matrix, sections=sections,
        ledger=compute_ledger(runs, books), attempt_anchors=anchors, api_token=api_token,
        cli_run={r.run_id: str(r.run_dir) for r in runs},
        charts=build_charts(tasks, [c.label for c in columns], matrix),
    )


def report_csp(*, served: bool) -> str:
    """The report page's Content-Security-Policy (a ``<meta>``; the artefact iframes inherit it).

    The page is one file of inline script, inline style and data: images; artefacts are srcdoc
    iframes in an opaque origin and inherit this policy, so nothing in them may load or send
    anything: no fetch, no beacon image, no remote script, font, frame or form target. Served by
    ``agentbench open``, the page also talks to its own API and links evidence images on it.
    """
    own = " 'self'" if served else ""
    return "; ".join([
        "default-src 'none'",
        # eval and wasm reach nothing the rest forbids; artefacts that use them work as in the checks.
        "script-src 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval'",
        "style-src 'unsafe-inline'",
        f"img-src data: blob:{own}",
        "media-src data: blob:",
        "font-src data:",
        "connect-src 'self'" if served else "connect-src 'none'",
        "worker-src blob:",
        "frame-src 'none'",
        "child-src blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ])


def render_report(runs: list[LoadedRun], link: FileLink, *, api_token: str | None = None,
                  embed_images: bool = True) -> str:
    """The report's HTML for loaded runs.

    ``link`` gives the href of a file inside a run; ``api_token`` (served mode) enables the verdict
    buttons; ``embed_images=False`` links evidence images instead of inlining them (served mode).
    """
    view = build_view(runs, link, api_token=api_token, embed_images=embed_images)
    view.csp = report_csp(served=api_token is not None)
    return _env.get_template("report.html.j2").render(v=view)


def default_report_path(run_dirs: list[Path]) -> Path:
    """One run: ``<run>/report.html``; several: ``report.html`` next to the first run's folder."""
    return run_dirs[0] / "report.html" if len(run_dirs) == 1 else run_dirs[0].parent / "report.html"


def write_report(run_dirs: list[Path], out: Path | None = None) -> Path:
    """Render the runs to a self-contained HTML file (atomically) and return its path."""
    runs = load_runs(run_dirs)
    out = out or default_report_path(run_dirs)
    report_dir = out.resolve().parent

    def link(run: LoadedRun, path: Path) -> str:
        return quote(Path(os.path.relpath(run.run_dir.resolve() / run_relative(run, path), report_dir)).as_posix())

    atomic_write_text(out, render_report(runs, link))
    out.chmod(0o644)  # a report is for sharing; the temp file it was renamed from was private
    return out
