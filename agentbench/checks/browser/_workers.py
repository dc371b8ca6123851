"""Dedicated workers on the page's virtual clock (issue 28, tell 6).

A worker the page makes from a ``blob:`` URL runs ``_clock_worker.js`` in front of its own script,
so its ``performance.now``, ``Date``, timers and animation frames are the page's virtual time from
its first statement. The page's side (``_clock_workers.js``, registered with the clock) hands out
that script and keeps the list of workers; the frame step (``_workers_view.js``, in the harness's
isolated world) pushes the page's time to every worker after each frame and waits, a bounded
condition, until each has caught up and answered, so what the workers post reaches the page before
the frame is captured: the same page gives the same frames on a busy machine. A page that makes
no worker pays one event listener.

A worker from a classic script file of the artefact's is asked for at its URL with a query of ours
(named by :func:`worker_key`, its value what the page knew when it made the worker), answered by
:func:`serve_worker`. Why a query: nothing else tells the harness's route that a request is a worker's
script (measured in Chromium 156 under the harness's user agent override: the same resource type,
headers and frame as a ``<script>``'s; the worker's target is announced after its script is
fetched), and asking the page at every script request would cost the pages that make no worker.
The page never reads the query: ``_clock_perf.js`` shows the timeline's entry for the request under
the URL the page gave, by every reader, and the wrapper is padded to the script's size.

Why not CDP: ``Target.setAutoAttach`` with ``waitForDebuggerOnStart`` holds a new worker only until
*every* session attached with it resumes it, and Playwright's own page session resumes workers at
once; a second (non-flat) session's script arrived after the worker's first statements had run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ._serve import ServeBudget, serve_file

__all__ = ["PAGE_JS", "VIEW_JS", "WORKER_JS", "serve_worker", "worker_key"]

_HERE = Path(__file__).parent


def _one_line(source: str) -> str:
    """The worker clock as one line (it shares the worker script's first line: line numbers stay)."""
    lines = (line.strip() for line in source.splitlines())
    return " ".join(line for line in lines if line and not line.startswith("//"))


def _read(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


#: The timeline's readers as a person's browser shows them (_clock_perf.js), in the page and in workers.
PERF_JS = _one_line(_read("_clock_perf.js"))
WORKER_JS = _one_line(_read("_clock_worker.js").replace("__AB_PERF_JS__", PERF_JS))
#: The page's side, joined after the clock (the clock's config, ``__AB_CONFIG__``, is its config too).
PAGE_JS = "\n" + _read("_clock_workers.js").replace("__AB_WORKER_JS__", json.dumps(WORKER_JS)).replace(
    "__AB_PERF_JS__", PERF_JS)
#: The frame step's side, joined after the view (``__AB_VIEW_CONFIG__``).
VIEW_JS = _read("_workers_view.js")
CLOCK_TAG = "c"  # our query's value for the worker clock's own script


def worker_key(channel: str) -> str:
    """The name of our query (a worker script on the clock): one-way from the session's secret (an
    HMAC), so nothing that shows it shows any part of the secret."""
    return hmac.new(channel.encode(), b"agentbench worker query", hashlib.sha256).hexdigest()[:16]


def serve_worker(url: str, resource_type: str, channel: str, root: Path,
                 budget: ServeBudget) -> tuple[int, bytes, str] | None:
    """``(status, body, content type)`` for a URL with our query (``_clock_workers.js`` asks for a worker
    script of the artefact's with it); None for any other URL.

    The query's value is what the page knew when it made the worker: its number, the page's time and
    Date then, its seed, and ``m`` for a module worker (with the page's fragment, when it gave one).
    - The worker's script itself (a ``script`` request): a wrapper that imports the worker clock (the
      same URL with our value after ``c``) and then the script at its own URL (``importScripts``, or
      two static imports for a module, which run in that order before anything else), so its relative
      URLs, strictness and line numbers hold. The wrapper is padded to the script's own size (when
      the script is larger): the page's timeline entry for the request reads the script's sizes.
    - The worker clock (``c`` and our value), with the secrets, which never travel in a URL.
    - Anything else the worker asks for at its own URL (``fetch("")``): the file, as without the query.
    Both scripts of ours name the worker's script as their source (a stack shows its URL). A file that
    is not there, too large or over the session's budget answers as it would plainly.
    """
    key = worker_key(channel)
    # The page put our query last (before a fragment, which the browser never sends): cut it off as
    # text, so the script's own URL is exactly what the page gave.
    found = re.search(r"[?&]" + key + r"=([^&#]*)$", url.split("#", 1)[0])
    if found is None:
        return None
    original, value = url[:found.start()], found.group(1)
    clock = value.startswith(CLOCK_TAG)
    value = value.removeprefix(CLOCK_TAG)
    fields = value.split("_", 5)
    try:
        id_, rel0, date0, seed = fields[:4]
        module = fields[4:5] == ["m"]
        if len(fields) != 4 and not module:
            raise ValueError(value)
        # A module's import of its script keeps the page's fragment (import.meta.url shows it).
        fragment = "#" + unquote(fields[5]) if len(fields) == 6 else ""
        # A worker the page made has a number; one a worker made, "parent.n" (see _clock_worker.js).
        cfg: dict[str, Any] = {"id": int(id_) if id_.isdigit() else id_, "rel0": float(rel0),
                               "date0": float(date0), "seed": int(seed)}
    except ValueError:
        clock, module, fragment, cfg = False, False, "", {}
    query = urlsplit(original).query
    source = f"\n//# sourceURL={original}"
    clock_url = f"{original}{'&' if '?' in original else '?'}{key}={CLOCK_TAG}{value}"
    if clock:
        cfg |= {"key": key, "cu": clock_url, "hash": True, "bc": channel + ":bc", "marker": channel + ":started",
                "src": WORKER_JS, "loc": {"href": original, "search": f"?{query}" if query else ""}}
        if not module:  # a classic worker's own timeline keeps our imports (a module's: the page's)
            cfg["imp"] = original
        return 200, f"{WORKER_JS}({json.dumps(cfg)});{source}".encode(), "text/javascript"
    status, body, ctype = serve_file(root, unquote(urlsplit(original).path), budget)
    if status != 200 or resource_type != "script" or not cfg:
        return status, body, ctype
    if module:
        wrapped = f"import {json.dumps(clock_url)};import {json.dumps(original + fragment)};".encode()
    else:
        wrapped = f"importScripts({json.dumps(clock_url)});importScripts({json.dumps(original)});".encode()
    pad = len(body) - len(wrapped) - len(source.encode())
    return 200, wrapped + b" " * max(0, pad) + source.encode(), ctype
