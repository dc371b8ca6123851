"""Artefact files are data (agentbench/_files.py): no link followed, no FIFO/device opened, capped."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path

import pytest

from agentbench._files import FileLimits, lookup, read_bytes
from agentbench._files_copy import copy_tree, extract_tar, staged_artefact
from agentbench.checks.browser._serve import MAX_SERVED_FILE, ServeBudget, serve_file
from agentbench.errors import ArtefactError

SECRET = "TOP-SECRET-4711"
HUGE = 1024 ** 4  # 1 TiB, sparse: no disk used


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """An artefact folder with every kind of path out: links to a secret file and a big folder,
    a hard link, a FIFO (which blocks a naive reader for ever) and a 1 TiB sparse file (reading
    it would take minutes, so a bound of seconds tells "not read" from "read" on any machine)."""
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "deep" / "more.txt").write_text(SECRET)
    art = tmp_path / "art"
    (art / "js").mkdir(parents=True)
    (art / "index.html").write_text("<p>page</p>")
    (art / "js" / "app.js").write_text("console.log(1)")
    (art / "shadow").symlink_to(outside / "secret.txt")
    (art / "rootlink").symlink_to(outside)
    (art / "js" / "up").symlink_to("../../outside")
    os.link(outside / "secret.txt", art / "hard.txt")
    os.mkfifo(art / "pipe")
    with open(art / "huge.bin", "wb") as fh:
        fh.truncate(HUGE)
    return art


def test_copy_takes_plain_files_only_and_lists_the_rest(hostile: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    report = copy_tree(hostile, tmp_path / "copy")
    assert time.monotonic() - started < 30  # the FIFO was not opened (a hang), the 1 TiB file not read
    got = sorted(str(p.relative_to(tmp_path / "copy")) for p in (tmp_path / "copy").rglob("*"))
    assert got == ["index.html", "js", "js/app.js"]
    skipped = dict(report.skipped)
    assert set(skipped) == {"shadow", "rootlink", "js/up", "hard.txt", "pipe", "huge.bin"}
    assert "symlink" in skipped["shadow"] and "FIFO" in skipped["pipe"] and "hard link" in skipped["hard.txt"]
    assert "cap per file" in skipped["huge.bin"]
    assert not any(SECRET in p.read_text() for p in (tmp_path / "copy").rglob("*") if p.is_file())


def test_copy_over_the_folder_caps_is_a_clear_error(tmp_path: Path) -> None:
    art = tmp_path / "art"
    art.mkdir()
    for i in range(5):
        (art / f"f{i}").write_bytes(b"x" * 1000)
    with pytest.raises(ArtefactError, match="in all"):
        copy_tree(art, tmp_path / "a", limits=FileLimits(total_bytes=3000))
    with pytest.raises(ArtefactError, match="over 3 files"):
        copy_tree(art, tmp_path / "b", limits=FileLimits(files=3))


def test_reads_refuse_links_fifos_escapes_and_size(hostile: Path) -> None:
    assert read_bytes(hostile, "js/app.js") == b"console.log(1)"
    for rel in ("shadow", "rootlink/secret.txt", "js/up/secret.txt", "../outside/secret.txt", "/etc/passwd",
                "pipe", "hard.txt", "js"):
        with pytest.raises(FileNotFoundError):
            read_bytes(hostile, rel)
    with pytest.raises(ArtefactError, match="cap per artefact file"):
        read_bytes(hostile, "huge.bin")
    assert lookup(hostile, "shadow") is None and lookup(hostile, "js") is not None


def test_harness_route_serves_plain_files_and_refuses_a_huge_file_unread(hostile: Path) -> None:
    budget = ServeBudget()
    assert serve_file(hostile, "/js/app.js", budget)[:2] == (200, b"console.log(1)")
    assert serve_file(hostile, "/", budget)[:2] == (200, b"<p>page</p>")
    for path in ("/shadow", "/rootlink/secret.txt", "/js/up/secret.txt", "/../outside/secret.txt", "/pipe",
                 "/hard.txt"):
        status, body, _ = serve_file(hostile, path, budget)
        assert status == 404 and SECRET.encode() not in body, path
    started = time.monotonic()
    status, body, _ = serve_file(hostile, "/huge.bin", budget)
    assert status == 413 and time.monotonic() - started < 30 and len(body) < 200  # refused unread
    # A page that fetches the same file over and over runs out of its share.
    (hostile / "chunk.bin").write_bytes(b"x" * (MAX_SERVED_FILE // 4))
    small = ServeBudget(limit=MAX_SERVED_FILE)
    assert [serve_file(hostile, "/chunk.bin", small)[0] for _ in range(5)] == [200, 200, 200, 200, 429]


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    buf.seek(0)
    return buf


def _info(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size, link
    return info


def test_extract_refuses_links_devices_and_escapes(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("keep")
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "trap").symlink_to(tmp_path)  # a link already in dest must not be written through
    members = [
        (_info("./index.html", size=4), b"page"),
        (_info("./sub/a.js", size=2), b"js"),
        (_info("./leak", tarfile.SYMTYPE, link="/etc/passwd"), None),
        (_info("./hard", tarfile.LNKTYPE, link="/etc/passwd"), None),
        (_info("./dev", tarfile.CHRTYPE), None),
        (_info("./fifo", tarfile.FIFOTYPE), None),
        (_info("/abs.txt", size=1), b"x"),
        (_info("../up.txt", size=1), b"x"),
        (_info("./trap/outside.txt", size=5), b"owned"),
    ]
    with tarfile.open(fileobj=_tar(members), mode="r|") as tar:
        report = extract_tar(tar, dest)
    got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if not p.is_symlink())
    assert got == ["index.html", "sub", "sub/a.js"]
    assert (tmp_path / "outside.txt").read_text() == "keep"
    assert not (tmp_path / "abs.txt").exists() and not (tmp_path / "up.txt").exists()
    assert {"leak", "hard", "dev", "fifo", "/abs.txt", "../up.txt"} <= {rel for rel, _ in report.skipped}


def test_extract_caps_each_file_and_the_whole(tmp_path: Path) -> None:
    members = [(_info("big.bin", size=5000), b"y" * 5000), (_info("ok.txt", size=2), b"ok")]
    with tarfile.open(fileobj=_tar(members), mode="r|") as tar:
        report = extract_tar(tar, tmp_path / "d", limits=FileLimits(file_bytes=4000))
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["ok.txt"]
    assert "cap per file" in dict(report.skipped)["big.bin"]
    with tarfile.open(fileobj=_tar(members), mode="r|") as tar, pytest.raises(ArtefactError, match="in all"):
        extract_tar(tar, tmp_path / "e", limits=FileLimits(total_bytes=3000))


def test_staged_copy_is_removed_on_every_way_out(hostile: Path) -> None:
    with staged_artefact(hostile, "index.html") as (work, _report):
        assert (work / "artefact" / "index.html").is_file()
    assert not work.exists()
    with pytest.raises(KeyboardInterrupt), staged_artefact(hostile, "index.html") as (work, _report):
        raise KeyboardInterrupt
    assert not work.exists()
    with pytest.raises(FileNotFoundError, match="symlink"), staged_artefact(hostile / "shadow", "index.html"):
        pass
