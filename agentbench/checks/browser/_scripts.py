"""The in-page scripts, each one closure kept in parts of a readable size and joined here in order.

``CLOCK_JS`` is the virtual clock (the page's main world, before any page code; ``__AB_CONFIG__``
stands for its config), ``VIEW_JS`` the harness's view (an isolated world; ``__AB_VIEW_CONFIG__``).
"""

from __future__ import annotations

from pathlib import Path

from . import _workers

__all__ = ["CLOCK_JS", "CLOCK_PARTS", "VIEW_JS", "VIEW_PARTS"]

CLOCK_PARTS = ("_clock.js", "_clock_timers.js", "_clock_sound.js", "_clock_person.js", "_clock_canvas.js",
               "_clock_entries.js", "_clock_channel.js")
VIEW_PARTS = ("_view.js", "_view_capture.js", "_view_bodies.js", "_view_step.js")


def _join(parts: tuple[str, ...]) -> str:
    return "".join(Path(__file__).with_name(name).read_text(encoding="utf-8") for name in parts)


CLOCK_JS = _join(CLOCK_PARTS) + _workers.PAGE_JS  # each followed by the page's workers' side
VIEW_JS = _join(VIEW_PARTS) + _workers.VIEW_JS
