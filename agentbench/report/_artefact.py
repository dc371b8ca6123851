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
import re
from pathlib import Path
from typing import Any

from ..errors import TaskError

__all__ = ["MAX_EMBED_BYTES", "REPLAY_INPUT", "build_srcdoc", "entry_for", "read_artefact"]

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


def _local(folder: Path, ref: str) -> Path | None:
    """The file a relative reference names, if it is inside the artefact folder."""
    if re.match(r"^[a-z][a-z0-9+.-]*:|^//|^/", ref, re.IGNORECASE):
        return None
    path = (folder / ref.split("#", 1)[0].split("?", 1)[0]).resolve()
    try:
        path.relative_to(folder.resolve())
    except ValueError:
        return None
    return path if path.is_file() else None


def _inline(html: str, folder: Path) -> str:
    def script(m: re.Match[str]) -> str:
        path = _local(folder, m.group("src"))
        if path is None:
            return m.group(0)
        code = path.read_text(encoding="utf-8", errors="replace").replace("</script", "<\\/script")
        return f"<script{m.group('pre')}{m.group('post')}>{code}</script>"

    def link(m: re.Match[str]) -> str:
        attrs = {a.lower(): (v1 or v2 or v3) for a, v1, v2, v3 in _ATTR.findall(m.group(0))}
        if "stylesheet" not in attrs.get("rel", "").lower() or "href" not in attrs:
            return m.group(0)
        path = _local(folder, attrs["href"])
        if path is None:
            return m.group(0)
        css = path.read_text(encoding="utf-8", errors="replace").replace("</style", "<\\/style")
        return f"<style>{css}</style>"

    return _LINK.sub(link, _SCRIPT_SRC.sub(script, html))


def read_artefact(artefact_dir: Path, entry: str) -> tuple[str | None, str]:
    """(the entry HTML with local scripts/styles inlined, or None; why not, when None)."""
    path = artefact_dir / entry
    if not path.is_file():
        return None, f"no {entry} in the artefact"
    size = path.stat().st_size
    if size > MAX_EMBED_BYTES:
        return None, f"{entry} is {size / 1e6:.1f} MB, too large to embed; open the file instead"
    return _inline(path.read_text(encoding="utf-8", errors="replace"), artefact_dir), ""


def cfg_script(cfg: dict[str, Any]) -> str:
    # The report's JS finds this exact line to restart a replay with another rate.
    text = json.dumps(cfg, separators=(",", ":")).replace("<", "\\u003c")
    return f"<script>window.__ABR_CFG={text};/*abr-cfg*/</script>"


def build_srcdoc(html: str, cfg: dict[str, Any], clock_js: str) -> str:
    """The artefact with the replay config and clock first, after any doctype (which must stay first)."""
    m = _DOCTYPE.match(html)
    cut = m.end() if m else 0
    return html[:cut] + cfg_script(cfg) + f"<script>{clock_js}</script>" + html[cut:]
