"""The typer app and the consoles every command module shares.

``cli.py`` and the command modules beside it (``_cli_report``, ``_cli_review``) register their
commands on :data:`app`; they import this module, and ``cli.py`` imports them, so no import runs
back up to ``cli.py``.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

__all__ = ["app", "err", "fail", "models_app", "out", "sandbox_app"]

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Which model writes software that actually works.")
models_app = typer.Typer(help="List and check the configured models.", invoke_without_command=True)
sandbox_app = typer.Typer(help="Build and inspect the sandbox image.", no_args_is_help=True)
app.add_typer(models_app, name="models")
app.add_typer(sandbox_app, name="sandbox")

# Piped output (CI logs, files) gets a wide table instead of rich's 80-column default.
out = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


def fail(exc: Exception, code: int = 2) -> NoReturn:
    """Print ``error: ...`` on stderr and exit with ``code`` (2: usage or infrastructure)."""
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
    raise typer.Exit(code)
