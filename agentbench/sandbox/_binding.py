"""Which Docker engine the running task's sandboxes go to (a context variable, set per cell).

Kept apart from ``_engines`` so the low-level engine helpers (``_image.connect_docker``) can ask
for the bound engine without importing the module that builds images on engines.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

__all__ = ["bind_engine", "bound_engine"]

# The value is an ``_engines.Engine``; typed Any so this module imports nothing of the engines.
_BOUND: contextvars.ContextVar[Any] = contextvars.ContextVar("agentbench_engine", default=None)


def bound_engine() -> Any:
    """The engine the current task's sandboxes go to (None: the environment's engine)."""
    return _BOUND.get()


@contextlib.contextmanager
def bind_engine(engine: Any) -> Iterator[None]:
    """Send every sandbox created in this context (tasks and threads started here too) to engine."""
    token = _BOUND.set(engine)
    try:
        yield
    finally:
        _BOUND.reset(token)
