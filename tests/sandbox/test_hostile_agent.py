"""Holes a hostile agent found, tried on the real engine.

- the agent's disk: 3 GB and 100k files landed on the host (now capped tmpfs, read-only root);
- a process killed hard left its sandboxes behind forever (now swept at the next start).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentbench.sandbox import DockerSandbox, SandboxLimits
from agentbench.sandbox._owner import PID, sweep_orphans

ROOT = Path(__file__).resolve().parents[2]


# ---- disk and inode quota ------------------------------------------------------------------


@pytest.mark.docker
async def test_the_agent_cannot_fill_the_host_disk(docker_client, sandbox_image, session_label) -> None:
    limits = SandboxLimits(disk_mb=32, inodes=2000, exec_timeout_s=60)
    async with await DockerSandbox.create(limits=limits, labels=session_label, client=docker_client) as box:
        big = await box.exec("dd if=/dev/zero of=/workspace/big bs=1M count=200")
        assert not big.ok and "No space left" in big.stderr
        size = int((await box.exec("stat -c %s /workspace/big")).stdout.strip())
        assert size <= 32 * 1024 * 1024  # stopped at the quota, not at 200 MB
        assert "quota is full" in big.stdout + big.stderr  # the agent is told why
        many = await box.exec("rm -f /workspace/big; i=0; while [ $i -lt 5000 ]; do : > /workspace/f$i || break; "
                              "i=$((i+1)); done; ls /workspace | wc -l")
        assert int(many.stdout.strip().splitlines()[-1]) < 2000  # the inode cap held
        for place in ("/opt/x", "/usr/x", "/var/x", "/x"):  # nothing else is writable
            assert not (await box.exec(f": > {place}")).ok, place
        # After a full disk the sandbox still works: files can be freed and written again.
        await box.exec("rm -f /workspace/f*")
        await box.write_file("index.html", "<p>still here</p>")
        assert (await box.exec("cat /workspace/index.html")).stdout == "<p>still here</p>"


# ---- sandboxes of a crashed process ---------------------------------------------------------

_CRASHER = """
import asyncio, os, signal, sys
from agentbench.sandbox import DockerSandbox, SandboxLimits
async def main():
    box = await DockerSandbox.create(limits=SandboxLimits(), labels={sys.argv[1]: sys.argv[2]})
    print(box.container_id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no cleanup runs: the container is left behind
asyncio.run(main())
"""


@pytest.mark.docker
async def test_sandboxes_of_a_killed_process_are_swept_at_the_next_start(docker_client, sandbox_image,
                                                                        session_label) -> None:
    (key, value), = session_label.items()
    proc = subprocess.run([sys.executable, "-c", _CRASHER, key, value], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    left = proc.stdout.strip().splitlines()[-1]
    assert docker_client.containers.get(left).labels[PID]  # left behind, with its owner named
    # A live owner's sandbox (this process's) is never swept by someone else's start.
    async with await DockerSandbox.create(limits=SandboxLimits(), labels=session_label, client=docker_client) as mine:
        removed = await asyncio.to_thread(sweep_orphans, docker_client)
        assert left[:12] in removed
        assert mine.container_id[:12] not in removed
        assert docker_client.containers.get(mine.container_id).status == "running"
    import docker

    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(left)


# ---- containers a crash leaves before they ever started ----------------------------------------

_DIES_BETWEEN_CREATE_AND_START = """
import asyncio, os, signal, sys
import docker.models.containers
from agentbench.checks._checker import CheckerContainer
from agentbench.sandbox import DockerSandbox

def die(self, *a, **k):  # the process is killed right after `create`, before `start`: no cleanup runs
    print(self.id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
docker.models.containers.Container.start = die
if sys.argv[1] == "checker":
    asyncio.run(CheckerContainer().start())
else:
    asyncio.run(DockerSandbox.create(labels={sys.argv[2]: sys.argv[3]}))
"""


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["checker", "sandbox"])
def test_a_container_left_in_created_state_by_a_crash_is_swept(docker_client, sandbox_image, checker_image,
                                                                session_label, kind: str) -> None:
    """Every container we create names its owner, checkers included: the sweep removes it whatever its state."""
    (key, value), = session_label.items()
    proc = subprocess.run([sys.executable, "-c", _DIES_BETWEEN_CREATE_AND_START, kind, key, value], cwd=ROOT,
                          capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    left = docker_client.containers.get(proc.stdout.strip().splitlines()[-1])
    assert left.status == "created" and left.labels[PID] and left.labels["agentbench"] == "1"
    assert left.labels["agentbench.kind"] == kind
    removed = sweep_orphans(docker_client)
    assert left.short_id in removed
    import docker

    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(left.id)


@pytest.mark.docker
def test_a_container_removed_by_another_sweep_meanwhile_does_not_stop_this_one(docker_client, sandbox_image,
                                                                              session_label, monkeypatch) -> None:
    """Several processes share one engine and sweep at their start. An orphan another sweep removes between
    this one's listing and its look at that container must not end the sweep: the other orphans still go.
    (CI: a 404 for a container gone meanwhile ended the sweep, and the orphan it was asked about stayed.)"""
    from agentbench.sandbox._image import sweep_containers
    from agentbench.sandbox._owner import START, container_labels

    dead = {**container_labels(kind="sandbox", extra=session_label), START: "1"}  # our pid, another start: dead
    boxes = [docker_client.containers.create(sandbox_image, "true", labels=dead) for _ in range(3)]
    gone = boxes[1].id
    inspect = docker_client.api.inspect_container

    def another_sweep_got_there_first(container: str, *args, **kwargs):
        if container == gone:
            docker_client.api.remove_container(gone, force=True)
        return inspect(container, *args, **kwargs)

    monkeypatch.setattr(docker_client.api, "inspect_container", another_sweep_got_there_first)
    removed = sweep_orphans(docker_client)
    assert {boxes[0].short_id, boxes[2].short_id} <= set(removed), removed
    import docker

    for box in boxes:
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(box.id)
    # The sweep by age (agentbench sweep) has the same listing: it too goes on past the one gone meanwhile.
    boxes = [docker_client.containers.create(sandbox_image, "true", labels=dead) for _ in range(3)]
    gone = boxes[1].id
    removed = sweep_containers(docker_client, labels=session_label)
    assert {boxes[0].short_id, boxes[2].short_id} <= set(removed), removed
