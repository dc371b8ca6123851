"""``agentbench open``: serve the report on 127.0.0.1 with a small JSON API for human verdicts.

The page is rendered afresh on every GET, so a verdict survives a reload.  Untrusted artefacts
run in the page's sandboxed iframes (opaque origin); the API therefore accepts a POST only with
the page's token header, a JSON body, our own Host and, when sent, our own Origin, so an
artefact (Origin ``null``) or another local site cannot record verdicts.  Files under the run
folders (transcripts, evidence) are served read-only with a ``sandbox`` CSP, never same-origin.

The token is never handed to a client that does not hold it already: any local user can connect
to 127.0.0.1, so every GET needs it. ``open`` prints (and opens) :attr:`ReportServer.open_url`,
which carries it once in the query; the server answers that with a redirect to the bare path and
an ``HttpOnly``, ``SameSite=Strict`` cookie naming this server's port, and from then on the
cookie opens the page, the JSON API and the run's files. Without either: 403, and no token.
"""

from __future__ import annotations

import json
import mimetypes
import secrets
import socket
import sys
import threading
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

import structlog

from .._files import open_regular
from ..errors import AgentbenchError, ArtefactError
from ._load import LoadedRun, load_runs
from ._render import render_report, run_relative
from ._verdicts import compute_ledger, load_verdicts, record_verdict

__all__ = ["ReportServer", "serve_until_interrupted"]

log = structlog.get_logger()
MAX_BODY = 64 * 1024
MAX_FILE = 256 * 1024 * 1024  # a run file served (transcripts can be large; evidence is small)
FILES_CSP = ("sandbox allow-scripts; default-src 'none'; script-src 'self' 'unsafe-inline' 'unsafe-eval' "
             "'wasm-unsafe-eval'; "
             "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; media-src 'self' data: blob:; "
             "font-src 'self' data:; connect-src 'none'; frame-src 'none'; worker-src blob:; object-src 'none'; "
             "base-uri 'none'; form-action 'none'")
_TEXT = {".jsonl", ".json", ".log", ".txt", ".md"}
TOKEN_PARAM = "token"
LOCKED_PAGE = (b"<!DOCTYPE html><title>agentbench report</title><p>This report needs its key: open the URL "
               b"<code>agentbench open</code> printed (it ends in <code>?token=...</code>).</p>")


class _Server(ThreadingHTTPServer):
    """A thread per connection; the open connections are known, so stopping never waits on a client.

    A browser keeps idle sockets open (preconnects), and any local process can open one and send
    half a request: their threads would sit in a read for ever. ``close_connections`` ends them.
    """

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # the client left, or stop() closed it
            log.debug("report.connection_closed", client=str(client_address))
            return
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        with self._open_lock:
            still_open = list(self._open)
        for conn in still_open:  # the handler's read or write fails at once and its thread ends
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class ReportServer:
    """The report and its verdict API on ``127.0.0.1`` (port 0: a free one), in a daemon thread.

    Use as a context manager, or ``start()`` / ``stop()``.  ``url`` is set once started.
    """

    def __init__(self, run_dirs: list[Path], *, host: str = "127.0.0.1", port: int = 0) -> None:
        load_runs(run_dirs)  # fail now, with the store's message, not on the first request
        self.run_dirs = list(run_dirs)
        self.token = secrets.token_urlsafe(24)
        self._host, self._port = host, port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The server's base URL; a GET there without the token (or its cookie) is refused."""
        if self._httpd is None:
            raise AgentbenchError("The report server is not running; call start() first.")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/"

    @property
    def open_url(self) -> str:
        """The URL to open (the one ``agentbench open`` prints): it carries the token once."""
        return f"{self.url}?{urlencode({TOKEN_PARAM: self.token})}"

    @property
    def cookie_name(self) -> str:
        # Cookies are per host, not per port: two servers on 127.0.0.1 must not share one.
        return f"agentbench_report_{self._httpd.server_address[1] if self._httpd else 0}"

    def start(self) -> ReportServer:
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = _Server((self._host, self._port), handler)
        # A short poll: stop() (Ctrl-C) waits for the loop to see the request, up to one interval.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="agentbench-report", daemon=True)
        self._thread.start()
        log.info("report.serve", url=self.url)
        return self

    def stop(self) -> None:
        """Stop at once: no new connection, and the open ones (idle, half-sent, mid-reply) are closed."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.close_connections()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- what the handler calls ------------------------------------------------------------------

    def runs(self) -> list[LoadedRun]:
        return load_runs(self.run_dirs)

    def run_dir(self, run_id: str) -> Path | None:
        for run in self.runs():
            if run.run_id == run_id:
                return run.run_dir
        return None

    def page(self) -> str:
        def link(run: LoadedRun, path: Path) -> str:
            return f"/files/{quote(run.run_id, safe='')}/{quote(run_relative(run, path))}"

        # Served, the page links evidence images instead of inlining them: it stays light to reload.
        return render_report(self.runs(), link, api_token=self.token, embed_images=False)


class _Handler(BaseHTTPRequestHandler):
    app: ReportServer
    server_version = "agentbench-report"

    def log_message(self, fmt: str, *args: Any) -> None:
        log.debug("report.http", line=fmt % args)

    # ---- replies -----------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _own_host(self) -> bool:
        # A DNS-rebound name pointing at 127.0.0.1 still sends its own Host: refuse it.
        port = self.server.server_address[1]
        return self.headers.get("Host", "") in (f"127.0.0.1:{port}", f"localhost:{port}")

    # ---- routes ------------------------------------------------------------------------------------

    def _holds_token(self) -> bool:
        try:
            jar = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            return False
        held = jar.get(self.app.cookie_name)
        return held is not None and secrets.compare_digest(held.value, self.app.token)

    def _unlock(self, path: str, query: str) -> bool:
        """The token in the query: set the cookie and redirect to the bare path (True when answered)."""
        given = parse_qs(query).get(TOKEN_PARAM)
        if not given:
            return False
        if not secrets.compare_digest(given[0], self.app.token):
            self._send(HTTPStatus.FORBIDDEN, LOCKED_PAGE, "text/html; charset=utf-8")
            return True
        cookie = f"{self.app.cookie_name}={self.app.token}; HttpOnly; SameSite=Strict; Path=/"
        self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": path, "Set-Cookie": cookie})
        return True

    def do_GET(self) -> None:
        if not self._own_host():
            return self._error(HTTPStatus.FORBIDDEN, "unexpected Host header")
        parts = urlsplit(self.path)
        path = parts.path
        if self._unlock(path, parts.query):
            return None
        if not self._holds_token():
            # Any local user can reach this port: the page (which carries the token) and the
            # run's files go only to the client that opened the printed URL.
            return self._send(HTTPStatus.FORBIDDEN, LOCKED_PAGE, "text/html; charset=utf-8")
        try:
            if path in ("/", "/index.html", "/report.html"):
                return self._send(HTTPStatus.OK, self.app.page().encode(), "text/html; charset=utf-8")
            if path == "/api/verdicts":
                return self._json(HTTPStatus.OK, {r.run_id: load_verdicts(r.run_dir).model_dump(mode="json")
                                                  for r in self.app.runs()})
            if path == "/api/ledger":
                return self._json(HTTPStatus.OK, compute_ledger(self.app.runs()).model_dump(mode="json"))
            if path.startswith("/files/"):
                return self._file(path[len("/files/"):])
        except AgentbenchError as exc:
            return self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(exc))
        self._error(HTTPStatus.NOT_FOUND, f"no such page: {path}")

    do_HEAD = do_GET

    def _file(self, rest: str) -> None:
        run_id, _, rel = rest.partition("/")
        run_dir = self.app.run_dir(unquote(run_id))
        if run_dir is None or not rel:
            return self._error(HTTPStatus.NOT_FOUND, "no such run or file")
        rel = unquote(rel)
        name = rel.rsplit("/", 1)[-1]
        if name.startswith("."):
            return self._error(HTTPStatus.NOT_FOUND, "no such file in the run")
        try:
            # Plain files inside the run only, reached without following a link; streamed, capped.
            with open_regular(run_dir, rel, max_bytes=MAX_FILE) as (fh, size):
                ctype = ("text/plain; charset=utf-8" if Path(name).suffix in _TEXT
                         else mimetypes.guess_type(name)[0] or "application/octet-stream")
                self._send_stream(fh, size, ctype)
        except FileNotFoundError:
            return self._error(HTTPStatus.NOT_FOUND, "no such file in the run")
        except ArtefactError as exc:
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, str(exc))

    def _send_stream(self, fh: Any, size: int, ctype: str) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(size))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        # An artefact opened straight from here runs sandboxed, never same-origin with the API,
        # and reaches nothing: the same rules as in the report page.
        self.send_header("Content-Security-Policy", FILES_CSP)
        self.end_headers()
        if self.command == "HEAD":
            return
        left = size
        while left > 0 and (chunk := fh.read(min(left, 1 << 20))):
            self.wfile.write(chunk)
            left -= len(chunk)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path != "/api/verdict":
            return self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {path}")
        port = self.server.server_address[1]
        origin = self.headers.get("Origin")
        if not self._own_host() or (origin is not None and origin not in
                                    (f"http://127.0.0.1:{port}", f"http://localhost:{port}")):
            return self._error(HTTPStatus.FORBIDDEN, "verdicts are recorded only from the report page")
        if not secrets.compare_digest(self.headers.get("X-Agentbench-Token", ""), self.app.token):
            return self._error(HTTPStatus.FORBIDDEN, "missing or wrong X-Agentbench-Token")
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send application/json")
        raw_length = (self.headers.get("Content-Length") or "").strip()
        lengths = self.headers.get_all("Content-Length") or []
        if not (raw_length.isascii() and raw_length.isdigit()) or len(lengths) != 1:
            self.close_connection = True  # the body's end is unknown: never read this connection on
            return self._error(HTTPStatus.BAD_REQUEST, "send one Content-Length: a whole number of bytes")
        length = int(raw_length) if len(raw_length) < 12 else MAX_BODY + 1
        if length > MAX_BODY:
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body must be 1..{MAX_BODY} bytes")
        if length == 0:
            return self._error(HTTPStatus.BAD_REQUEST, f"body must be 1..{MAX_BODY} bytes")
        try:
            body = json.loads(self.rfile.read(length))
            run_dir = self.app.run_dir(str(body["run"]))
            if run_dir is None:
                return self._error(HTTPStatus.NOT_FOUND, f"no run '{body['run']}' in this report")
            saved = record_verdict(run_dir, str(body["task"]), str(body["model"]), int(body["repeat"]),
                                   str(body["verdict"]), str(body.get("note") or ""))
        except (ValueError, KeyError, TypeError) as exc:
            return self._error(HTTPStatus.BAD_REQUEST, f"expected {{run, task, model, repeat, verdict, note}}: {exc}")
        except AgentbenchError as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        log.info("report.verdict", run=body["run"], cell=f"{saved.task}/{saved.model}/r{saved.repeat}",
                 verdict=saved.verdict)
        self._json(HTTPStatus.OK, {"ok": True, "verdict": saved.model_dump(mode="json")})


def serve_until_interrupted(run_dirs: list[Path], *, port: int = 0, browser: bool = True,
                            echo: Any = print) -> None:
    """Serve the report until Ctrl-C: print the URL and, if asked, open it in the default browser."""
    import webbrowser

    with ReportServer(run_dirs, port=port) as server:
        echo(f"Report at {server.open_url}  (Ctrl-C to stop)")
        if browser:
            try:
                webbrowser.open(server.open_url)
            except webbrowser.Error:
                pass  # no browser here: the URL is printed
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            echo("stopped")
