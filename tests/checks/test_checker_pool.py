"""A batch of artefacts is checked side by side on a pool of checker containers, bounded, each
artefact's results its own and in its place; a lone artefact still starts one container."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentbench.checks._checker import CheckerContainer
from agentbench.checks._checker_pool import CheckerPool, pool_size
from agentbench.checks._model import CheckResult
from agentbench.checks._run import check_batch
from agentbench.errors import CheckError
from tests.helpers.waiting import until_async

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "agentbench" / "models" / "demo_data"


class GatedChecker:
    """A stand-in checker whose check is held at a gate the test opens; it says which artefact it judged."""

    def __init__(self, gate: asyncio.Event, inside: list[str], log: list[tuple[int, str]]) -> None:
        self.gate, self.inside, self.log = gate, inside, log
        self.started = 1

    async def check(self, task_id: str, artefact_dir: Path, evidence_dir: Path, *, entry: str = "index.html",
                    probes: str | None = None, timings: dict | None = None) -> list[CheckResult]:
        self.inside.append(artefact_dir.name)
        self.log.append((id(self), artefact_dir.name))
        try:
            await self.gate.wait()
        finally:
            self.inside.remove(artefact_dir.name)
        return [CheckResult(id="load", status="pass", detail=f"{task_id}:{artefact_dir.name}")]

    def _close_sync(self) -> None:
        pass


async def test_a_batch_runs_as_many_artefacts_at_once_as_the_pool_holds_and_keeps_each_result_in_place() -> None:
    gate, inside, log = asyncio.Event(), [], []
    made: list[GatedChecker] = []

    def factory() -> GatedChecker:
        made.append(GatedChecker(gate, inside, log))
        return made[-1]

    pool = CheckerPool(2, factory=factory)
    names = [f"artefact-{i}" for i in range(5)]

    async def one(name: str) -> list[CheckResult]:
        return await pool.check("flappy", Path("/nowhere") / name, Path("/nowhere/evidence"))

    batch = asyncio.ensure_future(check_batch(names, one, limit=len(names)))
    # Two artefacts are in progress at once, held at the gate; the pool holds the rest back.
    await until_async(lambda: len(inside) == 2, "two artefacts in progress at once")
    assert sorted(inside) == ["artefact-0", "artefact-1"] and len(made) == 2
    assert not batch.done() and len(pool._waiters) == 3
    gate.set()
    results = await batch
    assert [r[0].detail for r in results] == [f"flappy:{n}" for n in names]  # each its own, in order
    assert len(made) == 2 and {checker for checker, _ in log} == {id(c) for c in made}  # reused, never a third
    assert [name for _, name in log] == names  # first come, first served
    await pool.close()


async def test_the_batch_limit_bounds_the_artefacts_in_progress() -> None:
    gate, inside, log = asyncio.Event(), [], []
    pool = CheckerPool(4, factory=lambda: GatedChecker(gate, inside, log))

    async def one(name: str) -> list[CheckResult]:
        return await pool.check("ball", Path("/nowhere") / name, Path("/nowhere/evidence"))

    batch = asyncio.ensure_future(check_batch(["a", "b", "c"], one, limit=1))
    await until_async(lambda: inside == ["a"], "the first artefact in progress")
    assert len(pool.containers) == 1 and not pool._waiters  # the others wait at the batch's gate
    gate.set()
    assert [r[0].detail for r in await batch] == ["ball:a", "ball:b", "ball:c"]
    assert len(pool.containers) == 1


async def test_a_waiter_that_gives_up_leaves_the_checker_to_the_next() -> None:
    gate, inside, log = asyncio.Event(), [], []
    pool = CheckerPool(1, factory=lambda: GatedChecker(gate, inside, log))
    first = asyncio.ensure_future(pool.check("todo", Path("/x/a"), Path("/x/e")))
    await until_async(lambda: inside == ["a"], "the first artefact in progress")
    quitter = asyncio.ensure_future(pool.check("todo", Path("/x/b"), Path("/x/e")))
    third = asyncio.ensure_future(pool.check("todo", Path("/x/c"), Path("/x/e")))
    await until_async(lambda: len(pool._waiters) == 2, "two artefacts waiting for the checker")
    quitter.cancel()
    gate.set()
    assert (await first)[0].detail == "todo:a" and (await third)[0].detail == "todo:c"
    assert quitter.cancelled() and [name for _, name in log] == ["a", "c"]


async def test_a_lone_artefact_checked_while_the_first_checker_starts_uses_that_one() -> None:
    """`agentbench check` starts the pool while it stages the first artefact: one container, not two."""
    gate, inside, log = asyncio.Event(), [], []
    made: list[GatedChecker] = []
    starting = asyncio.Event()

    class Starting(GatedChecker):
        async def start(self) -> None:
            starting.set()
            await gate.wait()  # held mid-start until the test lets it through

    def factory() -> GatedChecker:
        made.append(Starting(gate, inside, log))
        return made[-1]

    pool = CheckerPool(2, factory=factory)
    warm = asyncio.ensure_future(pool.start())
    await starting.wait()
    check = asyncio.ensure_future(pool.check("flappy", Path("/x/only"), Path("/x/e")))
    await until_async(lambda: inside == ["only"], "the artefact on the starting checker")
    gate.set()
    await warm
    assert (await check)[0].detail == "flappy:only" and len(made) == 1


def test_the_pool_size_is_the_cores_within_memory_or_what_the_environment_says(monkeypatch) -> None:
    monkeypatch.delenv("AGENTBENCH_CHECKERS", raising=False)
    assert pool_size(2, 24 * 2**30, "3g") == 2
    assert pool_size(16, 8 * 2**30, "3g") == 2  # memory for two checkers at their limit
    assert pool_size(4, 2**30, "3g") == 1
    assert pool_size(8, None, "512m") == 8
    monkeypatch.setenv("AGENTBENCH_CHECKERS", "3")
    assert pool_size(2, 2**30, "3g") == 3
    monkeypatch.setenv("AGENTBENCH_CHECKERS", "0")
    with pytest.raises(CheckError, match="AGENTBENCH_CHECKERS"):
        pool_size(2, None, "3g")


def _statuses(results: list[CheckResult]) -> dict[str, str]:
    return {r.id: r.status for r in results}


@pytest.mark.docker
async def test_two_artefacts_at_once_get_two_checkers_with_the_same_limits_and_their_own_verdicts(
        tmp_path: Path, docker_client, checker_image) -> None:
    """The rushed flappy (it moves faster at 240 Hz) beside the careful one, each in its own box."""
    pool = CheckerPool(2, factory=lambda: CheckerContainer(docker_client, memory="1g"))
    try:
        timings: dict = {}
        rushed, careful = await check_batch(
            ["rushed", "careful"],
            lambda kind: pool.check("flappy", DEMO / kind / "flappy", tmp_path / kind / "evidence",
                                    timings=timings if kind == "careful" else None), limit=2)
        boxes = pool.containers
        assert len(boxes) == 2 and pool.started == 2  # the second came because the first was busy
        for box in boxes:
            host = box.container.attrs["HostConfig"]
            assert host["Memory"] == 2**30 and host["NetworkMode"] == "none" and host["PidsLimit"] > 0
        assert pool.cpu_seconds() > 0
    finally:
        await pool.close()
    assert _statuses(rushed)["refresh-rate"] == "fail" and set(_statuses(careful).values()) == {"pass"}
    assert timings["checks_s"] > 0 and timings["sessions"] >= 2 and "evidence_s" in timings


@pytest.mark.docker
def test_check_of_several_paths_answers_for_each_in_order(tmp_path: Path, docker_client, checker_image) -> None:
    paths = [DEMO / "careful" / "flappy", DEMO / "rushed" / "flappy"]
    proc = subprocess.run([sys.executable, "-m", "agentbench.cli", "check", "--task", "flappy",
                           *map(str, paths), "--json"], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "AGENTBENCH_CHECKERS": "2"}, check=False)
    docs = json.loads(proc.stdout)
    assert [d["path"] for d in docs] == list(map(str, paths)), proc.stderr[-2000:]
    careful, rushed = ({c["id"]: c["status"] for c in d["checks"]} for d in docs)
    assert docs[0]["verdict"] == "pass" and set(careful.values()) == {"pass"}
    assert rushed["refresh-rate"] == "fail" and docs[1]["verdict"] == "fail" and proc.returncode == 1
