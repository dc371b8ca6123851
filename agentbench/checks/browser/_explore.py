"""The page explorer: everything a person could act on, tried for what it does.

One room every form probe reads from. ``controls`` lists what a person could act on, under a scope
and outside what is excluded, across open shadow roots: native controls (buttons, links, inputs,
selects, radios and checkboxes, a hidden one through the label it sits under), contenteditable
elements, elements with a click/dblclick/mouse/key listener as CDP's ``DOMDebugger.getEventListeners``
reports them, the small leaf-like children of an ancestor that listens (delegation), and outermost
pointer-cursor elements. ``act`` uses one with the real mouse and keyboard. What an action *did* is
up to the probe (rows added, removed, restyled, shown or hidden; values, storage, URL, dialogs);
``Trials`` keeps the effect table (control, how found, action, effect) that becomes the evidence,
and the cap: candidates are ranked by the probe (names, position, role) and tried in that order, at
most ``cap`` of them, so "tried all N, none had the effect" (a ``fail``) and "stopped at the cap"
(``error``) stay apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog
from playwright.async_api import Error as PlaywrightError

from ...errors import CheckError
from ._find import _act, dom, mouse_away, point_of, settle
from ._page import PageBroken

if TYPE_CHECKING:
    from ._page import PageSession

__all__ = ["Control", "Trials", "act", "controls", "listeners", "opaque_parts", "return_to"]

log = structlog.get_logger()

_LISTENED = re.compile(r"^(click|dblclick|auxclick|mouse(down|up)|pointer(down|up)|touch(start|end)|key(down|up|press)|"
                       r"change|input|submit)$")
_CLICK_TIMEOUT_MS = 1500
_FOUND = {"markup": "markup", "listener": "its own listener", "delegated": "a listener on an ancestor",
          "pointer": "pointer cursor"}


@dataclass(frozen=True)
class Control:
    """Something a person could act on: where it is, where to click it, what it is called."""

    path: str  # the element (a deep path, also a Playwright locator)
    target: str  # where a person clicks it: itself, or the label a hidden checkbox/radio sits under
    kind: str  # button, link, checkbox, radio, select, field, editable, label, li, span, a role...
    name: str  # its visible name: text, aria-label, title, label
    cls: str  # its and its children's classes (icon fonts say what they do there)
    how: str  # markup | listener | delegated | pointer
    events: tuple[str, ...] = ()
    box: tuple[int, int, int, int] = (0, 0, 0, 0)
    checked: bool = False
    hidden_input: bool = False
    href: str = ""
    away: bool = False  # a link to another page of the artefact (a router may keep it on this one)
    options: tuple[str, ...] = ()

    @classmethod
    def of(cls, d: dict[str, Any]) -> Control:
        return cls(path=d["path"], target=d["target"], kind=d["kind"], name=d["name"], cls=d["cls"], how=d["how"],
                   events=tuple(d.get("events") or ()), box=tuple(d.get("box") or (0, 0, 0, 0)),  # type: ignore[arg-type]
                   checked=bool(d.get("checked")), hidden_input=bool(d.get("hiddenInput")), href=d.get("href") or "",
                   away=bool(d.get("away")),
                   options=tuple(d.get("options") or ()))

    def describe(self) -> str:
        """How a person would point at it: "button 'Add'", "checkbox (under its label)", "span '×'"."""
        first = self.cls.split()[0] if self.cls.split() else ""
        name = f" '{self.name[:40]}'" if self.name else f" .{first}" if first else ""
        where = " (under its label)" if self.hidden_input else ""
        return f"{self.kind}{name}{where}"

    @property
    def found_by(self) -> str:
        extra = f" ({', '.join(self.events[:3])})" if self.events and self.how != "markup" else ""
        return _FOUND.get(self.how, self.how) + extra


async def listeners(session: PageSession) -> dict[str, list[str]]:
    """Path -> event types of every element (and the document) with a listener a person could trigger.

    Read over CDP (``DOMDebugger.getEventListeners`` on the document, whole subtree, piercing shadow
    roots), so the page can neither hide nor fake them. A listener on the document or <html> is
    reported under ``:root`` (every element is then a delegation candidate).
    """
    try:
        doc = await session.cdp("DOM.getDocument", {"depth": -1, "pierce": True})
        paths: dict[int, str] = {}
        _walk(doc["root"], "", paths)
        obj = await session.cdp("DOM.resolveNode", {"backendNodeId": doc["root"]["backendNodeId"],
                                                    "objectGroup": "agentbench-explore"})
        found = await session.cdp("DOMDebugger.getEventListeners", {"objectId": obj["object"]["objectId"],
                                                                    "depth": -1, "pierce": True})
    except CheckError as exc:  # listeners add candidates; without them the markup still counts
        log.info("no listeners read", error=str(exc))
        return {}
    finally:
        for method, params in (("Runtime.releaseObjectGroup", {"objectGroup": "agentbench-explore"}),
                               ("DOM.disable", {})):
            try:
                await session.cdp(method, params)
            except (CheckError, PageBroken):
                pass
    out: dict[str, list[str]] = {}
    for item in found.get("listeners", []):
        path = paths.get(item.get("backendNodeId", -1))
        kind = item.get("type", "")
        if path is not None and _LISTENED.match(kind) and kind not in out.setdefault(path, []):
            out[path].append(kind)
    return {p: ts for p, ts in out.items() if ts}


def _walk(node: dict[str, Any], path: str, out: dict[int, str]) -> None:
    """Deep paths (as _explore.js writes them) of the CDP DOM tree's elements, by backend node id."""
    if node.get("nodeType") == 9:  # the document: its listeners delegate for everything
        out[node["backendNodeId"]] = ":root"
        for child in node.get("children", []):
            if child.get("nodeType") == 1:
                _walk(child, ":root", out)
        return
    out[node["backendNodeId"]] = path
    kids = [c for r in node.get("shadowRoots", []) if r.get("shadowRootType") == "open"
            for c in r.get("children", []) if c.get("nodeType") == 1]
    shadow_len = len(kids)
    kids += [c for c in node.get("children", []) if c.get("nodeType") == 1]
    for i, child in enumerate(kids):
        index = i if i < shadow_len else i - shadow_len
        name = child.get("localName", "")
        tag = name if re.fullmatch(r"[a-z][a-z0-9-]*", name) else "*"
        _walk(child, f"{path} > {tag}:nth-child({index + 1})", out)


async def opaque_parts(session: PageSession) -> list[str]:
    """Parts of the page no reader can see into: closed shadow roots and frames (what they are)."""
    try:
        doc = await session.cdp("DOM.getDocument", {"depth": -1, "pierce": True})
    except CheckError:
        return []
    finally:
        try:
            await session.cdp("DOM.disable")
        except (CheckError, PageBroken):
            pass
    out: list[str] = []
    stack = [doc["root"]]
    while stack and len(out) < 10:
        node = stack.pop()
        if node.get("localName") in {"iframe", "frame", "object", "embed"}:
            out.append(f"<{node['localName']}>")
        out += [f"a closed shadow root in <{node.get('localName')}>" for r in node.get("shadowRoots", [])
                if r.get("shadowRootType") == "closed"]
        stack += node.get("children", [])
    return out


async def controls(session: PageSession, *, scope: str | None = None, exclude: Iterable[str] = (),
                   listening: dict[str, list[str]] | None = None, cap: int = 400) -> list[Control]:
    """Everything a person could act on under ``scope`` (default: the page), outside ``exclude``."""
    if listening is None:
        listening = await listeners(session)
    found = await dom(session, "candidates", {"scope": scope, "exclude": [p for p in exclude if p],
                                              "listeners": listening, "cap": cap})
    return [Control.of(d) for d in found]


async def act(session: PageSession, control: Control | str, action: str, what: str = "") -> None:
    """Use a control with the real mouse and keyboard: ``click``, ``dblclick``, ``hover``, ``select:<i>``.

    Clicks land at the centre of the control (or the label of a hidden input) as a person's would,
    whatever lies on top; the mouse then leaves so hover styling is not read as state.
    """
    target = control.target if isinstance(control, Control) else control
    what = what or (control.describe() if isinstance(control, Control) else target)
    loc = session.page.locator(target)
    # In view and nothing animating: the mouse goes straight to the centre (Playwright's forced
    # click would land there too, after a scroll that is not needed and reading the box again).
    point = await point_of(session, target, force=True) if action in ("click", "dblclick", "hover") else None
    mouse = session.page.mouse
    if action == "click":
        await _act(session, mouse.click(*point) if point else loc.click(timeout=_CLICK_TIMEOUT_MS, force=True),
                   f"click {what}")
    elif action == "dblclick":
        await _act(session, mouse.dblclick(*point) if point else loc.dblclick(timeout=_CLICK_TIMEOUT_MS, force=True),
                   f"double-click {what}")
    elif action == "hover":
        await _act(session, mouse.move(*point) if point else loc.hover(timeout=_CLICK_TIMEOUT_MS, force=True),
                   f"hover over {what}")
        return
    elif action.startswith("select:"):
        path = control.path if isinstance(control, Control) else control
        await _act(session, session.page.locator(path).select_option(index=int(action[7:]), timeout=_CLICK_TIMEOUT_MS),
                   f"choose option {action[7:]} of {what}")
    else:
        raise ValueError(f"unknown action {action!r}")
    await settle(session, 0.2)
    await mouse_away(session)


async def return_to(session: PageSession, url: str) -> bool:
    """Back to the page at ``url`` after an action took the browser to another document (Back, as a
    person would, else loading it anew); True when it had to."""
    if session.page.url.split("#")[0] == url.split("#")[0]:
        return False
    try:
        await session.run_limited(session.page.go_back(wait_until="load"), what="going back")
    except (PlaywrightError, CheckError):
        pass
    if session.page.url.split("#")[0] != url.split("#")[0]:
        try:
            await session.run_limited(session.page.goto(url, wait_until="load", timeout=0),
                                        what="loading the page again")
        except PlaywrightError as exc:
            raise CheckError(f"could not get back to the page after it navigated: {exc.message}") from exc
    await settle(session, 0.1)  # the clock resyncs with the document
    return True


@dataclass
class Trials:
    """The effect table of one exploration, and its cap on actions tried."""

    cap: int
    rows: list[dict[str, str]] = field(default_factory=list)
    capped: bool = False

    @property
    def left(self) -> int:
        return self.cap - len(self.rows)

    def take(self) -> bool:
        """Room for one more try? Sets ``capped`` when there is none."""
        if self.left <= 0:
            self.capped = True
            return False
        return True

    def add(self, control: Control | str, action: str, effect: str, found: str = "") -> None:
        name = control.describe() if isinstance(control, Control) else control
        by = found or (control.found_by if isinstance(control, Control) else "")
        self.rows.append({"control": name, "found by": by, "action": action, "effect": effect})
