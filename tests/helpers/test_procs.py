"""The test helpers that start CLI processes: Ctrl-C reaches them whatever the test runner ignores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The child reports whether SIGINT would raise KeyboardInterrupt in it (Python's own handler).
CHILD = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
# A test runner started as a background job of a non-interactive shell (`make test &`): SIGINT ignored.
RUNNER = f"""
import signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
from tests.helpers.procs import interruptible
plain = subprocess.run([sys.executable, "-c", {CHILD!r}], capture_output=True, text=True).stdout.strip()
proc = interruptible([sys.executable, "-c", {CHILD!r}], stdout=subprocess.PIPE, text=True)
print(plain, proc.communicate()[0].strip())
"""


def test_an_interruptible_child_takes_sigint_where_a_plain_one_would_not() -> None:
    out = subprocess.run([sys.executable, "-c", RUNNER], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]  # plain Popen inherits the ignore; interruptible does not
