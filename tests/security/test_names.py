"""Every user-given name that becomes a path follows one rule (agentbench/names.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agentbench.config import load_models
from agentbench.errors import AgentbenchError, ConfigError, NameInvalid
from agentbench.names import NAME_RULE, is_valid_name, validate_name
from agentbench.store import CellRef, RunManifest, resolve_run_dir
from agentbench.tasks import load_task

BAD = ["../../../../tmp/x", "..", "a/b", "a\\b", "/abs", "", ".hidden", "-rf", "a..b", "x" * 65, "naïve", "a b",
       "a\x00b"]
GOOD = ["demo", "qwen3-32b", "gpt-4.1", "r1_x", "A" * 64, "20261204-131200-ab12"]


@pytest.mark.parametrize("name", BAD)
def test_bad_names_are_refused_with_the_rule(name: str) -> None:
    assert not is_valid_name(name)
    with pytest.raises(NameInvalid) as info:
        validate_name("model name", name, where="models.toml")
    assert "models.toml" in str(info.value) and NAME_RULE in str(info.value)


@pytest.mark.parametrize("name", GOOD)
def test_good_names_pass(name: str) -> None:
    assert validate_name("model name", name) == name


def test_a_model_name_from_models_toml_cannot_leave_the_run_folder(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[models."../../../../tmp/x"]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\n')
    with pytest.raises(ConfigError) as info:
        load_models(path)
    text = str(info.value)
    assert str(path) in text and "name" in text and "A-Z a-z 0-9 . _ -" in text


def test_task_ids_run_ids_and_stored_cells_follow_the_rule(tmp_path: Path) -> None:
    with pytest.raises(NameInvalid, match="task id"):
        load_task("../../tmp/x")
    with pytest.raises(NameInvalid, match="run id"):
        resolve_run_dir(tmp_path, "../../etc")
    with pytest.raises(ValidationError, match="model name"):
        CellRef(task="flappy", model="../x", repeat=1)
    with pytest.raises(ValidationError, match="run id"):
        RunManifest(run_id="../x")
    assert issubclass(NameInvalid, AgentbenchError)  # the CLI prints it as an error, not a traceback
