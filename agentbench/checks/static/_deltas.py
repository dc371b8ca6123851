"""Frame time in JS source: the clock readings, the ``dt = now - last`` assignments, their reads.

What the ``uses_elapsed_time`` and ``clamps_frame_delta`` detectors (:mod:`._static`) look at:
which names hold a clock reading (a requestAnimationFrame callback's parameter, a variable set
from ``performance.now()``/``Date.now()``), where a frame's elapsed time is computed from one, and
where that delta is read afterwards (a reassignment or a mere comparison is not a read).
"""

from __future__ import annotations

import re

from ._source import Hit, Source

__all__ = ["IDENT", "delta_reads", "frame_deltas", "time_names"]

IDENT = r"[A-Za-z_$][\w$]*"


def time_names(source: Source) -> set[str]:
    """Names holding a clock reading: rAF callback parameters and vars set from now()."""
    names: set[str] = set()
    for h in source.find(rf"requestAnimationFrame\s*\(\s*({IDENT})", view="skeleton"):
        cb = re.escape(h.match.group(1))
        for d in source.find(
            rf"function\s+{cb}\s*\(\s*({IDENT})|\b{cb}\s*=\s*(?:function\s*\(\s*({IDENT})|\(?\s*({IDENT})\s*\)?\s*=>)",
            view="skeleton",
        ):
            names.update(g for g in d.match.groups() if g)
    for h in source.find(r"requestAnimationFrame\s*\(\s*(?:function\s*\(\s*([\w$]+)|\(?\s*([\w$]+)\s*\)?\s*=>)",
                         view="skeleton"):
        names.update(g for g in h.match.groups() if g)
    for h in source.find(rf"\b({IDENT})\s*=\s*(?:performance\.now|Date\.now)\(\)|\b({IDENT})\s*=\s*new\s+Date\(\)",
                         view="skeleton"):
        names.update(g for g in h.match.groups() if g)
    return names


def frame_deltas(source: Source) -> list[tuple[str, Hit, tuple[int, int]]]:
    """``dt = (now - last) ...`` assignments: (the delta's name, where, the span it is visible in).

    A ``let dt`` is looked up only in its own function: ``update(dt)`` elsewhere is another dt.
    """
    clocks = [re.escape(n) for n in sorted(time_names(source))]
    clocks += [r"performance\.now\(\)", r"Date\.now\(\)"]
    clock = "(?:" + "|".join(rf"(?<![\w$.]){c}(?![\w$])" if c[0].isalpha() or c[0] in "_$" else c
                             for c in clocks) + ")"
    regex = (rf"(\b(?:let|const|var)\s+)?\b({IDENT}(?:\.{IDENT})?)\s*[-+]?(?<![=!<>])=(?!=)"
             rf"\s*[^;\n]*?{clock}\s*-\s*[\w$.]+")
    found = []
    for h in source.find(regex, view="skeleton"):
        scope = (h.pos, len(h.file.skeleton))
        fn = source.enclosing_function(h.file, h.pos) if h.match.group(1) else None
        if fn is not None:
            scope = (h.pos, fn[2])
        found.append((h.match.group(2), h, scope))
    return found


def delta_reads(source: Source, name: str, hit: Hit, scope: tuple[int, int]) -> list[Hit]:
    """Reads of ``name`` in ``scope`` after its assignment at ``hit`` (not reassignments)."""
    short = re.escape(name.split(".")[-1])
    uses = []
    for use in source.find(rf"(?<![\w$]){short}(?![\w$])", view="skeleton"):
        if use.file is not hit.file or not (hit.match.end(2) <= use.pos < scope[1]):
            continue
        after = use.file.skeleton[use.match.end():use.match.end() + 4]
        before = use.file.skeleton[max(0, use.pos - 4):use.pos]
        if re.match(r"\s*=(?!=)", after):
            continue  # reassigned, not used
        if re.match(r"\s*(?:[<>]|[!=]=)", after) or re.search(r"(?:[<>]=?|[!=]==?)\s*$", before):
            continue  # only compared (`if (dt > 0)`): the motion does not depend on it
        uses.append(use)
    return uses
