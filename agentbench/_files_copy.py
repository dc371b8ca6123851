"""Artefact files written into a new folder: a copy, an extracted tar, a private staging copy.

The writing half of :mod:`agentbench._files`, on its walks and caps: nothing is written through
a link (even one already in the destination), only plain single-link files and folders are taken,
and what is left out is listed in the :class:`~agentbench._files.CopyReport`.
"""

from __future__ import annotations

import os
import posixpath
import stat
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ._files import (
    _NOFOLLOW,
    DEFAULT_LIMITS,
    CopyReport,
    FileLimits,
    _Budget,
    _mib,
    _open_dir,
    _why_not,
    open_regular,
    safe_parts,
)
from .errors import ArtefactError

__all__ = ["copy_tree", "extract_tar", "staged_artefact"]

_CHUNK = 1024 * 1024


def _write_from(src: IO[bytes], name: str, dest_dfd: int, budget: _Budget, rel: str) -> bool:
    """Copy src into a new file; False (and the file removed) when it is over the per-file cap."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=dest_dfd)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > budget.limits.file_bytes:
                break
            budget.add(len(chunk))
            out.write(chunk)
    if written > budget.limits.file_bytes:
        os.unlink(name, dir_fd=dest_dfd)
        budget.report.skipped.append((rel, f"over the {_mib(budget.limits.file_bytes)} cap per file"))
        return False
    return True


def copy_tree(src: Path, dest: Path, *, limits: FileLimits = DEFAULT_LIMITS) -> CopyReport:
    """Copy the plain files and folders under ``src`` into ``dest`` (created; must not exist).

    Symlinks, hard links, FIFOs, sockets, devices and files over the per-file cap are left out
    and listed in the report; over the folder's byte or file cap raises ArtefactError.
    """
    budget = _Budget(limits, str(src))
    dest.mkdir(parents=True)
    src_fd = os.open(src, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    dest_fd = _open_dir(str(dest), None)
    try:
        _copy_dir(src_fd, dest_fd, "", budget, 0)
    finally:
        os.close(src_fd)
        os.close(dest_fd)
    return budget.report


def _copy_dir(src_fd: int, dest_fd: int, prefix: str, budget: _Budget, depth: int) -> None:
    if depth > budget.limits.depth:
        raise ArtefactError(f"{budget.what} nests folders over {budget.limits.depth} deep; not copying it")
    with os.scandir(src_fd) as entries:
        names = sorted(e.name for e in entries)
    for name in names:
        rel = prefix + name
        st = os.stat(name, dir_fd=src_fd, follow_symlinks=False)
        why = _why_not(st)
        if why is not None:
            budget.report.skipped.append((rel, why))
            continue
        if stat.S_ISDIR(st.st_mode):
            child = _open_dir(name, src_fd)
            try:
                os.mkdir(name, 0o755, dir_fd=dest_fd)
                child_dest = _open_dir(name, dest_fd)
                try:
                    _copy_dir(child, child_dest, rel + "/", budget, depth + 1)
                finally:
                    os.close(child_dest)
            finally:
                os.close(child)
            continue
        budget.file()
        if st.st_size > budget.limits.file_bytes:
            budget.report.skipped.append((rel, f"{_mib(st.st_size)}, over the "
                                               f"{_mib(budget.limits.file_bytes)} cap per file"))
            continue
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=src_fd)
        with os.fdopen(fd, "rb") as fh:
            if _why_not(os.fstat(fd)) is not None:  # swapped since the lstat
                budget.report.skipped.append((rel, "changed while it was copied"))
                continue
            _write_from(fh, name, dest_fd, budget, rel)


def extract_tar(tar: tarfile.TarFile, dest: Path, *, strip: str = "", limits: FileLimits = DEFAULT_LIMITS,
                what: str = "the archive") -> CopyReport:
    """Extract the regular files and folders of a tar (read as a stream) into ``dest``.

    Member names lose the ``strip`` prefix; absolute names, ``..``, symlinks, hard links,
    devices and FIFOs are left out and listed; over the caps as in :func:`copy_tree`. Nothing
    is written through a link, even one already in ``dest``.
    """
    budget = _Budget(limits, what)
    dest.mkdir(parents=True, exist_ok=True)
    root_fd = _open_dir(str(dest), None)
    try:
        for member in tar:
            name = member.name
            if strip:
                if name.rstrip("/") == strip.rstrip("/"):
                    continue
                if not name.startswith(strip):
                    budget.report.skipped.append((name, f"outside {strip}"))
                    continue
                name = name[len(strip):]
            name = posixpath.normpath(name) if name else name
            if name == ".":
                continue  # the folder itself (`tar -C dir .` names it ./)
            try:
                parts = safe_parts(name)
            except ValueError as exc:
                budget.report.skipped.append((member.name, str(exc)))
                continue
            if len(parts) > limits.depth:
                raise ArtefactError(f"{what} nests folders over {limits.depth} deep; not copying it")
            if member.isdir():
                try:
                    os.close(_mkdirs(root_fd, parts, keep_root=False))
                except OSError as exc:
                    budget.report.skipped.append((name, f"cannot make the folder ({exc.strerror})"))
                continue
            if not member.isreg():
                kind = ("a symlink" if member.issym() else "a hard link" if member.islnk()
                        else "a FIFO" if member.isfifo() else "a device or special file")
                budget.report.skipped.append((name, f"{kind} (not copied)"))
                continue
            budget.file()
            if member.size > limits.file_bytes:
                budget.report.skipped.append((name, f"{_mib(member.size)}, over the "
                                                    f"{_mib(limits.file_bytes)} cap per file"))
                continue
            fh = tar.extractfile(member)
            assert fh is not None  # a regular member always has data
            try:
                parent = _mkdirs(root_fd, parts[:-1])
            except OSError as exc:  # a link or a file where a folder should be: never written through
                budget.report.skipped.append((name, f"a folder on its way is not a folder ({exc.strerror})"))
                continue
            try:
                try:
                    os.unlink(parts[-1], dir_fd=parent)  # a later member of the same name wins
                except FileNotFoundError:
                    pass
                except IsADirectoryError:
                    budget.report.skipped.append((name, "a folder of that name is in the way"))
                    continue
                _write_from(fh, parts[-1], parent, budget, name)
            finally:
                if parent != root_fd:
                    os.close(parent)
    finally:
        os.close(root_fd)
    return budget.report


def _mkdirs(root_fd: int, parts: list[str], *, keep_root: bool = True) -> int:
    """A descriptor of root/parts (folders created as needed, never through a link).

    Returns root_fd itself for no parts when keep_root, else always a new descriptor.
    """
    fd = root_fd if keep_root or parts else os.dup(root_fd)
    for part in parts:
        try:
            os.mkdir(part, 0o755, dir_fd=fd)
        except FileExistsError:
            pass
        try:
            nxt = _open_dir(part, fd)
        finally:
            if fd != root_fd:
                os.close(fd)
        fd = nxt
    return fd


@contextmanager
def staged_artefact(path: Path, entry: str, *,
                    limits: FileLimits = DEFAULT_LIMITS) -> Iterator[tuple[Path, CopyReport]]:
    """A private temporary copy of an artefact folder (or of one HTML file as ``entry``).

    Yields ``(temporary folder, report)``: the copy is ``folder/artefact``. The folder is
    removed on every way out (an exception or Ctrl-C included). A path that is itself a symlink
    to a file is refused: the file named is the artefact, and a link is not data.
    """
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="agentbench-check-"))
    try:
        if path.is_dir():
            report = copy_tree(path, work / "artefact", limits=limits)
        else:
            (work / "artefact").mkdir()
            report = CopyReport()
            with open_regular(path.parent, path.name, max_bytes=limits.file_bytes) as (fh, size):
                parts = safe_parts(entry)
                dest_fd = _open_dir(str(work / "artefact"), None)
                parent = _mkdirs(dest_fd, parts[:-1])
                try:
                    budget = _Budget(limits, str(path))
                    budget.file()
                    _write_from(fh, parts[-1], parent, budget, path.name)
                    report = budget.report
                finally:
                    if parent != dest_fd:
                        os.close(parent)
                    os.close(dest_fd)
        yield work, report
    finally:
        shutil.rmtree(work, ignore_errors=True)
