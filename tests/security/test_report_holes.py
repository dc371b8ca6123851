"""The report never embeds or serves a file through a link; the verdict server refuses bad lengths."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx

from agentbench.report import ReportServer, write_report
from tests.report._runs import build_run

SECRET = "TOP-SECRET-4711"


def _plant_links(run_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(f"<p>{SECRET}</p>")
    entry = run_dir / "flappy" / "alpha" / "r1" / "artefact" / "index.html"
    entry.unlink()
    entry.symlink_to(secret)
    transcript = run_dir / "todo" / "alpha" / "r1" / "transcript.jsonl"
    transcript.unlink()
    transcript.symlink_to(secret)


def test_report_and_open_never_follow_a_link(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path / "artefacts")
    _plant_links(run_dir, tmp_path)
    html = write_report([run_dir]).read_text()
    assert SECRET not in html
    assert 'http-equiv="Content-Security-Policy"' in html and "connect-src &#39;none&#39;" in html
    with ReportServer([run_dir]) as server, httpx.Client(base_url=server.url, timeout=10, follow_redirects=True) as c:
        page = c.get(server.open_url)  # `agentbench open` died here with a traceback
        assert page.status_code == 200 and SECRET not in page.text
        for rel in ("flappy/alpha/r1/artefact/index.html", "todo/alpha/r1/transcript.jsonl"):
            got = c.get(f"/files/run-a/{rel}")
            assert got.status_code == 404 and SECRET not in got.text


def _raw_post(url: str, length: str) -> bytes:
    host, port = url.split("//", 1)[1].rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall((f"POST /api/verdict HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Agentbench-Token: x\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{}}").encode())
        return s.recv(4096)


def test_verdict_server_refuses_malformed_negative_and_huge_lengths(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path / "artefacts")
    with ReportServer([run_dir]) as server:
        server.token = "x"
        cases = (("abc", b" 400 "), ("-5", b" 400 "), ("\xb2", b" 400 "), ("99999999999999999999", b" 413 "))
        for length, status in cases:
            head = _raw_post(server.url, length).split(b"\r\n", 1)[0]
            assert status in head, (length, head)
