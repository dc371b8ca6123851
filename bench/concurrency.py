"""Concurrent matrix runs against a scripted engine that streams at 30 tok/s per request.

16 cells (one model x one task x 16 repeats) through the real runner, client, agent and Docker
sandboxes, at concurrency 1, 4 and 16. Ideal wall = total uncontended model time (measured at
concurrency 1) / concurrency; reported as a ratio (target >= 90% of ideal at 16 on a 2-core
machine). Checks are off: they have their own bench.

    python bench/concurrency.py [--cells 16] [--tokens 1000]     (about 12 minutes)

Default cell: one ~1,000-token file written, then finish (a small real artefact is 2-5k tokens).
Much smaller cells expose a fixed burst of about 4 s at concurrency 16 on 2 cores (every cell
reaches its tool phase at once, ~7 docker operations each): see the figures in the README.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentbench._logging import configure_logging  # noqa: E402
from agentbench.config import ModelConfig  # noqa: E402
from agentbench.models import OpenAICompatServer, Reply  # noqa: E402
from agentbench.runner import RunOptions, run  # noqa: E402
from agentbench.tasks import load_task  # noqa: E402

TOK_S = 30.0
CONCURRENCY = tuple(int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,4,16").split(","))


def make_engine(tokens: int):
    page = "<!doctype html><p>" + "x" * (tokens * 4 - 40) + "</p>"  # ~4 chars per streamed token

    def engine(body: dict[str, Any]) -> Reply:
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        name, args = ("write_file", {"path": "index.html", "content": page}) if turn == 0 else (
            "finish", {"summary": "ok"})
        return Reply(message={"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
            finish_reason="tool_calls", tokens_per_s=TOK_S)

    return engine


def serve(tokens: int, port_file: str) -> None:
    """The scripted engine in its own process, as a real engine is: no GIL shared with the runner."""
    server = OpenAICompatServer(make_engine(tokens), models=["m"])
    url = server.start()
    Path(port_file).write_text(url)
    threading.Event().wait()


async def main(cells: int, tokens: int) -> None:
    configure_logging(0)
    task = load_task("todo")
    with tempfile.TemporaryDirectory() as tmpd:
        port_file = Path(tmpd) / "url"
        engine = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file), "--tokens", str(tokens)])
        try:
            while not port_file.exists() or not port_file.read_text():
                time.sleep(0.05)
            url = port_file.read_text()
            model = ModelConfig(name="engine", base_url=url, model="m", max_concurrency=cells, request_timeout_s=600)
            print(f"{cells} cells, ~{tokens + 10} streamed tokens per cell at {TOK_S:.0f} tok/s per request")
            print(f"{'concurrency':>11} {'wall s':>8} {'model s':>8} {'ideal s':>8} {'of ideal':>9}")
            base_model_s = None  # uncontended model time (concurrency 1): the ideal's numerator
            for conc in CONCURRENCY:
                with tempfile.TemporaryDirectory() as tmp:
                    t0 = time.monotonic()
                    summary = await run([model], [task], RunOptions(out_dir=Path(tmp), repeats=cells,
                                                                     concurrency=conc, checks=False, preflight=False))
                    wall = time.monotonic() - t0
                bad = [(r.outcome, r.agent.stop_reason, r.agent.tool_errors, r.error and r.error.message)
                       for r in summary.results if r.outcome != "scored"]
                model_s = sum(r.speed.model_wall_s for r in summary.results)
                base_model_s = base_model_s or model_s
                ideal = base_model_s / conc
                print(f"{conc:>11} {wall:>8.2f} {model_s:>8.1f} {ideal:>8.2f} {ideal / wall:>8.0%}"
                      + (f"  (non-scored: {bad})" if bad else ""))
        finally:
            engine.kill()
            engine.wait()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--cells", type=int, default=16)
    p.add_argument("--tokens", type=int, default=1000)
    p.add_argument("--serve", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.serve:
        serve(a.tokens, a.serve)
    else:
        asyncio.run(main(a.cells, a.tokens))
