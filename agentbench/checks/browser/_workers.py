"""Dedicated workers on the page's virtual clock (issue 28, tell 6).

A worker the page makes from a ``blob:`` URL runs ``_clock_worker.js`` in front of its own script,
so its ``performance.now``, ``Date``, timers and animation frames are the page's virtual time from
its first statement. The page's side (``_clock_workers.js``, registered with the clock) hands out
that script and keeps the list of workers; the frame step (``_workers_view.js``, in the harness's
isolated world) pushes the page's time to every worker after each frame and waits, a bounded
condition, until each has caught up and answered, so what the workers post reaches the page before
the frame is captured: the same page gives the same frames on a busy machine. A page that makes
no worker pays one event listener.

Why not CDP: ``Target.setAutoAttach`` with ``waitForDebuggerOnStart`` holds a new worker only until
*every* session attached with it resumes it, and Playwright's own page session resumes workers at
once; a second (non-flat) session's script arrived after the worker's first statements had run.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["PAGE_JS", "VIEW_JS", "WORKER_JS", "wrapper"]

_HERE = Path(__file__).parent


def _one_line(source: str) -> str:
    """The worker clock as one line (it shares the worker script's first line: line numbers stay)."""
    lines = (line.strip() for line in source.splitlines())
    return " ".join(line for line in lines if line and not line.startswith("//"))


WORKER_JS = _one_line((_HERE / "_clock_worker.js").read_text(encoding="utf-8"))
#: The page's side, joined after the clock (the clock's config, ``__AB_CONFIG__``, is its config too).
PAGE_JS = "\n" + (_HERE / "_clock_workers.js").read_text(encoding="utf-8").replace(
    "__AB_WORKER_JS__", json.dumps(WORKER_JS))
#: The frame step's side, joined after the view (``__AB_VIEW_CONFIG__``).
VIEW_JS = (_HERE / "_workers_view.js").read_text(encoding="utf-8")


def wrapper(url: str, channel: str) -> tuple[str, str] | None:
    """A classic worker script of the artefact's own, asked for by ``_clock_workers.js`` (its URL with a
    query named by the session's secret): the worker clock, then ``importScripts`` of the script at
    its own URL, and that URL's path. None for any other request.

    The query carries what the page knew when it made the worker (its number, the page's time and
    Date then, its seed); the secrets (the channel's names) are added here and never travel in a URL.
    """
    parts = urlsplit(url)
    key = channel[12:]
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    ours = [v for k, v in pairs if k == key]
    if not ours:
        return None
    try:
        id_, rel0, date0, seed = ours[0].split("_")
        # A worker the page made has a number; one a worker made, "parent.n" (see _clock_worker.js).
        cfg = {"id": int(id_) if id_.isdigit() else id_, "rel0": float(rel0), "date0": float(date0), "seed": int(seed)}
    except ValueError:
        return None
    query = urlencode([(k, v) for k, v in pairs if k != key])
    original = urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    cfg |= {"bc": channel + ":bc", "marker": channel + ":started", "src": WORKER_JS,
            "loc": {"href": original, "search": f"?{query}" if query else ""}}
    return f"{WORKER_JS}({json.dumps(cfg)});importScripts({json.dumps(original)});", parts.path
