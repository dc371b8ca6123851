"""The engine side: connect to Docker, build ``agentbench/web`` (offline when need be), sweep leftovers.

``build_image`` first tries ``sandboxes/web/Dockerfile`` with its default base. Where that base
cannot be pulled (no registry reachable, as on offline machines), it bootstraps a Debian base
from the host's apt mirror with ``debootstrap`` (node included), imports it as
``agentbench/base:bookworm`` and builds the same Dockerfile on top of it without network.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import structlog

from agentbench.errors import DockerUnavailable, ImageMissing, SandboxError

from ._users import SANDBOX_UID

__all__ = [
    "BASE_TAG",
    "IMAGE_TAG",
    "SANDBOX_LABEL",
    "build_image",
    "connect_docker",
    "dockerfile_dir",
    "ensure_image",
    "image_exists",
    "sweep_containers",
]

# The tag names the uid its `agent` user has, so an image built for another uid (uid 1000 before)
# is never reused: its user would not match the uid the code runs commands as.
IMAGE_TAG = f"agentbench/web:u{SANDBOX_UID}"
BASE_TAG = "agentbench/base:bookworm"
SANDBOX_LABEL = "agentbench"  # every sandbox container carries agentbench=1
DEFAULT_MIRROR = "http://deb.debian.org/debian"
SUITE = "bookworm"

log_ = structlog.get_logger()
Log = Callable[[str], Any]


def connect_docker(client: Any | None = None) -> Any:
    """Return a live docker SDK client (the one given, the bound engine's, or one from the environment).

    Raises DockerUnavailable, saying how to start an engine, when none answers.
    """
    import docker

    if client is None:
        from ._binding import bound_engine

        engine = bound_engine()
        if engine is not None:  # inside a cell placed on an engine: its sandboxes go there
            return engine.new_client()
    try:
        client = client or docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:  # the SDK raises many unrelated types here
        host = os.environ.get("DOCKER_HOST", "unset, so unix:///var/run/docker.sock")
        raise DockerUnavailable(
            f"Cannot reach the Docker engine ({exc}). Start it with `dockerd &` (as root) or "
            f"`systemctl start docker`, and check DOCKER_HOST (now {host})."
        ) from exc
    return client


def image_exists(client: Any, tag: str = IMAGE_TAG) -> bool:
    """True when the engine has an image with this tag."""
    import docker

    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as exc:
        raise SandboxError(f"Docker could not look up image {tag}: {exc}") from exc
    return True


def ensure_image(client: Any | None = None, tag: str = IMAGE_TAG) -> None:
    """Raise ImageMissing (with the command that builds it) unless the image exists."""
    client = connect_docker(client)
    if not image_exists(client, tag):
        raise ImageMissing(f"The sandbox image {tag} is not built: run `agentbench sandbox build`.")


def dockerfile_dir() -> Path:
    """The folder holding the sandbox Dockerfile (``AGENTBENCH_SANDBOX_DIR`` overrides it)."""
    override = os.environ.get("AGENTBENCH_SANDBOX_DIR")
    path = Path(override) if override else Path(__file__).resolve().parents[2] / "sandboxes" / "web"
    if not (path / "Dockerfile").is_file():
        raise SandboxError(
            f"No Dockerfile at {path}; run from an agentbench checkout or set AGENTBENCH_SANDBOX_DIR "
            "to the folder holding sandboxes/web/Dockerfile."
        )
    return path


def build_image(
    client: Any | None = None,
    *,
    tag: str = IMAGE_TAG,
    log: Log = print,
    pull_timeout_s: float = 60.0,
    mirror: str | None = None,
) -> str:
    """Build the sandbox image and return its tag.

    Uses the Dockerfile's default base when it is present or can be pulled within
    ``pull_timeout_s``; otherwise bootstraps (or reuses) ``agentbench/base:bookworm``.
    Concurrent builds on one host are serialised by a lock file.
    """
    client = connect_docker(client)
    context = dockerfile_dir()
    default_base = _default_base(context / "Dockerfile")
    with _build_lock():
        if image_exists(client, default_base) or _pull(client, default_base, pull_timeout_s, log):
            _docker_build(client, context, tag, buildargs={}, network_mode=None, log=log)
            return tag
        if image_exists(client, BASE_TAG):
            log(f"Reusing the bootstrapped base {BASE_TAG}.")
        else:
            bootstrap_base(client, mirror=mirror or apt_mirror(), log=log)
        _docker_build(client, context, tag, buildargs={"BASE": BASE_TAG}, network_mode="none", log=log)
    return tag


def _default_base(dockerfile: Path) -> str:
    match = re.search(r"^ARG\s+BASE=(\S+)", dockerfile.read_text(), re.MULTILINE)
    return match.group(1) if match else "debian:bookworm-slim"


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    # Two test sessions (or two CLI calls) must not bootstrap or tag the image at once.
    path = Path(tempfile.gettempdir()) / "agentbench-image-build.lock"
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pull(client: Any, image: str, timeout_s: float, log: Log) -> bool:
    """Pull image within timeout_s; False when it cannot be had (no registry, unknown name)."""
    repo, sep, ref = image.rpartition(":")
    if not sep or "/" in ref:  # no tag, or the colon was a registry port
        repo, ref = image, "latest"
    outcome: dict[str, Any] = {}

    def pull() -> None:
        try:
            client.images.pull(repo, tag=ref)
            outcome["ok"] = True
        except Exception as exc:  # noqa: BLE001 - any failure means "fall back to bootstrap"
            outcome["error"] = exc

    log(f"Pulling {image} (at most {timeout_s:.0f} s)...")
    # A daemon thread bounds the wait: a pull stuck on an unreachable registry is abandoned.
    worker = threading.Thread(target=pull, daemon=True, name="agentbench-pull")
    worker.start()
    worker.join(timeout_s)
    if outcome.get("ok"):
        return True
    reason = outcome.get("error", f"no answer within {timeout_s:.0f} s")
    log(f"Cannot pull {image} ({reason}); building a base from Debian packages instead.")
    return False


def apt_mirror(apt_dir: Path = Path("/etc/apt"), suite: str = SUITE) -> str | None:
    """The host's Debian mirror for ``suite`` (deb822 or one-line sources), or the default.

    For a suite other than bookworm, None when the host's sources do not list it.
    """
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text(errors="replace")):
            fields = dict(
                line.split(":", 1) for line in stanza.splitlines() if ":" in line and not line.startswith("#")
            )
            fields = {k.strip(): v.strip() for k, v in fields.items()}
            uris, suites = fields.get("URIs", "").split(), fields.get("Suites", "").split()
            if uris and suite in suites and "deb" in fields.get("Types", "deb").split():
                return uris[0]
    for path in [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]:
        if not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            match = re.match(rf"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+{re.escape(suite)}\s", line.strip() + " ")
            if match:
                return match.group(1)
    return DEFAULT_MIRROR if suite == SUITE else None


def bootstrap_base(client: Any, *, mirror: str = DEFAULT_MIRROR, log: Log = print, tag: str = BASE_TAG,
                   include: tuple[str, ...] = ("nodejs",),
                   prepare: Callable[[Path, Log], None] | None = None) -> str:
    """debootstrap a minimal bookworm with ``include`` and import it as ``tag``. Needs root.

    ``prepare(rootfs, log)`` runs on the bootstrapped tree before it is packed (the checker
    base installs packages from the security suite there).
    """
    if shutil.which("debootstrap") is None:
        raise SandboxError(
            "No registry is reachable and debootstrap is missing: `apt-get install debootstrap`, "
            "or build sandboxes/web/Dockerfile where its base image can be pulled."
        )
    if os.geteuid() != 0:
        raise SandboxError("Bootstrapping the sandbox base needs root (debootstrap); rerun as root.")
    workdir = Path(tempfile.mkdtemp(prefix="agentbench-base-", dir="/var/tmp"))
    root = workdir / "rootfs"
    try:
        log(f"Bootstrapping Debian {SUITE} with {', '.join(include)} from {mirror} (a few minutes)...")
        started = time.monotonic()
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(include)}", SUITE, str(root), mirror]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
            raise SandboxError(f"debootstrap failed (exit {proc.returncode}) using mirror {mirror}:\n{tail}")
        if prepare is not None:
            prepare(root, log)
        bootstrap_s = time.monotonic() - started
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (root / junk).glob("*"):
                if item.is_file():
                    item.unlink()
        started = time.monotonic()
        tarball = workdir / "rootfs.tar"
        subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(tarball), "."], check=True)
        repo, _, ref = tag.partition(":")
        client.api.import_image_from_file(
            str(tarball),
            repository=repo,
            tag=ref,
            changes=[
                "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "ENV LANG=C.UTF-8",
                'CMD ["bash"]',
            ],
        )
        import_s = time.monotonic() - started
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"debootstrap from {mirror} took over 30 minutes; check the mirror.") from exc
    except subprocess.CalledProcessError as exc:
        raise SandboxError(f"Packing the bootstrapped base failed: {exc}") from exc
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    log(f"Base {tag} ready: debootstrap {bootstrap_s:.0f} s, tar + import {import_s:.0f} s.")
    log_.info("sandbox.base_bootstrapped", tag=tag, bootstrap_s=bootstrap_s, import_s=import_s)
    return tag


def _docker_build(
    client: Any, context: Path, tag: str, *, buildargs: dict[str, str], network_mode: str | None, log: Log
) -> None:
    import docker

    log(f"Building {tag} from {context / 'Dockerfile'}" + (f" on {buildargs['BASE']}" if buildargs else ""))
    started = time.monotonic()
    lines: list[str] = []
    try:
        stream = client.api.build(
            path=str(context),
            tag=tag,
            buildargs=buildargs,
            network_mode=network_mode,
            rm=True,
            forcerm=True,
            decode=True,
        )
        for chunk in stream:
            if "error" in chunk:
                tail = "".join(lines[-15:])
                raise SandboxError(f"Building {tag} failed: {chunk['error'].strip()}\n{tail}")
            text = chunk.get("stream", "")
            if text:
                lines.append(text)
    except docker.errors.APIError as exc:
        raise SandboxError(f"Building {tag} failed: {exc}") from exc
    build_s = time.monotonic() - started
    log(f"Built {tag} in {build_s:.1f} s.")
    log_.info("sandbox.image_built", tag=tag, build_s=build_s, base=buildargs.get("BASE", "default"))


def sweep_containers(client: Any | None = None, *, older_than_s: float = 0.0,
                     labels: dict[str, str] | None = None) -> list[str]:
    """Remove leftover sandbox containers (label ``agentbench=1``) created over older_than_s ago.

    Other runs on the same engine own live sandboxes too: pass older_than_s (or extra labels)
    to spare them. Returns the short ids removed.
    """
    import docker

    client = connect_docker(client)
    wanted = [f"{SANDBOX_LABEL}=1", *(f"{k}={v}" for k, v in (labels or {}).items())]
    removed = []
    now = time.time()
    try:
        # ignore_removed: a container removed by its owner between the listing and the look at it is skipped.
        for container in client.containers.list(all=True, filters={"label": wanted}, ignore_removed=True):
            created = float(container.labels.get(f"{SANDBOX_LABEL}.created", "0") or 0)
            if now - created >= older_than_s:
                try:
                    container.remove(force=True, v=True)
                except docker.errors.NotFound:
                    continue  # removed meanwhile (its owner closed it)
                removed.append(container.short_id)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"Sweeping sandbox containers failed: {exc}") from exc
    return removed
