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
CLOCK_TAG, SCRIPT_TAG = "c", "s"  # our query's value for the worker clock / for our import of the script


def worker_key(channel: str) -> str:
    """The name of our query (a worker script on the clock): one-way from the session's secret (an
    HMAC), so nothing that shows it shows any part of the secret."""
    return hmac.new(channel.encode(), b"agentbench worker query", hashlib.sha256).hexdigest()[:16]


def _shared_script(cfg: dict[str, Any], body: bytes, module: bool, source: str) -> bytes:
    """A SharedWorker's script on the clock, whole in one response: what a SharedWorker asks for itself
    (an import) never reaches the harness's route (measured in Chromium 156: it goes to the network), so
    the clock comes inline. A classic script runs after it as a script of its own (its strictness and
    line numbers hold), from a blob: URL the worker makes; a module's text follows the clock on its
    first line (a module is strict anyway; its lines stay)."""
    clock = f"{WORKER_JS}({json.dumps(cfg)});"
    text = body.decode("utf-8", errors="replace")
    if module:
        return (clock + text + ("" if "sourceURL=" in text else source)).encode()
    named = text if "sourceURL=" in text else text + source
    return (clock + "importScripts(URL.createObjectURL(new Blob([" + json.dumps(named) +
            "], { type: \"text/javascript\" })));" + source).encode()


def serve_worker(url: str, resource_type: str, channel: str, root: Path,
                 budget: ServeBudget) -> tuple[int, bytes, str] | None:
    """``(status, body, content type)`` for a URL with our query (``_clock_workers.js`` asks for a worker
    script of the artefact's with it); None for any other URL.

    The query's value is what the page knew when it made the worker: its number, the page's time and
    Date then, its seed, ``k`` or ``m`` (classic or module; ``K`` or ``M`` for a SharedWorker) and the
    page's fragment, when it gave one.
    - The worker's script itself (a ``script`` request): a wrapper that imports the worker clock (the
      same URL with ``c`` before our value) and then the script (``importScripts`` of it under ``s``
      before our value, or, for a module, a static import of it at its own URL and fragment, which
      run in that order before anything else), so its relative URLs, strictness and line numbers
      hold. The wrapper is padded to the script's own size (when the script is larger): the page's
      timeline entry for the request reads the script's sizes.
    - The worker clock (``c``), with the secrets, which never travel in a URL.
    - The script for a classic worker's import (``s``): the file, named (``sourceURL``) by the URL and
      fragment the page gave, as a person's browser names a worker's script in a stack and an error.
    - Anything else the worker asks for at its own URL (``fetch("")``): the file, as without the query.
    Our scripts name the worker's as their source too. A file that is not there, too large or over the
    session's budget answers as it would plainly.
    """
    key = worker_key(channel)
    # The page put our query last (before a fragment, which the browser never sends): cut it off as
    # text, so the script's own URL is exactly what the page gave.
    found = re.search(r"[?&]" + key + r"=([^&#]*)$", url.split("#", 1)[0])
    if found is None:
        return None
    original, value = url[:found.start()], found.group(1)
    tag = value[:1] if value[:1] in (CLOCK_TAG, SCRIPT_TAG) else ""
    value = value[len(tag):]
    fields = value.split("_", 5)
    try:
        id_, rel0, date0, seed = fields[:4]
        # k / m: a classic / module worker; K / M: a classic / module SharedWorker
        module, shared = fields[4:5] in (["m"], ["M"]), fields[4:5] in (["K"], ["M"])
        if len(fields) != 4 and fields[4] not in ("k", "m", "K", "M"):
            raise ValueError(value)
        fragment = "#" + unquote(fields[5]) if len(fields) == 6 else ""
        # A worker the page made has a number; one a worker made, "parent.n" (see _clock_worker.js).
        cfg: dict[str, Any] = {"id": int(id_) if id_.isdigit() else id_, "rel0": float(rel0),
                               "date0": float(date0), "seed": int(seed)}
    except ValueError:
        tag, module, shared, fragment, cfg = "", False, False, "", {}
    named = f"{original}{fragment}"
    source = f"\n//# sourceURL={named}"
    ours = f"{original}{'&' if '?' in original else '?'}{key}="
    clock_url, script_url = f"{ours}{CLOCK_TAG}{value}", f"{ours}{SCRIPT_TAG}{value}"
    query = urlsplit(original).query
    clock_cfg = cfg | {"key": key, "cu": clock_url, "hash": True, "bc": channel + ":bc",
                       "marker": channel + ":started", "src": WORKER_JS,
                       "loc": {"href": original, "search": f"?{query}" if query else ""}}
    if tag == CLOCK_TAG:
        if not module:  # a classic worker's own timeline keeps our imports (a module's: the page's)
            clock_cfg["imp"] = script_url
        return 200, f"{WORKER_JS}({json.dumps(clock_cfg)});{source}".encode(), "text/javascript"
    status, body, ctype = serve_file(root, unquote(urlsplit(original).path), budget)
    if status != 200 or not cfg:
        return status, body, ctype
    if shared and not tag and resource_type == "script":
        return 200, _shared_script(clock_cfg | {"shared": True}, body, module, source), ctype
    if tag == SCRIPT_TAG:  # (a script of its own naming keeps it: the last name given wins)
        return status, body if b"sourceURL=" in body else body + source.encode(), ctype
    if resource_type != "script":
        return status, body, ctype
    if module:
        wrapped = f"import {json.dumps(clock_url)};import {json.dumps(named)};".encode()
    else:
        wrapped = f"importScripts({json.dumps(clock_url)});importScripts({json.dumps(script_url)});".encode()
    pad = len(body) - len(wrapped) - len(source.encode())
    return 200, wrapped + b" " * max(0, pad) + source.encode(), ctype
