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

  return { exPath: path, exResolve: resolve, candidates, fields, pageText2: () => text(document.body),
    relOf: (a) => rel(resolve(a.root), resolve(a.el)),
    fromRel: (a) => { const r = resolve(a.root); const e = r && unrel(r, a.rel); return e ? path(e) : null; },
    shownPaths: (a) => a.paths.map((p) => visible(resolve(p))),
    // shared with _explore_state.js
    _ex: { FIELD_TYPES, SKIP, activeDeep, contains, css, deep, fieldValue, isField, low, nameOf, norm, ownText,
      parentOf, path, rel, resolve, seen, text, visible } };
})());
