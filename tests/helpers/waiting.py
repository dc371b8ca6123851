"""Wait for a condition, never for an amount of time.

A test that needs something to have happened (a file written, a request held, a count reached)
waits for exactly that; the bound is generous, reached only when the thing never happens (a hang),
never by a slow or busy machine. A timeout fails the test naming what it waited for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["HANG_S", "until", "until_async", "until_page"]

#: How long a condition may take before the test calls it a hang (not a slow machine).
HANG_S = 120.0
_T = TypeVar("_T")


def until(cond: Callable[[], _T], what: str, *, timeout_s: float = HANG_S, every_s: float = 0.02) -> _T:
    """Poll ``cond`` until it returns something truthy and return that; AssertionError after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}: it never happened")
        time.sleep(every_s)


async def until_async(cond: Callable[[], _T], what: str, *, timeout_s: float = HANG_S,
                      every_s: float = 0.02) -> _T:
    """:func:`until` for a condition that the running event loop makes true (it yields between polls)."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}: it never happened")
        await asyncio.sleep(every_s)


async def until_page(session: Any, condition: str, *, step_s: float = 0.05, steps: int = 100) -> None:
    """Play the page's virtual clock on, ``step_s`` at a time, until ``condition`` (a function's source,
    evaluated in the page) holds: for what answers in a real task (a worker, a promise, the permissions
    API). After ``steps`` steps it returns all the same: what the test reads next tells what was missing."""
    for _ in range(steps):
        if await session.eval(condition):
            return
        await session.advance(step_s)
