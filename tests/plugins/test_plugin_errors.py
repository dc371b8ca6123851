"""A plug-in task that is wrong says which plug-in, what is wrong and what to do; built-ins never depend on it.

Each case installs a small distribution of its own (a ``*.dist-info`` folder with an
``entry_points.txt``, as pip writes one) in a temporary folder put on ``sys.path``, so
``importlib.metadata`` finds it exactly as it finds an installed package; nothing outlives the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentbench.errors import TaskError
from agentbench.tasks import (
    ENTRY_POINT_GROUP,
    PLUGIN_FILES,
    installed_plugins,
    list_tasks,
    load_task,
    plugin_for,
    task_file,
)

ROOT = Path(__file__).resolve().parents[2]
BUILTINS = ["ball", "converter", "flappy", "todo"]


def _distribution(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """Install by hand what pip would: the modules and a dist-info with the entry points."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    for name, source in modules.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))


def _data(folder: Path, *, leave_out: tuple[str, ...] = ()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    contents = {"task.toml": 'title = "Tiny"\nchecks = ["load"]\n', "prompt.md": "Make a tiny page.\n",
                "checklist.toml": 'task = "tiny"\n', "reviewer.toml": 'task = "tiny"\n'}
    for name, text in contents.items():
        if name not in leave_out:
            (folder / name).write_text(text)
    return folder


def _plugin_module(data: Path, probes: str = "tiny_plugin.probes") -> str:
    return f"""
        from agentbench.tasks import TaskPlugin
        task = TaskPlugin(data={str(data)!r}, probes={probes!r})
        """


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    for name in [m for m in sys.modules if m.startswith(("tiny_plugin", "broken_plugin"))]:
        monkeypatch.delitem(sys.modules, name)
    return folder


def test_a_plugin_is_found_by_its_entry_point_beside_the_builtins(site: Path, tmp_path: Path) -> None:
    data = _data(tmp_path / "data")
    _distribution(site, "tiny-plugin", {"tiny": "tiny_plugin:task"}, {"tiny_plugin/__init__.py": _plugin_module(data)})
    assert list_tasks() == [*BUILTINS, "tiny"]
    task = load_task("tiny")
    assert (task.title, task.checks, task.prompt, task.path) == ("Tiny", ["load"], "Make a tiny page.", data)
    plugin = plugin_for("tiny")
    assert plugin is not None and plugin.probes == "tiny_plugin.probes" and plugin.data == data
    assert "tiny = tiny_plugin:task" in plugin.origin and "tiny-plugin 0.1" in plugin.origin
    assert task_file("tiny", "checklist") == data / "checklist.toml"
    assert task_file("tiny", "reviewer") == data / "reviewer.toml"
    # The built-ins resolve from the project's folders, whatever is installed.
    assert plugin_for("flappy") is None
    assert task_file("flappy", "checklist") == ROOT / "checklists" / "flappy.toml"


def test_an_entry_point_that_fails_to_import_names_the_plugin_and_the_error(site: Path) -> None:
    _distribution(site, "broken-plugin", {"broken": "broken_plugin:task"},
                  {"broken_plugin/__init__.py": "raise RuntimeError('the plug-in is half written')\n"})
    assert "broken" in list_tasks()  # listed by name: nothing of it is imported to list it
    with pytest.raises(TaskError) as info:
        load_task("broken")
    message = str(info.value)
    assert "Plug-in task 'broken'" in message and "broken = broken_plugin:task" in message
    assert "broken-plugin 0.1" in message
    assert "RuntimeError: the plug-in is half written" in message
    assert "reinstall that package, or uninstall it" in message
    assert load_task("flappy").title == "Flappy Bird"  # one broken plug-in costs no other task


def test_the_installed_plugins_leave_a_broken_one_out_only_when_asked(site: Path, tmp_path: Path) -> None:
    data = _data(tmp_path / "data")
    _distribution(site, "tiny-plugin", {"tiny": "tiny_plugin:task"}, {"tiny_plugin/__init__.py": _plugin_module(data)})
    _distribution(site, "broken-plugin", {"broken": "broken_plugin:task"},
                  {"broken_plugin/__init__.py": "raise RuntimeError('half written')\n"})
    with pytest.raises(TaskError, match="Plug-in task 'broken'"):
        installed_plugins()
    seen: list[TaskError] = []
    assert [p.task_id for p in installed_plugins(on_error=seen.append)] == ["tiny"]
    assert len(seen) == 1 and "RuntimeError: half written" in str(seen[0])


def test_a_plugin_cannot_take_a_builtin_tasks_id(site: Path, tmp_path: Path) -> None:
    data = _data(tmp_path / "data")
    _distribution(site, "tiny-plugin", {"flappy": "tiny_plugin:task"},
                  {"tiny_plugin/__init__.py": _plugin_module(data)})
    with pytest.raises(TaskError) as info:
        list_tasks()
    message = str(info.value)
    assert "Plug-in task 'flappy'" in message and "has the id of the built-in task 'flappy'" in message
    assert f'[project.entry-points."{ENTRY_POINT_GROUP}"]' in message and "rename its entry point" in message
    task = load_task("flappy")  # the built-in is unaffected: resolved from tasks/, never from metadata
    assert task.path == ROOT / "tasks" / "flappy" and plugin_for("flappy") is None


def test_two_plugins_with_one_id_are_refused(site: Path, tmp_path: Path) -> None:
    data = _data(tmp_path / "data")
    _distribution(site, "tiny-plugin", {"tiny": "tiny_plugin:task"}, {"tiny_plugin/__init__.py": _plugin_module(data)})
    _distribution(site, "other-plugin", {"tiny": "tiny_plugin:task"}, {})
    with pytest.raises(TaskError, match="registered by more than one installed plug-in: .*tiny-plugin.*other-plugin"):
        load_task("tiny")


def test_missing_data_files_are_listed_with_the_fix(site: Path, tmp_path: Path) -> None:
    data = _data(tmp_path / "data", leave_out=("prompt.md", "reviewer.toml"))
    _distribution(site, "tiny-plugin", {"tiny": "tiny_plugin:task"}, {"tiny_plugin/__init__.py": _plugin_module(data)})
    with pytest.raises(TaskError) as info:
        load_task("tiny")
    message = str(info.value)
    assert f"its data folder {data} lacks prompt.md, reviewer.toml" in message
    assert ", ".join(PLUGIN_FILES.values()) in message and "reinstall it" in message


def test_an_entry_point_naming_something_else_says_what_it_must_name(site: Path, tmp_path: Path) -> None:
    _distribution(site, "tiny-plugin", {"tiny": "tiny_plugin:task"},
                  {"tiny_plugin/__init__.py": f"task = {{'data': {str(tmp_path)!r}, 'probes': 'x'}}\n"})
    with pytest.raises(TaskError, match=r"names a dict, not an agentbench.tasks.TaskPlugin\(data=<folder>, "
                                        r"probes=<module>\)"):
        load_task("tiny")


def test_probes_inside_agentbench_are_refused(site: Path, tmp_path: Path) -> None:
    data = _data(tmp_path / "data")
    _distribution(site, "tiny-plugin", {"tiny": "tiny_plugin:task"},
                  {"tiny_plugin/__init__.py": _plugin_module(data, probes="agentbench.checks.flappy")})
    with pytest.raises(TaskError, match="not a module of the plug-in's own package .*'tiny_plugin.probes'"):
        load_task("tiny")


def test_the_cli_reports_a_broken_plugin_as_a_usage_error(site: Path, tmp_path: Path) -> None:
    _distribution(site, "broken-plugin", {"broken": "broken_plugin:task"},
                  {"broken_plugin/__init__.py": "import no_such_module_anywhere\n"})
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "index.html").write_text("<p>0</p>")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "AGENTBENCH_ROOT": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "agentbench", "check", "--task", "broken", str(tmp_path / "page")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = " ".join(proc.stderr.split())  # the console wraps long lines
    assert "Plug-in task 'broken'" in said and "ModuleNotFoundError" in said and "Traceback" not in said
    listing = subprocess.run([sys.executable, "-m", "agentbench", "tasks"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert listing.returncode == 2 and "Traceback" not in listing.stderr  # the others listed, the broken one said
    assert [line.split()[0] for line in listing.stdout.splitlines()] == BUILTINS
    said = " ".join(listing.stderr.split())
    assert "Plug-in task 'broken'" in said and "No module named 'no_such_module_anywhere'" in said
