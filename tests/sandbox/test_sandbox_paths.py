"""Lexical workspace confinement (the symlink half is in the conformance suite)."""

from __future__ import annotations

import pytest

from agentbench.errors import PathEscape
from agentbench.sandbox import workspace_path


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("index.html", "/workspace/index.html"),
        ("./a/b.js", "/workspace/a/b.js"),
        ("a//b/./c", "/workspace/a/b/c"),
        ("a/../b", "/workspace/b"),
        (".", "/workspace"),
        ("a/..", "/workspace"),
        ("..foo", "/workspace/..foo"),
        ("~/x", "/workspace/~/x"),
    ],
)
def test_relative_paths_map_into_the_workspace(path, expected):
    assert workspace_path(path) == expected


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("..", "leaves the workspace"),
        ("../x", "leaves the workspace"),
        ("a/../../x", "leaves the workspace"),
        ("/etc/passwd", "is absolute"),
        ("/workspace/index.html", "here: 'index.html'"),
        ("a\x00b", "NUL"),
        ("", "empty"),
        ("  ", "empty"),
    ],
)
def test_escapes_are_refused_with_an_actionable_message(path, message):
    with pytest.raises(PathEscape, match=message):
        workspace_path(path)
