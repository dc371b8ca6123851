"""Fixtures for the reviewer tests: a stored flappy run and a fast-failing client factory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.review._runs import build_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return build_run(tmp_path / "artefacts")
