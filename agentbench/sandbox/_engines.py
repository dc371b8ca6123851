"""A Docker engine a run places cells on: connecting to it, its images, and binding sandboxes to it.

Every sandbox operation already goes through the engine API (create, exec, archive copy in and
out; no bind mounts, no host paths), so a remote engine works like the local one. What an engine
needs is its images: :data:`ENGINE_IMAGES` lists them as (tag, builder); :meth:`Engine.provision`
loads each missing one from an engine that has it (``docker save`` streamed into ``docker load``,
so the image id is identical) or builds it there through the API. Other images (a checker image,
agent images) join with :func:`register_engine_image`.

:func:`bind_engine` binds the running task (and the threads it starts) to an engine: every
``DockerSandbox.create()`` without an explicit client inside it, the syntax check's included,
goes to that engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from agentbench.errors import DockerUnavailable, SandboxError

from ._binding import bind_engine, bound_engine
from ._engine_config import EngineConfig
from ._image import IMAGE_TAG, build_image, image_exists

__all__ = [
    "ENGINE_IMAGES",
    "Engine",
    "EngineImage",
    "bind_engine",
    "bound_engine",
    "connect_engine",
    "register_engine_image",
]

log = structlog.get_logger()
Notice = Callable[[str], Any]
PING_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class EngineImage:
    """An image every engine needs before it takes a cell, and how to build it there."""

    tag: str
    build: Callable[[Any, Notice], Any]  # (docker client of the engine, progress lines) -> anything


ENGINE_IMAGES: list[EngineImage] = [EngineImage(IMAGE_TAG, lambda client, notice: build_image(client, log=notice))]


def register_engine_image(tag: str, build: Callable[[Any, Notice], Any]) -> None:
    """Add (or replace) an image every engine must hold; builders run once per engine that lacks it."""
    ENGINE_IMAGES[:] = [i for i in ENGINE_IMAGES if i.tag != tag] + [EngineImage(tag, build)]


def connect_engine(config: EngineConfig, *, timeout: float = 120, pool: int = 32) -> Any:
    """A docker SDK client for this engine, pinged; DockerUnavailable naming the engine otherwise."""
    import docker

    try:
        if config.address is None:
            client = docker.from_env(timeout=timeout, max_pool_size=pool)
        else:
            tls = None
            if config.tls is not None:
                missing = config.tls.missing_files()
                if missing:
                    raise DockerUnavailable(
                        f"{config.label()}: TLS file(s) not found: {', '.join(missing)}. Fix the paths in the "
                        "engine's tls table."
                    )
                from docker.tls import TLSConfig

                t = config.tls
                tls = TLSConfig(client_cert=(str(t.client_cert.expanduser()), str(t.client_key.expanduser())),
                                ca_cert=str(t.ca_cert.expanduser()) if t.ca_cert else None, verify=t.verify)
            client = docker.DockerClient(base_url=config.address, tls=tls or False, timeout=timeout,
                                         max_pool_size=pool, use_ssh_client=config.address.startswith("ssh://"))
        client.ping()
    except DockerUnavailable:
        raise
    except Exception as exc:  # the SDK raises many unrelated types here
        raise DockerUnavailable(_unreachable(config, exc)) from exc
    return client


def _unreachable(config: EngineConfig, exc: BaseException) -> str:
    if config.address is None:
        return (f"Cannot reach the Docker engine ({exc}). Start it with `dockerd &` (as root) or "
                f"`systemctl start docker`, and check DOCKER_HOST (now {config.where}).")
    return (f"{config.label()} does not answer ({exc}). Start dockerd there, fix its address in settings.toml, "
            "or leave it out with --engine.")


class Engine:
    """One engine of a run: its config, an admin client, its image state and its load.

    Sandboxes get a fresh client each (as they always have); the admin client pings, provisions
    images and sweeps. Create it inside the running event loop (it holds asyncio primitives).
    """

    def __init__(self, config: EngineConfig, client: Any | None = None) -> None:
        self.config = config
        self.client = client
        self.active = 0  # cells placed here now
        self.lost: str | None = None  # why the run stopped using it
        self._provisioned = False
        self._provision_lock = asyncio.Lock()
        self._checks = asyncio.Semaphore(config.checks) if config.checks else None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def capacity(self) -> int | None:
        return self.config.sandboxes

    def label(self) -> str:
        return self.config.label()

    def connect(self) -> Any:
        """Connect (blocking) the admin client; DockerUnavailable names the engine."""
        if self.client is None:
            self.client = connect_engine(self.config)
        return self.client

    def new_client(self) -> Any:
        """A fresh pinged client for one sandbox (blocking)."""
        return connect_engine(self.config, pool=10)

    async def alive(self) -> bool:
        """Does the engine answer a ping within PING_TIMEOUT_S?"""
        if self.client is None:
            return False
        api = self.client.api
        try:
            await asyncio.to_thread(api._result, api._get(api._url("/_ping"), timeout=PING_TIMEOUT_S))
        except Exception:  # noqa: BLE001 - any failure to answer is "not alive"
            return False
        return True

    def check_slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """Held while one cell's checks run on this engine (``checks`` at once)."""
        return self._checks if self._checks is not None else contextlib.nullcontext()

    async def provision(self, sources: list[Engine], notice: Notice, extra: list[EngineImage] | None = None) -> None:
        """Make sure every ENGINE_IMAGES image (and extra) is here, once per engine (concurrent callers wait)."""
        if self._provisioned:
            return
        async with self._provision_lock:
            if not self._provisioned:
                await asyncio.to_thread(self._provision_blocking, sources, notice, list(extra or []))
                self._provisioned = True

    def _provision_blocking(self, sources: list[Engine], notice: Notice, extra: list[EngineImage]) -> None:
        client = self.connect()
        client.api.timeout = 600  # a load or build answers between layers, which may be minutes apart
        for image in list(ENGINE_IMAGES) + extra:
            if image_exists(client, image.tag):
                continue
            source = next((s for s in sources if s is not self and _has(s, image.tag)), None)
            started = time.monotonic()
            if source is not None:
                notice(f"engine {self.name}: loading {image.tag} from engine {source.name} (first use)...")
                transfer_image(source.client, client, image.tag)
                how = f"loaded from engine {source.name}"
            else:
                notice(f"engine {self.name}: building {image.tag} through its API (first use; may take minutes)...")
                image.build(client, notice)
                how = "built"
            if not image_exists(client, image.tag):
                raise SandboxError(f"{self.label()}: {image.tag} is still missing after it was {how}.")
            took = time.monotonic() - started
            notice(f"engine {self.name}: {image.tag} {how} in {took:.1f} s.")
            log.info("engine.image_ready", engine=self.name, image=image.tag, how=how, s=round(took, 2))


def _has(engine: Engine, tag: str) -> bool:
    if engine.client is None or engine.lost is not None:
        return False
    try:
        return image_exists(engine.client, tag)
    except Exception:  # noqa: BLE001 - a source that fails to answer is no source
        return False


def transfer_image(source: Any, dest: Any, tag: str) -> None:
    """Stream ``docker save`` of tag on source into ``docker load`` on dest (never on disk here)."""
    import docker

    try:
        image = source.images.get(tag)
        dest.images.load(image.save(named=tag))
    except docker.errors.DockerException as exc:
        raise SandboxError(f"Moving {tag} between engines failed: {exc}") from exc
    loaded = dest.images.get(tag)
    if loaded.id != image.id:
        raise SandboxError(f"{tag} arrived as {loaded.short_id}, not {image.short_id}; load it by hand.")
