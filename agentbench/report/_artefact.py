"""Turn a stored artefact into an iframe ``srcdoc``: local scripts and styles inlined, replay clock first.

The iframe is sandboxed (``allow-scripts`` only), so the artefact runs in an opaque origin and
cannot read the report, its storage or the local API.  srcdoc has no folder of its own, so an
artefact split into index.html + game.js would break in the report while the checks (which serve
the folder) saw it work; its local scripts and stylesheets are therefore inlined.  A ``<base>``
tag would fix paths too but turns ``href="#"`` links into navigations away from the artefact.
"""

from __future__ import annotations

import functools
import json
import os
import posixpath
import re
import stat
from pathlib import Path
from typing import Any

from .._files import lookup, read_bytes, safe_parts
from ..errors import ArtefactError, TaskError

__all__ = ["MAX_EMBED_BYTES", "REPLAY_INPUT", "artefact_entry", "build_srcdoc", "entry_for", "read_artefact"]

MAX_EMBED_BYTES = 3_000_000  # larger artefacts are linked, not embedded

# The same scripted input for every model's artefact of a task, for the synchronised replay:
# Flappy Bird gets a Space press every half second for five seconds and then none, so both
# flying and dying show (a frame-locked bird at 240 Hz falls four times as fast between presses).
REPLAY_INPUT: dict[str, list[dict[str, Any]]] = {
    "flappy": [{"at_ms": 500 + 500 * i, "key": " "} for i in range(10)],
}

_DOCTYPE = re.compile(r"\A\ufeff?\s*(?:<!--.*?-->\s*)*<!doctype[^>]*>", re.IGNORECASE | re.DOTALL)
_SCRIPT_SRC = re.compile(
    r"<script\b(?P<pre>[^>]*?)\s+src\s*=\s*(?P<q>[\"']?)(?P<src>[^\"'\s>]+)(?P=q)(?P<post>[^>]*)>\s*</script\s*>",
    re.IGNORECASE,
)
_LINK = re.compile(r"<link\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"(\w[\w-]*)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+))")


@functools.lru_cache(maxsize=64)
def entry_for(task: str) -> str:
    """The task's entry file name (``index.html`` for a task this checkout does not know)."""
    from ..tasks import load_task

    try:
        return load_task(task).entry
    except TaskError:
        return "index.html"


def _local(run_dir: Path, folder: str, ref: str) -> str | None:
    """The run-relative path of the plain file a relative reference names inside the artefact folder."""
    if re.match(r"^[a-z][a-z0-9+.-]*:|^//|^/", ref, re.IGNORECASE):
        return None
    rel = posixpath.normpath(ref.split("#", 1)[0].split("?", 1)[0])
    if rel in (".", "..") or rel.startswith("../"):
        return None
    path = f"{folder}/{rel}"
    st = lookup(run_dir, path)
    return path if st is not None and stat.S_ISREG(st.st_mode) else None


class _Inliner:
    """Inlines local scripts and stylesheets, at most MAX_EMBED_BYTES of them in all."""

    def __init__(self, run_dir: Path, folder: str, budget: int) -> None:
        self.run_dir, self.folder, self.budget = run_dir, folder, budget

    def text(self, ref: str) -> str | None:
        path = _local(self.run_dir, self.folder, ref)
        if path is None:
            return None
        try:
            data = read_bytes(self.run_dir, path, max_bytes=max(0, self.budget))
        except (OSError, ArtefactError):
            return None  # left as a reference: too large to embed, or not a plain file
        self.budget -= len(data)
        return data.decode("utf-8", errors="replace")


def _inline(html: str, inliner: _Inliner) -> str:
    def script(m: re.Match[str]) -> str:
        code = inliner.text(m.group("src"))
        if code is None:
            return m.group(0)
        code = code.replace("</script", "<\\/script")
        return f"<script{m.group('pre')}{m.group('post')}>{code}</script>"

    def link(m: re.Match[str]) -> str:
        attrs = {a.lower(): (v1 or v2 or v3) for a, v1, v2, v3 in _ATTR.findall(m.group(0))}
        if "stylesheet" not in attrs.get("rel", "").lower() or "href" not in attrs:
            return m.group(0)
        css = inliner.text(attrs["href"])
        if css is None:
            return m.group(0)
        css = css.replace("</style", "<\\/style")
        return f"<style>{css}</style>"

    return _LINK.sub(link, _SCRIPT_SRC.sub(script, html))


def artefact_entry(run_dir: Path, folder: str, entry: str) -> str | None:
    """The run-relative path of the artefact's entry when it is a plain file reached without a link."""
    try:
        safe_parts(folder)
        safe_parts(entry)
    except ValueError:
        return None
    path = f"{folder}/{entry}"
    st = lookup(run_dir, path)
    return path if st is not None and stat.S_ISREG(st.st_mode) else None


def read_artefact(run_dir: Path, folder: str, entry: str) -> tuple[str | None, str]:
    """(the entry HTML with local scripts/styles inlined, or None; why not, when None).

    ``folder`` is the artefact folder relative to ``run_dir``: every file is read from the run
    folder down without following a link (:mod:`agentbench._files`), so a symlinked entry or
    script is never embedded.
    """
    path = artefact_entry(run_dir, folder, entry)
    if path is None:
        return None, f"no {entry} in the artefact (or not a plain file)"
    try:
        raw = read_bytes(run_dir, path, max_bytes=MAX_EMBED_BYTES)
    except ArtefactError:
        size = (lookup(run_dir, path) or os.stat_result((0,) * 10)).st_size
        return None, f"{entry} is {size / 1e6:.1f} MB, too large to embed; open the file instead"
    except OSError as exc:
        return None, f"{entry} could not be read: {exc}"
    inliner = _Inliner(run_dir, folder, MAX_EMBED_BYTES - len(raw))
    return _inline(raw.decode("utf-8", errors="replace"), inliner), ""


def cfg_script(cfg: dict[str, Any]) -> str:
    # The report's JS finds this exact line to restart a replay with another rate.
    text = json.dumps(cfg, separators=(",", ":")).replace("<", "\\u003c")
    return f"<script>window.__ABR_CFG={text};/*abr-cfg*/</script>"


def build_srcdoc(html: str, cfg: dict[str, Any], clock_js: str) -> str:
    """The artefact with the replay config and clock first, after any doctype (which must stay first)."""
    m = _DOCTYPE.match(html)
    cut = m.end() if m else 0
    # The report's script rewrites the first config line it finds: ours must be the first.
    head = html[:cut].replace("/*abr-cfg*/", "/*abr_cfg*/")
    return head + cfg_script(cfg) + f"<script>{clock_js}</script>" + html[cut:]
