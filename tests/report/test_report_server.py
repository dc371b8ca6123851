"""`agentbench open`'s server: real loopback HTTP, the verdict API and what it refuses."""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agentbench.report import ReportServer, load_verdicts

ROOT = Path(__file__).resolve().parents[2]


def _token(page: str) -> str:
    m = re.search(r'name="agentbench-api-token" content="([^"]+)"', page)
    assert m, "the served page carries the API token"
    return m.group(1)


def _post(client: httpx.Client, body: dict, **headers: str) -> httpx.Response:
    return client.post("/api/verdict", content=json.dumps(body),
                       headers={"Content-Type": "application/json", **headers})


def test_server_records_verdicts_and_refuses_strangers(run_dir: Path) -> None:
    body = {"run": "run-a", "task": "todo", "model": "alpha", "repeat": 1, "verdict": "pass", "note": "works"}
    with ReportServer([run_dir]) as server:
        assert server.url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=server.url, timeout=10, follow_redirects=True) as c:
            page = c.get(server.open_url)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            assert str(page.url) == server.url  # the token left the address bar for a cookie
            token = _token(page.text)
            assert "disabled" not in page.text.split('class="human"', 1)[1].split("</div>", 1)[0]

            assert _post(c, body).status_code == 403  # no token
            assert _post(c, body, **{"X-Agentbench-Token": "guess"}).status_code == 403
            ok = {"X-Agentbench-Token": token}
            assert _post(c, body, Origin="null", **ok).status_code == 403  # a sandboxed artefact
            assert _post(c, body, Origin="http://evil.example", **ok).status_code == 403
            assert _post(c, body, Host="evil.example", **ok).status_code == 403  # DNS rebinding
            form = c.post("/api/verdict", data=body, headers=ok)
            assert form.status_code == 415
            assert not (run_dir / "verdicts.json").exists()

            bad = _post(c, {**body, "model": "gamma"}, **ok)
            assert bad.status_code == 400 and "no attempt todo/gamma/r1" in bad.json()["error"]
            assert _post(c, {**body, "verdict": "meh"}, **ok).status_code == 400
            assert _post(c, {"run": "run-a"}, **ok).status_code == 400
            assert _post(c, {**body, "run": "other"}, **ok).status_code == 404

            origin = server.url.rstrip("/")
            saved = _post(c, body, Origin=origin, **ok)
            assert saved.status_code == 200, saved.text
            assert saved.json()["verdict"]["verdict"] == "pass"
            assert load_verdicts(run_dir).get("todo", "alpha", 1).note == "works"
            assert c.get("/api/verdicts").json()["run-a"]["verdicts"]["todo/alpha/r1"]["verdict"] == "pass"
            assert c.get("/api/ledger").json()["judged"] == 1
            again = c.get("/").text  # rendered afresh: the verdict is on the page
            assert 'data-uid="run-a/todo/alpha/r1" data-run="run-a"' in again
            assert again.count('" data-current="pass"') == 1  # only that attempt's box

            strip = "/files/run-a/flappy/beta/r1/evidence/strip-60.png"
            assert f'src="{strip}"' in again and "data:image/png" not in again  # linked, not inlined
            image = c.get(strip)
            assert image.status_code == 200 and image.headers["content-type"] == "image/png"
            assert image.content.startswith(b"\x89PNG")
            transcript = c.get("/files/run-a/todo/alpha/r1/transcript.jsonl")
            assert transcript.status_code == 200 and transcript.headers["content-type"].startswith("text/plain")
            artefact = c.get("/files/run-a/flappy/beta/r1/artefact/index.html")
            assert artefact.status_code == 200
            csp = artefact.headers["content-security-policy"]
            assert csp.startswith("sandbox allow-scripts;")  # never same-origin
            assert "connect-src 'none'" in csp and "default-src 'none'" in csp  # and it reaches nothing
            assert c.get("/files/run-a/%2e%2e/%2e%2e/etc/passwd").status_code == 404
            assert c.get("/files/run-a/.verdicts.lock").status_code == 404
            assert c.get("/files/nope/run.json").status_code == 404
            assert c.get("/nothing").status_code == 404
        url = server.url
    with pytest.raises(httpx.TransportError):
        httpx.get(url, timeout=2)


def _read_line(proc: subprocess.Popen, deadline: float) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""
    while time.monotonic() < deadline and not buf.endswith(b"\n"):
        if sel.select(timeout=0.2):
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            buf += chunk
    return buf.decode()


def test_open_command_serves_posts_and_stops(run_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "agentbench.cli", "open", str(run_dir), "--no-browser"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = _read_line(proc, time.monotonic() + 30)
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, f"no URL printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        with httpx.Client(base_url=m.group(0), timeout=10, follow_redirects=True) as c:
            token = _token(c.get(line.split()[2]).text)  # "Report at URL  (Ctrl-C to stop)"
            res = _post(c, {"run": "run-a", "task": "flappy", "model": "beta", "repeat": 1, "verdict": "fail"},
                        **{"X-Agentbench-Token": token})
            assert res.status_code == 200, res.text
        assert load_verdicts(run_dir).get("flappy", "beta", 1).verdict == "fail"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_the_token_goes_only_to_a_client_that_holds_it(run_dir: Path) -> None:
    """Any local user can connect to 127.0.0.1: without the printed URL's token, nothing is served."""
    with ReportServer([run_dir]) as server:
        with httpx.Client(base_url=server.url, timeout=10) as stranger:
            for path in ("/", "/index.html", "/api/verdicts", "/api/ledger",
                         "/files/run-a/flappy/beta/r1/evidence/strip-60.png", "/?token=guess"):
                got = stranger.get(path)
                assert got.status_code == 403 and server.token not in got.text, path
            port = int(server.url.rsplit(":", 1)[1].strip("/"))
            assert stranger.get("/", headers={"Cookie": f"agentbench_report_{port}=guess"}).status_code == 403
            other = f"agentbench_report_{port + 1}={server.token}"
            assert stranger.get("/", headers={"Cookie": other}).status_code == 403  # another server's cookie
        assert server.open_url.startswith(server.url) and server.token in server.open_url
        with httpx.Client(base_url=server.url, timeout=10) as owner:
            first = owner.get(server.open_url)
            assert first.status_code == 303 and first.headers["location"] == "/"
            cookie = first.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            page = owner.get("/")
            assert page.status_code == 200 and _token(page.text) == server.token
