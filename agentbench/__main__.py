"""`python -m agentbench`."""

import sys

from agentbench.cli import app

sys.exit(app())
