"""Our results in the formats the field's tools read.

- ``export_inspect(run_dir, out_dir=None) -> list[Path]``: one Inspect AI eval log (``.eval``) per
  task x lane, written with Inspect's own log API, for ``inspect view`` and Inspect's analysis
  tools. Needs the optional extra: ``pip install 'agentbench[inspect]'``.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import MissingExtra

__all__ = ["FORMATS", "export_inspect", "require_inspect"]

FORMATS = ("inspect",)
INSTALL_HINT = "pip install 'agentbench[inspect]'  (or: pip install inspect_ai)"


def require_inspect() -> None:
    """Raise MissingExtra with the install command unless inspect_ai can be imported."""
    try:
        import inspect_ai.log  # noqa: F401 - imported to find out whether it is there
    except ImportError as exc:
        raise MissingExtra(f"Exporting Inspect logs needs the inspect_ai package, which is not installed "
                           f"({exc}). Install it with: {INSTALL_HINT}") from exc


def export_inspect(run_dir: Path, out_dir: Path | None = None) -> list[Path]:
    """Write the run as Inspect eval logs (default folder ``<run>/inspect``); returns the files written."""
    require_inspect()
    from ._inspect import write_inspect_logs

    return write_inspect_logs(run_dir, out_dir)
