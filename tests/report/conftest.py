"""Fixtures for the report tests: a stored run with every kind of attempt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report._runs import build_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return build_run(tmp_path / "artefacts")
