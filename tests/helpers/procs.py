"""Start a CLI process that takes Ctrl-C (SIGINT) the way it does in a terminal, and read its lines.

A shell without job control starts a background job (``make test &``, a CI step, ``nohup``) with
SIGINT *ignored*, and an ignored signal stays ignored across fork and exec: Python then installs
no KeyboardInterrupt handler, and a test's SIGINT is simply lost (``agentbench open`` serves on,
``agentbench run`` finishes with 0). :func:`interruptible` resets SIGINT to its default in the
child before the command starts, so a test that sends it tests the command, not the shell it ran in.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from typing import Any

__all__ = ["interruptible", "read_line"]

# Runs in the child: SIGINT back to SIG_DFL, then exec the real command (same pid, nothing else changed).
_SHIM = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"


def interruptible(argv: list[str], **popen: Any) -> subprocess.Popen:
    """``subprocess.Popen(argv, **popen)``, with SIGINT at its default in the child whatever this process has."""
    return subprocess.Popen([sys.executable, "-c", _SHIM, *argv], **popen)


def read_line(proc: subprocess.Popen, timeout_s: float) -> str:
    """What the process writes to its stdout pipe up to its first newline ('' if it exits or times out first)."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    buf = b""
    try:
        while not buf.endswith(b"\n") and time.monotonic() < deadline:
            if sel.select(timeout=0.2):
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:
                    break
                buf += chunk
    finally:
        sel.close()
    return buf.decode(errors="replace")
