"""models.toml and tasks: errors name the file, the field and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentbench.config import load_models, resolve_api_key, resolve_model
from agentbench.errors import ConfigError, TaskError
from agentbench.tasks import list_tasks, load_task, resolve_tasks

ROOT = Path(__file__).resolve().parent.parent


def test_example_models_file_is_valid() -> None:
    models = load_models(ROOT / "models.example.toml")
    assert {"lane", "pair", "api", "demo", "demo-careful"} <= set(models)
    assert models["api"].thinking_format == "deepseek"
    assert models["lane"].base_url == "http://spark-1:8000/v1"


def test_demo_models_need_no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    models = load_models()
    assert set(models) == {"demo", "demo-careful"}
    assert resolve_api_key(models["demo"]) is None


def test_unknown_model_lists_valid_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"Unknown model 'nope'. Valid models: demo, demo-careful"):
        resolve_model("nope")


def test_missing_key_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANE_API_KEY", raising=False)
    lane = load_models(ROOT / "models.example.toml")["lane"]
    with pytest.raises(ConfigError, match="LANE_API_KEY"):
        resolve_api_key(lane)
    monkeypatch.setenv("LANE_API_KEY", "k")
    assert resolve_api_key(lane) == "k"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[models.x]\nbase_url = "http://h/v1"\n', r"\[models.x\] model: Field required"),
        ('[models.x]\nbase_url = "u"\nmodel = "m"\ntemprature = 1\n', r"\[models.x\] temprature: Extra inputs"),
        ('[models.x]\nbase_url = "u"\nmodel = "m"\nmax_tokens = -5\n',
         r"\[models.x\] max_tokens: Input should be greater"),
        ('[models.x]\nbase_url = "u"\nmodel = "m"\nthinking = "yes"\n',
         r"\[models.x\] thinking: Input should be 'on' or 'off'"),
        ("[models.x\n", r"not valid TOML"),
        ('[model.x]\nbase_url = "u"\n', r"unknown top-level key"),
        ('[models.demo]\nbase_url = "u"\nmodel = "m"\n', r"clashes with a built-in demo model"),
    ],
)
def test_malformed_models_file(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=expected) as info:
        load_models(path)
    assert str(path) in str(info.value)


def test_models_file_found_in_cwd_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "models.toml").write_text('[models.h]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n')
    monkeypatch.setenv("AGENTBENCH_HOME", str(home))
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert "h" in load_models()
    (cwd / "models.toml").write_text('[models.c]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n')
    assert "c" in load_models() and "h" not in load_models()


def test_tasks_load() -> None:
    assert list_tasks() == ["ball", "converter", "flappy", "todo"]
    flappy = load_task("flappy")
    assert flappy.entry == "index.html"
    assert "Space" in flappy.prompt
    assert {"refresh-rate", "flap-input", "game-over", "restart"} <= set(flappy.checks)
    assert [t.id for t in resolve_tasks("all")] == ["ball", "converter", "flappy", "todo"]


def test_unknown_task_lists_valid_names() -> None:
    with pytest.raises(TaskError, match="Unknown task 'tetris'. Valid tasks: ball, converter, flappy, todo"):
        resolve_tasks("flappy,tetris")


def test_malformed_task_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "task.toml").write_text('title = "x"\n[limits]\nmax_turns = 0\n')
    (tmp_path / "bad" / "prompt.md").write_text("do it")
    with pytest.raises(TaskError, match=r"task.toml: limits.max_turns: Input should be greater than 0"):
        load_task("bad", tmp_path)
