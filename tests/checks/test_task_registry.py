"""The browser engine knows no task: a task's probes come from the module it is handed, which registers them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentbench.checks._tasks import BUILTIN_PROBES, probe_module
from agentbench.checks.browser import TASKS, run_browser_checks_async
from agentbench.errors import CheckError

ROOT = Path(__file__).resolve().parents[2]

PROBES_MODULE = '''
from agentbench.checks.browser import InputStep, RefreshPlan, register_task

async def probes(ctx):
    return []

register_task("{task}", checks=("clicks", "sums"), probes=probes,
              refresh=RefreshPlan([InputStep(1.0, "press:Space"), InputStep(0.5, "press:Enter")]))
'''


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "mods"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [n for n in sys.modules if n.startswith("abtest_")]:
        del sys.modules[name]
    for task in [t for t in TASKS if t.startswith("abtest-")]:
        del TASKS[task]


def test_the_engine_imports_no_task_package() -> None:
    code = ("import sys, agentbench.checks.browser, agentbench.checks.browser._worker; "
            "print(' '.join(n for n in sys.modules if n.startswith('agentbench.checks.')))")
    loaded = set(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                timeout=60, check=True).stdout.split())
    assert "agentbench.checks.browser._harness" in loaded  # the probe of the probe: it did look
    assert loaded.isdisjoint(BUILTIN_PROBES.values()), loaded & set(BUILTIN_PROBES.values())


def test_every_builtin_task_has_a_module_that_registers_it() -> None:
    from agentbench.checks.browser import load_probes

    for task in ("flappy", "ball", "todo", "converter"):
        registered = load_probes(task, probe_module(task))
        assert registered is not None and registered.task_id == task and registered.checks
    assert probe_module("no-such-task") is None


async def test_the_named_module_registers_the_checks_that_come_out(plugin_dir: Path, tmp_path: Path) -> None:
    (plugin_dir / "abtest_calc.py").write_text(PROBES_MODULE.format(task="abtest-calc"))
    empty = tmp_path / "artefact"
    empty.mkdir()  # no index.html: every check fails without a browser being started
    results = await run_browser_checks_async("abtest-calc", empty, tmp_path / "ev", probes="abtest_calc")
    assert [r.id for r in results] == ["load", "clicks", "sums", "refresh-rate", "runtime-errors"]
    assert {r.status for r in results} == {"fail"}
    assert [s.t for s in TASKS["abtest-calc"].refresh.steps] == [0.5, 1.0]  # sorted by time


async def test_a_task_without_probes_gets_only_the_engines_checks(tmp_path: Path) -> None:
    results = await run_browser_checks_async("abtest-none", tmp_path, tmp_path / "ev")
    assert [r.id for r in results] == ["load", "runtime-errors"]


async def test_a_probe_module_that_breaks_or_registers_nothing_is_a_check_error(plugin_dir: Path,
                                                                               tmp_path: Path) -> None:
    (plugin_dir / "abtest_broken.py").write_text("raise RuntimeError('half written')\n")
    with pytest.raises(CheckError, match=r"abtest_broken\) failed to import: RuntimeError: half written"):
        await run_browser_checks_async("abtest-broken", tmp_path, tmp_path / "ev", probes="abtest_broken")
    (plugin_dir / "abtest_other.py").write_text(PROBES_MODULE.format(task="abtest-other"))
    with pytest.raises(CheckError, match="abtest_other registered no probes for task 'abtest-mine'"):
        await run_browser_checks_async("abtest-mine", tmp_path, tmp_path / "ev", probes="abtest_other")


def test_a_task_registered_twice_is_refused(plugin_dir: Path) -> None:
    from agentbench.checks.browser import register_task

    (plugin_dir / "abtest_twice.py").write_text(PROBES_MODULE.format(task="abtest-twice"))
    __import__("abtest_twice")
    with pytest.raises(ValueError, match="registered twice"):
        register_task("abtest-twice", checks=(), probes=TASKS["abtest-twice"].probes)
