"""The model gateway under the issue's attacks from inside a sandbox: host memory, descriptors, time.

One hostile external session (tests/helpers/hostile_gateway.py: 20 parallel 60 MB bodies, ~20,000
half-open connections, three 60 MB chat requests, then it writes its page) runs beside an honest
opencode session on its own gateway, both against a scripted model on loopback, in this process;
a thread samples this process's resident memory and open descriptors every 50 ms.

    python bench/gateway_attacks.py [--attack bodies --attack halfopen --attack chat] [--no-honest]

Prints one JSON object. Point PYTHONPATH at another checkout to measure its gateway the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentbench._logging import configure_logging  # noqa: E402
from tests.helpers.hostile_gateway import ATTACKS, attack_session  # noqa: E402
from tests.helpers.peer import ScriptedPeer  # noqa: E402

PAGE = "<!doctype html><title>honest</title><p>a page</p>"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attack", action="append", choices=ATTACKS, help="attacks to run (default: all)")
    parser.add_argument("--no-honest", action="store_true", help="no honest session beside the hostile one")
    args = parser.parse_args()
    configure_logging()  # logs to stderr, warnings only: stdout is the JSON object
    peer = ScriptedPeer("index.html", PAGE)
    with peer, tempfile.TemporaryDirectory(prefix="agentbench-gw-bench-") as tmp:
        report = attack_session(peer, Path(tmp), attacks=tuple(args.attack or ATTACKS), honest=not args.no_honest)
    out = {k: v for k, v in vars(report).items() if k not in ("samples", "hostile", "honest", "log")}
    out["hostile"] = {"status": report.hostile.status, "stop_reason": report.hostile.stop_reason}
    out["honest"] = report.honest and {"status": report.honest.status, "turns": report.honest.turns}
    out["agent_log"] = [line for line in report.log.splitlines() if line.startswith("attack:")] or \
        report.log.splitlines()[-10:]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
