"""Harness overhead per attempt outside model calls (issue: <= 1 s per attempt on 2 cores).

Runs N attempts of the zero-latency demo replay model (careful flappy: the longest session) with the
checks switched off, and reports the median of `harness_s` = wall - model time - checks time:
container create/remove, tool execs, copy out, transcript and result writes.

    python bench/overhead.py [--attempts 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentbench._logging import configure_logging  # noqa: E402
from agentbench.config import DEMO_MODELS  # noqa: E402
from agentbench.runner import RunOptions, run  # noqa: E402
from agentbench.tasks import load_task  # noqa: E402


async def main(attempts: int) -> None:
    configure_logging(0)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        summary = await run(
            [DEMO_MODELS["demo-careful"]], [load_task("flappy")],
            RunOptions(out_dir=Path(tmp), repeats=attempts, checks=False)
        )
        total = time.monotonic() - t0
    harness = [r.harness_s for r in summary.results]
    walls = [r.wall_s for r in summary.results]
    model = [r.speed.model_wall_s for r in summary.results]
    outcomes = {r.outcome for r in summary.results}
    print(f"attempts: {attempts}  outcomes: {sorted(outcomes)}  total wall: {total:.2f}s")
    print(f"harness per attempt (outside model calls), median: {statistics.median(harness):.3f}s "
          f"(min {min(harness):.3f}, max {max(harness):.3f})  target <= 1.0s")
    print(f"attempt wall median: {statistics.median(walls):.3f}s; model time median: {statistics.median(model):.3f}s")
    print(f"ratio harness/target: {statistics.median(harness) / 1.0:.2f}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--attempts", type=int, default=10)
    asyncio.run(main(p.parse_args().attempts))
