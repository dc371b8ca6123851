"""A fifth task added without touching agentbench: examples/counter, installed, checked and run.

The example package is installed by the test itself (``pip install --no-deps --no-build-isolation
--target <tmp>`` from a copy, so the checkout stays clean); every agentbench command then runs as
a subprocess with that folder on PYTHONPATH, where ``importlib.metadata`` finds the entry point.
Nothing is installed into the environment. Docker and the checker are real: the plug-in's probes
run in the checker container, whose code layer carries them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentbench.models import Reply
from tests.helpers.scripted import ScriptedServer, text, tool_call

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "counter"
ARTEFACTS = EXAMPLE / "artefacts"
CHECKS = ["syntax", "load", "runtime-errors", "increment", "decrement", "reset"]  # its task.toml's order


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/counter installed into a folder of its own."""
    source = tmp_path_factory.mktemp("counter-source") / "counter"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("artefacts", "build", "*.egg-info", "__pycache__"))
    target = tmp_path_factory.mktemp("counter-site")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--no-build-isolation", "--no-index", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (target / "agentbench_counter" / "data" / "task.toml").is_file()  # the data came as package data
    return target


def _agentbench(*args: str, site: Path | None, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    path = [str(site)] if site else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)]), "AGENTBENCH_ROOT": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "agentbench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_the_installed_plugin_is_listed_with_its_checks(site: Path, tmp_path: Path) -> None:
    proc = _agentbench("tasks", site=site, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert list(listed) == ["ball", "converter", "flappy", "todo", "counter"]  # the built-ins, then the plug-ins
    assert "checks: " + ", ".join(CHECKS) in listed["counter"]
    bare = _agentbench("tasks", site=None, cwd=tmp_path)  # not installed: not a task
    assert bare.returncode == 0 and "counter" not in bare.stdout


def test_the_baked_checker_code_carries_the_plugins_probes(site: Path, tmp_path: Path) -> None:
    code = ("from agentbench.checks._tasks import plugin_probe_modules, probe_module; "
            "from agentbench.sandbox._checker_image import checker_code_files; "
            "mods = plugin_probe_modules(); print(mods, probe_module('counter')); "
            "print(sorted(n for n, _ in checker_code_files(mods) if not n.startswith('agentbench/')))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "AGENTBENCH_ROOT": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    modules, baked = proc.stdout.splitlines()
    assert modules == "['agentbench_counter.probes'] agentbench_counter.probes"
    assert baked == "['agentbench_counter/__init__.py', 'agentbench_counter/probes.py']"


def test_the_plugins_checklist_and_rubric_load_from_its_data_folder(site: Path, tmp_path: Path) -> None:
    code = ("from agentbench.checks._checklist import load_checklist; from agentbench.review import load_rubric; "
            "c = load_checklist('counter'); r = load_rubric('counter', checklist=c); "
            "print(c.path); print(r.path); print(sorted(i.check for i in c.items if i.check)); print(r.ids)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "AGENTBENCH_ROOT": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    checklist, rubric, checks, criteria = proc.stdout.splitlines()
    data = site / "agentbench_counter" / "data"
    assert (checklist, rubric) == (str(data / "checklist.toml"), str(data / "reviewer.toml"))
    assert checks == str(sorted(["syntax", "load", "increment", "decrement", "reset", "runtime-errors"]))
    assert criteria == "['counts', 'readable']"


def _checks(doc: dict) -> dict[str, dict]:
    return {c["id"]: c for c in doc["checks"]}


@pytest.mark.docker
def test_check_passes_the_good_counters_and_fails_the_broken_one_by_name(site: Path, tmp_path: Path,
                                                                          docker_client, checker_image) -> None:
    good = _agentbench("check", "--task", "counter", "--json", str(ARTEFACTS / "good"), str(ARTEFACTS / "good-tally"),
                       site=site, cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    for doc in json.loads(good.stdout):
        assert doc["task"] == "counter" and doc["verdict"] == "pass", doc
        assert [c["id"] for c in doc["checks"]] == CHECKS
        assert {c["id"]: c["status"] for c in doc["checks"]} == dict.fromkeys(CHECKS, "pass"), doc["path"]
        assert doc["checklist_summary"]["required_failed"] == []

    broken = _agentbench("check", "--task", "counter", "--json", str(ARTEFACTS / "broken"), site=site, cwd=tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    doc = json.loads(broken.stdout)
    checks = _checks(doc)
    assert {i: c["status"] for i, c in checks.items()} == {**dict.fromkeys(CHECKS, "pass"), "decrement": "fail"}
    assert "none of the 3 controls subtracts one" in checks["decrement"]["detail"]
    (table,) = [e["value"] for e in checks["decrement"]["evidence"] if e["kind"] == "value"]
    minus = [row for row in table if row["control"] == "button 'Decrease −'"]
    assert minus and all(row["did"].startswith("nothing") for row in minus)  # what a person saw it do
    assert doc["verdict"] == "fail" and "decrement" in doc["checklist_summary"]["required_failed"]


def _scripted_session() -> list[Reply]:
    """The endpoint's preflight (completion, a tool round trip, streaming), then the agent's session:
    write the good counter and finish."""
    page = (ARTEFACTS / "good" / "index.html").read_text(encoding="utf-8")
    return [text("pong"), tool_call("ping", {"message": "hello"}), text("pong"), text("pong again"),
            tool_call("write_file", {"path": "index.html", "content": page}, id="c1"),
            tool_call("finish", {"summary": "A counter with +, - and Reset."}, id="c2")]


@pytest.mark.docker
@pytest.mark.slow
def test_run_through_the_public_path(site: Path, tmp_path: Path, docker_client, checker_image) -> None:
    with ScriptedServer(*_scripted_session()) as server:
        home = Path(os.environ["AGENTBENCH_HOME"])
        (home / "models.toml").write_text(f'[models.scripted]\nbase_url = "{server.base_url}"\n'
                                          f'model = "{server.models[0]}"\nrequest_timeout_s = 30\nmax_retries = 0\n')
        proc = _agentbench("run", "--model", "scripted", "--task", "counter", "--out", str(tmp_path / "runs"),
                           site=site, cwd=tmp_path)
        prompts = [m["content"] for r in server.requests for m in r["messages"] if m["role"] == "user"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    prompt = (EXAMPLE / "agentbench_counter" / "data" / "prompt.md").read_text(encoding="utf-8").strip()
    assert any(prompt in p for p in prompts if isinstance(p, str))  # the agent was given the plug-in's prompt
    (run_dir,) = list((tmp_path / "runs").iterdir())
    assert json.loads((run_dir / "run.json").read_text())["tasks"] == ["counter"]
    result = json.loads((run_dir / "counter" / "scripted" / "r1" / "result.json").read_text())
    assert result["outcome"] == "scored" and result["verdict"] == "pass", result
    assert {c["id"]: c["status"] for c in result["checks"]} == dict.fromkeys(CHECKS, "pass")
    items = {i["id"]: i["status"] for i in result["checklist"]}
    assert items["increment"] == items["decrement"] == items["reset"] == "pass", items
