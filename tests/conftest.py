"""Shared fixtures. Docker and Chromium are real: missing ones fail in CI (CI=true), skip elsewhere."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
ROOT = Path(__file__).resolve().parent.parent


def _missing(what: str, how: str) -> None:
    msg = f"{what} is not available: {how}"
    if IN_CI:
        pytest.fail(f"{msg} (CI must provide it)")
    pytest.skip(msg)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point AGENTBENCH_HOME at a temp folder so tests never read the user's models.toml."""
    home = tmp_path_factory.mktemp("agentbench-home")
    monkeypatch.setenv("AGENTBENCH_HOME", str(home))


@pytest.fixture(autouse=True)
def _reset_logging():
    """A CLI command points structlog at the stream it was given (CliRunner's stderr, closed after
    the invoke): later tests that log would write to a closed file."""
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture(scope="session")
def docker_client():
    """A live docker SDK client with the sandbox image built."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means no engine
        _missing("Docker engine", f"{exc}. Start it with `dockerd &` (as root) and build the image "
                 "with `agentbench sandbox build`.")
    return client


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("AGENTBENCH_CHROMIUM", "/usr/bin/chromium")
    if not (os.path.exists(path) or shutil.which(path)):
        _missing("Chromium", f"{path} not found; `apt-get install chromium`.")
    return path


@pytest.fixture(scope="session")
def checker_image(docker_client) -> str:
    """The checker image for this code (the runtime built once when missing; the code layer on demand)."""
    from agentbench.sandbox._checker_image import CHECKER_RUNTIME_TAG, build_checker_image, ensure_checker_image
    from agentbench.sandbox._image import image_exists

    if not image_exists(docker_client, CHECKER_RUNTIME_TAG):
        return build_checker_image(docker_client, log=lambda _msg: None)
    return ensure_checker_image(docker_client)


@pytest.fixture(scope="session")
def headless_shell_path() -> str:
    """Chromium's headless shell: the checker container's browser (AGENTBENCH_HEADLESS_SHELL overrides)."""
    path = os.environ.get("AGENTBENCH_HEADLESS_SHELL", "/usr/bin/chromium-headless-shell")
    if not (os.path.exists(path) or shutil.which(path)):
        _missing("Chromium's headless shell", f"{path} not found; `apt-get install chromium-headless-shell`.")
    return path


@pytest.fixture(scope="module", params=["headless shell", "chromium"])
def browser_path(request: pytest.FixtureRequest) -> str:
    """Each of the browsers a page may meet: the checker's headless shell, then the full chromium."""
    name = "headless_shell_path" if request.param == "headless shell" else "chromium_path"
    return request.getfixturevalue(name)
