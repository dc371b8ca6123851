"""Atomic writes and the result schema."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentbench.errors import StoreError
from agentbench.store import AttemptResult, atomic_write_text, load_manifest, load_result, write_json


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "a" / "result.json"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]  # no temp files left


def test_atomic_write_failure_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "result.json"
    atomic_write_text(path, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_result_round_trip(tmp_path: Path) -> None:
    r = AttemptResult(run_id="x", task="flappy", model="demo", repeat=1, outcome="scored", verdict="fail", score=0.5)
    write_json(tmp_path / "result.json", r)
    assert load_result(tmp_path / "result.json") == r
    assert load_result(tmp_path / "missing.json") is None


def test_corrupt_result_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text("{not json")
    with pytest.raises(StoreError, match="Delete it to rerun that cell with --resume"):
        load_result(tmp_path / "result.json")
    with pytest.raises(StoreError, match="no run.json here"):
        load_manifest(tmp_path)
