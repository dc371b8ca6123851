"""Shape stored evidence for the templates: any value renders; known shapes render nicely.

Evidence and ``CheckResult.data`` are open-ended (each probe decides what it records), so values
are rendered by shape: a list of records becomes a table (a row whose ``expected`` and
``shown``/``actual`` differ is marked), a dict of lists becomes side-by-side columns (to-do items
before/after a reload), a dict of scalars a key/value table, anything else indented JSON.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._numbers import for_people, human_number

__all__ = ["ChecklistRow", "ChecklistView", "EvidenceView", "ValueView", "checklist_view", "evidence_view",
           "value_view"]

MAX_ROWS = 200
MAX_IMAGE_BYTES = 1_500_000  # images up to this size are embedded as data: URIs, larger ones linked
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}


@dataclass
class ValueView:
    kind: str  # "table" | "columns" | "kv" | "list" | "json" | "scalar"
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    bad: list[bool] = field(default_factory=list)  # per row: expected differs from shown
    text: str = ""
    truncated: int = 0


def _cell(v: Any) -> str:
    """A value as table text: numbers rounded for people (result.json keeps them whole)."""
    if isinstance(v, str):
        return v
    if v is None:
        return "—"
    if isinstance(v, (bool, int, float)):
        return human_number(v)
    return json.dumps(for_people(v), ensure_ascii=False, default=str)


def _raw(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _mismatch(row: dict[str, Any]) -> bool:
    shown_key = next((k for k in ("shown", "actual", "got", "displayed") if k in row), None)
    # Compared unrounded: 1609.344 shown as 1609.3441 is still a difference.
    return "expected" in row and shown_key is not None and _raw(row["expected"]) != _raw(row[shown_key])


def value_view(value: Any) -> ValueView:
    """Pick a rendering for any JSON value by its shape."""
    if _scalar(value):
        return ValueView(kind="scalar", text=_cell(value))
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        headers = list(dict.fromkeys(k for r in value for k in r))
        rows = value[:MAX_ROWS]
        return ValueView(kind="table", headers=headers, rows=[[_cell(r.get(h)) for h in headers] for r in rows],
                         bad=[_mismatch(r) for r in rows], truncated=max(0, len(value) - MAX_ROWS))
    if isinstance(value, list) and all(_scalar(v) for v in value):
        return ValueView(kind="list", rows=[[_cell(v)] for v in value[:MAX_ROWS]],
                         truncated=max(0, len(value) - MAX_ROWS))
    if isinstance(value, dict) and value and all(isinstance(v, list) and all(_scalar(x) for x in v)
                                                 for v in value.values()):
        headers = list(value)
        n = min(MAX_ROWS, max(len(v) for v in value.values()))
        rows = [[_cell(value[h][i]) if i < len(value[h]) else "" for h in headers] for i in range(n)]
        return ValueView(kind="columns", headers=headers, rows=rows)
    if isinstance(value, dict) and all(_scalar(v) or (isinstance(v, list) and all(_scalar(x) for x in v))
                                       for v in value.values()):
        return ValueView(kind="kv", rows=[[str(k), ", ".join(_cell(x) for x in v) if isinstance(v, list) else _cell(v)]
                                          for k, v in value.items()])
    text = json.dumps(for_people(value), indent=2, ensure_ascii=False, default=str)
    return ValueView(kind="json", text=text[:20000], truncated=max(0, len(text) - 20000))


@dataclass
class EvidenceView:
    label: str
    kind: str  # "image" | "link" | "value" | "text" | "missing"
    src: str = ""
    value: ValueView | None = None
    text: str = ""


Linker = Callable[[Path], str]  # a file inside a run folder -> its href from the report


def _inside(base: Path, rel: str) -> Path | None:
    """base/rel when it is a plain file under base reached without following a link (else None)."""
    import posixpath
    import stat

    from .._files import lookup

    rel = posixpath.normpath(rel)
    st = lookup(base, rel)
    return base / rel if st is not None and stat.S_ISREG(st.st_mode) else None


def evidence_view(ev: Any, attempt_dir: Path, run_dir: Path, link: Linker, *, embed: bool = True) -> EvidenceView:
    """One Evidence item: images embedded (a self-contained report) or linked, other files linked,
    values shaped by :func:`value_view`."""
    label = getattr(ev, "label", "") or ""
    kind = getattr(ev, "kind", "text")
    if kind == "file":
        rel = getattr(ev, "path", None) or ""
        path = _inside(run_dir, str(attempt_dir.relative_to(run_dir) / rel)) if rel else None
        if path is None:
            return EvidenceView(label=label, kind="missing", text=rel or "(no path)")
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime and not embed:
            return EvidenceView(label=label, kind="image", src=link(path), text=rel)
        if mime and path.stat().st_size <= MAX_IMAGE_BYTES:
            from .._files import read_bytes

            try:
                raw = read_bytes(run_dir, path.relative_to(run_dir).as_posix(), max_bytes=MAX_IMAGE_BYTES)
            except Exception:  # noqa: BLE001 - swapped or grown since the lookup: link it instead
                return EvidenceView(label=label, kind="link", src=link(path), text=rel)
            data = base64.b64encode(raw).decode("ascii")
            return EvidenceView(label=label, kind="image", src=f"data:{mime};base64,{data}", text=rel)
        return EvidenceView(label=label, kind="link", src=link(path), text=rel)
    value = getattr(ev, "value", None)
    if kind == "text" or isinstance(value, str):
        return EvidenceView(label=label, kind="text", text=_cell(value) if value is not None else "")
    return EvidenceView(label=label, kind="value", value=value_view(value))


# ---- checklist -------------------------------------------------------------------------------------

def _pf(v: Any) -> str | None:
    if isinstance(v, bool):
        return "pass" if v else "fail"
    if isinstance(v, str) and v.lower() in ("pass", "fail", "yes", "no", "true", "false"):
        return "pass" if v.lower() in ("pass", "yes", "true") else "fail"
    if isinstance(v, dict):
        for k in ("verdict", "status", "passed", "result"):
            if k in v:
                return _pf(v[k])
    return None


def disagrees(item: dict[str, Any]) -> bool:
    """Whether the static reading and the observed behaviour of a checklist item differ."""
    for key in ("disagree", "disagreement", "disagrees"):
        if key in item:
            return bool(item[key])
    static = _pf(item.get("static"))
    behaviour = _pf(item.get("behaviour", item.get("behavior")))
    return static is not None and behaviour is not None and static != behaviour


@dataclass
class ChecklistRow:
    label: str  # the item's text (its id when there is none)
    id: str
    status: str | None
    decided_by: str
    static: str | None
    behaviour: str | None
    disagreement: str  # empty when the static reading and the behaviour agree
    evidence: str
    links: list[tuple[str, str]]  # (label, href) of its evidence files
    required: bool


@dataclass
class ChecklistView:
    rows: list[ChecklistRow]
    disagreements: int
    summary: ValueView | None


def _status(v: Any) -> str | None:
    return v if isinstance(v, str) and v in ("pass", "fail", "unknown", "error", "skip") else _pf(v)


def checklist_view(items: Any, summary: Any, link: Callable[[str], str | None]) -> ChecklistView | None:
    """Checklist items (checks/_checklist.py ItemResult dicts, read leniently), disagreements marked.

    ``link`` maps a path relative to the attempt folder to an href (None: not a file there).
    """
    if not items and not summary:
        return None
    rows = []
    for raw in items or []:
        item = raw if isinstance(raw, dict) else {"text": raw}
        bad = disagrees(item)
        note = item.get("disagreement") or item.get("disagree") or ""
        links = [(str(p), link(str(p))) for p in (item.get("links") or []) if isinstance(p, str)]
        rows.append(ChecklistRow(
            label=_cell(item.get("text") or item.get("item") or item.get("question") or item.get("id")),
            id=_cell(item.get("id", "")), status=_status(item.get("status", item.get("verdict"))),
            decided_by=_cell(item.get("decided_by", "")), static=_pf(item.get("static")),
            behaviour=_pf(item.get("behaviour", item.get("behavior"))),
            disagreement=(note if isinstance(note, str) and note else "static and behaviour disagree") if bad else "",
            evidence=_cell(item.get("evidence", "")), links=[(lbl, href) for lbl, href in links if href],
            required=bool(item.get("required", False)),
        ))
    return ChecklistView(rows=rows, disagreements=sum(1 for r in rows if r.disagreement),
                         summary=value_view(summary) if summary else None)
