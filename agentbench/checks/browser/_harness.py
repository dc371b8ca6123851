"""The browser harness: one Chromium per check run, a fresh context per probe, a virtual clock.

Each :class:`PageSession` serves the artefact folder from a route-served origin
(``https://artefact.local/``), blocks and records every request to any other origin, injects
``_clock.js`` before page code and steps it at an exact frame rate. Every step that runs page
code has a hard time limit: on timeout ``Runtime.terminateExecution`` is sent over a CDP session
opened before the page loaded, so infinite loops, busy-waits, alert storms and navigation away
end in a verdict (``session.broken`` says why) instead of a hung harness.
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
from pathlib import Path
from typing import Any, Self
from urllib.parse import unquote, urlsplit

import structlog
from playwright.async_api import Browser, async_playwright
from playwright.async_api import Error as PlaywrightError

from ...errors import CheckError
from ._frames import Frame
from ._page import ORIGIN, PageBroken, PageSession

__all__ = ["ORIGIN", "BrowserHarness", "Frame", "PageBroken", "PageSession"]

log = structlog.get_logger()


DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--mute-audio",
    "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    # Nothing leaves the machine even where routing cannot see it (WebSockets, WebRTC).
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    # A runaway allocation crashes the tab at 512 MB instead of eating the machine.
    "--js-flags=--max-old-space-size=512",
]
_CLOCK_JS = (Path(__file__).with_name("_clock.js")).read_text(encoding="utf-8")


class BrowserHarness:
    """One Chromium per check run (async Playwright, /usr/bin/chromium by default).

    Use as ``async with BrowserHarness() as h: s = await h.open(folder)``. ``page_errors``
    gathers the page errors of every session opened, for the shared ``runtime-errors`` check.
    """

    def __init__(self, chromium_path: str | None = None) -> None:
        self.chromium_path = chromium_path or DEFAULT_CHROMIUM
        self.page_errors: list[str] = []
        self.blocked: list[str] = []
        self.dialogs: list[str] = []
        self.sessions_opened = 0
        self.virtual_s = 0.0  # virtual seconds simulated by every session (for benchmarks)
        self._pw: Any = None
        self._browser: Browser | None = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch Chromium; raises CheckError with an install hint when it cannot."""
        if not Path(self.chromium_path).exists():
            raise CheckError(f"Chromium not found at {self.chromium_path}: install it "
                             "(`apt-get install chromium`) or set AGENTBENCH_CHROMIUM")
        try:
            self._pw = await async_playwright().start()
            self._browser = await self._pw.chromium.launch(
                executable_path=self.chromium_path, headless=True, args=CHROMIUM_ARGS, timeout=60_000)
        except PlaywrightError as exc:
            await self.close()
            raise CheckError(f"could not launch Chromium at {self.chromium_path}: {exc.message}") from exc

    async def close(self) -> None:
        try:
            if self._browser is not None:
                await asyncio.wait_for(self._browser.close(), 15)
        except (TimeoutError, PlaywrightError):
            pass
        finally:
            self._browser = None
            if self._pw is not None:
                try:
                    await asyncio.wait_for(self._pw.stop(), 15)
                except (TimeoutError, PlaywrightError):
                    pass
                self._pw = None

    async def open(self, artefact_dir: Path, entry: str = "index.html", *, fps: int = 60, seed: int = 1,
                   viewport: tuple[int, int] = (800, 600), step_timeout_s: float = 5.0,
                   capture_width: int = 160) -> PageSession:
        """Open the artefact in a fresh context with the virtual clock at ``fps``; returns after load.

        Never raises for a broken artefact: a page that hangs, crashes or navigates away at load
        comes back with ``session.broken`` set. Raises CheckError when the harness itself fails.
        """
        if self._browser is None:
            raise CheckError("BrowserHarness.open called before start() / async with")
        root = Path(artefact_dir).resolve()
        if not (root / entry).is_file():
            raise CheckError(f"artefact entry {root / entry} does not exist")
        try:
            context = await self._browser.new_context(
                viewport={"width": viewport[0], "height": viewport[1]}, device_scale_factor=1,
                service_workers="block", locale="en-US", timezone_id="UTC", accept_downloads=False)
        except PlaywrightError as exc:
            raise CheckError(f"could not open a browser context: {exc.message}") from exc
        self.sessions_opened += 1
        cfg = {"fps": fps, "seed": seed, "epoch": 1704067200000, "capWidth": capture_width}
        session = PageSession(self, context, fps=fps, step_timeout_s=step_timeout_s,
                              viewport=viewport, capture_width=capture_width)
        try:
            await context.add_init_script(script=f"window.__AB_CFG = {json.dumps(cfg)};\n{_CLOCK_JS}")
            await context.route("**/*", lambda route: self._serve(route, root, session))
            page = await context.new_page()
            cdp = await context.new_cdp_session(page)
        except PlaywrightError as exc:
            await context.close()
            raise CheckError(f"could not prepare a browser page: {exc.message}") from exc
        session.attach(page, cdp)
        await session.load(f"{ORIGIN}/{entry}")
        return session

    async def _serve(self, route: Any, root: Path, session: PageSession) -> None:
        url = route.request.url
        try:
            if url.startswith(ORIGIN + "/") or url == ORIGIN:
                path = unquote(urlsplit(url).path).lstrip("/") or "index.html"
                target = (root / path).resolve()
                if target.is_dir():
                    target = target / "index.html"
                if target.is_relative_to(root) and target.is_file():
                    ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                    await route.fulfill(status=200, body=target.read_bytes(), content_type=ctype)
                else:
                    await route.fulfill(status=404, body=b"not found", content_type="text/plain")
                return
            session.record_blocked(url)
            await route.abort("blockedbyclient")
        except PlaywrightError:  # the page or context went away while the request was pending
            pass
