"""`agentbench open`'s server: real loopback HTTP, the verdict API and what it refuses."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from agentbench.report import ReportServer, load_verdicts
from tests.helpers.procs import interruptible, read_line
from tests.helpers.waiting import HANG_S, until

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


def _open_cmd(run_dir: Path) -> tuple[subprocess.Popen, str]:
    """``agentbench open`` started as from a terminal (Ctrl-C reaches it); returns it and its URL line."""
    proc = interruptible([sys.executable, "-m", "agentbench.cli", "open", str(run_dir), "--no-browser"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = read_line(proc, HANG_S)
    if not re.search(r"http://127\.0\.0\.1:(\d+)/", line):
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"no URL printed: {line!r} {err.decode(errors='replace')}")
    return proc, line


def _ctrl_c(proc: subprocess.Popen) -> tuple[int, str]:
    """SIGINT, then wait for the exit (a bound only a server that waits on something reaches).

    Returns the exit code and stdout, after checking that nothing went wrong on stderr."""
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=HANG_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err.decode(errors="replace"), err
    return proc.returncode, out.decode(errors="replace")


def test_open_command_serves_posts_and_stops(run_dir: Path) -> None:
    proc, line = _open_cmd(run_dir)
    try:
        base = re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(0)
        with httpx.Client(base_url=base, timeout=HANG_S, follow_redirects=True) as c:
            token = _token(c.get(line.split()[2]).text)  # "Report at URL  (Ctrl-C to stop)"
            res = _post(c, {"run": "run-a", "task": "flappy", "model": "beta", "repeat": 1, "verdict": "fail"},
                        **{"X-Agentbench-Token": token})
            assert res.status_code == 200, res.text
        assert load_verdicts(run_dir).get("flappy", "beta", 1).verdict == "fail"
    finally:
        code, out = _ctrl_c(proc)
    assert code == 0 and out.strip().endswith("stopped"), out


def _held_clients(port: int) -> list[socket.socket]:
    """Connections a browser or a stranger leaves open: idle, half a request head, half a POST body."""
    idle = socket.create_connection(("127.0.0.1", port))
    head = socket.create_connection(("127.0.0.1", port))
    head.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)
    body = socket.create_connection(("127.0.0.1", port))
    body.sendall(b"POST /api/verdict HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Agentbench-Token: x\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{" % port)
    held = [idle, head, body]
    for s in held:
        s.settimeout(HANG_S)
    return held


def _closed_by_server(s: socket.socket) -> bool:
    """True once the server closed the connection (EOF or reset); blocks until it does (or HANG_S)."""
    try:
        while s.recv(65536):
            pass  # a 403 for the token-less POST head may come first; then the close
    except (ConnectionResetError, BrokenPipeError):
        pass
    except TimeoutError:
        return False
    return True


def test_ctrl_c_stops_open_while_clients_hold_connections(run_dir: Path) -> None:
    """Ctrl-C never waits on a client: with idle and half-sent requests still open, open stops at once."""
    proc, line = _open_cmd(run_dir)
    port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(1))
    held = _held_clients(port)
    try:
        # Every connection reached a handler (the server answers a complete request after them).
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=HANG_S).status_code == 403
        started = time.monotonic()
        code, out = _ctrl_c(proc)
        took = time.monotonic() - started
        assert code == 0 and out.strip().endswith("stopped"), out
        assert all(_closed_by_server(s) for s in held)  # the clients were cut off, not waited for
        print(f"agentbench open stopped {took:.2f} s after Ctrl-C with {len(held)} connections held open")
    finally:
        for s in held:
            s.close()


def test_stop_closes_connections_still_open(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In process: stop() returns with every open connection closed, so no handler thread outlives it."""
    server = ReportServer([run_dir]).start()
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    held = _held_clients(port)
    try:
        assert httpx.get(server.url, timeout=HANG_S).status_code == 403  # the three were accepted before it
        server.stop()
        assert all(_closed_by_server(s) for s in held)
        until(lambda: not [t for t in threading.enumerate() if "process_request" in t.name],
              "the report server's handler threads to end")
        assert "Traceback" not in capsys.readouterr().err  # a client cut off is no error to print
    finally:
        for s in held:
            s.close()


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
