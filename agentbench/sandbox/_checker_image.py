"""The checker image: headless Chromium + python3 + the browser check code, built offline when need be.

Three layers, each rebuilt only when its input changes:

- ``agentbench/checker-base:bookworm-<hash>`` (offline hosts only): debootstrap of bookworm with python3,
  pip and fonts, ``chromium-headless-shell`` installed from bookworm-security in the tree.
- ``agentbench/checker-runtime:u<CHECKER_UID>``: ``sandboxes/checker/Dockerfile`` on that base (or on the
  Dockerfile's default base where a registry answers), with the Python packages installed from
  wheels downloaded on the host. Its label ``agentbench.checker.recipe`` is a hash of the Dockerfile
  and the pinned requirements: an unchanged recipe is not rebuilt.
- ``agentbench/checker:<hash>``: the runtime plus the check code (the package files the browser
  checks import, and the ``.py``/``.js`` files of any other top-level packages the caller names:
  plug-in tasks' probes, see ``checks/_tasks.py``), built from an in-memory context through the
  engine API, so it works the same on a remote engine. The tag is a hash of that code and the
  runtime's id: a code change builds one new small layer (seconds) the first time it is checked.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import io
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import structlog

from agentbench.errors import ImageMissing, SandboxError

from . import _image
from ._image import Log, apt_mirror, bootstrap_base, connect_docker, image_exists
from ._users import CHECKER_UID

__all__ = [
    "CHECKER_BASE_TAG",
    "CHECKER_REPO",
    "CHECKER_RUNTIME_TAG",
    "build_checker_image",
    "checker_code_files",
    "checker_tag",
    "ensure_checker_image",
    "package_files",
]

# Named by the uid its `checker` user has: a runtime built for another uid is never reused.
CHECKER_RUNTIME_TAG = f"agentbench/checker-runtime:u{CHECKER_UID}"
CHECKER_REPO = "agentbench/checker"
RECIPE_LABEL = "agentbench.checker.recipe"
# libatomic1: playwright's bundled node needs it.
BASE_PACKAGES = ("python3", "python3-pip", "libatomic1", "fonts-dejavu-core", "fonts-dejavu-extra")
SECURITY_PACKAGES = ("chromium-headless-shell",)
# A changed package list is a new base (bootstrapped once), never a stale one reused.
CHECKER_BASE_TAG = "agentbench/checker-base:bookworm-" + hashlib.sha256(
    " ".join(BASE_PACKAGES + SECURITY_PACKAGES).encode()).hexdigest()[:8]
PY_PACKAGES = ("playwright", "pydantic", "structlog")
# The package modules `import agentbench.checks.browser` loads, besides agentbench/checks/ itself
# (tests/checks/test_checker_image.py fails, naming the module, when this list falls behind).
CODE_MODULES = ("__init__.py", "_files.py", "errors.py", "config.py", "names.py", "tasks.py")
CODE_SUFFIXES = (".py", ".js")  # what is baked of a package: its modules and the scripts they load
MAX_PACKAGE_FILES = 2000  # an outside package baked into the code layer: the probes of a plug-in, not a library
MAX_PACKAGE_BYTES = 32 * 2**20

log_ = structlog.get_logger()
_PACKAGE = Path(__file__).resolve().parents[1]


def _checker_dir() -> Path:
    path = _PACKAGE.parent / "sandboxes" / "checker"
    if not (path / "Dockerfile").is_file():
        raise SandboxError(f"No checker Dockerfile at {path}; run from an agentbench checkout.")
    return path


def _code_in(root: Path, prefix: str) -> list[tuple[str, Path]]:
    return [(f"{prefix}/{path.relative_to(root).as_posix()}", path) for path in sorted(root.rglob("*"))
            if path.is_file() and path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts]


def package_files(module: str) -> list[tuple[str, Path]]:
    """(name in the image, file): the ``.py`` and ``.js`` files of the top-level package holding
    ``module`` (found on this host without importing it), to be importable in the checker too.

    ``agentbench`` itself gives nothing (its check code is always baked). A module that cannot be
    found, is not plain Python source, or a package past MAX_PACKAGE_FILES / MAX_PACKAGE_BYTES is a
    SandboxError naming it.
    """
    top = module.split(".")[0]
    if top == _PACKAGE.name:
        return []
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError) as exc:
        spec, why = None, f": {exc}"
    else:
        why = ""
    if spec is None:
        raise SandboxError(f"The package '{top}' (of {module}) is not importable on this host{why}, so it cannot "
                           "be copied into the checker image. Install it (pip install ...) first.")
    if spec.submodule_search_locations:
        files = [f for root in spec.submodule_search_locations for f in _code_in(Path(root), top)]
    elif spec.origin and spec.origin.endswith(".py"):
        files = [(f"{top}.py", Path(spec.origin))]
    else:
        raise SandboxError(f"'{top}' (of {module}) is not Python source ({spec.origin}); only .py and .js "
                           "files are copied into the checker image.")
    size = sum(path.stat().st_size for _, path in files)
    if len(files) > MAX_PACKAGE_FILES or size > MAX_PACKAGE_BYTES:
        raise SandboxError(f"The package '{top}' (of {module}) has {len(files)} code files, {size // 2**20} MiB: "
                           f"over the {MAX_PACKAGE_FILES} files / {MAX_PACKAGE_BYTES // 2**20} MiB copied into the "
                           "checker image. Put the probes in a small package of their own.")
    return files


def checker_code_files(modules: Iterable[str] = ()) -> list[tuple[str, Path]]:
    """(name in the image, file) of the check code baked into the checker image, sorted: agentbench's
    and that of the top-level packages holding ``modules`` (see :func:`package_files`)."""
    files = [(f"agentbench/{name}", _PACKAGE / name) for name in CODE_MODULES]
    files += _code_in(_PACKAGE / "checks", "agentbench/checks")
    for module in sorted(set(modules)):
        files += package_files(module)
    return sorted(dict(files).items())


def checker_tag(client: Any, modules: Iterable[str] = ()) -> str:
    """The tag of the checker image for this code on this runtime (raises ImageMissing without one)."""
    runtime = _runtime_id(client)
    digest = hashlib.sha256(runtime.encode())
    for name, path in checker_code_files(modules):
        digest.update(f"\0{name}\0".encode())
        digest.update(path.read_bytes())
    return f"{CHECKER_REPO}:{digest.hexdigest()[:16]}"


def _runtime_id(client: Any) -> str:
    import docker

    try:
        return client.images.get(CHECKER_RUNTIME_TAG).id
    except docker.errors.ImageNotFound:
        raise ImageMissing(f"The checker image {CHECKER_RUNTIME_TAG} is not built: run "
                           "`agentbench sandbox build` (browser checks run in it).") from None
    except docker.errors.APIError as exc:
        raise SandboxError(f"Docker could not look up image {CHECKER_RUNTIME_TAG}: {exc}") from exc


def ensure_checker_image(client: Any | None = None, *, log: Log = lambda _msg: None,
                         modules: Iterable[str] = ()) -> str:
    """The checker image tag for the current code, building its code layer when it is new.

    ``modules``: modules outside agentbench the worker must import (a plug-in task's probes): their
    top-level packages are baked in beside agentbench's check code, and count in the tag.
    """
    client = connect_docker(client)
    modules = sorted(set(modules))
    tag = checker_tag(client, modules)
    if image_exists(client, tag):
        return tag
    with _image._build_lock():
        if not image_exists(client, tag):
            _build_code_layer(client, tag, log, modules)
    return tag


def build_checker_image(client: Any | None = None, *, log: Log = print, pull_timeout_s: float = 60.0,
                        mirror: str | None = None) -> str:
    """Build (or keep, when up to date) the runtime, then the code layer; returns the checker tag."""
    client = connect_docker(client)
    started = time.monotonic()
    with _image._build_lock():
        _build_runtime(client, log=log, pull_timeout_s=pull_timeout_s, mirror=mirror)
    tag = ensure_checker_image(client, log=log)
    log(f"Checker image {tag} ready in {time.monotonic() - started:.1f} s.")
    return tag


def _requirements() -> str:
    lines = []
    for name in PY_PACKAGES:
        try:
            lines.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            raise SandboxError(f"{name} is not installed on this host: `pip install -e .` first") from None
    return "\n".join(lines) + "\n"


def _recipe(dockerfile: bytes, requirements: str) -> str:
    return hashlib.sha256(dockerfile + b"\0" + requirements.encode() + platform.machine().encode()).hexdigest()[:16]


def _build_runtime(client: Any, *, log: Log, pull_timeout_s: float, mirror: str | None) -> None:
    folder = _checker_dir()
    dockerfile = (folder / "Dockerfile").read_bytes()
    requirements = _requirements()
    recipe = _recipe(dockerfile, requirements)
    if image_exists(client, CHECKER_RUNTIME_TAG):
        labels = client.images.get(CHECKER_RUNTIME_TAG).labels or {}
        if labels.get(RECIPE_LABEL) == recipe:
            log(f"{CHECKER_RUNTIME_TAG} is up to date.")
            return
    default_base = _image._default_base(folder / "Dockerfile")
    if image_exists(client, default_base) or _image._pull(client, default_base, pull_timeout_s, log):
        buildargs, network = {}, None
    else:
        if image_exists(client, CHECKER_BASE_TAG):
            log(f"Reusing the bootstrapped base {CHECKER_BASE_TAG}.")
        else:
            _bootstrap_checker_base(client, mirror=mirror or apt_mirror() or _image.DEFAULT_MIRROR, log=log)
        buildargs, network = {"BASE": CHECKER_BASE_TAG}, "none"
    context = Path(tempfile.mkdtemp(prefix="agentbench-checker-ctx-", dir="/var/tmp"))
    try:
        shutil.copy(folder / "Dockerfile", context / "Dockerfile")
        (context / "requirements.txt").write_text(requirements)
        _download_wheels(context / "requirements.txt", context / "wheels", log)
        (context / "Dockerfile").write_bytes(dockerfile + f'\nLABEL {RECIPE_LABEL}="{recipe}"\n'.encode())
        _image._docker_build(client, context, CHECKER_RUNTIME_TAG, buildargs=buildargs, network_mode=network,
                             log=log)
    finally:
        shutil.rmtree(context, ignore_errors=True)


def _download_wheels(requirements: Path, dest: Path, log: Log) -> None:
    """pip download the wheels for the image's python (3.11, glibc 2.36) into dest."""
    dest.mkdir()
    machine = platform.machine()
    platforms = [f"manylinux_2_{minor}_{machine}" for minor in range(17, 37)]
    platforms += [f"manylinux2014_{machine}", f"manylinux1_{machine}"]
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
           "--dest", str(dest), "-r", str(requirements)]
    for tag in platforms:
        cmd += ["--platform", tag]
    log("Downloading the checker's Python wheels (pip download)...")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-12:])
        raise SandboxError(f"pip download of the checker's wheels failed (exit {proc.returncode}); the "
                           f"package index must be reachable for the first build:\n{tail}")


def _bootstrap_checker_base(client: Any, *, mirror: str, log: Log) -> None:
    security = apt_mirror(suite=f"{_image.SUITE}-security") or mirror.replace("/debian", "/debian-security")

    def install_security(root: Path, log: Log) -> None:
        # debootstrap reads one suite; chromium-headless-shell comes from bookworm-security.
        (root / "etc/apt/sources.list").write_text(
            f"deb {mirror} {_image.SUITE} main\ndeb {mirror} {_image.SUITE}-updates main\n"
            f"deb {security} {_image.SUITE}-security main\n")
        log(f"Installing {', '.join(SECURITY_PACKAGES)} from {security} into the base...")
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
        for cmd in (["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "--no-install-recommends", *SECURITY_PACKAGES]):
            proc = subprocess.run(["chroot", str(root), *cmd], capture_output=True, text=True, env=env,
                                  timeout=1800, check=False)
            if proc.returncode != 0:
                tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-12:])
                raise SandboxError(f"`{' '.join(cmd)}` in the checker base failed (exit {proc.returncode}):\n{tail}")

    bootstrap_base(client, mirror=mirror, log=log, tag=CHECKER_BASE_TAG, include=BASE_PACKAGES,
                   prepare=install_security)


def _build_code_layer(client: Any, tag: str, log: Log, modules: Iterable[str] = ()) -> None:
    import docker

    digest = tag.rpartition(":")[2]
    dockerfile = (f"FROM {CHECKER_RUNTIME_TAG}\nUSER root\nCOPY code/ /opt/agentbench/code/\n"
                  "RUN python3 -m compileall -q /opt/agentbench/code\n"
                  f'LABEL agentbench.checker.code="{digest}"\nUSER {CHECKER_UID}:{CHECKER_UID}\n')
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        members = [("Dockerfile", dockerfile.encode())] + [(f"code/{n}", p.read_bytes())
                                                             for n, p in checker_code_files(modules)]
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    log(f"Building {tag} (the check code on {CHECKER_RUNTIME_TAG})...")
    started = time.monotonic()
    try:
        for chunk in client.api.build(fileobj=buf, custom_context=True, tag=tag, network_mode="none", rm=True,
                                      forcerm=True, decode=True, labels={"agentbench.checker": "1"}):
            if "error" in chunk:
                raise SandboxError(f"Building {tag} failed: {chunk['error'].strip()}")
    except docker.errors.APIError as exc:
        raise SandboxError(f"Building {tag} failed: {exc}") from exc
    log_.info("checker.code_layer_built", tag=tag, build_s=round(time.monotonic() - started, 2))
