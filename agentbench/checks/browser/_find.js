// DOM reading for the converter probes (agentbench/checks/browser/_find.py); the to-do probes read
// through _explore.js, loaded with this file.
// Read-only: nothing here changes the page. Every input goes through Playwright's real mouse and
// keyboard; these functions only find where to click and read what a person would see.
// Elements are named by a CSS path from :root (nth-child chain) so Python can hand them to a locator.
const AB = (() => {
  "use strict";
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE", "META", "LINK"]);
  const norm = (s) => String(s == null ? "" : s).replace(/\s+/g, " ").trim();
  const low = (s) => norm(s).toLowerCase();
  const css = (el) => getComputedStyle(el);

  function visible(el) {
    if (!el || !el.isConnected || el.nodeType !== 1) return false;
    if (el.checkVisibility && !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
    if (el.getClientRects().length === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  }

  // Open shadow roots are read too: an element is named by a deep path (the step from a shadow
  // host into its shadow tree is an ordinary " > " step, as Playwright's CSS engine reads it).
  const parentOf = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
  const tagOf = (el) => (/^[a-z][a-z0-9-]*$/.test(el.localName) ? el.localName : "*");
  function path(el) {
    const parts = [];
    for (let e = el; e && e !== document.documentElement; e = parentOf(e)) {
      parts.unshift(`${tagOf(e)}:nth-child(${[...e.parentNode.children].indexOf(e) + 1})`);
    }
    return ":root" + (parts.length ? " > " + parts.join(" > ") : "");
  }
  function byPath(p) {
    if (!p) return null;
    let el = document.documentElement;
    for (const step of p.split(" > ").slice(1)) {
      const m = /^(.+):nth-child\((\d+)\)$/.exec(step);
      if (!m || !el) return null;
      const i = Number(m[2]) - 1;
      const fits = (c) => c && (m[1] === "*" || c.localName === m[1]);
      const inShadow = el.shadowRoot && el.shadowRoot.children[i];
      el = fits(inShadow) ? inShadow : fits(el.children[i]) ? el.children[i] : null;
    }
    return el;
  }
  // Every element under root, shadow trees included (matching `sel` when given).
  function deepAll(root, sel) {
    const out = [];
    const stack = [root];
    while (stack.length) {
      const n = stack.pop();
      const kids = [...(n.shadowRoot ? n.shadowRoot.children : []), ...(n.children || [])];
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      if (n !== root && n.nodeType === 1 && (!sel || n.matches(sel))) out.push(n);
    }
    return out;
  }

  // Visible text of an element, leaving out <select> options (a unit list is not a reading) and what
  // `leaveOut` holds (the text typed into an editable value field, in the sentence around it).
  function shownText(el, leaveOut = null) {
    if (!el) return "";
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") return norm(el.value);
    const out = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const p = n.parentElement;
      if (!p || p.closest("select, option, script, style, noscript, template")) continue;
      if (leaveOut && leaveOut.contains(n)) continue;
      if (!visible(p)) continue;
      out.push(n.nodeValue);
    }
    return norm(out.join(" "));
  }

  // `withText`: an element's own text names it (a button), unless it is a field whose text is its value.
  function labelOf(el, withText = true) {
    const bits = [];
    const aria = el.getAttribute("aria-label");
    if (aria) bits.push(aria);
    for (const id of (el.getAttribute("aria-labelledby") || "").split(/\s+/)) {
      const t = id && document.getElementById(id);
      if (t) bits.push(t.textContent);
    }
    if (el.labels) for (const l of el.labels) bits.push(l.textContent);
    const title = el.getAttribute("title");
    if (title) bits.push(title);
    if (el.tagName === "INPUT") {
      if (/^(button|submit|reset)$/i.test(el.type)) bits.push(el.value || (el.type === "submit" ? "Submit" : ""));
      bits.push(el.getAttribute("placeholder") || "");
    } else if (el.tagName !== "SELECT" && withText) {  // a select's text is all its options
      bits.push(el.innerText || el.textContent || "");
    }
    return norm(bits.join(" "));
  }
  const hintOf = (el) => norm([labelOf(el), el.id, el.getAttribute("name") || "",
    el.getAttribute("class") || "", el.getAttribute("placeholder") || ""].join(" "));

  const CLICK_SEL = "button, [role=button], [role=tab], [role=radio], [role=checkbox], [role=menuitem], " +
    "[role=option], a, input[type=button], input[type=submit], input[type=image], input[type=radio], " +
    "input[type=checkbox], label, summary, [onclick], [tabindex]";
  // Everything a person could click: markup that says so, or cursor:pointer (frameworks attach
  // listeners without markup hints). cursor is inherited, so only the outermost pointer element.
  // `listening`: elements with a click-ish listener (read over CDP): they count, and so do the
  // short texts under one (a listener delegated to their list).
  function clickables(root, listening) {
    const found = new Set(deepAll(root, CLICK_SEL));
    const listens = listening || new Set();
    const under = (el) => { for (let e = parentOf(el); e; e = parentOf(e)) if (listens.has(e)) return true; return false; };
    for (const el of deepAll(root)) {
      if (SKIP.has(el.tagName) || found.has(el)) continue;
      if (css(el).cursor === "pointer" && !(el.parentElement && css(el.parentElement).cursor === "pointer")) found.add(el);
      else if (listens.has(el) && el !== document.body && el !== document.documentElement && el.children.length < 4) found.add(el);
      else if (listens.size && el.children.length === 0 && norm(el.textContent).length <= 40 && norm(el.textContent) && under(el)) found.add(el);
    }
    return [...found].filter((el) => el.tagName !== "INPUT" || el.type !== "radio" ? visible(el) : true);
  }

  // Short visible texts that are not marked clickable: the last resort for tabs and filters built
  // from plain elements with a click listener (no role, no pointer cursor).
  function shortTexts(root) {
    const out = [];
    for (const el of deepAll(root)) {
      if (SKIP.has(el.tagName) || el.closest("select, button, a, label")) continue;
      if (![...el.childNodes].some((n) => n.nodeType === 3 && n.nodeValue.trim())) continue;
      const t = norm(el.textContent);
      if (t && t.length <= 30 && visible(el)) out.push(el);
    }
    return out;
  }

  function textFields(kinds) {
    return deepAll(document.documentElement, "input, textarea").filter((el) => {
      if (el.tagName === "INPUT" && !kinds.includes(el.type)) return false;
      return visible(el);
    });
  }
  // A value field that is no <input>: the host of a contenteditable region, or an element that says it
  // takes text (role=textbox/spinbutton) and holds no field of its own. Typed into like any field (a
  // click, select-all, keys) and read back by its text.
  const TEXT_ROLES = new Set(["textbox", "searchbox", "spinbutton"]);
  function editableHost(el) {
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el === document.body) return false;
    if (el.isContentEditable) return !(parentOf(el) && parentOf(el).isContentEditable);
    return TEXT_ROLES.has(el.getAttribute("role")) && !el.querySelector("input, textarea, [contenteditable]");
  }
  const editables = () => deepAll(document.body).filter((el) => editableHost(el) && visible(el));
  const isField = (el) => el.tagName === "INPUT" || el.tagName === "TEXTAREA";
  const fieldValue = (el) => (isField(el) ? el.value : norm(el.innerText));
  const fieldInfo = (el) => (isField(el) ? { path: path(el), type: el.type || "textarea", hint: hintOf(el),
    readonly: el.readOnly || el.disabled, value: el.value, top: el.getBoundingClientRect().top } : {
    path: path(el), type: "editable", hint: norm([labelOf(el, false), el.id, el.getAttribute("class") || "",
      el.getAttribute("aria-placeholder") || ""].join(" ")),
    // Focus is where keys go: an element that cannot take it (neither editable nor tabbable) takes no typing.
    readonly: !(el.isContentEditable || el.tabIndex >= 0) || el.getAttribute("aria-readonly") === "true" ||
      el.getAttribute("aria-disabled") === "true",
    value: fieldValue(el), top: el.getBoundingClientRect().top });

  // ---- converter ----------------------------------------------------------------------------
  function convControls(arg) {
    const listening = new Set(Object.entries((arg && arg.listeners) || {})
      .filter(([, ts]) => ts.some((t) => /click|mouse|pointer/.test(t))).map(([p]) => byPath(p)).filter(Boolean));
    const fields = [...textFields(["number", "text", "tel", "search"]), ...editables()].map(fieldInfo);
    const selects = deepAll(document.documentElement, "select").filter(visible).map((s) => ({
      path: path(s), hint: hintOf(s), selected: s.selectedIndex,
      options: [...s.options].map((o) => ({ text: norm(o.text), value: o.value, disabled: o.disabled })),
    }));
    const choices = [];
    for (const c of clickables(document.body, listening)) {
      if (c.tagName === "SELECT" || c.tagName === "OPTION" || c.type === "checkbox") continue;
      const radio = c.tagName === "INPUT" && c.type === "radio";
      let target = c;
      if (radio && !visible(c)) target = (c.labels && c.labels[0]) || c;
      if (!visible(target)) continue;
      if (c.tagName === "LABEL" && c.control) continue;  // a field's or radio's label: the control stands for it
      const group = radio ? "radio:" + (c.name || path(c.parentElement)) :
        path(c.closest("[role=tablist], [role=radiogroup]") || c.parentElement);
      const role = c.getAttribute("role");
      choices.push({ path: path(target), label: labelOf(c), value: radio ? c.value : "", group,
        kind: radio ? "radio" : role ? role + "-role" : c.tagName.toLowerCase() });
    }
    const taken = new Set(choices.map((c) => c.path));
    const texts = shortTexts(document.body).filter((el) => !taken.has(path(el))).map((el) => ({
      path: path(el), label: norm(el.textContent), value: "", group: path(el.parentElement), kind: "text" }));
    return { fields, selects, choices, texts };
  }

  // What a person reads: visible text of every element that holds text itself, and field values.
  // The value field left out (`exclude`) is left out with what it holds: an editable field's text is
  // no part of the elements around it either (a sentence "[12] m = 0.012 km" reads "m = 0.012 km").
  function snapshot(arg) {
    const skip = byPath(arg && arg.exclude);
    const out = {};
    for (const el of deepAll(document.body)) {
      if (SKIP.has(el.tagName) || (skip && skip.contains(el)) || el.closest("select")) continue;
      const field = el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "OUTPUT";
      if (el.tagName === "INPUT" && !["number", "text", "tel", "search"].includes(el.type)) continue;
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.nodeValue.trim());
      if (!field && !own) continue;
      if (!visible(el)) continue;
      const around = skip && !isField(skip) && el.contains(skip);
      out[path(el)] = field && el.tagName !== "OUTPUT" ? norm(el.value)
        : around ? shownText(el, skip) : norm(el.innerText);
    }
    return out;
  }

  // For each path: the element and a few ancestors, with their visible text (unit labels nearby).
  function contextOf(arg) {
    const out = {};
    for (const p of arg.paths) {
      const chain = [];
      let el = byPath(p);
      for (let i = 0; el && el !== document.body && i < (arg.levels || 4); i++, el = parentOf(el)) {
        chain.push({ tag: el.tagName.toLowerCase(), hint: norm((el.id || "") + " " + (el.getAttribute("class") || "")),
          text: shownText(el).slice(0, 400) });
      }
      out[p] = chain;
    }
    return out;
  }

  function pageText(arg) {
    const skip = byPath(arg && arg.exclude);
    const values = [...document.querySelectorAll("input, textarea, output")]
      .filter((f) => f !== skip && visible(f) && f.type !== "radio" && f.type !== "checkbox").map((f) => f.value);
    return { text: document.body.innerText || "", values, field: skip ? fieldValue(skip) : null };
  }

  // Which of these elements a person can see now (a form hidden after Convert, until Reset).
  const shownNow = (arg) => arg.paths.map((p) => visible(byPath(p)));

  // Every animation of the page, shadow trees' included (document.getAnimations() leaves them out).
  function allAnimations() {
    const all = [...document.getAnimations()];
    const stack = [document];
    while (stack.length) {
      for (const el of stack.pop().querySelectorAll("*")) {
        if (el.shadowRoot) { all.push(...el.shadowRoot.getAnimations()); stack.push(el.shadowRoot); }
      }
    }
    return all;
  }

  // Where the real mouse lands on a control without Playwright's actionability wait (issue 30: that
  // wait costs two real rendering frames per click; on the virtual clock nothing moves between
  // them): the centre of its one box, when the whole box is in the viewport (no scrolling), the
  // control is enabled, nothing on the page is animating, and (unless `force`: "whatever lies on
  // top") the control or a child of it is what the point hits. Null otherwise: the caller then
  // clicks through Playwright, which waits, scrolls and reports as before.
  function clickPoint(arg) {
    const el = byPath(arg.path);
    if (!visible(el)) return null;
    if (el.matches(":disabled") || (el.closest && el.closest("[aria-disabled=true]"))) return null;
    const rects = el.getClientRects();
    if (rects.length !== 1) return null;
    const r = rects[0], root = document.documentElement;
    if (r.width < 1 || r.height < 1 || r.left < 0 || r.top < 0 ||
        r.right > root.clientWidth || r.bottom > root.clientHeight) return null;
    if (allAnimations().some((a) => a.playState === "running")) return null;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    // Inside the viewport is not in view: a box that clips or scrolls its content (a list with a
    // max-height) shows only part of it, and a point outside that part lands on whatever lies there.
    const rootStyle = getComputedStyle(root);
    const bodyToViewport = rootStyle.overflowX === "visible" && rootStyle.overflowY === "visible";
    for (let e = parentOf(el); e && e !== root && e.nodeType === 1; e = parentOf(e)) {
      if (e === document.body && bodyToViewport) continue;  // the body's overflow is the viewport's
      const st = getComputedStyle(e);
      if (st.overflowX === "visible" && st.overflowY === "visible") continue;
      const c = e.getBoundingClientRect();
      if (x < c.left || x > c.right || y < c.top || y > c.bottom) return null;
    }
    if (arg.force) return [x, y];
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    for (let e = hit; e; e = parentOf(e)) if (e === el) return [x, y];
    return null;
  }

  // How long (ms of animation time) until the CSS animations and transitions now running end: the
  // longest one left (infinite ones, like spinners, do not count); 0 when none runs.
  const animating = () => {
    let left = 0;
    for (const a of allAnimations()) {
      if (a.playState !== "running" || !a.effect) continue;
      const end = a.effect.getComputedTiming().endTime;
      if (!Number.isFinite(end)) continue;
      const rate = Math.abs(a.playbackRate) || 1;
      const t = Number(a.currentTime) || 0;
      left = Math.max(left, (a.playbackRate < 0 ? t : end - t) / rate, 1);
    }
    return left;
  };
  // Rendering frames the browser has made since this library came to the document, counted by a
  // requestAnimationFrame of the harness's isolated world (the page's virtual clock does not replace
  // it): animation events (transitionend, animationend) are dispatched as a frame is rendered.
  let frames = 0, asked = false;
  const painted = () => {
    if (!asked) { asked = true; requestAnimationFrame(() => { asked = false; frames++; }); }
    return frames;
  };

  return { convControls, snapshot, contextOf, pageText, shownNow, animating, painted, clickPoint,
    _deep: { parentOf, tagOf, path, byPath } };  // shared with _explore.js
})();
