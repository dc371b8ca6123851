"""Micro-benchmark of sandbox overhead: create, exec, file round trips, syntax check, close.

Run: python bench/overhead_sandbox.py [--rounds 5]   (needs Docker and the agentbench/web image)
Prints the median and max of each step in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from agentbench.checks.static._syntax import check_syntax
from agentbench.sandbox import DockerSandbox, SandboxLimits

PAGE = "<!doctype html><body><canvas></canvas>\n<script>\nlet t = 0;\nfunction f() { t++; }\n</script>\n" \
       "<script type=module>\nconst x = await Promise.resolve(1);\n</script>\n"


async def main(rounds: int) -> None:
    times: dict[str, list[float]] = defaultdict(list)

    async def timed(name: str, coro):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        result = await coro
        times[name].append((time.perf_counter() - started) * 1000)
        return result

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        site.mkdir()
        (site / "index.html").write_text(PAGE)
        for _ in range(rounds):
            box = await timed("create", DockerSandbox.create(limits=SandboxLimits(), labels={"agentbench.bench": "1"}))
            try:
                await timed("exec true", box.exec("true"))
                await timed("exec node -v", box.exec("node -v"))
                await timed("write_file 100 KiB", box.write_file("a/b.bin", b"x" * 100_000))
                await timed("read_file 100 KiB", box.read_file("a/b.bin"))
                await timed("list_files", box.list_files())
                await timed("copy_out", box.copy_out(Path(tmp) / "out"))
                await timed("check_syntax (given sandbox)", check_syntax(site, box))
            finally:
                await timed("close", box.close())
            await timed("check_syntax (own sandbox)", check_syntax(site))
    width = max(map(len, times))
    for name, values in times.items():
        print(f"{name:<{width}}  median {statistics.median(values):7.1f} ms   max {max(values):7.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args().rounds))
