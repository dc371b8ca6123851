// The page explorer's state reader (agentbench/checks/browser/_explore.py): the rows that hold a
// task, how each looks, what the page holds (storage, dialogs, injected markup), across open shadow
// roots. Loaded after _explore.js, whose helpers it takes (AB._ex); read-only like it.
Object.assign(AB, (() => {
  "use strict";
  const { FIELD_TYPES, SKIP, activeDeep, contains, css, deep, fieldValue, isField, low, nameOf, norm, ownText,
    parentOf, path, rel, resolve, seen, text, visible } = AB._ex;

  // ---- state --------------------------------------------------------------------------------
  // The smallest elements holding a marker's text (a field holding it too: a task being edited).
  function holders(marker, skip) {
    const m = low(marker);
    const out = [];
    const els = [...deep(document.body)];
    // Mostly a task's text is one text node: its element holds it. Split over elements, the
    // smallest element whose composed text holds it (slower: only when the quick way finds none).
    for (const el of els) {
      if (el === skip) continue;
      if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") { if (low(el.value).includes(m)) out.push(el); continue; }
      if (low(ownText(el)).includes(m)) out.push(el);
    }
    if (out.length) return out;
    for (const el of els) {
      if (el === skip || el.tagName === "INPUT" || el.tagName === "TEXTAREA") continue;
      if (!low(text(el, false)).includes(m)) continue;
      const kids = el.shadowRoot ? [...el.shadowRoot.children, ...el.children] : [...el.children];
      if (kids.some((c) => !SKIP.has(c.tagName) && low(text(c, false)).includes(m))) continue;
      if (el.tagName === "SLOT") continue;
      out.push(el);
    }
    return out;
  }
  // Boxes that show a task's name without being its row: an undo bar or a toast ('"Buy milk"
  // deleted'), a confirmation box ("Delete Buy milk?"), a live region announcing a change. Known by
  // what they are, not by their names: fixed over the page, dialogs, popovers, live regions. A box
  // holding the task field is the app itself (an app drawn in a fixed panel), never one of these.
  const OVERLAY = "dialog, [popover], [aria-modal=true], [role=dialog], [role=alertdialog], [role=alert], " +
    "[role=status], [role=log], [aria-live]:not([aria-live=off])";
  // `laid`: also a box laid over the page out of the flow (position: absolute, a toast at the foot
  // of the app's card): weaker, since some lists lay out their rows so too (see inList).
  function overlayOf(el, field, laid = false) {
    for (let e = el; e && e !== document.body && e !== document.documentElement; e = parentOf(e)) {
      if (field && contains(e, field)) return null;
      if (e.nodeType === 1 && (e.matches(OVERLAY) || css(e).position === "fixed" ||
        laid && css(e).position === "absolute")) return e;
    }
    return null;
  }
  // A task's holders are in the list (where the shown holders outside any such box sit); one in a
  // box that does not hold that list is no row of it. The list is where the holders in the flow
  // sit; with none there (rows laid out absolutely), where those outside the strong boxes sit. With
  // no holder shown outside such boxes (a list that is itself a live region) there is nothing to
  // tell them apart by: all are kept.
  function inList(hs, field) {
    const every = Object.values(hs).flat();
    // A field laid over its row (an edit box over the task's text) is the row's own, not a toast.
    let over = new Map(every.map((h) => [h, overlayOf(h, field, !isField(h))]));
    let core = every.filter((h) => !over.get(h) && seen(h));
    if (!core.length) {
      over = new Map(every.map((h) => [h, overlayOf(h, field)]));
      core = every.filter((h) => !over.get(h) && seen(h));
    }
    if (!core.length) return hs;
    let list = parentOf(core[0]);
    while (list && !core.every((h) => contains(list, h))) list = parentOf(list);
    const out = {};
    const keep = (h) => !over.get(h) || (list && contains(over.get(h), list));
    for (const [m, found] of Object.entries(hs)) out[m] = found.filter(keep);
    return out;
  }
  // A task's row: its widest box holding no other task and none of the page's own controls (the
  // task field, the add button, the filters: `stops`).
  function rowOf(h, others, stops) {
    const li = h.closest("li, [role=listitem], tr");
    let el = h;
    for (;;) {
      const p = parentOf(el);
      if (!p || p === document.body || p === document.documentElement) break;
      if (others.some((o) => o !== h && contains(p, o))) break;
      if (stops.some((s) => contains(p, s))) break;
      el = p;
      if (li && el === li) break;
    }
    return el;
  }
  // How a row looks, part by part (keyed by position under the row): what marking it done changes.
  function look(row, marker) {
    const f = {};
    const m = low(marker);
    let i = 0;
    for (const el of [row, ...deep(row)]) {
      if (i++ > 60) break;
      const k = rel(row, el);
      const cls = (el.getAttribute("class") || "").split(/\s+/).filter((c) => c && !/hover|focus/i.test(c)).sort();
      f["c" + k] = cls.join(" ");
      if (el.tagName === "INPUT" && /^(checkbox|radio)$/i.test(el.type)) f["k" + k] = el.checked;
      for (const a of el.getAttributeNames()) {
        if (/^(aria-(checked|pressed|selected)|data-.*|checked|done|completed)$/.test(a)) f["a" + k + a] = el.getAttribute(a);
      }
      const st = css(el);
      f["v" + k] = st.display === "none" || st.visibility === "hidden" ? "hidden" : "shown";
      f["d" + k] = st.textDecorationLine;
      f["o" + k] = st.opacity;
      f["s" + k] = st.fontStyle + " " + st.color;
      f["t" + k] = low(ownText(el)).split(m).join("#");
    }
    f.parent = path(parentOf(row) || row);
    return f;
  }
  const editing = (row) => { const a = activeDeep(); return !!(a && contains(row, a) && isField(a)); };

  function rows(arg) {
    const skip = resolve(arg.input);
    const stops = (arg.stops || []).map(resolve).filter(Boolean);
    const found = {};
    for (const m of arg.markers) found[m] = holders(m, skip);
    const hs = inList(found, skip);
    const every = arg.markers.flatMap((m) => hs[m]);
    const items = {};
    const shownNow = new Set(every.filter(seen));
    for (const m of arg.markers) {
      // A hidden copy of the task's own text (an edit field kept in its row) does not bound its row.
      const others = every.filter((o) => shownNow.has(o) || !hs[m].includes(o));
      items[m] = hs[m].map((h) => {
        const row = rowOf(h, others, skip ? [skip, ...stops] : stops);
        const r = row.getBoundingClientRect();
        return { holder: path(h), row: path(row), shown: shownNow.has(h), top: r.top, left: r.left,
          look: arg.look ? look(row, m) : null, editing: editing(row),
          field: h.tagName === "INPUT" || h.tagName === "TEXTAREA" };
      });
    }
    return { items, list: listOf([...shownNow]), page: pageState(skip) };
  }
  // The list the shown tasks sit in: its shown children, and how many carry no words (blank tasks).
  function listOf(shown) {
    if (!shown.length) return null;
    let lca = parentOf(shown[0]);
    while (lca && !shown.every((h) => contains(lca, h))) lca = parentOf(lca);
    if (!lca) return null;
    if (shown.length === 1) {  // one task: its list is the nearest box with a sibling row or a list tag
      for (let e = shown[0]; e && e !== document.body; e = parentOf(e)) {
        const p = parentOf(e);
        if (p && (/^(UL|OL|TBODY)$/.test(p.tagName) || p.getAttribute("role") === "list")) { lca = p; break; }
      }
    }
    // A blank task may be a row 0 px high: laid out (not display: none), it still counts.
    const laid = (c) => c.checkVisibility ? c.checkVisibility({ checkVisibilityCSS: true }) && c.getClientRects().length > 0 : visible(c);
    const kids = [...(lca.shadowRoot ? lca.shadowRoot.children : []), ...lca.children].filter((c) => !SKIP.has(c.tagName) && laid(c));
    // A row's words as a person sees them: not its controls' names, not its hidden parts (a
    // confirmation box shown later), nor a lone glyph in an element of its own (a "×" or "✖" drawn
    // as a delete icon), and only letters or digits count: "   ×" is a blank task.
    const words = (row) => {
      const bits = [];
      for (const el of [row, ...deep(row)]) {
        if (el.closest("button, [role=button], select, a")) continue;
        if (el !== row && el.checkVisibility && !el.checkVisibility({ checkVisibilityCSS: true })) continue;
        if (el.tagName === "INPUT" && FIELD_TYPES.has(el.type)) bits.push(el.value);
        else if ([...ownText(el)].length > 1 || el === row) bits.push(ownText(el));
      }
      return /[\p{L}\p{N}]/u.test(bits.join(" ")) ? norm(bits.join(" ")) : "";
    };
    return { path: path(lca), count: kids.length, blank: kids.filter((k) => !words(k)).length,
      texts: kids.slice(0, 20).map((k) => text(k).slice(0, 60)) };
  }
  function storageSize() {
    try {
      let n = 0;
      for (let i = 0; i < localStorage.length; i++) { const k = localStorage.key(i); n += k.length + (localStorage.getItem(k) || "").length; }
      return n;
    } catch (e) { return -1; }
  }
  // Shown buttons that answer yes to a question ("Confirm", "Yes, delete", "OK"): an in-page
  // "Are you sure?" box is answered as the person who asked for the deletion answers it.
  // "Delete" or "Remove" alone answers only in a dialog (a row's own Delete is no answer).
  const YES = /^(yes|ok(ay)?|confirm|sure|s[ií]|ja|oui|sim|ya|evet|tak|да|确定|確認|是|はい|예)\b/i;
  const YES_IN_DIALOG = /^(delete|remove|yes|ok|confirm)\b/i;
  const inDialog = (el) => {
    for (let e = el; e && e !== document.body; e = parentOf(e)) {
      if (e.matches && e.matches("dialog, [role=dialog], [role=alertdialog], [aria-modal=true]")) return true;
      if (css(e).position === "fixed") return true;
    }
    return false;
  };
  function confirmers() {
    const out = [];
    for (const el of document.querySelectorAll("button, [role=button], input[type=button], input[type=submit]")) {
      const name = nameOf(el);
      if (name.length > 24 || !visible(el) || !(YES.test(name) || YES_IN_DIALOG.test(name) && inDialog(el))) continue;
      out.push({ path: path(el), name });
      if (out.length >= 20) break;
    }
    return out;
  }
  function pageState(skip) {
    const a = activeDeep();
    return { url: location.href, storage: storageSize(), focus: a && a !== document.body ? path(a) : "",
      fieldValue: skip ? fieldValue(skip) : null, confirm: confirmers() };
  }

  // Markup injected by a task's text: elements a person would see rendered instead of the text.
  // `arg.input`: the task field, left out (what it still holds is not a task shown).
  function injected(arg) {
    const skip = resolve(arg && arg.input);
    let imgs = 0, bolds = 0;
    const values = [];
    for (const el of deep(document.body)) {
      if (el.tagName === "IMG" && el.getAttribute("src") === "x") imgs++;
      if (el.tagName === "B" && low(el.textContent) === "bold") bolds++;
      if (el !== skip && (el.tagName === "INPUT" || el.tagName === "TEXTAREA") && visible(el)) values.push(el.value);
    }
    return { imgs, bolds, text: [text(document.body), ...values].join(" ").slice(0, 20000) };
  }

  // Images still being fetched (an <img src=x> a task's text made: its error event comes when the
  // fetch fails, outside the virtual clock); lazy ones may never be fetched and do not count.
  const loadingImages = () => [...deep(document.body)].filter((el) => el.tagName === "IMG" && !el.complete &&
    el.getAttribute("src") && el.loading !== "lazy").length;

  // Choices a person opens first (a menu shown on hover or after a click): hidden short texts,
  // grouped under their nearest shown ancestor, the place to hover or click to open them.
  function hiddenChoices() {
    const groups = new Map();
    for (const el of deep(document.body)) {
      const t = ownText(el);
      if (!t || t.length > 40 || el.closest("select, option") || visible(el)) continue;
      let a = parentOf(el);
      while (a && a !== document.body && !visible(a)) a = parentOf(a);
      if (!a || a === document.body || a === document.documentElement) continue;
      const key = path(a);
      if (!groups.has(key)) groups.set(key, []);
      if (groups.get(key).length < 24) groups.get(key).push(t);
    }
    return [...groups].slice(0, 16).map(([anchor, texts]) => ({ anchor, texts }));
  }

  // Which of `arg.points` (viewport px) land on the element at `arg.path` or a part of it: nothing
  // else laid over it there (an undo toast over the list's last row), where a press would start.
  function hits(arg) {
    const el = resolve(arg.path);
    return arg.points.map(([x, y]) => {
      let hit = document.elementFromPoint(x, y);
      while (hit && hit.shadowRoot) {
        const inner = hit.shadowRoot.elementFromPoint(x, y);
        if (!inner || inner === hit) break;
        hit = inner;
      }
      return !!(el && hit && contains(el, hit));
    });
  }

  // The element's box in the viewport (CSS px: left, top, width, height), or null when it has none.
  function box(arg) {
    const el = resolve(arg.path);
    if (!el || !el.isConnected) return null;
    const r = el.getBoundingClientRect();
    return [r.left, r.top, r.width, r.height];
  }

  return { box, hiddenChoices, hits, loadingImages, rows, injected };
})());
