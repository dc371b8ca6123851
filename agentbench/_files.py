"""Artefact files are data, never paths out: the one place that reads, copies and extracts them.

An artefact was written by a model, so its folder may hold a symlink to ``/etc/shadow``, a
hard link, a FIFO that blocks a reader for ever, a device, or a 2 GB file. Everything that
touches artefact files (``agentbench check``, the report, ``agentbench open``, the sandbox
copy-out, the browser harness's file route) goes through this module, which

* walks with directory file descriptors and opens every component with ``O_NOFOLLOW``, so no
  symlink is ever followed (a swapped-in link between check and use fails the open too);
* accepts only regular files with one link (a hard link shares its inode with a file outside)
  and folders; devices, FIFOs and sockets are never opened (``lstat`` first, ``O_NONBLOCK``
  backs it up);
* caps every file, the whole folder and its file count, checking the size before reading and
  reading at most cap + 1 bytes, so an over-size file is a clear :class:`ArtefactError`, never
  a hang or a host out of memory.

The folder given as ``root`` is the caller's choice and is opened normally; nothing below it is
followed. Writing artefact files into a new folder (a copy, a tar extracted, a private staging
copy) is :mod:`agentbench._files_copy`, on the same walks and caps.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .errors import ArtefactError

__all__ = [
    "DEFAULT_LIMITS",
    "MAX_FILE_BYTES",
    "CopyReport",
    "FileLimits",
    "lookup",
    "open_regular",
    "plain_files",
    "read_bytes",
    "safe_parts",
    "tree_digest",
]

MAX_FILE_BYTES = 64 * 1024 * 1024  # one artefact file (a 46 MB entry with inlined assets exists)
MAX_TOTAL_BYTES = 256 * 1024 * 1024  # one artefact folder
MAX_FILES = 10_000
MAX_DEPTH = 32
_NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class FileLimits:
    """Caps on one artefact: bytes per file, bytes in all, number of files, folder depth."""

    file_bytes: int = MAX_FILE_BYTES
    total_bytes: int = MAX_TOTAL_BYTES
    files: int = MAX_FILES
    depth: int = MAX_DEPTH


DEFAULT_LIMITS = FileLimits()


@dataclass
class CopyReport:
    """What a copy or extraction took and what it left out (``(relative path, why)``)."""

    files: int = 0
    bytes: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def skipped_text(self) -> str:
        return "; ".join(f"{rel}: {why}" for rel, why in self.skipped)


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def safe_parts(rel: str) -> list[str]:
    """The components of a relative path; ValueError for an absolute one, ``..``, NUL or empty."""
    if "\x00" in rel:
        raise ValueError(f"{rel!r} contains a NUL byte")
    if rel.startswith("/"):
        raise ValueError(f"{rel!r} is absolute")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ValueError(f"{rel!r} climbs out with '..'")
    if not parts:
        raise ValueError("empty path")
    return parts


def _why_not(st: os.stat_result) -> str | None:
    """Why a file of this kind is not artefact data (None: a plain file or a folder)."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symlink (never followed)"
    if stat.S_ISREG(mode):
        return "a hard link to another file (never read)" if st.st_nlink > 1 else None
    if stat.S_ISFIFO(mode):
        return "a FIFO (never opened)"
    if stat.S_ISSOCK(mode):
        return "a socket (never opened)"
    return "a device (never opened)"


def _open_dir(name: str, dir_fd: int | None) -> int:
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=dir_fd)


@contextmanager
def _walk_to(root: Path, parts: list[str]) -> Iterator[int]:
    """A descriptor of the folder holding ``parts[-1]``, reached without following any link."""
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))]
    try:
        for part in parts[:-1]:
            fds.append(_open_dir(part, fds[-1]))
        yield fds[-1]
    finally:
        for fd in fds:
            os.close(fd)


def lookup(root: Path, rel: str) -> os.stat_result | None:
    """The ``lstat`` of ``root/rel`` when it is a plain file or folder reached without links, else None."""
    try:
        parts = safe_parts(rel)
        with _walk_to(root, parts) as dfd:
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    return st if _why_not(st) is None else None


@contextmanager
def open_regular(root: Path, rel: str, *, max_bytes: int = MAX_FILE_BYTES) -> Iterator[tuple[IO[bytes], int]]:
    """``(binary file, size)`` of the plain file ``root/rel``.

    FileNotFoundError (with the reason) when it is missing, outside root, a link, a FIFO, a
    device or a socket; ArtefactError when it is over ``max_bytes``.
    """
    try:
        parts = safe_parts(rel)
    except ValueError as exc:
        raise FileNotFoundError(f"{rel}: not a path inside the artefact ({exc})") from None
    with _walk_to_or_missing(root, parts, rel) as dfd:
        try:
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        except OSError as exc:
            raise FileNotFoundError(f"{rel}: {exc.strerror}") from None
        why = _why_not(st)
        if why is None and stat.S_ISDIR(st.st_mode):
            why = "a folder"
        if why is not None:
            raise FileNotFoundError(f"{rel} is {why}; artefact files must be plain files")
        if st.st_size > max_bytes:
            raise ArtefactError(f"{rel} is {_mib(st.st_size)}, over the {_mib(max_bytes)} cap per artefact file")
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=dfd)
        except OSError as exc:  # swapped for a link since the lstat: ELOOP
            raise FileNotFoundError(f"{rel}: {exc.strerror}") from None
        fh = os.fdopen(fd, "rb")
        with fh:
            again = os.fstat(fd)
            if (again.st_ino, again.st_dev) != (st.st_ino, st.st_dev) or _why_not(again) is not None:
                raise FileNotFoundError(f"{rel} changed while it was opened; not read")
            yield fh, again.st_size


@contextmanager
def _walk_to_or_missing(root: Path, parts: list[str], rel: str) -> Iterator[int]:
    try:
        cm = _walk_to(root, parts)
        dfd = cm.__enter__()
    except OSError as exc:
        why = "a folder on the way is a symlink or missing" if exc.errno in (errno.ELOOP, errno.ENOTDIR,
                                                                               errno.ENOENT) else exc.strerror
        raise FileNotFoundError(f"{rel}: {why}") from None
    try:
        yield dfd
    finally:
        cm.__exit__(None, None, None)


def read_bytes(root: Path, rel: str, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The contents of the plain file ``root/rel`` (see :func:`open_regular` for the errors)."""
    with open_regular(root, rel, max_bytes=max_bytes) as (fh, _size):
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew after the size check
        raise ArtefactError(f"{rel} is over the {_mib(max_bytes)} cap per artefact file")
    return data


class _Budget:
    """Counts files and bytes against the limits; raises ArtefactError when the folder is over."""

    def __init__(self, limits: FileLimits, what: str) -> None:
        self.limits, self.what, self.report = limits, what, CopyReport()

    def file(self) -> None:
        self.report.files += 1
        if self.report.files > self.limits.files:
            raise ArtefactError(f"{self.what} has over {self.limits.files} files; not copying it")

    def add(self, n: int) -> None:
        self.report.bytes += n
        if self.report.bytes > self.limits.total_bytes:
            raise ArtefactError(f"{self.what} is over {_mib(self.limits.total_bytes)} in all; not copying it")


def plain_files(root: Path, *, limits: FileLimits = DEFAULT_LIMITS) -> list[tuple[str, int]]:
    """``(relative path, size)`` of the plain files under ``root``, sorted, walked as _files_copy.copy_tree does.

    Links, hard links, devices, FIFOs and sockets are left out and no link is followed; the walk
    stops at ``limits.files`` files and ``limits.depth`` folders deep (what was found so far is
    returned). Nothing is opened but folders: read each file with :func:`open_regular`.
    """
    found: list[tuple[str, int]] = []

    def walk(dfd: int, prefix: str, depth: int) -> None:
        if depth > limits.depth:
            return
        with os.scandir(dfd) as entries:
            names = sorted(e.name for e in entries)
        for name in names:
            if len(found) >= limits.files:
                return
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if _why_not(st) is not None:
                continue
            if stat.S_ISDIR(st.st_mode):
                child = _open_dir(name, dfd)
                try:
                    walk(child, prefix + name + "/", depth + 1)
                finally:
                    os.close(child)
            else:
                found.append((prefix + name, st.st_size))

    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return []
    try:
        walk(top, "", 0)
    except OSError:
        pass  # a folder changed or vanished under the walk: what was found
    finally:
        os.close(top)
    return found


def tree_digest(root: Path, *, limits: FileLimits = DEFAULT_LIMITS) -> bytes:
    """SHA-256 over the names and bytes of the plain files under ``root`` (walked as _files_copy.copy_tree does).

    Links, devices and FIFOs are left out; the walk stops at the folder's caps (what was read so
    far decides the digest), so it never reads more than ``limits.total_bytes``.
    """
    import hashlib

    digest = hashlib.sha256()
    budget = _Budget(limits, str(root))
    try:
        for rel, size in plain_files(root, limits=limits):
            if size > limits.file_bytes:
                continue
            budget.file()
            budget.add(size)
            with open_regular(root, rel, max_bytes=limits.file_bytes) as (fh, _size):
                digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
                digest.update(fh.read(limits.file_bytes + 1))
    except (ArtefactError, OSError):
        pass  # over a cap or unreadable: the digest of what was read
    return digest.digest()
