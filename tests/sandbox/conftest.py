"""Sandbox backends under test, and the image they need (built once per session if missing)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from agentbench.sandbox import (
    IMAGE_TAG,
    DockerSandbox,
    Sandbox,
    SandboxLimits,
    build_image,
    image_exists,
    sweep_containers,
)

# Containers made by this test session carry this label, so teardown sweeps ours and nobody else's.
SESSION_LABEL = {"agentbench.test": uuid.uuid4().hex[:12]}
TEST_LIMITS = SandboxLimits(exec_timeout_s=30)


@pytest.fixture(scope="session")
def sandbox_image(docker_client: Any) -> str:
    if not image_exists(docker_client, IMAGE_TAG):
        build_image(docker_client, log=lambda _msg: None)
    yield IMAGE_TAG
    sweep_containers(docker_client, labels=SESSION_LABEL)


@pytest.fixture(scope="session")
def session_label() -> dict[str, str]:
    """Labels every test container carries (swept at session end)."""
    return dict(SESSION_LABEL)


@dataclass
class Backend:
    """What the conformance suite needs from a backend beyond the Sandbox ABC."""

    name: str
    create: Callable[..., Awaitable[Sandbox]]
    exists: Callable[[Sandbox], bool]  # is the sandbox still there (e.g. its container)?
    pids_in_use: Callable[[Sandbox], tuple[int, int]]  # (current, limit), read from outside


def _docker_backend(client: Any) -> Backend:
    import docker

    async def create(limits: SandboxLimits = TEST_LIMITS) -> Sandbox:
        return await DockerSandbox.create(limits=limits, labels=SESSION_LABEL, client=client)

    def exists(sandbox: Sandbox) -> bool:
        try:
            client.containers.get(sandbox.container_id)
        except docker.errors.NotFound:
            return False
        return True

    def pids_in_use(sandbox: Sandbox) -> tuple[int, int]:
        stats = client.api.stats(sandbox.container_id, stream=False)["pids_stats"]
        return int(stats["current"]), int(stats["limit"])

    return Backend("docker", create, exists, pids_in_use)


@pytest.fixture(params=["docker"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "docker":
        request.getfixturevalue("sandbox_image")
        return _docker_backend(request.getfixturevalue("docker_client"))
    raise AssertionError(f"unknown backend {request.param}")


@pytest.fixture
async def make_sandbox(backend: Backend) -> AsyncIterator[Callable[..., Awaitable[Sandbox]]]:
    """Create sandboxes (optionally with limits); all are closed at teardown."""
    made: list[Sandbox] = []

    async def make(**kwargs: Any) -> Sandbox:
        sandbox = await backend.create(**kwargs)
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        await sandbox.close()


@pytest.fixture
async def sandbox(make_sandbox: Callable[..., Awaitable[Sandbox]]) -> Sandbox:
    return await make_sandbox()
