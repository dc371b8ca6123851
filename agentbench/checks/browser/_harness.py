"""The browser harness: one Chromium per check run, a pristine page per session, a virtual clock.

Each :class:`PageSession` serves the artefact folder from a route-served origin
(``http://localhost/``), blocks and records every request to any other origin, injects
``_clock.js`` before page code and steps it at an exact frame rate. Every step that runs page
code has a hard time limit: on timeout ``Runtime.terminateExecution`` is sent over a CDP session,
so infinite loops, busy-waits, alert storms and navigation away end in a verdict
(``session.broken`` says why) instead of a hung harness.

Browser contexts are pooled. A new context and its renderer cost about 0.6 CPU-seconds on a
small machine, three times a whole second of play, so a session that ends cleanly hands its
context back; the next session gets it after a wipe: the old document is unloaded (its unload
handlers run), cookies, local storage, IndexedDB, cache storage and service workers of the
origin are cleared from the browser side, session storage and ``window.name`` from a blank page
of our own, and the entry is loaded anew with the clock at frame 0 and the check's seed. A page
that hung, crashed, navigated away or opened a second page is never reused. At most
``max_sessions`` sessions are open at once (default: the number of cores, at least 2); more
only fight over the CPU.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any, Self
from urllib.parse import unquote, urlsplit

import structlog
from playwright.async_api import Browser, BrowserContext, async_playwright
from playwright.async_api import Error as PlaywrightError

from ...errors import CheckError
from .._chromium_flags import CHROMIUM_ARGS, IGNORED_DEFAULT_ARGS
from . import _workers
from ._frames import Frame
from ._page import ORIGIN, STEP_LIMIT_S, PageBroken, PageSession
from ._scripts import CLOCK_JS
from ._serve import ServeBudget, is_plain_file, serve_file
from ._slot import CheckClock, Slot

__all__ = ["ORIGIN", "BrowserHarness", "Frame", "PageBroken", "PageSession"]

log = structlog.get_logger()


DEFAULT_CHROMIUM = "/usr/bin/chromium"
WIPE_PATH = "/__agentbench_wipe__"  # our blank page, served on the artefact's origin
MAX_REUSE = 40  # sessions per pooled context before it is replaced (bounds heap growth)
# The screen a page sees around its window: a person's full-HD display. Headless, the screen is the
# viewport (800 x 600, no room for a window's frame), a tell (issue 28); the window's frame is the clock's.
SCREEN = {"width": 1920, "height": 1080}




class BrowserHarness:
    """One Chromium per check run (async Playwright, /usr/bin/chromium by default).

    Use as ``async with BrowserHarness() as h: s = await h.open(folder)``. ``page_errors``
    gathers the page errors of every session opened, for the shared ``runtime-errors`` check.
    """

    def __init__(self, chromium_path: str | None = None, *, max_sessions: int | None = None,
                 cdp_endpoint: str | None = None) -> None:
        self.chromium_path = chromium_path or DEFAULT_CHROMIUM
        # A Chromium started by someone else (the checker container starts it under its own uid):
        # connect to its DevTools endpoint instead of launching one.
        self.cdp_endpoint = cdp_endpoint
        self.max_sessions = max_sessions or _env_sessions() or max(2, os.cpu_count() or 2)
        self.contexts_created = 0  # browser contexts made (sessions_opened - reuses)
        self.page_errors: list[str] = []
        self.blocked: list[str] = []
        self.dialogs: list[str] = []
        self.sessions_opened = 0
        self.virtual_s = 0.0  # virtual seconds simulated by every session (for benchmarks)
        self._pw: Any = None
        self._browser: Browser | None = None
        self._pool: list[Slot] = []
        self._free = asyncio.Semaphore(self.max_sessions)
        self._checks: dict[Path, CheckClock] = {}
        self._user_agent: dict[str, Any] | None = None  # Emulation.setUserAgentOverride's params

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch Chromium (or connect to ``cdp_endpoint``); raises CheckError with a hint when it cannot."""
        if self.cdp_endpoint:
            await self._connect(self.cdp_endpoint)
            return
        if not Path(self.chromium_path).exists():
            raise CheckError(f"Chromium not found at {self.chromium_path}: install it "
                             "(`apt-get install chromium`) or set AGENTBENCH_CHROMIUM")
        try:
            self._pw = await async_playwright().start()
            self._browser = await self._pw.chromium.launch(
                executable_path=self.chromium_path, headless=True, args=CHROMIUM_ARGS,
                ignore_default_args=IGNORED_DEFAULT_ARGS, timeout=60_000)
        except PlaywrightError as exc:
            await self.close()
            raise CheckError(f"could not launch Chromium at {self.chromium_path}: {exc.message}") from exc

    async def _connect(self, endpoint: str, wait_s: float = 30.0) -> None:
        self._pw = await async_playwright().start()
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self._browser = await self._pw.chromium.connect_over_cdp(endpoint, timeout=10_000)
                return
            except PlaywrightError as exc:
                if time.monotonic() > deadline:  # Chromium is still starting: its port opens late
                    await self.close()
                    raise CheckError(f"could not connect to Chromium at {endpoint} within {wait_s:g} s: "
                                     f"{exc.message.splitlines()[0]}") from exc
                await asyncio.sleep(0.05)

    @property
    def connected(self) -> bool:
        """True while the launched Chromium is alive (False before start, after close or a crash)."""
        return self._browser is not None and self._browser.is_connected()

    @property
    def version(self) -> str:
        """The running Chromium's version ("" before start)."""
        return self._browser.version if self._browser is not None else ""

    async def close(self) -> None:
        self._pool.clear()  # closing the browser closes every context
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

    def begin_check(self, artefact_dir: Path, *, seed: int | None = None) -> CheckClock:
        """Start a new check of ``artefact_dir``: a fresh epoch and the folder's seed (or ``seed``) for its sessions."""
        root = Path(artefact_dir).resolve()
        self._checks[root] = CheckClock(seed=_folder_seed(root) if seed is None else seed,
                                        epoch=int(time.time() * 1000))
        return self._checks[root]

    def check_clock(self, artefact_dir: Path) -> CheckClock:
        """The seed and epoch the sessions of the current check of ``artefact_dir`` get."""
        root = Path(artefact_dir).resolve()
        return self._checks.get(root) or self.begin_check(root)

    async def open(self, artefact_dir: Path, entry: str = "index.html", *, fps: int = 60, seed: int | None = None,
                   viewport: tuple[int, int] = (800, 600), step_timeout_s: float | None = None,
                   capture_width: int = 160, confirm: bool = False) -> PageSession:
        """Open the artefact on a pristine page with the virtual clock at ``fps``; returns after load.

        Never raises for a broken artefact: a page that hangs, crashes or navigates away at load
        comes back with ``session.broken`` set. Raises CheckError when the harness itself fails.
        Waits while ``max_sessions`` sessions are open; ``session.close()`` frees the place.
        ``confirm``: the page's ``confirm()`` dialogs are answered OK (as the person who asked for
        what they confirm answers them), else Cancel. ``step_timeout_s``: the real-time limit per step
        (None: ``STEP_LIMIT_S``; a replay of a cut run asks for ``REPLAY_LIMIT_S``).
        """
        if self._browser is None:
            raise CheckError("BrowserHarness.open called before start() / async with")
        root = Path(artefact_dir).resolve()
        if not is_plain_file(root, entry):
            raise CheckError(f"artefact entry {root / entry} does not exist")
        try:
            await asyncio.wait_for(self._free.acquire(), 600)
        except TimeoutError:
            raise CheckError(f"no browser session came free in 600 s ({self.max_sessions} open: "
                             "a session that was never closed?)") from None
        try:
            limit = STEP_LIMIT_S if step_timeout_s is None else step_timeout_s
            session = PageSession(self, fps=fps, step_timeout_s=limit, viewport=viewport, capture_width=capture_width)
            session.confirm = confirm
            slot = self._take(viewport)
            if slot is not None and not await self._wipe(slot):
                await self._discard(slot)
                slot = None
            if slot is None:
                slot = await self._new_slot(root, viewport)
            slot.root, slot.session, slot.budget = root, session, ServeBudget()
            slot.uses += 1
            self.sessions_opened += 1
            session.attach(slot)
            clock = self.check_clock(root)
            session.seed = clock.seed if seed is None else seed
            session.epoch = clock.epoch
            await self.register_clock(session)
            await session.load(f"{ORIGIN}/{entry}", size=_entry_size(root, entry))
            return session
        except BaseException:
            self._free.release()
            raise

    def _take(self, viewport: tuple[int, int]) -> Slot | None:
        for i, slot in enumerate(self._pool):
            if slot.viewport == viewport:
                return self._pool.pop(i)
        return None

    async def register_clock(self, session: PageSession) -> None:
        """(Re)register the session's clock for the documents its page loads from now on.

        The clock is registered per session over CDP, so its config (rate, seed, epoch, the secret
        channel, the session's time for Date) is never a page global; the previous session's (or
        the previous time's) registration is removed after the new one is in. Raises CheckError when
        CDP fails.
        """
        slot = session.slot
        assert slot is not None
        cfg = {"fps": session.fps, "seed": session.seed, "epoch": session.epoch, "startAbs": session.now_ms,
               "channel": session.channel, "confirm": session.confirm, "wkey": _workers.worker_key(session.channel),
               "view": list(session.viewport)}
        source = CLOCK_JS.replace("__AB_CONFIG__", json.dumps(cfg))
        try:
            # The new one first: a document the page makes meanwhile (a reload it started) must
            # get a clock; one that gets both keeps the first (see _clock.js: once per document).
            added = await slot.cdp.send("Page.addScriptToEvaluateOnNewDocument", {"source": source})
            old, slot.clock_script = slot.clock_script, added["identifier"]
            if old is not None:
                await slot.cdp.send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": old})
        except PlaywrightError as exc:
            raise CheckError(f"could not register the virtual clock: {exc.message}") from exc

    async def _new_slot(self, root: Path, viewport: tuple[int, int]) -> Slot:
        assert self._browser is not None
        try:
            context = await self._browser.new_context(
                viewport={"width": viewport[0], "height": viewport[1]}, device_scale_factor=1, screen=SCREEN,
                service_workers="block", locale="en-US", timezone_id="UTC", accept_downloads=False)
        except PlaywrightError as exc:
            raise CheckError(f"could not open a browser context: {exc.message}") from exc
        self.contexts_created += 1
        try:
            page = await context.new_page()
            cdp = await context.new_cdp_session(page)
            await cdp.send("Page.enable")  # scripts registered on this session run in new documents
            # CSS animations, transitions and element.animate() stand still between virtual frames:
            # the document timelines of every document this page loads (iframes too) run at rate 0,
            # and each frame _view_step.js sets every running animation to its virtual age. At rate 1
            # the browser played them on in real time between a step and a capture, so what a capture
            # showed hung on how busy the machine was. Nothing the page reads changes (an animation's
            # playState and playbackRate are its own; document.timeline's time is the clock's); the
            # rate is this CDP session's, for as long as it stays attached (the slot's lifetime).
            await cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})
            slot = Slot(context=context, page=page, cdp=cdp, root=root, viewport=viewport)
            await context.route("**/*", lambda route: self._serve(route, slot))
            if self._user_agent is None:  # once per browser, on our blank page (a secure context)
                await page.goto(ORIGIN + WIPE_PATH, wait_until="load")
                self._user_agent = await _normal_user_agent(page)
            # Set on the page's session, workers included (a context's user_agent option leaves a
            # worker's brands empty).
            await cdp.send("Emulation.setUserAgentOverride", self._user_agent)
        except PlaywrightError as exc:
            await _close_quietly(context)
            raise CheckError(f"could not prepare a browser page: {exc.message}") from exc
        return slot

    async def _wipe(self, slot: Slot) -> bool:
        """Make a pooled page pristine (see the module docstring); False when that failed."""
        try:
            async with asyncio.timeout(10):
                await slot.page.goto(ORIGIN + WIPE_PATH, wait_until="load")
                # Cookies, local storage, IndexedDB, cache storage, service workers: browser side.
                await slot.cdp.send("Storage.clearDataForOrigin", {"origin": ORIGIN, "storageTypes": "all"})
                # Our own blank page (no artefact code runs there).
                await slot.page.evaluate("() => { try { sessionStorage.clear(); } catch (e) {} window.name = ''; }")
            return True
        except (TimeoutError, PlaywrightError) as exc:
            log.info("pooled page could not be wiped; using a new context", error=str(exc)[:200])
            return False

    async def release(self, session: PageSession) -> None:
        """Called by ``session.close()``: pool the context when the page ended cleanly, else close it."""
        slot = session.slot
        try:
            if slot is None or slot.session is not session:
                return
            session.detach()
            slot.session = None
            # A step still running (the session was cancelled mid-step) may be page code that never ends.
            idle = session.inflight is None or session.inflight.done()
            clean = (idle and not session.broken and not session.hung and not slot.page.is_closed()
                     and len(slot.context.pages) == 1 and slot.page.url.startswith(ORIGIN + "/")
                     and slot.uses < MAX_REUSE and self._browser is not None)
            if clean:
                self._pool.append(slot)
            else:
                await self._discard(slot)
        finally:
            self._free.release()

    async def _discard(self, slot: Slot) -> None:
        await _close_quietly(slot.context)

    async def _serve(self, route: Any, slot: Slot) -> None:
        url = route.request.url
        root, session = slot.root, slot.session
        try:
            if url.startswith(ORIGIN + "/") or url == ORIGIN:
                if urlsplit(url).path == WIPE_PATH:
                    await route.fulfill(status=200, body=b"<!doctype html><title>wipe</title>",
                                        content_type="text/html")
                    return
                worker = None if session is None else _workers.serve_worker(
                    url, route.request.resource_type, session.channel, root, slot.budget)
                if worker is not None:  # a worker script of the artefact's, on the page's clock
                    await route.fulfill(status=worker[0], body=worker[1], content_type=worker[2])
                    return
                status, body, ctype = serve_file(root, unquote(urlsplit(url).path), slot.budget)
                await route.fulfill(status=status, body=body, content_type=ctype)
                return
            if session is not None:
                session.record_blocked(url)
            else:
                self.blocked.append(url)
            await route.abort("blockedbyclient")
        except PlaywrightError:  # the page or context went away while the request was pending
            pass


_UA_HINTS = ["architecture", "bitness", "fullVersionList", "model", "platformVersion", "wow64", "formFactors"]


async def _normal_user_agent(page: Any) -> dict[str, Any]:
    """What a person's Chrome of this very version says: headless Chromium's own user agent and
    client hints, read on a blank page of ours, with "HeadlessChrome" said as "Chrome".

    Read from the browser (never a constant), so the container's headless shell and the host's
    Chromium each say their real version; the same for every session, at 60 and at 240 Hz.
    """
    got = await page.evaluate("""async (hints) => {
        const d = navigator.userAgentData;
        return [navigator.userAgent, d ? await d.getHighEntropyValues(hints) : null];
    }""", _UA_HINTS)
    ua, hints = got[0].replace("HeadlessChrome", "Chrome"), got[1]
    params: dict[str, Any] = {"userAgent": ua, "acceptLanguage": "en-US"}
    if hints:
        params["userAgentMetadata"] = {
            "brands": _brands(hints["brands"]), "fullVersionList": _brands(hints.get("fullVersionList", [])),
            "platform": hints["platform"], "platformVersion": hints.get("platformVersion", ""),
            "architecture": hints.get("architecture", ""), "model": hints.get("model", ""),
            "mobile": bool(hints["mobile"]), "bitness": hints.get("bitness", ""), "wow64": bool(hints.get("wow64")),
            **({"formFactors": hints["formFactors"]} if "formFactors" in hints else {}),
        }
    return params


def _brands(brands: list[dict[str, str]]) -> list[dict[str, str]]:
    """Client-hint brands with a headless brand named as the Chromium it is (once)."""
    out: list[dict[str, str]] = []
    for b in brands:
        named = {"brand": b["brand"].replace("HeadlessChrome", "Chromium"), "version": b["version"]}
        if all(o["brand"] != named["brand"] for o in out):
            out.append(named)
    return out


def _env_sessions() -> int | None:
    """AGENTBENCH_BROWSER_SESSIONS: browser sessions a check run may have open at once."""
    raw = os.environ.get("AGENTBENCH_BROWSER_SESSIONS", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise CheckError(f"AGENTBENCH_BROWSER_SESSIONS must be a whole number >= 1, not {raw!r}")
    return int(raw)


async def _close_quietly(context: BrowserContext) -> None:
    try:
        await asyncio.wait_for(context.close(), 10)
    except (TimeoutError, PlaywrightError):
        pass


def _folder_seed(root: Path) -> int:
    """A seed from a digest of the folder's regular files (names and bytes, within the serving caps)."""
    from ..._files import tree_digest

    return int.from_bytes(tree_digest(root)[:4], "big") or 1


def _entry_size(root: Path, entry: str) -> int:
    from ..._files import lookup

    found = lookup(root, entry)
    return found.st_size if found is not None else 0
