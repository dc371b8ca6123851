"""The report: stored runs rendered as one self-contained HTML page, a local viewer, human verdicts.

- ``write_report(run_dirs, out=None) -> Path``: report.html (matrix, artefacts live side by side in
  sandboxed iframes with their evidence, synchronised replay at 60/120/144/240 Hz, the ledger).
- ``ReportServer(run_dirs)``: the same page on 127.0.0.1 with pass/fail buttons (POST /api/verdict).
- ``record_verdict(run_dir, task, model, repeat, "pass"|"fail", note)``: into ``<run>/verdicts.json``.
- ``compute_ledger(load_runs(run_dirs))``: each automatic scorer against the human verdicts.
"""

from ._load import LoadedAttempt, LoadedRun, load_run, load_runs
from ._render import REPLAY_RATES, default_report_path, render_report, write_report
from ._server import ReportServer, serve_until_interrupted
from ._verdicts import (
    AttemptRef,
    HumanVerdict,
    Ledger,
    ScorerTally,
    VerdictBook,
    compute_ledger,
    load_verdicts,
    record_verdict,
    scorer_verdicts,
    verdicts_path,
)

__all__ = [
    "REPLAY_RATES",
    "AttemptRef",
    "HumanVerdict",
    "Ledger",
    "LoadedAttempt",
    "LoadedRun",
    "ReportServer",
    "ScorerTally",
    "VerdictBook",
    "compute_ledger",
    "default_report_path",
    "load_run",
    "load_runs",
    "load_verdicts",
    "record_verdict",
    "render_report",
    "scorer_verdicts",
    "serve_until_interrupted",
    "verdicts_path",
    "write_report",
]
