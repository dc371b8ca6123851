"""An artefact shown in report.html reached a loopback port with an <img> beacon (now a CSP).

Tried in real Chromium, with a positive control: the same page outside the report does reach it.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


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
<img src="http://127.0.0.1:{port}/img">
<script>
fetch("http://127.0.0.1:{port}/fetch").catch(() => {{}});
new Image().src = "http://127.0.0.1:{port}/js-img";
try {{ navigator.sendBeacon("http://127.0.0.1:{port}/beacon", "x"); }} catch (e) {{}}
</script></body></html>"""


@pytest.mark.browser
def test_artefacts_in_the_report_cannot_reach_the_network(tmp_path: Path, chromium_path: str) -> None:
    from playwright.sync_api import sync_playwright

    from agentbench.report import write_report
    from tests.report._runs import build_run

    _Beacons.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Beacons)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page_html = BEACON.format(port=server.server_address[1])
        run_dir = build_run(tmp_path / "artefacts")
        entry = run_dir / "flappy" / "alpha" / "r1" / "artefact" / "index.html"
        entry.write_text(page_html)
        report = write_report([run_dir])
        plain = tmp_path / "plain.html"
        plain.write_text(page_html)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path, args=["--no-sandbox"])
            try:
                # Positive control: the same page outside the report does reach the port.
                page = browser.new_page()
                page.goto(plain.as_uri())
                page.wait_for_timeout(1500)
                assert _Beacons.hits, "the control page reached nothing: this test could not fail"
                _Beacons.hits = []
                page = browser.new_page()
                page.goto(report.as_uri())
                frames = page.locator("iframe")
                assert frames.count() >= 1
                page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
                page.wait_for_timeout(2500)
                assert any("hostile" in (f.content() or "") for f in page.frames[1:]), "the artefact never loaded"
            finally:
                browser.close()
        assert _Beacons.hits == [], _Beacons.hits
    finally:
        server.shutdown()
        server.server_close()
