"""The uids our containers run as, and the check that no account of this host has them.

A container's uid is the same number on the host (no user namespace): uid 1000 in the sandbox
was the host's first user on Debian, who could then connect to a live gateway socket and spend
the API key. So every uid here lies in systemd's unused range 60578-61183 (see
https://systemd.io/UIDS-GIDS/: above regular users, which stop at 60000, and homed's
60001-60513 and nspawn's 60514-60577, below the dynamic service users from 61184), and below
65536, so a user-namespaced engine (userns-remap, rootless) can still map it.

- ``SANDBOX_UID``: the agent, its commands and external agents, in every sandbox;
- ``KEEPER_UID``: the sandbox's init and ``sleep infinity``: another uid, so the agent cannot signal
  it (``kill -9 -1`` used to stop the container and was booked as an infrastructure error);
- ``CHECKER_UID``: the checker container and its worker (which judges the page);
- ``CHROMIUM_UID``: Chromium in the checker: another uid, so a compromised renderer cannot write
  the worker's pipe (or its driver's) and forge an answer.

:func:`check_host_users` refuses to start a container when a host account has one of them.
"""

from __future__ import annotations

import grp
import pwd

from agentbench.errors import SandboxError

__all__ = ["CHECKER_UID", "CHROMIUM_UID", "KEEPER_UID", "SANDBOX_UID", "check_host_users", "host_accounts_with"]

SANDBOX_UID = 60600
KEEPER_UID = 60601
CHECKER_UID = 60610
CHROMIUM_UID = 60611
OURS = {SANDBOX_UID: "the sandbox user", KEEPER_UID: "the sandbox's init", CHECKER_UID: "the checker user",
        CHROMIUM_UID: "the checker's Chromium"}
_checked = False


def host_accounts_with(uids: dict[int, str]) -> list[str]:
    """The host's users and groups (from its passwd and group databases) that hold one of ``uids``."""
    found = []
    for uid, what in uids.items():
        try:
            found.append(f"uid {uid} ({what}) is host user {pwd.getpwuid(uid).pw_name!r}")
        except KeyError:
            pass
        try:
            found.append(f"gid {uid} ({what}) is host group {grp.getgrgid(uid).gr_name!r}")
        except KeyError:
            pass
    return found


def check_host_users() -> None:
    """Raise SandboxError when an account of this host holds a uid our containers run as (checked once)."""
    global _checked
    if _checked:
        return
    taken = host_accounts_with(OURS)
    if taken:
        raise SandboxError(
            "agentbench runs its containers as uids no account of this host may have, but " + "; ".join(taken) +
            ". That account could reach the sandbox's model gateway (and spend the API key) or signal sandbox "
            "processes. Move the account to another uid/gid (usermod -u / groupmod -g), then run again.")
    _checked = True
