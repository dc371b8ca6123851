"""Docker-specific behaviour of DockerSandbox beyond the conformance suite."""

from __future__ import annotations

import asyncio
import ipaddress
import time
import uuid

import docker
import pytest

from agentbench.errors import DockerUnavailable, ImageMissing, SandboxError
from agentbench.sandbox import DockerSandbox, SandboxLimits, connect_docker, sweep_containers
from agentbench.sandbox._docker_exec import kill_tagged
from agentbench.sandbox._users import KEEPER_UID
from tests.helpers.waiting import HANG_S

pytestmark = pytest.mark.docker


async def test_container_is_locked_down(docker_client, sandbox_image, session_label):
    limits = SandboxLimits(memory_mb=300, cpus=0.5, pids=99)
    async with await DockerSandbox.create(limits=limits, labels=session_label, client=docker_client) as box:
        attrs = docker_client.containers.get(box.container_id).attrs
        host, config = attrs["HostConfig"], attrs["Config"]
        assert host["NetworkMode"] == "none"
        assert host["CapDrop"] == ["ALL"] and not host.get("CapAdd")
        assert host["SecurityOpt"] == ["no-new-privileges"]
        assert host["Memory"] == host["MemorySwap"] == 300 * 1024 * 1024
        assert host["NanoCpus"] == 500_000_000 and host["PidsLimit"] == 99
        assert host["Init"] is True and not host["Privileged"]
        # The init runs as another uid than the agent's commands: the agent cannot signal it.
        assert config["User"] == f"{KEEPER_UID}:{KEEPER_UID}" and config["Labels"]["agentbench"] == "1"
        assert config["Cmd"] == ["sleep", "infinity"]
    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(box.container_id)


async def test_sweep_removes_only_matching_leftovers(docker_client, sandbox_image, session_label):
    mine = {**session_label, "agentbench.sweep": uuid.uuid4().hex[:8]}
    leftover = await DockerSandbox.create(labels=mine, client=docker_client)
    other = await DockerSandbox.create(labels=session_label, client=docker_client)
    try:
        assert sweep_containers(docker_client, labels=mine, older_than_s=3600) == []
        removed = sweep_containers(docker_client, labels=mine)
        assert len(removed) == 1 and leftover.container_id.startswith(removed[0])
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(leftover.container_id)
        assert docker_client.containers.get(other.container_id).status == "running"
    finally:
        await leftover.close()  # already gone: close is still fine
        await other.close()


async def test_missing_image_and_missing_engine_are_actionable(docker_client):
    with pytest.raises(ImageMissing, match="agentbench sandbox build"):
        await DockerSandbox.create(image="agentbench/missing:nope", client=docker_client)
    dead = docker.DockerClient(base_url="unix:///nonexistent/docker.sock", version="1.41", timeout=2)
    with pytest.raises(DockerUnavailable, match="dockerd") as info:
        connect_docker(dead)
    assert "DOCKER_HOST" in str(info.value)
    with pytest.raises(DockerUnavailable):
        await DockerSandbox.create(client=dead)


async def test_bridge_gateway_is_unreachable(docker_client, sandbox):
    ipam = docker_client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    gateway = ipam.get("Gateway") or str(next(ipaddress.ip_network(ipam["Subnet"]).hosts()))
    # Unreachable at once (a dropped SYN would hang past the 10 s limit instead: timed_out).
    result = await sandbox.exec(f"echo hi > /dev/tcp/{gateway}/80", timeout_s=10)
    assert result.exit_code != 0 and "unreachable" in result.stderr and not result.timed_out


async def test_guard_kills_every_process_of_a_command_even_outside_its_group(sandbox):
    # `timeout` signals its process group; the host-side guard finds escaped processes by a token.
    # (Output redirected: an escapee holding the exec's output delays Docker's next exec by ~2-4 s.)
    await sandbox.exec("export AGENTBENCH_EXEC=tok123; setsid sleep 300 >/dev/null 2>&1 &"
                       " setsid sleep 301 >/dev/null 2>&1 & sleep 0.2")
    before = await sandbox.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    assert "sleep 300" in before.stdout and "sleep 301" in before.stdout
    started = time.monotonic()
    await kill_tagged(sandbox._client.api, sandbox.container_id, "tok123")
    assert time.monotonic() - started < 60  # it did not wait for them (300 s)
    after = await sandbox.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    assert "sleep 300" not in after.stdout and "sleep 301" not in after.stdout


async def _running(sandbox) -> str:
    return (await sandbox.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")).stdout


async def test_cancelling_an_exec_stops_the_command(sandbox):
    command = asyncio.ensure_future(sandbox.exec("sleep 41 & sleep 42; touch finished"))
    # Cancelled once both are running (a cancel during the exec's start-up is another case).
    deadline = time.monotonic() + HANG_S
    seen = await _running(sandbox)
    while not ("sleep 41" in seen and "sleep 42" in seen):
        assert not command.done() and time.monotonic() < deadline, seen
        seen = await _running(sandbox)
    command.cancel()
    with pytest.raises(asyncio.CancelledError):
        await command
    procs = await _running(sandbox)
    assert "sleep 41" not in procs and "sleep 42" not in procs


async def test_cancelling_an_exec_while_docker_starts_it_stops_the_command(sandbox, monkeypatch):
    """A cancel that lands while the exec is being started: the start goes on, the command must not."""
    import threading

    api = sandbox._client.api
    real_start = api.exec_start
    entered, gate = threading.Event(), threading.Event()
    calls = []

    def held_start(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:  # only the command under test; the kill's own exec is not held
            entered.set()
            gate.wait(HANG_S)
        return real_start(*args, **kwargs)

    monkeypatch.setattr(api, "exec_start", held_start)
    command = asyncio.ensure_future(sandbox.exec("sleep 43 & sleep 44; touch finished"))
    assert await asyncio.to_thread(entered.wait, HANG_S), "the exec never reached its start"
    command.cancel()
    await asyncio.sleep(0)  # the cancel is delivered while Docker's start is still held
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await command
    monkeypatch.setattr(api, "exec_start", real_start)
    procs = await _running(sandbox)
    assert "sleep 43" not in procs and "sleep 44" not in procs, procs
    assert (await sandbox.exec("test -e finished")).exit_code != 0


async def test_bad_timeout_is_refused(sandbox):
    with pytest.raises(SandboxError, match="positive"):
        await sandbox.exec("true", timeout_s=0)
