"""Throughput with one Docker engine and with two, the same cells (16 by default).

A scripted engine streams at 30 tok/s per request in its own process (as bench/concurrency.py), so
model time dominates; the real runner, client, agent and Docker sandboxes do the rest. The second
engine is a throwaway dockerd on this machine (tests/helpers/dockerd.py; needs root), its image
loaded before timing. Two comparisons, each a ratio of wall times:

* capacity-bound: each engine holds ``--capacity`` cells at once (``sandboxes``), ``-j`` is twice
  that. Two engines hold twice the cells: this is what a second machine buys when engines are full.
* same total: no per-engine limit, the same ``-j`` on one engine and on two. On one machine the two
  engines share its cores, so expect a ratio near 1: this measures the scheduler's cost, not scale-out.

    python bench/engines.py [--cells 16] [--tokens 500] [--capacity 4]     (about 3 minutes)
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from concurrency import TOK_S  # noqa: E402

from agentbench._logging import configure_logging  # noqa: E402
from agentbench._scheduler import open_pool  # noqa: E402
from agentbench.config import ModelConfig  # noqa: E402
from agentbench.runner import RunOptions, run  # noqa: E402
from agentbench.sandbox._engine_config import EngineConfig  # noqa: E402
from agentbench.tasks import load_task  # noqa: E402
from tests.helpers.dockerd import SecondEngine  # noqa: E402


async def _timed(model: ModelConfig, engines: list[EngineConfig], cells: int, conc: int) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        summary = await run([model], [load_task("todo")], RunOptions(
            out_dir=Path(tmp), repeats=cells, concurrency=conc, checks=False, preflight=False, engines=engines))
        wall = time.monotonic() - t0
    bad = [r.outcome for r in summary.results if r.outcome != "scored"]
    if bad:
        raise SystemExit(f"non-scored cells: {bad}")
    spread: dict[str, int] = {}
    for r in summary.results:
        spread[r.engine or "?"] = spread.get(r.engine or "?", 0) + 1
    return wall, spread


async def main(cells: int, tokens: int, capacity: int) -> None:
    configure_logging(0)
    with tempfile.TemporaryDirectory() as tmpd, SecondEngine() as second:
        port_file = Path(tmpd) / "url"
        bench = Path(__file__).resolve().parent / "concurrency.py"
        engine = subprocess.Popen([sys.executable, str(bench), "--serve", str(port_file), "--tokens", str(tokens)])
        try:
            while not port_file.exists() or not port_file.read_text():
                time.sleep(0.05)
            model = ModelConfig(name="engine", base_url=port_file.read_text(), model="m", max_concurrency=cells,
                                request_timeout_s=600)
            pool = await open_pool([EngineConfig(name="second", address=second.address)])
            async with pool.place():  # the image goes over before anything is timed
                pass
            print(f"{cells} cells, ~{tokens + 10} streamed tokens per cell at {TOK_S:.0f} tok/s per request")
            print(f"{'setting':<34} {'wall s':>7} {'cells per engine':>22}")
            local, other = EngineConfig(name="local"), EngineConfig(name="second", address=second.address)
            walls = {}
            for label, engines, conc in [
                (f"1 engine, capacity {capacity}", [local.model_copy(update={"sandboxes": capacity})], 2 * capacity),
                (f"2 engines, capacity {capacity} each", [e.model_copy(update={"sandboxes": capacity})
                                                         for e in (local, other)], 2 * capacity),
                (f"1 engine, -j {2 * capacity}", [local], 2 * capacity),
                (f"2 engines, -j {2 * capacity}", [local, other], 2 * capacity),
            ]:
                wall, spread = await _timed(model, engines, cells, conc)
                walls[label] = wall
                print(f"{label:<34} {wall:>7.2f} {str(spread):>22}")
            names = list(walls)
            print(f"capacity-bound: two engines are {walls[names[0]] / walls[names[1]]:.2f}x one")
            print(f"same total concurrency on one machine: {walls[names[2]] / walls[names[3]]:.2f}x")
        finally:
            engine.kill()
            engine.wait()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--cells", type=int, default=16)
    p.add_argument("--tokens", type=int, default=500)
    p.add_argument("--capacity", type=int, default=4)
    a = p.parse_args()
    asyncio.run(main(a.cells, a.tokens, a.capacity))
