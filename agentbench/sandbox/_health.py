"""Was a lost sandbox the agent's doing or the infrastructure's? Decided independently.

An agent's command may stop its own sandbox (before the init ran as another uid, ``kill -9 -1``
did; memory can still do it). That is a model outcome. An engine that stopped answering, or a
container removed from outside, is the infrastructure's. :func:`ended_from_inside` tells them
apart by asking the infrastructure itself: the engine answers, the sandbox's container is still
there but no longer running, and a fresh probe container starts and runs a command. Only then
is the loss the agent's; anything else (or any doubt) stays an infrastructure error.
"""

from __future__ import annotations

from typing import Any

import structlog

from agentbench.errors import AgentbenchError, DockerUnavailable, ImageMissing, SandboxError

from ._base import Sandbox

__all__ = ["docker_sandbox_ended", "ended_from_inside"]

log = structlog.get_logger()


async def ended_from_inside(sandbox: Sandbox, error: BaseException) -> str | None:
    """Why ``sandbox`` stopped, when its own commands stopped it; None when the infrastructure may be to blame.

    ``error`` is what the failed operation raised: an engine lost or an image missing is never
    the agent's doing.
    """
    if isinstance(error, (DockerUnavailable, ImageMissing)) or not isinstance(error, SandboxError):
        return None
    try:
        why = await sandbox.ended_from_inside()
    except Exception as exc:  # noqa: BLE001 - a probe that fails leaves the infrastructure in doubt
        log.warning("sandbox.health_unknown", error=str(exc))
        return None
    if why is not None:
        log.info("sandbox.ended_from_inside", reason=why, error=str(error))
    return why


async def docker_sandbox_ended(box: Any, client: Any, container: Any) -> str | None:
    """``DockerSandbox.ended_from_inside``: its container exists, stopped, and the engine is sound.

    Sound means: the engine answers a ping and a fresh probe container (the web image, the same
    limits, labelled as a probe) starts and runs ``true``. A container that is gone was removed
    from outside (the agent cannot remove it): infrastructure.
    """
    import asyncio

    import docker
    import requests

    try:
        await asyncio.to_thread(client.ping)
        await asyncio.to_thread(container.reload)
    except (docker.errors.DockerException, requests.exceptions.RequestException):
        return None  # gone (NotFound) or the engine does not answer
    state = container.attrs.get("State") or {}
    if state.get("Running") and not state.get("Restarting"):
        return None  # it runs: whatever failed, it was not the sandbox stopping
    probe = None
    try:
        probe = await type(box).create(limits=box.limits, client=client,
                                       labels={"agentbench.probe": container.short_id})
        alive = (await probe.exec("true", timeout_s=30)).ok
    except AgentbenchError:
        return None
    finally:
        if probe is not None:
            await probe.close()
    if not alive:
        return None
    how = "out of memory: the kernel killed it" if state.get("OOMKilled") else f"exit code {state.get('ExitCode')}"
    return (f"the sandbox stopped during the agent's session ({how}) while the engine answered and a fresh "
            "container started: the agent's own commands ended it")
