"""What the harness's route serves from an artefact folder: plain files only, each and all capped.

The page under test asks for URLs; the answer is a file of the artefact folder only when it is
a plain file reached without following a link (:mod:`agentbench._files`), at most
``MAX_SERVED_FILE`` bytes (its size is checked before a byte is read, so a 2 GB file costs
nothing), and while the session has fetched under ``MAX_SERVED_TOTAL`` bytes: a page fetching
the same file in a loop gets ``429`` instead of filling the host's memory.
"""

from __future__ import annotations

import mimetypes
import stat
from dataclasses import dataclass
from pathlib import Path

from ..._files import MAX_FILE_BYTES, lookup, read_bytes
from ...errors import ArtefactError

__all__ = ["MAX_SERVED_FILE", "MAX_SERVED_TOTAL", "ServeBudget", "is_plain_file", "serve_file"]

MAX_SERVED_FILE = MAX_FILE_BYTES
MAX_SERVED_TOTAL = 256 * 1024 * 1024  # per page session


@dataclass
class ServeBudget:
    """Bytes served to one page session so far."""

    served: int = 0
    limit: int = MAX_SERVED_TOTAL


def is_plain_file(root: Path, rel: str) -> bool:
    """True when ``root/rel`` is a plain file inside root reached without a link."""
    st = lookup(root, rel)
    return st is not None and stat.S_ISREG(st.st_mode)


def serve_file(root: Path, url_path: str, budget: ServeBudget) -> tuple[int, bytes, str]:
    """``(status, body, content type)`` for a request path (already %-decoded) on the artefact origin."""
    rel = url_path.lstrip("/") or "index.html"
    st = lookup(root, rel)
    if st is not None and stat.S_ISDIR(st.st_mode):
        rel = rel.rstrip("/") + "/index.html"
        st = lookup(root, rel)
    if st is None or not stat.S_ISREG(st.st_mode):
        return 404, b"not found", "text/plain"
    too_big = f"{rel}: over the {MAX_SERVED_FILE >> 20} MiB cap per artefact file".encode()
    if st.st_size > MAX_SERVED_FILE:
        return 413, too_big, "text/plain"
    if budget.served + st.st_size > budget.limit:
        return 429, f"this page has fetched over {budget.limit >> 20} MiB of files".encode(), "text/plain"
    try:
        body = read_bytes(root, rel, max_bytes=MAX_SERVED_FILE)
    except FileNotFoundError:  # swapped for a link or removed since the lookup
        return 404, b"not found", "text/plain"
    except ArtefactError:  # grew since the lookup
        return 413, too_big, "text/plain"
    budget.served += len(body)
    ctype = mimetypes.guess_type(rel.rsplit("/", 1)[-1])[0] or "application/octet-stream"
    return 200, body, ctype
