"""The gateway's socket folder: reachable by the sandbox user and by this process, by nobody else.

A unix socket is reached through its folder (search permission) and used with write permission
on the socket file. The folder is made private (0700, ours); then:

* as root, folder and socket are given to the sandbox user (``SANDBOX_UID``): mode 0700 and 0600
  leave exactly that user and root (this process) in;
* as another user, who cannot give files away, a POSIX ACL names the sandbox user beside the
  owner (search on the folder, read/write on the socket) and the mode keeps everyone else out.

Where neither works (no root, no ACL support on the temp folder's file system) the gateway does not
start: an open socket would let any local account spend the API key.
"""

from __future__ import annotations

import os
import struct
import tempfile
from pathlib import Path

from ..errors import SandboxError
from ..sandbox._users import SANDBOX_UID

__all__ = ["private_socket_dir", "restrict_socket"]

_ACL_XATTR = "system.posix_acl_access"
_ACL_VERSION = 2
_USER_OBJ, _USER, _GROUP_OBJ, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
_UNDEFINED = 0xFFFFFFFF


def private_socket_dir() -> Path:
    """A fresh folder for one gateway's socket, mode 0700, owned by this process's user."""
    return Path(tempfile.mkdtemp(prefix="agentbench-gw-"))


def _acl(owner_perm: int, uid: int, perm: int) -> bytes:
    """The xattr form of ``user::owner_perm, user:uid:perm, group::---, mask::perm, other::---``."""
    entries = [(_USER_OBJ, owner_perm, _UNDEFINED), (_USER, perm, uid), (_GROUP_OBJ, 0, _UNDEFINED),
               (_MASK, perm, _UNDEFINED), (_OTHER, 0, _UNDEFINED)]
    return struct.pack("<I", _ACL_VERSION) + b"".join(struct.pack("<HHI", *e) for e in entries)


def restrict_socket(folder: Path, socket_path: Path, *, uid: int = SANDBOX_UID) -> None:
    """Let only ``uid`` (and this process) reach ``socket_path`` in ``folder`` (see the module docstring)."""
    if os.geteuid() == 0:
        os.chown(folder, uid, uid)
        os.chmod(folder, 0o700)
        os.chown(socket_path, uid, uid)
        os.chmod(socket_path, 0o600)
        return
    try:
        os.chmod(folder, 0o700)
        os.chmod(socket_path, 0o600)
        os.setxattr(folder, _ACL_XATTR, _acl(0o7, uid, 0o1))  # owner rwx; the sandbox user: search
        os.setxattr(socket_path, _ACL_XATTR, _acl(0o6, uid, 0o6))  # owner rw; the sandbox user: rw (connect)
    except OSError as exc:
        raise SandboxError(
            f"Cannot open the model gateway's socket to the sandbox user (uid {uid}) alone: {exc}. Run agentbench "
            f"as root (or in the docker group with a temp folder whose file system supports POSIX ACLs: tmpfs or "
            f"ext4 with acl; set TMPDIR to one).") from exc
