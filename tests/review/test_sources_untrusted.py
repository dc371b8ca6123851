"""The reviewer's prompt reads a model's files as data: no link followed, no FIFO opened, no more read than shown."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from agentbench.review._prompt import collect_sources


def _artefact(tmp_path: Path) -> Path:
    art = tmp_path / "artefact"
    (art / "js").mkdir(parents=True)
    (art / "index.html").write_text("<script src='js/game.js'></script>\n", encoding="utf-8")
    (art / "js" / "game.js").write_text("let score = 0;\n", encoding="utf-8")
    return art


def test_entry_first_then_the_rest_in_order(tmp_path: Path) -> None:
    art = _artefact(tmp_path)
    (art / "a.css").write_text("body{}\n", encoding="utf-8")
    got = collect_sources(art, "index.html", 10_000)
    assert [f.name for f in got] == ["index.html", "a.css", "js/game.js"]
    assert got[2].text == "let score = 0;\n" and got[2].total == len(got[2].text)


def test_links_fifos_and_hard_links_are_never_read(tmp_path: Path) -> None:
    art = _artefact(tmp_path)
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.js").write_text("const KEY = 'sk-outside';\n", encoding="utf-8")
    os.symlink(outside / "key.js", art / "link.js")
    os.symlink(outside, art / "linked-folder")
    os.link(outside / "key.js", art / "hard.js")
    os.mkfifo(art / "pipe.js")
    result: list = []
    # A FIFO opened for reading with no writer blocks for ever: collect in a thread the test can wait on.
    worker = threading.Thread(target=lambda: result.append(collect_sources(art, "index.html", 10_000)), daemon=True)
    worker.start()
    from tests.helpers.waiting import HANG_S

    worker.join(timeout=HANG_S)  # a bound only a FIFO that blocks for ever reaches
    if worker.is_alive():  # unblock the reader so the process can end, then fail
        with open(art / "pipe.js", "w"):
            pass
        raise AssertionError("collect_sources blocked on a FIFO in the artefact")
    names = [f.name for f in result[0]]
    assert names == ["index.html", "js/game.js"]
    assert all("sk-outside" not in f.text for f in result[0])


def test_a_huge_file_is_read_only_as_far_as_shown(tmp_path: Path) -> None:
    art = _artefact(tmp_path)
    big = art / "big.js"
    with big.open("w", encoding="utf-8") as fh:
        fh.write("x" * (8 * 1024 * 1024))
    got = {f.name: f for f in collect_sources(art, "index.html", 1_000)}
    assert len(got["big.js"].text) == 1_000 - len(got["index.html"].text)
    assert got["big.js"].total == 8 * 1024 * 1024  # the size is told, not read
