"""Other real-time step limits for a test: shorter where the page really hangs, longer where it must not be cut.

A page that loops for ever is cut at the harness's step limit (``STEP_LIMIT_S``, 5 s) and played
again under ``REPLAY_LIMIT_S`` (20 s), where it is cut again: a test of that waits out both, 25 s of
nothing. The verdict does not depend on the limits' size (the page never finishes under any limit),
so such a test may ask for short ones: :func:`short_step_limits` sets both, in every agentbench
module that holds them (they are imported by name), and puts the product's values back after, also
in modules first imported meanwhile. The replay's limit must stay longer than the first try's, as
in the product. Only for pages that hang: a page that works needs the product's limits, or longer
ones (:func:`step_limits`) where a test counts what a cut would change (a replay opens more pages).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["short_step_limits", "step_limits"]

_NAMES = ("STEP_LIMIT_S", "REPLAY_LIMIT_S")


def _holders() -> list[object]:
    return [m for n, m in list(sys.modules.items()) if n.startswith("agentbench.") and m is not None
            and any(name in vars(m) for name in _NAMES)]


def short_step_limits(step_s: float = 1.0, replay_s: float = 3.0):
    """Short limits for a page that loops for ever (cut under any limit)."""
    return step_limits(step_s, replay_s)


@contextmanager
def step_limits(step_s: float, replay_s: float) -> Iterator[None]:
    """Within the block, a session's step limit is ``step_s`` and a replay's ``replay_s`` (real seconds)."""
    from agentbench.checks.browser import _page

    assert 0 < step_s < replay_s, "a replay gets a longer limit than the first try, as in the product"
    product = {"STEP_LIMIT_S": _page.STEP_LIMIT_S, "REPLAY_LIMIT_S": _page.REPLAY_LIMIT_S}
    short = {"STEP_LIMIT_S": step_s, "REPLAY_LIMIT_S": replay_s}

    def put(values: dict[str, float], expect: dict[str, float] | None) -> None:
        for module in _holders():
            for name, value in values.items():
                if name in vars(module):
                    if expect is not None:
                        assert getattr(module, name) == expect[name], (module, name)
                    setattr(module, name, value)

    put(short, product)
    try:
        yield
    finally:
        put(product, None)  # modules imported meanwhile read the short values from _page: reset them too
