"""What a page session hears from the browser (a part of ``_page.PageSession``): page errors and
console errors (capped in length), dialogs, blocked requests, a navigation away; and ``PageBroken``,
the verdict a session can end in.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

import structlog
from playwright.async_api import ConsoleMessage, Dialog, Page
from playwright.async_api import Error as PlaywrightError

from ...errors import CheckError

if TYPE_CHECKING:
    from ._slot import SessionHost

__all__ = ["MAX_ERRORS", "MAX_MESSAGE_CHARS", "ORIGIN", "PageBroken", "PageEvents"]

log = structlog.get_logger()
ORIGIN = "http://localhost"  # route-served; localhost is a secure context
MAX_MESSAGE_CHARS = 2000  # a page error or console line, as recorded (a page may log 7 MB lines)
MAX_ERRORS = 200


class PageBroken(CheckError):
    """The page hung, crashed or navigated away; ``session.broken`` says which. A verdict, not a gap."""


class PageEvents:
    """The session's side that hears the browser's events (PageSession is one)."""

    harness: SessionHost
    page: Page
    errors: list[str]
    dialogs: list[str]
    blocked: list[str]
    broken: str | None
    _dialog_doc: str | None
    _dialogs_read: int

    def record_blocked(self, url: str) -> None:
        if url not in self.blocked:
            self.blocked.append(url)
            self.harness.blocked.append(url)

    def _note_dialogs(self, dialogs: list[str] | None, doc: str | None = None) -> None:
        """Record the dialogs of the clock's document ``doc`` not seen yet (each document counts its own)."""
        if doc is not None and doc != self._dialog_doc:
            self._dialog_doc, self._dialogs_read = doc, 0
        fresh = (dialogs or [])[self._dialogs_read:]
        self._dialogs_read += len(fresh)
        for text in fresh:
            self.dialogs.append(text)
            self.harness.dialogs.append(text)

    def _add_error(self, text: str) -> None:
        if len(text) > MAX_MESSAGE_CHARS:  # capped here, before it travels anywhere
            text = text[:MAX_MESSAGE_CHARS] + f"... [{len(text) - MAX_MESSAGE_CHARS} more characters]"
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(text)
            self.harness.page_errors.append(text)

    def _on_pageerror(self, err: PlaywrightError) -> None:
        where = ""
        for line in (err.stack or "")[:20000].splitlines()[1:]:
            m = re.search(r"(https?://[^\s)]+):(\d+):\d+", line)
            if m and m.group(1).startswith(ORIGIN):
                where = f" (at {m.group(1).rsplit('/', 1)[-1]}:{m.group(2)})"
                break
        self._add_error(f"{(err.name or 'Error')[:100]}: {(err.message or '')[:MAX_MESSAGE_CHARS + 1]}{where}")

    def _on_console(self, msg: ConsoleMessage) -> None:
        if msg.type != "error" or msg.text.startswith("Failed to load resource"):
            return
        loc = msg.location or {}
        where = f" (at {loc.get('url', '').rsplit('/', 1)[-1]}:{loc.get('lineNumber')})" if loc.get("url") else ""
        self._add_error(f"console.error: {msg.text[:MAX_MESSAGE_CHARS + 1]}{where}")

    def _on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message[:MAX_MESSAGE_CHARS]}")
        asyncio.ensure_future(self._dismiss(dialog))

    async def _dismiss(self, dialog: Dialog) -> None:
        try:
            await dialog.dismiss()
        except PlaywrightError:
            pass

    def _on_navigated(self, frame: Any) -> None:
        if frame == self.page.main_frame and not frame.url.startswith(ORIGIN):
            self._break(f"the page navigated away to {frame.url}")

    def _break(self, reason: str) -> None:
        if self.broken is None:
            self.broken = reason
            log.info("page broken", reason=reason)

