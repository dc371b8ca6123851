// The page explorer's reader (agentbench/checks/browser/_explore.py): everything a person could act
// on, and the state an action is judged by, across open shadow roots. Loaded with _find.js (its
// functions join the same read-only library). It reads the DOM, computed styles and storage only:
// no page globals, nothing written to the page.
//
// Elements are named by a deep path, ":root > body:nth-child(2) > todo-app:nth-child(1) > ul:nth-child(2)",
// where the step from a shadow host to the top of its shadow tree is an ordinary " > " step: Playwright's
// CSS engine takes the host as the parent there, so the same string is a locator.
Object.assign(AB, (() => {
  "use strict";
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE", "META", "LINK", "BASE"]);
  const norm = (s) => String(s == null ? "" : s).replace(/\s+/g, " ").trim();
  const low = (s) => norm(s).toLowerCase();
  const css = (el) => getComputedStyle(el);
  const FIELD_TYPES = new Set(["text", "search", "email", "url", "tel", ""]);

  // ---- the composed tree --------------------------------------------------------------------
  const { parentOf, tagOf, path, byPath: resolve } = AB._deep;  // deep paths, as _find.js names them
  const siblingsOf = (el) => (el.parentNode ? [...el.parentNode.children] : [el]);
  function* deep(root) {  // every element under root (itself excluded), shadow trees first
    const stack = [root];
    const out = [];
    while (stack.length) {
      const n = stack.pop();
      const kids = [];
      if (n.shadowRoot) kids.push(...n.shadowRoot.children);
      if (n.children) kids.push(...n.children);
      for (let i = kids.length - 1; i >= 0; i--) if (!SKIP.has(kids[i].tagName)) stack.push(kids[i]);
      if (n !== root) out.push(n);
    }
    yield* out;
  }
  const all = () => [document.documentElement, ...deep(document.documentElement)];
  const contains = (a, b) => { for (let e = b; e; e = parentOf(e)) if (e === a) return true; return false; };
  // Where `el` sits under `root`, as child indexes ("0/2"), and back: a row's parts by position.
  function rel(root, el) {
    const out = [];
    for (let e = el; e && e !== root; e = parentOf(e)) out.unshift(siblingsOf(e).indexOf(e));
    return out.join("/");
  }
  function unrel(root, r) {
    let el = root;
    for (const i of r ? r.split("/").map(Number) : []) {
      el = el.shadowRoot && el.shadowRoot.children[i] ? el.shadowRoot.children[i] : el.children[i];
      if (!el) return null;
    }
    return el;
  }
  function activeDeep() {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  }

  // ---- seeing -------------------------------------------------------------------------------
  function visible(el) {
    if (!el || !el.isConnected || el.nodeType !== 1) return false;
    if (el.checkVisibility && !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }
  // Seen by the eye: also not clipped away in a collapsed overflow box (max-height: 0 filters).
  function seen(el) {
    if (!visible(el)) return false;
    for (let e = parentOf(el); e && e !== document.body; e = parentOf(e)) {
      const r = e.getBoundingClientRect();
      if ((r.height < 1 || r.width < 1) && css(e).overflow !== "visible" && css(e).display !== "contents") return false;
    }
    return true;
  }
  // Rendered text of the composed tree (innerText stops at shadow roots; slots show what they hold).
  function text(el, onlyShown = true) {
    const out = [];
    const walk = (n) => {
      if (n.nodeType === 3) { out.push(n.nodeValue); return; }
      if (n.nodeType === 1) {
        if (SKIP.has(n.tagName) || n.tagName === "SELECT") return;
        if (onlyShown && css(n).display === "none") return;
        if (n.tagName === "INPUT" || n.tagName === "TEXTAREA") return;
        if (n.tagName === "SLOT") {
          const got = n.assignedNodes({ flatten: true });
          for (const c of got.length ? got : n.childNodes) walk(c);
          return;
        }
        if (n.shadowRoot) { for (const c of n.shadowRoot.childNodes) walk(c); return; }
        if (/^(block|flex|grid|list-item|table.*)$/.test(css(n).display)) out.push(" ");
      }
      for (const c of n.childNodes) walk(c);
    };
    walk(el);
    return norm(out.join(""));
  }
  const ownText = (el) => norm([...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join(" "));
  const isField = (el) => (el.tagName === "INPUT" && FIELD_TYPES.has((el.getAttribute("type") || "").toLowerCase())) ||
    el.tagName === "TEXTAREA" || el.isContentEditable && !(parentOf(el) && parentOf(el).isContentEditable);
  const fieldValue = (el) => (el.tagName === "INPUT" || el.tagName === "TEXTAREA" ? el.value : text(el));

  function nameOf(el) {
    const bits = [];
    const aria = el.getAttribute("aria-label");
    if (aria) bits.push(aria);
    const root = el.getRootNode();
    for (const id of (el.getAttribute("aria-labelledby") || "").split(/\s+/)) {
      const t = id && root.getElementById && root.getElementById(id);
      if (t) bits.push(t.textContent);
    }
    if (el.labels) for (const l of el.labels) bits.push(text(l));
    for (const k of ["title", "alt"]) if (el.getAttribute(k)) bits.push(el.getAttribute(k));
    if (el.tagName === "INPUT") {
      if (/^(button|submit|reset)$/i.test(el.type)) bits.push(el.value || (el.type === "submit" ? "Submit" : ""));
      else if (!/^(checkbox|radio)$/i.test(el.type)) bits.push(el.getAttribute("placeholder") || "");
    } else if (el.tagName !== "SELECT") bits.push(text(el));
    return norm(bits.join(" ")).slice(0, 80);
  }
  const classesOf = (el) => [el, ...deep(el)].slice(0, 12).map((e) => e.getAttribute("class") || "").join(" ").slice(0, 200);

  // ---- what a person could act on ------------------------------------------------------------
  const CONTROL = "button, a[href], input, select, textarea, summary, label, [role=button], [role=tab], " +
    "[role=checkbox], [role=radio], [role=switch], [role=menuitem], [role=menuitemradio], [role=option], " +
    "[role=link], [onclick], [ondblclick], [onmousedown], [tabindex]";
  const POINTERY = /click|mouse|pointer|touch|key|change|input|submit/;
  // A link that leaves the artefact (another origin, another window) is not one of its controls; one
  // to another of its pages stays (a router may take it, "/active"), marked so probes try it last.
  function leaves(el) {
    const a = el.closest && el.closest("a[href]");
    if (!a) return false;
    if (a.target && a.target !== "_self") return true;
    try {
      return new URL(a.getAttribute("href"), location.href).origin !== location.origin;
    } catch (e) { return true; }
  }
  function elsewhere(el) {
    const a = el.closest && el.closest("a[href]");
    if (!a) return false;
    const u = new URL(a.getAttribute("href"), location.href);
    return !(u.pathname === location.pathname && u.search === location.search);
  }
  function kindOf(el) {
    const t = el.tagName, type = (el.getAttribute("type") || "").toLowerCase(), role = el.getAttribute("role") || "";
    if (t === "INPUT" && (type === "checkbox" || role === "switch")) return "checkbox";
    if (t === "INPUT" && type === "radio") return "radio";
    if (t === "SELECT") return "select";
    if (isField(el)) return el.isContentEditable ? "editable" : "field";
    if (t === "BUTTON" || (t === "INPUT" && /^(button|submit|reset|image)$/.test(type))) return "button";
    if (t === "A") return "link";
    if (t === "LABEL") return "label";
    if (role) return role.replace(/^menuitem.*/, "menuitem");
    return t.toLowerCase();
  }
  // Where to click for an element: itself (transparent still takes the click: a TodoMVC checkbox
  // is drawn by its label's styles over an opacity-0 input), or the label a hidden input sits under.
  // Not: a speck (a 1 px "screen-reader only" input), clipped away, or moved off the page.
  function clickable(el) {
    if (!el.isConnected || (el.checkVisibility && !el.checkVisibility({ checkVisibilityCSS: true }))) return false;
    const r = el.getBoundingClientRect();
    if (r.width < 4 || r.height < 4 || r.right + scrollX <= 0 || r.bottom + scrollY <= 0) return false;
    const st = css(el);
    return st.pointerEvents !== "none" && (!st.clip || st.clip === "auto") && (!st.clipPath || st.clipPath === "none");
  }
  function clickTarget(el) {
    if (clickable(el)) return el;
    if (el.tagName === "INPUT" && /^(checkbox|radio)$/i.test(el.type)) {
      const lab = (el.labels && [...el.labels].find(clickable)) || null;
      if (lab) return lab;
      for (let e = parentOf(el); e && e !== document.body; e = parentOf(e)) if (clickable(e)) return e;
    }
    return null;
  }
  const boxOf = (el) => { const r = el.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)]; };

  // Candidates under `scope` (default: the document), outside `exclude`: native controls, elements
  // with a listener (`listeners`: path -> event types, from CDP), children of a listening ancestor
  // (delegation: the small, leaf-like ones), pointer-cursor elements, hidden inputs under a label.
  function candidates(arg) {
    const scope = resolve(arg.scope) || document.documentElement;
    const exclude = (arg.exclude || []).map(resolve).filter(Boolean);
    const listen = new Map(Object.entries(arg.listeners || {}).map(([p, ts]) => [resolve(p), ts]).filter(([e]) => e));
    const delegates = [...listen].filter(([e, ts]) => ts.some((t) => POINTERY.test(t))).map(([e]) => e);
    const out = [], taken = new Set();
    for (const el of [scope, ...deep(scope)]) {
      if (exclude.some((x) => contains(x, el))) continue;
      if (el.tagName === "LABEL" && el.control) continue;  // its control stands for it (clicked through it)
      const why = [];
      const own = listen.get(el);
      if (el.matches(CONTROL)) why.push("markup");
      if (own && own.some((t) => POINTERY.test(t))) why.push("listener");
      if (el.isContentEditable && !(parentOf(el) && parentOf(el).isContentEditable)) why.push("markup");
      const target = clickTarget(el);
      if (!target || leaves(el)) continue;
      if (!why.length) {
        const st = css(el);
        const parent = parentOf(el);
        if (st.cursor === "pointer" && !(parent && css(parent).cursor === "pointer")) why.push("pointer");
        else if (delegates.some((d) => d !== el && contains(d, el))) {
          // Leaf-like: no child that takes space of its own (an icon font that did not load leaves
          // an empty <i> in a 40 px delete spot), or text of its own.
          const r = el.getBoundingClientRect();
          const leaf = ownText(el) !== "" || ![...el.children].some((c) => { const b = c.getBoundingClientRect(); return b.width * b.height > 4; });
          if (leaf && r.width * r.height < 160000) why.push("delegated");
        }
      }
      if (!why.length || taken.has(target)) continue;
      taken.add(target);
      out.push({ path: path(el), target: path(target), kind: kindOf(el), name: nameOf(el), cls: classesOf(el),
        type: el.type || "", how: why[0], events: own || [], box: boxOf(target), text: ownText(el).slice(0, 40),
        checked: el.tagName === "INPUT" ? el.checked : el.getAttribute("aria-checked") === "true",
        hiddenInput: target !== el, href: el.getAttribute("href") || "", away: elsewhere(el),
        options: el.tagName === "SELECT" ? [...el.options].map((o) => norm(o.text) || o.value) : null });
      if (out.length >= (arg.cap || 400)) break;
    }
    return out;
  }

  function fields() {
    return all().filter((el) => isField(el) && visible(el) && !el.readOnly && !el.disabled).map((el) => ({
      path: path(el), kind: kindOf(el), hint: low([nameOf(el), el.id, el.getAttribute("name") || "",
        el.getAttribute("class") || "", el.getAttribute("placeholder") || ""].join(" ")),
      maxLength: el.maxLength === undefined ? -1 : el.maxLength, top: el.getBoundingClientRect().top,
      value: fieldValue(el) }));
  }

  // ---- state --------------------------------------------------------------------------------
  const NOISE = "[role=alert], [role=status], .toast, .snackbar, .notification, .flash, .notice";
  // The smallest elements holding a marker's text (a field holding it too: a task being edited).
  function holders(marker, skip) {
    const m = low(marker);
    const out = [];
    const els = [...deep(document.body)];
    // Mostly a task's text is one text node: its element holds it. Split over elements, the
    // smallest element whose composed text holds it (slower: only when the quick way finds none).
    for (const el of els) {
      if (el === skip || el.closest(NOISE)) continue;
      if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") { if (low(el.value).includes(m)) out.push(el); continue; }
      if (low(ownText(el)).includes(m)) out.push(el);
    }
    if (out.length) return out;
    for (const el of els) {
      if (el === skip || el.tagName === "INPUT" || el.tagName === "TEXTAREA") continue;
      if (!low(text(el, false)).includes(m)) continue;
      const kids = el.shadowRoot ? [...el.shadowRoot.children, ...el.children] : [...el.children];
      if (kids.some((c) => !SKIP.has(c.tagName) && low(text(c, false)).includes(m))) continue;
      if (el.tagName === "SLOT" || el.closest(NOISE)) continue;
      out.push(el);
    }
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
    const hs = {};
    const every = [];
    for (const m of arg.markers) { hs[m] = holders(m, skip); every.push(...hs[m]); }
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

  return { hiddenChoices, loadingImages, exPath: path, exResolve: resolve, candidates, fields, rows, injected, pageText2: () => text(document.body),
    relOf: (a) => rel(resolve(a.root), resolve(a.el)),
    fromRel: (a) => { const r = resolve(a.root); const e = r && unrel(r, a.rel); return e ? path(e) : null; },
    shownPaths: (a) => a.paths.map((p) => visible(resolve(p))) };
})());
