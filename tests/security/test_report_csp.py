"""An artefact shown in report.html reached a loopback port with an <img> beacon (now a CSP).

Tried in real Chromium, with a positive control: the same page outside the report does reach it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers.waiting import HANG_S

# ---- the report's CSP stops artefact beacons -------------------------------------------------


class _Beacons(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_args) -> None:
        return None


BEACON = """<!DOCTYPE html><html><body><p>hostile</p>
<img src="http://127.0.0.1:{port}/{who}img">
<script>
fetch("http://127.0.0.1:{port}/{who}fetch").catch(() => {{}});
new Image().src = "http://127.0.0.1:{port}/{who}js-img";
try {{ navigator.sendBeacon("http://127.0.0.1:{port}/{who}beacon", "x"); }} catch (e) {{}}
</script></body></html>"""


def _run_until(page, cond: Callable[[], object], what: str) -> float:
    """Let the page run until cond() holds; the seconds it took (a bound only a hang reaches)."""
    started = time.monotonic()
    while not cond():
        assert time.monotonic() - started < HANG_S, f"waited {HANG_S:g} s for {what}"
        page.wait_for_timeout(50)
    return time.monotonic() - started


def _artefact_loaded(page) -> bool:
    for frame in page.frames[1:]:
        try:
            if "hostile" in (frame.content() or ""):
                return True
        except Exception:  # noqa: BLE001 - a frame still navigating has no content yet
            pass
    return False


@pytest.mark.browser
def test_artefacts_in_the_report_cannot_reach_the_network(tmp_path: Path, chromium_path: str) -> None:
    from playwright.sync_api import sync_playwright

    from agentbench.report import write_report
    from tests.report._runs import build_run

    _Beacons.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Beacons)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        page_html = BEACON.format(port=port, who="artefact-")
        run_dir = build_run(tmp_path / "artefacts")
        entry = run_dir / "flappy" / "alpha" / "r1" / "artefact" / "index.html"
        entry.write_text(page_html)
        report = write_report([run_dir])
        plain = tmp_path / "plain.html"
        plain.write_text(BEACON.format(port=port, who="control-"))  # its late hits are told apart
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path, args=["--no-sandbox"])
            try:
                # Positive control: the same page outside the report does reach the port.
                page = browser.new_page()
                page.goto(plain.as_uri())
                reach_s = _run_until(page, lambda: _Beacons.hits,
                                     "the control page to reach the port (else this test could not fail)")
                page = browser.new_page()
                page.goto(report.as_uri())
                frames = page.locator("iframe")
                assert frames.count() >= 1
                page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
                _run_until(page, lambda: _artefact_loaded(page), "the artefact to load in the report")
                # Nothing may arrive: give it several times what the control needed on this machine.
                page.wait_for_timeout(1000 * max(2.5, 4 * reach_s))
            finally:
                browser.close()
        assert [h for h in _Beacons.hits if not h.startswith("/control-")] == [], _Beacons.hits
    finally:
        server.shutdown()
        server.server_close()
