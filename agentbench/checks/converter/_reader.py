"""What the converter probes read besides ``_find.js``: the page's language, the words it offers
(its code left out) and the names a person gives to radios that have none of their own.

A small reader library of its own, installed like ``_find.js`` in the harness's isolated world
(read-only, out of the page's reach). Elements are named by the same deep CSS paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..browser._page import PageSession

__all__ = ["name_radios", "page_language", "radio_names", "words_offered"]

_LIBRARY = "converter"
_SOURCE = r"""(() => {
  "use strict";
  const norm = (s) => String(s == null ? "" : s).replace(/\s+/g, " ").trim();
  const parentOf = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
  const tagOf = (el) => (/^[a-z][a-z0-9-]*$/.test(el.localName) ? el.localName : "*");
  function path(el) {  // as _find.js names elements
    const parts = [];
    for (let e = el; e && e !== document.documentElement; e = parentOf(e)) {
      parts.unshift(`${tagOf(e)}:nth-child(${[...e.parentNode.children].indexOf(e) + 1})`);
    }
    return ":root" + (parts.length ? " > " + parts.join(" > ") : "");
  }
  function lang() {
    const html = document.documentElement;
    const meta = document.querySelector("meta[http-equiv='content-language' i]");
    return norm(html.getAttribute("lang") || html.getAttribute("xml:lang") || (meta && meta.content) || "");
  }
  // Every word a person could read or pick, hidden parts and option lists included, but not the
  // page's code: an inline script's "list.length" names no length conversion.
  const CODE = new Set(["SCRIPT", "STYLE", "NOSCRIPT"]);
  function words() {
    const bits = [document.title];
    const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!(n.parentElement && CODE.has(n.parentElement.tagName))) bits.push(n.nodeValue);
    }
    for (const o of document.querySelectorAll("option")) bits.push(o.text, o.value);
    for (const el of document.querySelectorAll("[aria-label], [title], [placeholder], input[value], [data-unit]")) {
      bits.push(el.getAttribute("aria-label") || "", el.getAttribute("title") || "",
        el.getAttribute("placeholder") || "", el.getAttribute("data-unit") || "",
        el.tagName === "INPUT" && /^(button|submit|radio|checkbox)$/i.test(el.type) ? el.value : "");
    }
    return bits.join("\n").slice(0, 200000);
  }
  const CONTROL = "input, select, textarea, button";
  // The first text beside a radio in one direction, up to the next control.
  function beside(radio, step) {
    for (let n = radio[step]; n; n = n[step]) {
      if (n.nodeType === 3) { const t = norm(n.nodeValue); if (t) return { text: t, from: null }; continue; }
      if (n.nodeType !== 1) continue;
      if (n.matches(CONTROL) || n.querySelector(CONTROL)) return null;
      const t = norm(n.innerText || n.textContent);
      if (t) return { text: t, from: path(n) };
    }
    return null;
  }
  const named = (r) => (r.labels && r.labels.length) || r.getAttribute("aria-label") ||
    r.getAttribute("aria-labelledby") || r.getAttribute("title");
  // Radios with no label of their own, named by the text a person reads beside them: after each
  // radio where every radio of its box has one (radio, then its word), else before each.
  function radioNames() {
    const boxes = new Map();
    for (const r of document.querySelectorAll("input[type=radio]")) {
      if (named(r)) continue;
      const box = r.parentNode;
      if (!boxes.has(box)) boxes.set(box, []);
      boxes.get(box).push(r);
    }
    const out = [];
    for (const radios of boxes.values()) {
      for (const step of ["nextSibling", "previousSibling"]) {
        const found = radios.map((r) => beside(r, step));
        const texts = found.map((f) => f && f.text);
        if (texts.some((t) => !t || t.length > 40) || new Set(texts).size !== texts.length) continue;
        radios.forEach((r, i) => out.push({ path: path(r), name: texts[i], from: found[i].from }));
        break;
      }
    }
    return out;
  }
  return { lang, radioNames, words };
})()"""


async def _read(session: PageSession, fn: str) -> Any:
    return await session.read(_LIBRARY, _SOURCE, fn)


async def page_language(session: PageSession) -> str:
    """The page's declared language (``<html lang>``, else Content-Language), "" when none."""
    return str(await _read(session, "lang") or "")


async def words_offered(session: PageSession) -> str:
    """Every word the page shows or offers (hidden parts, option lists, labels), its scripts left out."""
    return str(await _read(session, "words") or "")


async def radio_names(session: PageSession) -> list[dict[str, Any]]:
    """Radios without a label of their own: ``{path, name, from}`` (``from``: the element whose text
    names it, None for a bare text node)."""
    return list(await _read(session, "radioNames") or [])


async def name_radios(session: PageSession, ctl: dict[str, Any]) -> None:
    """Controls (as ``convControls`` lists them) whose radios have no label: each is named by the
    word beside it ("( ) Celsius"), and that word, when an element of its own (an unlinked
    <label>), stops being a choice (clicking it does nothing)."""
    if not any(c["kind"] == "radio" and not c["label"] for c in ctl["choices"]):
        return
    names = {r["path"]: r for r in await radio_names(session)}
    used = {r["from"] for r in names.values() if r["from"]}
    kept = []
    for c in ctl["choices"]:
        if c["kind"] == "radio" and not c["label"] and c["path"] in names:
            c["label"] = names[c["path"]]["name"]
        elif c["path"] in used:
            continue
        kept.append(c)
    ctl["choices"] = kept
