"""PageSession: one artefact page on the virtual clock, every step under a hard time limit.

The harness stays out of the page's reach: the clock (``_clock.js``) is registered per session
over CDP and answers only on a window event named by a per-session secret; the harness drives it
and reads the page from an isolated world (``_view.js``, created with CDP's
``Page.createIsolatedWorld``), whose globals and built-ins page code can neither see nor replace.
Page errors come from CDP (Playwright's ``pageerror`` and ``console`` events), capped in length.
The session is in three parts: this module (lifecycle, the hard limit, playing, input),
``_page_world`` (the isolated world and the clock's calls) and ``_page_events`` (what the browser tells).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import math
import secrets
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

import structlog
from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from ...errors import CheckError
from ._frames import Frame, frame_from_capture, frame_from_png, unpack
from ._page_events import ORIGIN, PageBroken
from ._page_world import CURRENT_CLOCK, NAV_GONE, PageWorld, WorldGone

if TYPE_CHECKING:
    from ._slot import SessionHost, Slot

__all__ = ["ORIGIN", "PageBroken", "PageSession"]

log = structlog.get_logger()
T = TypeVar("T")
CHUNK_FRAMES = 30  # frames per evaluate: small enough that the time limit means "hung"
#: The usual real-time limit per step that runs page code: past it the page is called hung.
STEP_LIMIT_S = 5.0
#: A check, exploration or load cut by the usual step limit (5 s of real time: a page that hangs, or a
#: machine too busy to run it) is played again with this limit per step: 4x the usual (issue 29).
REPLAY_LIMIT_S = 20.0
LARGE_LOAD_MAX_S = 90.0  # the most a replay's load of a large entry is given (real s)


class PageSession(PageWorld):
    """An open artefact page. Use ``press``/``click``/``advance`` to play it, ``read`` to read it."""

    page: Page
    context: BrowserContext

    def __init__(self, harness: SessionHost, *, fps: int, step_timeout_s: float,
                 viewport: tuple[int, int], capture_width: int) -> None:
        self.harness = harness
        self.slot: Slot | None = None
        self.fps = fps
        self.step_timeout_s = step_timeout_s
        self.harness_limited = False  # broken by our serving limits, not by the page (see load)
        self.viewport = viewport
        self.capture_width = capture_width
        self.frame = 0
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self._dialog_doc: str | None = None  # the clock document whose dialogs were read last
        self._dialogs_read = 0  # how many of its dialogs
        self.confirm = False  # confirm() answered OK (True) or Cancel, in every document (see _clock.js)
        self.blocked: list[str] = []
        self.hung = False
        self.broken: str | None = None  # why the page can no longer be played, if it cannot
        self.navigations = 0
        self.circle_track: list[tuple[float, list[tuple[float, float, float]]]] = []
        self.track_size: tuple[int, int] | None = None
        self._clock_id: str | None = None
        self._world_id: int | None = None  # the isolated world's execution context in this document
        self.channel = secrets.token_hex(12)  # the clock's event name: never seen by the page
        self.seed = 1
        self.epoch = 0
        self._registered_at = 0.0  # the session time the clock's registration carries (for Date)
        self._cdp: CDPSession | None = None
        self._handlers: list[tuple[str, Any]] = []
        self.inflight: asyncio.Future[Any] | None = None  # the last step that runs page code

    # ---- lifecycle ---------------------------------------------------------------------------
    def attach(self, slot: Slot) -> None:
        """Take over a (new or wiped) page of the harness; ``detach`` hands it back."""
        self.slot, self.context, self.page, self._cdp = slot, slot.context, slot.page, slot.cdp
        self._handlers = [
            ("pageerror", self._on_pageerror),
            ("console", self._on_console),
            ("dialog", self._on_dialog),
            ("crash", lambda _p: self._break("the page crashed (out of memory or a renderer fault)")),
            ("websocket", lambda ws: self.record_blocked(ws.url)),
            ("popup", lambda p: self.record_blocked(f"popup {p.url}")),
            ("framenavigated", self._on_navigated),
        ]
        for event, handler in self._handlers:
            slot.page.on(event, handler)

    def detach(self) -> None:
        for event, handler in self._handlers:
            self.page.remove_listener(event, handler)
        self._handlers = []
        if self.slot is not None:
            self.slot.cdp = self._cdp or self.slot.cdp  # a reload may have needed a new CDP session

    async def load(self, url: str, *, size: int = 0) -> None:
        """Navigate to the entry and wait for load under the time limit.

        A large entry (inlined assets: a 46 MB page exists) gets 1 s more per MiB over 2 MiB to be
        fetched and parsed, so it is judged on its behaviour rather than called a hang; a replay (a
        longer step limit: the first try was cut on a busy machine) as much more in proportion, up to
        ``LARGE_LOAD_MAX_S``.
        """
        mib = size / 2**20
        per_mib = max(1.0, self.step_timeout_s / STEP_LIMIT_S)
        limit = self.step_timeout_s + max(0.0, mib - 2)
        # A replay's more, bounded: a 64 MiB page that hangs as it loads must still end in its verdict
        # well within the checker's answer limit, every probe's replay included.
        limit = max(limit, min(self.step_timeout_s + per_mib * max(0.0, mib - 2), LARGE_LOAD_MAX_S))
        what = "loading the page" + (f" ({mib:.1f} MiB)" if mib > 2 else "")
        try:
            # timeout=0: our limit bounds it; Playwright's own 30 s would end a replay first (a `fail`)
            await self.run_limited(self.page.goto(url, wait_until="load", timeout=0), timeout_s=limit, what=what)
        except PageBroken:
            if self.hung and mib > 2:
                # Playwright's route hands a body over in one protocol message: 46 MB took ~30 s
                # here where a browser loads it from disk in 1.5 s. That is our limit, not the page's.
                self.harness_limited = True
                self.broken = (f"the {mib:.1f} MiB entry did not finish loading within {limit:.0f} s in the "
                               "harness (a large file is slow to serve through the browser's route): its "
                               "behaviour could not be judged")
            return
        except PlaywrightError as exc:
            self._break(f"the page did not load: {exc.message.splitlines()[0]}")
            return
        await self._resync()

    async def close(self) -> None:
        """End the session: the harness pools the page when it ended cleanly, else closes it."""
        await self.harness.release(self)

    @property
    def now_ms(self) -> float:
        """Current virtual time in ms (frame * 1000 / fps)."""
        return self.frame * 1000.0 / self.fps

    # ---- the hard limit ----------------------------------------------------------------------
    async def run_limited(self, aw: Awaitable[T], *, timeout_s: float | None = None, what: str = "a step") -> T:
        """Await something that runs page code; past the limit terminate the page's script.

        Raises PageBroken (with ``broken`` set) when the page hung, crashed or navigated away.
        """
        if self.broken:
            if asyncio.iscoroutine(aw):
                aw.close()
            raise PageBroken(self.broken)
        limit = self.step_timeout_s if timeout_s is None else timeout_s
        task = self.inflight = asyncio.ensure_future(aw)
        try:
            return await asyncio.wait_for(asyncio.shield(task), limit)
        except TimeoutError:
            self.hung = True
            self._break(f"the page's script did not finish within {limit:g} s while {what} "
                        "(an infinite loop or busy-wait?)")
            await self._terminate()
            # A terminated evaluate may never settle (its continuation was killed): don't wait long.
            try:
                await asyncio.wait_for(task, 0.5)
            except (TimeoutError, PlaywrightError, Exception):  # noqa: BLE001 - already broken
                task.cancel()
            await self._salvage()
            raise PageBroken(self.broken or "hung") from None
        except PlaywrightError:
            if self.broken:
                raise PageBroken(self.broken) from None
            raise

    async def _salvage(self) -> None:
        """After terminating a runaway script, still collect what the page recorded (dialogs)."""
        if self._cdp is None:
            return
        try:
            world = await asyncio.wait_for(self._world(), 1.0)
            res = await asyncio.wait_for(self._cdp.send("Runtime.evaluate", {
                "expression": "__abView.call('state', [])", "contextId": world, "awaitPromise": True,
                "returnByValue": True}), 1.0)
            state = json.loads(res["result"]["value"])
        except (TimeoutError, PlaywrightError, CheckError, WorldGone, KeyError, TypeError, ValueError):
            return
        if isinstance(state, dict):
            self._note_dialogs(state.get("dialogs"), state.get("id"))

    async def _terminate(self) -> None:
        if self._cdp is None:
            return
        try:
            await asyncio.wait_for(self._cdp.send("Runtime.terminateExecution"), 3)
        except (TimeoutError, PlaywrightError):
            pass

    async def heard(self) -> None:
        """Wait until the browser has told us what the page did up to now (its exceptions, console errors).

        The page's exceptions come over Playwright's CDP session, an input's answer over another
        channel of the browser's: on a busy machine an exception thrown by a key press may arrive after
        the press has returned, and a count of ``errors`` taken then leaves it out. A round trip on
        that same session (the title, read in Playwright's own isolated world) is answered after every
        event the renderer sent before it.
        """
        if self.page.is_closed():
            return
        try:
            await self.run_limited(self.page.title(), what="reading the page (its title)")
        except PlaywrightError:
            pass  # a page that went away has nothing more to tell

    # ---- evaluation --------------------------------------------------------------------------
    async def cdp(self, method: str, params: dict[str, Any] | None = None, *, timeout_s: float | None = None) -> Any:
        """Send one CDP command for this page (e.g. ``DOMDebugger.getEventListeners``) under the hard limit.

        CDP reads what the page cannot replace (listeners, nodes, exceptions); nothing it does is a
        page global. A reload may move the page to a new renderer: the session is renewed then.
        """
        for attempt in range(2):
            renewed = self._cdp is None or attempt > 0
            if renewed:
                self._cdp = await asyncio.wait_for(self.context.new_cdp_session(self.page), self.step_timeout_s)
            try:
                if renewed:
                    # The animations' rate 0 is a session's while it is attached (_harness._new_slot):
                    # the new one holds it now, or CSS animations run on real time between frames.
                    await self.run_limited(self._cdp.send("Animation.setPlaybackRate", {"playbackRate": 0}),
                                           what="reading the page (Animation.setPlaybackRate)")
                return await self.run_limited(self._cdp.send(method, params or {}), timeout_s=timeout_s,
                                              what=f"reading the page ({method})")
            except PlaywrightError as exc:
                if attempt or not NAV_GONE.search(exc.message):
                    raise CheckError(f"CDP {method} failed: {exc.message.splitlines()[0]}") from exc
        raise AssertionError("unreachable")

    # ---- playing -----------------------------------------------------------------------------
    async def advance(self, seconds: float, *, capture_every: float | None = None,
                      include_start: bool = False, capture_origin: float | None = None,
                      track_circles: bool = False) -> list[Frame]:
        """Run the clock ``seconds`` forward at ``fps``; capture every ``capture_every`` virtual s.

        Captures fall at ``capture_origin + k * capture_every`` (virtual seconds; default: now),
        so several advance calls can share one capture grid. With ``track_circles`` the circles
        drawn on the main canvas are appended to ``circle_track`` for every frame (no pixels):
        ``(t_ms, [(x, y, r), ...])`` in canvas pixels; ``track_size`` is that canvas's size.
        Captures are taken inside the stepping evaluate (canvas pages) or by a scaled CDP
        screenshot at exactly that frame (pages without a canvas). A page that hangs, crashes or
        navigates away stops the advance: the frames so far are returned and ``broken`` is set.
        """
        frames: list[Frame] = []
        if self.broken:
            return frames
        target = self.frame + max(0, round(seconds * self.fps))
        cap_ms = capture_every * 1000.0 if capture_every else 0.0
        base, start = self.now_ms, self.frame
        cap_index = 1
        if capture_origin is not None and cap_ms > 0:
            base = capture_origin * 1000.0
            cap_index = max(0, math.floor((self.now_ms - base) / cap_ms + 1e-6)) + 1
        try:
            if include_start:
                frames.append(await self.capture())
            while self.frame < target:
                stop = min(target, self.frame + CHUNK_FRAMES)
                res = await self._clock("run", stop, base, cap_ms, cap_index, CURRENT_CLOCK, track_circles)
                for frame_no, circles in res.get("tracks") or []:
                    self.circle_track.append((frame_no * 1000.0 / self.fps,
                                              [(float(x), float(y), float(r)) for x, y, r in circles]))
                if res.get("trackSize"):
                    self.track_size = (int(res["trackSize"][0]), int(res["trackSize"][1]))
                self.frame, cap_index = int(res["frame"]), int(res["capIndex"])
                self._note_dialogs(res.get("dialogs"), res.get("doc"))
                raw, offset = unpack(res["data"]), 0
                for cap in res["captures"]:
                    t = cap["frame"] * 1000.0 / self.fps
                    size = int(cap["w"]) * int(cap["h"]) * 4
                    frames.append(frame_from_capture(t, cap, raw[offset:offset + size]))
                    offset += size
        except PageBroken:
            pass
        finally:
            self.harness.virtual_s += (self.frame - start) / self.fps
        if not self.broken and self.now_ms - self._registered_at >= 1000:
            await self._register_clock()
        return frames

    async def _register_clock(self) -> None:
        """Hand the session's time to the clock of documents the page loads from now on (for Date)."""
        try:
            await self.harness.register_clock(self)
            self._registered_at = self.now_ms
        except CheckError as exc:
            log.info("clock not re-registered", error=str(exc)[:200])

    async def capture(self) -> Frame:
        """A frame of the current state (see Frame): the largest canvas, else the DOM raster."""
        cap = await self._clock("capture")
        return frame_from_capture(self.now_ms, cap, unpack(cap["data"]))

    async def snapshot(self) -> Frame:
        """The whole viewport (DOM included) downscaled to ``capture_width``, as a Frame."""
        return await self._screenshot_frame(self.now_ms)

    async def _screenshot_frame(self, t_ms: float) -> Frame:
        vw, vh = self.viewport
        params = {"format": "png", "optimizeForSpeed": True, "captureBeyondViewport": False,
                  "clip": {"x": 0, "y": 0, "width": vw, "height": vh, "scale": self.capture_width / vw}}
        for attempt in range(3):
            try:
                # On the page's own CDP session (cdp() renews it after a reload moved the page to a new
                # renderer). Not a fresh one each time: attaching and detaching a session moved the
                # animations' timeline on (it stands still between virtual frames at the rate 0 the
                # page's session set): each screenshot aged CSS animations by ~33 ms of real time, 30
                # in a row by a second, and a capture after a hold showed them a frame ahead.
                shot = await self.cdp("Page.captureScreenshot", params)
                return frame_from_png(t_ms, base64.b64decode(shot["data"]), self.viewport)
            except PageBroken:
                raise
            except CheckError as exc:
                if attempt == 2 or not NAV_GONE.search(str(exc)):
                    raise CheckError(f"harness screenshot failed: {exc}") from exc
                await self._after_navigation()
        raise AssertionError("unreachable")

    async def screenshot(self) -> bytes:
        """Full-resolution PNG of the viewport, for evidence."""
        return await self.run_limited(self.page.screenshot(type="png", timeout=0), what="taking a screenshot")

    async def press(self, key: str) -> None:
        """A real key press to the focused page (Playwright key names: "Space", "Enter", "r")."""
        await self.run_limited(self.page.keyboard.press(key), what=f"handling the key {key}")

    async def click(self, x: float, y: float) -> None:
        """A real mouse click at viewport coordinates (CSS px)."""
        await self.run_limited(self.page.mouse.click(x, y), what="handling a click")

    async def click_canvas(self, fx: float = 0.5, fy: float = 0.5) -> bool:
        """Click at a fraction of the largest canvas (or of the viewport when there is none)."""
        box = await self._clock("mainRect")
        left, top, w, h = box["rect"]
        await self.click(left + fx * w, top + fy * h)
        return bool(box["canvas"])

    async def find_target(self, pattern: str) -> tuple[float, float, str] | None:
        """Viewport centre (CSS px) and text of the visible control whose text matches ``pattern``."""
        found = await self._clock("findTarget", pattern)
        return (float(found[0]), float(found[1]), str(found[2])) if found else None

    async def reload(self) -> None:
        """A real reload in the same context (localStorage kept).

        As in a browser, the new document's performance.now starts at 0 and Date goes on; the
        session's frame count goes on.
        """
        await self._register_clock()
        self._world_id = None
        try:
            await self.run_limited(self.page.reload(wait_until="load", timeout=0), what="reloading")
        except PlaywrightError as exc:
            self._break(f"the page did not reload: {exc.message.splitlines()[0]}")
            raise PageBroken(self.broken or "") from None
        await self._resync()

    async def texts(self) -> list[tuple[str, float, float, int]]:
        """Canvas text drawn so far: (text, first ms, last ms, times drawn)."""
        return [tuple(t) for t in await self._clock("texts")]  # type: ignore[misc]

    async def dom_text(self) -> str:
        """The page's visible text (document.body.innerText)."""
        return str(await self._clock("domText"))

    async def refresh(self) -> None:
        """Pull dialogs recorded by the page since the last advance."""
        state = await self._clock("state")
        self._note_dialogs(state.get("dialogs"), state.get("id"))
        for url in state.get("opened", []):
            self.record_blocked(f"window.open {url}")

    # ---- held input and body tracking (the game probes' differential play) ---------------------
    async def key_down(self, key: str) -> None:
        """Press a key and keep it down (``key_up`` releases it): a person's press lasts a while."""
        await self.run_limited(self.page.keyboard.down(key), what=f"handling the key {key}")

    async def key_up(self, key: str) -> None:
        await self.run_limited(self.page.keyboard.up(key), what=f"handling the key {key}")

    async def mouse_down(self, x: float, y: float) -> None:
        """Move the real mouse to viewport (x, y) and press the button (``mouse_up`` releases it)."""
        await self.run_limited(self.page.mouse.move(x, y), what="moving the mouse")
        await self.run_limited(self.page.mouse.down(), what="handling a mouse press")

    async def mouse_up(self) -> None:
        await self.run_limited(self.page.mouse.up(), what="handling a mouse release")

    async def drag(self, points: list[tuple[float, float]], *, touch: bool = False, step_s: float = 1 / 60) -> None:
        """A person's drag along viewport ``points`` (CSS px): pressed at the first, moved through the
        others ``step_s`` virtual seconds apart (the page's frames and timers run between moves, as
        under a hand), released at the last. The real mouse's left button, or with ``touch`` one
        finger: CDP touch events, as a touch screen sends them (the page gets touch and pointer
        events, no mouse events)."""
        async def finger(kind: str, x: float, y: float) -> None:
            await self.cdp("Input.dispatchTouchEvent",
                           {"type": kind, "touchPoints": [] if kind == "touchEnd" else [{"x": x, "y": y}]})

        async def release() -> None:
            await (finger("touchEnd", x, y) if touch else self.mouse_up())

        (x, y), mouse = points[0], self.page.mouse
        if touch:
            await finger("touchStart", x, y)
        else:
            await self.mouse_down(x, y)
        try:
            for x, y in points[1:]:
                await self.advance(step_s)
                if self.broken:
                    raise PageBroken(self.broken)
                if touch:
                    await finger("touchMove", x, y)
                else:
                    await self.run_limited(mouse.move(x, y), what="handling a mouse drag")
        except BaseException:
            with contextlib.suppress(Exception):  # the hand lifts whatever went wrong
                await release()
            raise
        await release()

    async def main_rect(self) -> tuple[tuple[float, float, float, float], bool]:
        """The largest visible canvas's box (CSS px; the viewport when there is none), and whether it is one."""
        box = await self._clock("mainRect")
        return tuple(float(v) for v in box["rect"]), bool(box["canvas"])  # type: ignore[return-value]

    async def reveal(self) -> bool:
        """Scroll the game into view when it does not fit where it is, as a person would."""
        return bool(await self._clock("reveal"))

    async def track_bodies(self, every: int) -> None:
        """Log the balls drawn (bodies, decorations merged) every ``every`` frames; 0 stops."""
        await self._clock("bodyTrack", every)

    async def bodies(self) -> tuple[list[tuple[float, list[tuple[float, float, float, int]], tuple[int, int] | None]],
                                    list[str]]:
        """Bodies logged since the last call: ``[(t_ms, [(x, y, r, colour id)...], arena size)]``, colours."""
        res = await self._clock("bodies")
        log = [(frame * 1000.0 / self.fps, [(float(x), float(y), float(r), int(c)) for x, y, r, c in cs],
                (int(size[0]), int(size[1])) if size else None) for frame, cs, size in res["log"]]
        return log, [str(c) for c in res["colours"]]

    @property
    def document(self) -> str | None:
        """The id of the document now shown: it changes when the page reloads or navigates."""
        return self._clock_id
