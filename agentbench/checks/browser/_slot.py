"""What a page session and the harness that lends it share: the pooled slot, the check's clock, and
the little of the harness a session calls back (so the session does not import the harness).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from playwright.async_api import BrowserContext, CDPSession, Page

from ._serve import ServeBudget

__all__ = ["CheckClock", "SessionHost", "Slot", "Tenant"]


class Tenant(Protocol):
    """A page session as its slot and host see it: what the clock is registered with, where a
    blocked request is recorded. ``PageSession`` is one; the slot never needs more of it, so this
    module does not import the session's (arrows run one way: ``_page`` -> ``_slot``).
    """

    slot: Slot | None
    fps: int
    seed: int
    epoch: int
    channel: str

    @property
    def now_ms(self) -> float: ...

    def record_blocked(self, url: str) -> None: ...


@dataclass
class Slot:
    """A browser context with its one page, serving ``root`` to ``session``."""

    context: BrowserContext
    page: Page
    cdp: CDPSession
    root: Path
    viewport: tuple[int, int]
    session: Tenant | None = None
    uses: int = 0
    budget: ServeBudget = field(default_factory=ServeBudget)  # bytes served to the current session
    clock_script: str | None = None  # the CDP identifier of the session's clock script


@dataclass(frozen=True)
class CheckClock:
    """What every session of one check shares, so its 60 and 240 Hz runs see the same page.

    ``seed``: Math.random's seed, from a digest of the artefact's files (reproducible, and not a
    constant a page could test for); ``epoch``: Date.now() at frame 0, the real time when the check
    began (a person's clock, never a fixed date).
    """

    seed: int
    epoch: int


class SessionHost(Protocol):
    """The harness as a session sees it: where it records what the page did, and its pool."""

    page_errors: list[str]
    blocked: list[str]
    dialogs: list[str]
    virtual_s: float

    async def release(self, session: Tenant) -> None: ...

    async def register_clock(self, session: Tenant) -> None: ...
