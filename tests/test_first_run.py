"""A light first run: `make demo` sets up only what the demo needs; agent images are built on first use.

The set-up script is run for real against shims of the system tools (each logs how it was called),
so its two paths are observed, not read; the run's first-use build is observed through the real
runner with the builder replaced by a spy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Real tools the script itself needs (everything else it calls is a logging shim).
REAL = ("bash", "sh", "dirname", "id", "ls", "seq", "sleep", "cat", "mkdir", "rm", "mktemp")
SHIMS = ("docker", "dockerd", "debootstrap", "chromium", "node", "python3", "apt-get", "sudo")


def _setup_calls(tmp_path: Path, *args: str, images_built: bool, python_ready: bool = False) -> list[str]:
    """Run scripts/setup.sh with shims on PATH; return the shims' calls, one line each.

    ``python_ready``: what the script's check of the installed package (``python3 -P -``) finds."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for tool in REAL:
        real = shutil.which(tool)
        assert real, tool
        (bin_dir / tool).symlink_to(real)
    for tool in SHIMS:
        # `docker image inspect` answers like an engine with or without our images; the rest succeed.
        miss = "" if images_built else 'if [ "$1 $2" = "image inspect" ]; then exit 1; fi\n'
        # python3 -c names the images the way the real one does (setup.sh asks it for their tags).
        tags = 'if [ "$1" = "-c" ]; then echo "agentbench/web:u1 agentbench/checker-runtime:u1"; fi\n'
        tags += f'if [ "$1" = "-P" ]; then exit {0 if python_ready else 1}; fi\n'
        (bin_dir / tool).write_text(f'#!{shutil.which("bash")}\necho "{tool} $*" >> "{log}"\n'
                                    + (miss if tool == "docker" else tags if tool == "python3" else ""))
        (bin_dir / tool).chmod(0o755)
    proc = subprocess.run([str(bin_dir / "bash"), str(ROOT / "scripts" / "setup.sh"), *args], cwd=tmp_path,
                          env={"PATH": str(bin_dir), "HOME": str(tmp_path)}, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "setup: ready" in proc.stdout
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("images_built", [True, False])
def test_demo_setup_builds_no_agent_image(tmp_path: Path, images_built: bool) -> None:
    calls = _setup_calls(tmp_path, images_built=images_built)
    assert "python3 -m pip install -q --disable-pip-version-check -e ." in calls  # no test extras
    assert not [c for c in calls if "--agent" in c], calls  # no agent image
    assert not [c for c in calls if c.startswith("apt-get install") and " npm " in f"{c} "], calls
    builds = [c for c in calls if "agentbench sandbox build" in c]
    assert builds == ([] if images_built else ["python3 -m agentbench sandbox build"])  # the demo's images only


def test_test_setup_adds_extras_and_the_agents_the_tests_run(tmp_path: Path) -> None:
    calls = _setup_calls(tmp_path, "--test", images_built=True)
    assert "python3 -m pip install -q --disable-pip-version-check -e .[test]" in calls
    assert "python3 -m agentbench sandbox build --agent opencode --agent aider" in calls
    assert [c for c in calls if c.startswith("apt-get install") and "npm" in c.split()], calls  # no npm shim here


@pytest.mark.parametrize("extras", [(), ("--test",)])
def test_a_ready_python_package_is_not_installed_again(tmp_path: Path, extras: tuple[str, ...]) -> None:
    calls = _setup_calls(tmp_path, *extras, images_built=True, python_ready=True)
    assert [c for c in calls if c.startswith("python3 -P")], calls  # it looked
    assert not [c for c in calls if "pip install" in c], calls


def _readiness_check() -> str:
    """The Python program setup.sh runs to tell whether pip is needed (between <<'PY' and PY)."""
    text = (ROOT / "scripts" / "setup.sh").read_text()
    return text.split("<<'PY'", 1)[1].split("\n", 1)[1].split("\nPY\n", 1)[0]


@pytest.mark.parametrize(("requirement", "ready"), [
    ("pytest>=1", True), ("pytest>=999", False), ("agentbench-no-such-package>=1", False)])
def test_the_readiness_check_reads_pyproject_and_what_is_installed(tmp_path: Path, requirement: str,
                                                                  ready: bool) -> None:
    import sys

    # A checkout whose agentbench is the installed one (whichever this machine has), needing requirement.
    installed = subprocess.run([sys.executable, "-P", "-c", "import agentbench; print(agentbench.__file__)"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True).stdout
    (tmp_path / "agentbench").symlink_to(Path(installed.strip()).parent, target_is_directory=True)
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "agentbench"\ndependencies = ["{requirement}"]\n'
        '[project.optional-dependencies]\ntest = ["agentbench[more]"]\nmore = ["pytest>=999"]\n')
    check = [sys.executable, "-P", "-", "0"]
    proc = subprocess.run(check, input=_readiness_check(), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode == 0) is ready, proc.stderr
    # --test adds the test extras, followed through agentbench[more] to a version nobody has.
    proc = subprocess.run(check[:-1] + ["1"], input=_readiness_check(), cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    # Another checkout's agentbench is not this one's: installed again.
    (tmp_path / "agentbench").unlink()
    (tmp_path / "agentbench").mkdir()
    proc = subprocess.run(check, input=_readiness_check(), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0


def test_makefile_demo_and_test_take_their_own_setup() -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")

    def plan(target: str) -> list[str]:
        # Run under `make test` (as CI does), a nested make prints "Entering directory": not part of the plan.
        env = {k: v for k, v in os.environ.items() if k != "TEST_WORKERS"}  # the Makefile's own default
        proc = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=ROOT, capture_output=True,
                              text=True, timeout=30, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    assert plan("demo") == ["bash scripts/setup.sh", "python3 -m agentbench run --model demo --task flappy"]
    assert plan("test") == ["bash scripts/setup.sh --test", "python3 -m ruff check .",
                            "python3 -m pytest -n auto --dist loadfile"]  # one worker per core


# ---- the run builds an agent's image on first use, once, before any cell ------------------------


def _demo_run(tmp_path: Path, agent: str | None, notices: list[str], repeats: int = 1):
    import asyncio

    from agentbench.config import resolve_model
    from agentbench.runner import RunOptions, run
    from agentbench.tasks import resolve_tasks

    options = RunOptions(out_dir=tmp_path / "runs", repeats=repeats, checks=False, agent=agent,
                         notice=notices.append)
    return asyncio.run(run([resolve_model("demo")], resolve_tasks("flappy"), options))


@pytest.mark.docker
def test_demo_run_never_calls_the_agent_image_builder(tmp_path: Path, docker_client,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import agentbench.agents as agents
    import agentbench.agents._external as external
    import agentbench.agents._images as images

    called: list[str] = []

    def refuse(*args, **kwargs):
        called.append(repr(args[:1]))
        raise AssertionError("the demo must not build or look up an agent image")

    for mod, name in ((images, "build_agent_image"), (images, "ensure_agent_image"),
                      (agents, "ensure_agent_image"), (external, "ensure_agent_image")):
        monkeypatch.setattr(mod, name, refuse)
    notices: list[str] = []
    summary = _demo_run(tmp_path, None, notices)
    assert [r.outcome for r in summary.results] == ["scored"], [r.error for r in summary.results]
    assert called == [] and not [n for n in notices if "agent" in n.lower()]


@pytest.mark.docker
def test_first_use_of_an_agent_builds_its_image_once_with_a_progress_line(
        tmp_path: Path, docker_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Positive control of the test above: the same spy sees the build when a run needs an agent."""
    import agentbench.agents._images as images
    import agentbench.sandbox as sandbox

    real_exists = sandbox.image_exists

    def exists(client, tag=sandbox.IMAGE_TAG) -> bool:  # this engine "lacks" the aider image: its first use
        return False if "agent-aider" in tag else real_exists(client, tag)

    monkeypatch.setattr(sandbox, "image_exists", exists)
    builds: list[str] = []

    def fake_build(image, client, *, base, tag, log=print):
        builds.append(tag)
        raise images.SandboxError("planted build failure")

    monkeypatch.setattr(images, "build_agent_image", fake_build)
    notices: list[str] = []
    summary = _demo_run(tmp_path, "aider", notices, repeats=2)
    assert len(builds) == 1  # once for the run, not once per cell
    assert [n for n in notices if n.startswith("First use of the aider agent on this engine: building its image "
                                               f"{builds[0]}")], notices
    assert [r.outcome for r in summary.results] == ["infra-error", "infra-error"]
    assert all("aider agent's image could not be built: planted build failure" in r.error.message
               for r in summary.results)
