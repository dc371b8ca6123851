"""The harness's isolated world in the page's document (a part of ``_page.PageSession``): ``_view.js``
made there on first use (CDP ``Page.createIsolatedWorld``), reader libraries and the clock called
through it, and a new document (a reload, a navigation) brought to the session's time.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError

from ...errors import CheckError
from ._page_events import PageBroken, PageEvents
from ._scripts import VIEW_JS

__all__ = ["MAX_NAVIGATIONS", "NAV_GONE", "CURRENT_CLOCK", "PageWorld", "WorldGone"]

MAX_NAVIGATIONS = 20
CURRENT_CLOCK = object()  # stands for the session's clock id at the moment of the call
NAV_GONE = re.compile(r"context was destroyed|navigat|Not attached|Cannot find context|"
                      r"Target (page, context or browser )?(has been )?closed|crash|Session closed",
                      re.IGNORECASE)
_WORLD = "agentbench"


class WorldGone(Exception):
    """The isolated world's document went away (a navigation): make a new one and resync."""


class PageWorld(PageEvents):
    """The session's isolated world and its calls to the clock (PageSession is one)."""

    _cdp: CDPSession | None
    _world_id: int | None
    _clock_id: str | None
    channel: str
    capture_width: int
    frame: int
    fps: int
    navigations: int
    run_limited: Callable[..., Awaitable[Any]]

    async def _world(self) -> int:
        """The isolated world of the current document, with _view.js in it (made on first use)."""
        if self._world_id is not None:
            return self._world_id
        assert self._cdp is not None
        try:
            tree = await self._cdp.send("Page.getFrameTree")
            made = await self._cdp.send("Page.createIsolatedWorld", {
                "frameId": tree["frameTree"]["frame"]["id"], "worldName": _WORLD, "grantUniveralAccess": False})
            world = made["executionContextId"]
            cfg = json.dumps({"channel": self.channel, "capWidth": self.capture_width})
            res = await self._cdp.send("Runtime.evaluate", {
                "expression": VIEW_JS.replace("__AB_VIEW_CONFIG__", cfg), "contextId": world,
                "returnByValue": True})
        except PlaywrightError as exc:
            if NAV_GONE.search(exc.message):
                raise WorldGone(exc.message) from None
            raise CheckError(f"could not make the harness's isolated world: {exc.message}") from exc
        if "exceptionDetails" in res:
            raise CheckError(f"the harness's view did not start: {_exception_text(res['exceptionDetails'])}")
        self._world_id = world
        return world

    async def _in_world(self, expression: str, *, timeout_s: float | None, what: str) -> Any:
        """Evaluate ``expression`` (a promise is awaited) in the isolated world; its value."""
        world = await self._world()
        assert self._cdp is not None
        try:
            res = await self.run_limited(self._cdp.send("Runtime.evaluate", {
                "expression": expression, "contextId": world, "awaitPromise": True, "returnByValue": True}),
                timeout_s=timeout_s, what=what)
        except PlaywrightError as exc:
            if NAV_GONE.search(exc.message):
                self._world_id = None
                raise WorldGone(exc.message) from None
            raise
        if "exceptionDetails" in res:
            text = _exception_text(res["exceptionDetails"])
            if NAV_GONE.search(text):
                self._world_id = None
                raise WorldGone(text)
            raise CheckError(f"harness view failed: {text}")
        return res.get("result", {}).get("value")

    async def read(self, library: str, source: str, fn: str, arg: Any = None, *,
                   timeout_s: float | None = None) -> Any:
        """Call ``fn(arg)`` of a reader library (``source``: an expression whose value is an object of
        functions, installed once per document under ``library``) in the isolated world.

        Readers see the DOM, styles and storage as a person's browser has them, with built-ins the
        page cannot replace, and leave nothing in the page. The result travels as JSON.
        """
        expr = (f"(() => {{ const v = globalThis.__abView; if (!v.has({json.dumps(library)})) "
                f"v.lib({json.dumps(library)}, {json.dumps(source)}); return JSON.stringify(v.read("
                f"{json.dumps(library)}, {json.dumps(fn)}, {json.dumps(arg)}) ?? null); }})()")
        for _ in range(MAX_NAVIGATIONS):
            try:
                out = await self._in_world(expr, timeout_s=timeout_s, what="reading the page")
            except WorldGone:
                await self._after_navigation()
                continue
            return json.loads(out) if isinstance(out, str) else out
        self._break("the page keeps navigating (a reload loop?)")
        raise PageBroken(self.broken or "navigating")

    async def eval(self, js: str, arg: Any = None, *, timeout_s: float = 5.0) -> Any:
        """``page.evaluate`` in the page's own world under the hard limit (tests read page state with
        it; probes read through :meth:`read`). Raises PageBroken when the page is unusable."""
        return await self.run_limited(self.page.evaluate(js, arg), timeout_s=timeout_s, what="evaluating")

    async def _clock(self, method: str, *args: Any, timeout_s: float | None = None) -> Any:
        # The result comes back as one JSON string: CDP and Playwright carry a string far more
        # cheaply than a structured value, for a batch of captures.
        for _ in range(MAX_NAVIGATIONS):
            # The clock id is read anew on each try: a navigation (a link to another page of the
            # artefact) gives the new document a new clock, and the old id would read as stale.
            call_args = [self._clock_id if a is CURRENT_CLOCK else a for a in args]
            expr = f"__abView.call({json.dumps(method)}, {json.dumps(call_args)})"
            try:
                raw = await self._in_world(expr, timeout_s=timeout_s, what=f"running the page ({method})")
            except WorldGone:
                await self._after_navigation()
                continue
            result = json.loads(raw)
            if isinstance(result, dict):
                if "harnessError" in result:
                    self._harness_error(method, result)
                if result.get("noClock"):
                    await self._after_navigation()
                    continue
                if result.get("stale"):
                    await self._resync()
                    continue
            return result
        self._break("the page keeps navigating (a reload loop?)")
        raise PageBroken(self.broken or "navigating")

    def _harness_error(self, method: str, result: dict[str, Any]) -> None:
        """A request to the clock failed: the page's doing when it replaced built-ins, else ours."""
        tampered = [str(t) for t in result.get("tampered") or []]
        if tampered:
            self._break(f"the page replaced built-ins of its own world ({', '.join(tampered)}), and the "
                        "browser's clock could no longer run it")
            raise PageBroken(self.broken or "")
        raise CheckError(f"the harness's clock failed ({method}): {result.get('harnessError')}")

    async def _after_navigation(self) -> None:
        self._world_id = None
        self.navigations += 1
        if self.navigations > MAX_NAVIGATIONS:
            self._break("the page keeps navigating (a reload loop?)")
            raise PageBroken(self.broken or "navigating")
        try:
            await self.run_limited(self.page.wait_for_load_state("load"), what="reloading")
        except PlaywrightError:
            pass
        await self._resync()

    async def _resync(self) -> None:
        """Align a (new) document's clock with the session's virtual time."""
        if self.broken:
            raise PageBroken(self.broken)
        clock_id = None
        for attempt in range(4):
            try:
                raw = await self._in_world(
                    f"__abView.call('sync', {json.dumps([self.frame, self.fps, self.capture_width])})",
                    timeout_s=None, what="starting")
                result = json.loads(raw)
                if isinstance(result, dict) and "harnessError" in result:
                    self._harness_error("sync", result)
                clock_id = result
                break
            except (WorldGone, PlaywrightError) as exc:
                message = str(exc) if isinstance(exc, WorldGone) else exc.message
                if attempt < 3 and NAV_GONE.search(message):
                    # Another navigation is in flight: let it commit (framenavigated may break us).
                    await asyncio.sleep(0.1)
                    try:
                        await self.run_limited(self.page.wait_for_load_state("load"), what="loading")
                    except PlaywrightError:
                        pass
                    continue
                self._break(f"the page could not be used after loading: {message.splitlines()[0]}")
                raise PageBroken(self.broken or "") from None
        if clock_id is None:
            self._break(f"the page left the artefact (now at {self.page.url})")
            raise PageBroken(self.broken or "")
        self._clock_id = clock_id



def _exception_text(details: dict[str, Any]) -> str:
    exc = details.get("exception") or {}
    return str(exc.get("description") or details.get("text") or "exception")[:500]
