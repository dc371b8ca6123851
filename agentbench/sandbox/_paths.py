"""Workspace path confinement: the lexical half (symlinks resolve inside the container), tar filters."""

from __future__ import annotations

import posixpath
import tarfile

import structlog

from agentbench.errors import PathEscape

from ._users import SANDBOX_UID

__all__ = [
    "UID",
    "WORKSPACE",
    "is_inside_workspace",
    "owned_by_agent",
    "workspace_member_filter",
    "workspace_path",
]

WORKSPACE = "/workspace"
UID = SANDBOX_UID  # the sandbox user, `agent` (a uid no host account has: _users.py)


def workspace_path(path: str) -> str:
    """Return the absolute in-container path for a workspace-relative ``path``.

    Raises PathEscape, with a message the agent can act on, for an empty or absolute path, a path
    that climbs out with ``..``, or one containing a NUL byte. ``"."`` is the workspace itself.
    Symlinks are not seen here: backends resolve the result inside the sandbox before using it.
    """
    if not isinstance(path, str):
        raise PathEscape(f"Path must be a string, got {type(path).__name__}.")
    if "\x00" in path:
        raise PathEscape(f"Path {path!r} contains a NUL byte; give a plain relative path like 'index.html'.")
    if not path.strip():
        raise PathEscape("Path is empty; give a path relative to the workspace, e.g. 'index.html'.")
    if path.startswith("/"):
        hint = ""
        if path == WORKSPACE or path.startswith(WORKSPACE + "/"):
            hint = f" (here: {posixpath.relpath(path, WORKSPACE)!r})"
        raise PathEscape(
            f"Path {path!r} is absolute; give a path relative to the workspace ({WORKSPACE}){hint}."
        )
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        raise PathEscape(f"Path {path!r} leaves the workspace; stay inside it (no '..' above the top).")
    return WORKSPACE if normal == "." else f"{WORKSPACE}/{normal}"


def is_inside_workspace(resolved: str) -> bool:
    """True when an absolute, symlink-resolved container path lies in the workspace."""
    return resolved == WORKSPACE or resolved.startswith(WORKSPACE + "/")


def owned_by_agent(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """tarfile filter for copy_in: everything belongs to the sandbox user."""
    info.uid = info.gid = UID
    info.uname = info.gname = "agent"
    return info


def workspace_member_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """Strip the leading ``workspace/``; skip members the stdlib data filter finds unsafe."""
    name = member.name
    if name in ("workspace", "workspace/"):
        return None
    if not name.startswith("workspace/"):
        return None
    member = member.replace(name=name[len("workspace/"):], deep=False)
    if member.islnk():
        member = member.replace(linkname=member.linkname.removeprefix("workspace/"), deep=False)
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError as exc:
        structlog.get_logger().warning("sandbox.copy_out_skipped", member=name, reason=str(exc))
        return None
