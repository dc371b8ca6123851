"""Agent sandbox images: one layer per external agent on ``agentbench/web``, built offline.

``sandboxes/agent-<name>/Dockerfile`` is built with ``--network none``: everything it installs is
fetched on the host first, through the registries' own clients, into a temporary build context:

* ``debs/``: the Debian packages the web image lacks, with their dependencies. The list is worked
  out by ``apt-get install --print-uris`` in a throwaway container of the web image (network none,
  the host's apt lists mounted read-only), then fetched with ``apt-get download`` on the host.
* the agent itself (``npm pack``, ``pip download``, or a binary the user provides), by the
  adapter's ``fetch``.
* ``forwarder.js``, the sandbox end of the model gateway.

The tag carries the pinned version and a digest of the inputs (Dockerfile, forwarder, base image
id): ``agentbench/agent-opencode:1.18.33-3f2a9c01de``. An image that exists is reused, so each
version is built once per engine and base.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from ..config import project_root
from ..errors import SandboxError
from ..sandbox._owner import container_labels

__all__ = ["AgentImage", "build_agent_image", "ensure_agent_image", "run_tool"]

log_ = structlog.get_logger()
Log = Callable[[str], Any]
FORWARDER = Path(__file__).with_name("forwarder.js")


@dataclass(frozen=True)
class AgentImage:
    """How to build one agent's image: its pinned version, Debian packages and payload fetcher."""

    name: str
    version: str
    debs: tuple[str, ...] = ()
    fetch: Callable[[Path, Log], None] | None = None  # puts the agent's payload into the context
    buildargs: dict[str, str] = field(default_factory=dict)

    @property
    def repository(self) -> str:
        return f"agentbench/agent-{self.name}"

    def tag_for(self, base_id: str) -> str:
        """``agentbench/agent-NAME:VERSION-DIGEST``: the digest covers what the image is made of.

        The Dockerfile, the forwarder and the base image's id: a new base (the web image rebuilt)
        or a changed Dockerfile gets a new image instead of reusing a stale one; the pinned
        version is in the tag itself, so the same inputs are built once per engine.
        """
        digest = hashlib.sha256()
        for part in ((self.dockerfile_dir / "Dockerfile").read_bytes(), FORWARDER.read_bytes(),
                     base_id.encode(), self.version.encode(), repr(sorted(self.debs)).encode()):
            digest.update(hashlib.sha256(part).digest())
        return f"{self.repository}:{self.version}-{digest.hexdigest()[:10]}"

    @property
    def dockerfile_dir(self) -> Path:
        return project_root() / "sandboxes" / f"agent-{self.name}"


def run_tool(argv: list[str], *, cwd: Path, what: str, timeout_s: float = 900) -> str:
    """Run a host tool (npm, pip, apt-get) and return its stdout; SandboxError with its tail if it fails."""
    if shutil.which(argv[0]) is None:
        raise SandboxError(f"{what} needs `{argv[0]}` on the host; install it (scripts/setup.sh does).")
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"{what}: `{' '.join(argv[:3])} ...` took over {timeout_s:.0f} s.") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-12:])
        raise SandboxError(f"{what}: `{' '.join(argv[:4])} ...` failed (exit {proc.returncode}):\n{tail}")
    return proc.stdout


def _missing_debs(client: Any, base: str, packages: tuple[str, ...]) -> list[str]:
    """``name=version`` of every package (dependencies included) the base image lacks."""
    if not packages:
        return []
    script = f"apt-get install -y --no-install-recommends --print-uris -qq {' '.join(packages)}"
    try:
        out = client.containers.run(
            base, ["bash", "-c", script], user="0", network_mode="none", remove=True,
            labels=container_labels(kind="apt-plan"),  # left behind by a crash: swept by owner
            volumes={"/var/lib/apt/lists": {"bind": "/var/lib/apt/lists", "mode": "ro"},
                     "/etc/apt": {"bind": "/etc/apt", "mode": "ro"}},
        )
    except Exception as exc:  # noqa: BLE001 - docker raises several types; all mean the same here
        raise SandboxError(
            f"Working out the Debian packages for {', '.join(packages)} failed: {exc}. "
            "Run `apt-get update` on the host so its package lists are current."
        ) from exc
    wanted = []
    for line in out.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].endswith(".deb"):
            name, version, _arch = parts[1][: -len(".deb")].split("_")
            wanted.append(f"{name}={urllib.parse.unquote(version)}")
    return wanted


def build_agent_image(image: AgentImage, client: Any, *, base: str, tag: str, log: Log = print) -> str:
    """Fetch the payload on the host, then build the agent's Dockerfile on base as tag, with no network."""
    import docker

    if not (image.dockerfile_dir / "Dockerfile").is_file():
        raise SandboxError(f"No Dockerfile at {image.dockerfile_dir}; run from an agentbench checkout.")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"agentbench-agent-{image.name}-", dir="/var/tmp") as tmp:
        ctx = Path(tmp)
        shutil.copy2(image.dockerfile_dir / "Dockerfile", ctx / "Dockerfile")
        shutil.copyfile(FORWARDER, ctx / "forwarder.js")
        (ctx / "forwarder.js").chmod(0o644)
        (ctx / "debs").mkdir()
        debs = _missing_debs(client, base, image.debs)
        if debs:
            log(f"Fetching {len(debs)} Debian package(s) for {tag}: {', '.join(image.debs)} and dependencies")
            run_tool(["apt-get", "download", "-q", *debs], cwd=ctx / "debs",
                     what=f"Fetching Debian packages for {tag}")
        if image.fetch is not None:
            image.fetch(ctx, log)
        fetch_s = time.monotonic() - started
        log(f"Building {tag} on {base} (network none)...")
        lines: list[str] = []
        try:
            for chunk in client.api.build(path=str(ctx), tag=tag, network_mode="none", rm=True,
                                          forcerm=True, decode=True,
                                          buildargs={"BASE": base, "VERSION": image.version, **image.buildargs}):
                if "error" in chunk:
                    raise SandboxError(f"Building {tag} failed: {chunk['error'].strip()}\n{''.join(lines[-15:])}")
                if chunk.get("stream"):
                    lines.append(chunk["stream"])
        except docker.errors.APIError as exc:
            raise SandboxError(f"Building {tag} failed: {exc}") from exc
    size_mb = client.images.get(tag).attrs.get("Size", 0) / 1e6
    total_s = time.monotonic() - started
    log(f"Built {tag} in {total_s:.0f} s (fetch {fetch_s:.0f} s), {size_mb:.0f} MB.")
    log_.info("agent.image_built", tag=tag, fetch_s=round(fetch_s, 1), total_s=round(total_s, 1),
              size_mb=round(size_mb))
    return tag


def ensure_agent_image(image: AgentImage, client: Any | None = None, *, log: Log = print) -> str:
    """The agent's image tag, built first when this engine lacks it (the web image must exist)."""
    from ..sandbox import IMAGE_TAG, connect_docker, ensure_image, image_exists
    from ..sandbox._image import _build_lock

    client = connect_docker(client)
    ensure_image(client)
    if not (image.dockerfile_dir / "Dockerfile").is_file():
        raise SandboxError(f"No Dockerfile at {image.dockerfile_dir}; run from an agentbench checkout.")
    tag = image.tag_for(client.images.get(IMAGE_TAG).id)
    if image_exists(client, tag):
        return tag
    with _build_lock():  # two runs (or test sessions) wanting it at once build it once
        if image_exists(client, tag):
            return tag
        log(f"First use of the {image.name} agent on this engine: building its image {tag} "
            f"(once per version; about a minute, more on a slow network).")
        return build_agent_image(image, client, base=IMAGE_TAG, tag=tag, log=log)
