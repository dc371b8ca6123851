// DOM reading for the to-do and converter probes (agentbench/checks/browser/_find.py).
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

  // Visible to the eye: also not clipped away inside a collapsed (0 high or wide) overflow box,
  // the way some apps hide filtered items with max-height: 0.
  function seen(el) {
    if (!visible(el)) return false;
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const r = e.getBoundingClientRect();
      if ((r.height < 1 || r.width < 1) && css(e).overflow !== "visible") return false;
    }
    return true;
  }

  function path(el) {
    const parts = [];
    for (let e = el; e && e.parentElement; e = e.parentElement) {
      parts.unshift(`*:nth-child(${Array.prototype.indexOf.call(e.parentElement.children, e) + 1})`);
    }
    return ":root" + (parts.length ? " > " + parts.join(" > ") : "");
  }
  const byPath = (p) => (p ? document.querySelector(p) : null);

  // Visible text of an element, leaving out <select> options (a unit list is not a reading).
  function shownText(el) {
    if (!el) return "";
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") return norm(el.value);
    const out = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const p = n.parentElement;
      if (!p || p.closest("select, option, script, style, noscript, template")) continue;
      if (!visible(p)) continue;
      out.push(n.nodeValue);
    }
    return norm(out.join(" "));
  }

  function labelOf(el) {
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
    } else if (el.tagName !== "SELECT") {  // a select's text is all its options
      bits.push(el.innerText || el.textContent || "");
    }
    return norm(bits.join(" "));
  }
  const hintOf = (el) => norm([labelOf(el), el.id, el.getAttribute("name") || "",
    el.getAttribute("class") || "", el.getAttribute("placeholder") || ""].join(" "));

  // Icon buttons say what they do in their classes or their icon's (fa-trash, bi-check...).
  const classes = (c) => [c, ...c.querySelectorAll("*")].map((e) => e.getAttribute("class") || "").join(" ");
  const CLICK_SEL = "button, [role=button], [role=tab], [role=radio], [role=checkbox], [role=menuitem], " +
    "[role=option], a, input[type=button], input[type=submit], input[type=image], input[type=radio], " +
    "input[type=checkbox], label, summary, [onclick], [tabindex]";
  // Everything a person could click: markup that says so, or cursor:pointer (frameworks attach
  // listeners without markup hints). cursor is inherited, so only the outermost pointer element.
  function clickables(root) {
    const found = new Set(root.querySelectorAll(CLICK_SEL));
    for (const el of root.querySelectorAll("*")) {
      if (SKIP.has(el.tagName) || found.has(el)) continue;
      if (css(el).cursor === "pointer" && !(el.parentElement && css(el.parentElement).cursor === "pointer")) found.add(el);
    }
    return [...found].filter((el) => el.tagName !== "INPUT" || el.type !== "radio" ? visible(el) : true);
  }

  // Short visible texts that are not marked clickable: the last resort for tabs and filters built
  // from plain elements with a click listener (no role, no pointer cursor).
  function shortTexts(root) {
    const out = [];
    for (const el of root.getElementsByTagName("*")) {
      if (SKIP.has(el.tagName) || el.closest("select, button, a, label")) continue;
      if (![...el.childNodes].some((n) => n.nodeType === 3 && n.nodeValue.trim())) continue;
      const t = norm(el.textContent);
      if (t && t.length <= 30 && visible(el)) out.push(el);
    }
    return out;
  }

  function distance(a, b) {
    const up = new Map();
    let d = 0;
    for (let e = a; e; e = e.parentElement) up.set(e, d++);
    d = 0;
    for (let e = b; e; e = e.parentElement, d++) if (up.has(e)) return up.get(e) + d;
    return 1e9;
  }
  const nearest = (from, list) => list.slice().sort((x, y) => distance(from, x) - distance(from, y));

  function textFields(kinds) {
    const sel = "input, textarea";
    return [...document.querySelectorAll(sel)].filter((el) => {
      if (el.tagName === "INPUT" && !kinds.includes(el.type)) return false;
      return visible(el);
    });
  }
  const fieldInfo = (el) => ({ path: path(el), type: el.type || "textarea", hint: hintOf(el),
    readonly: el.readOnly || el.disabled, value: el.value, top: el.getBoundingClientRect().top });

  // ---- to-do --------------------------------------------------------------------------------
  const DEL = /delete|remove|trash|destroy|discard|erase|\bdel\b|✕|✖|×|✗|❌|🗑|^\s*x\s*$/i;
  const TOG = /\bdone\b|complete|finish|\bcheck|toggle|\bmark|✓|✔|☐|☑|✅|undo|reopen|uncheck|restore/i;
  const DONE_CLASS = /(^|[\s_-])(done|completed?|checked|finished|crossed|strike)($|[\s_-])/i;
  const NOT_DONE = /(not|un|in)[-_]?(done|completed?|checked|finished)/i;
  const NOISE = "[role=alert], [role=status], .toast, .snackbar, .notification, .flash, .notice";

  function holdersOf(marker, exclude) {
    const m = low(marker);
    const out = [];
    for (const el of document.body.getElementsByTagName("*")) {
      if (SKIP.has(el.tagName) || el === exclude) continue;
      const field = el.tagName === "INPUT" || el.tagName === "TEXTAREA";
      if (!low(field ? el.value : el.textContent).includes(m)) continue;
      if (!field && [...el.children].some((c) => !SKIP.has(c.tagName) && low(c.textContent).includes(m))) continue;
      if (el.closest(NOISE)) continue;
      out.push(el);
    }
    return out;
  }

  // A task's row: the list item holding it, or its widest box holding no other task. A list item
  // that is only the text (<div class=todo><li>text</li><button>...) is not the row: its box is.
  const hasControl = (el, h) => [...el.querySelectorAll(CLICK_SEL)].some((c) => c !== h && !c.contains(h));
  function rootOf(h, others, stops) {
    const row = h.closest("li, [role=listitem], tr");
    const bare = row && !hasControl(row, h) && row.textContent.trim() === h.textContent.trim();
    let el = h;
    for (;;) {
      if (row && el === row && !bare) break;
      if (bare && el !== h && row.contains(el) === false && hasControl(el, h)) break;
      const p = el.parentElement;
      if (!p || p === document.body || p === document.documentElement) break;
      if (others.some((o) => o !== h && p.contains(o))) break;
      if (stops.some((s) => p.contains(s))) break;
      el = p;
    }
    return el;
  }

  function itemInfo(h, root, marker) {
    const chain = [];
    for (let e = h; e; e = e.parentElement) { chain.push(e); if (e === root) break; }
    let classDone = false;
    for (const e of chain) {
      const cls = e.getAttribute("class") || "";
      if (DONE_CLASS.test(cls) && !NOT_DONE.test(cls)) classDone = true;
      for (const k of ["data-done", "data-completed", "data-complete", "data-status", "data-state"]) {
        if (/^(true|done|completed?)$/i.test(e.getAttribute(k) || "")) classDone = true;
      }
      if (e !== h && e.getAttribute("aria-checked") === "true") classDone = true;
    }
    let strike = false;
    for (let e = h; e && e !== document.documentElement; e = e.parentElement) {
      if (css(e).textDecorationLine.includes("line-through")) strike = true;
    }
    const boxes = nearest(h, [...root.querySelectorAll("input[type=checkbox], [role=checkbox]")]);
    const box = boxes[0] || null;
    let boxInfo = null;
    if (box) {
      const checked = box.tagName === "INPUT" ? box.checked : box.getAttribute("aria-checked") === "true";
      const label = box.labels && box.labels[0];
      boxInfo = { path: path(box), checked, visible: visible(box),
        label: label && visible(label) ? path(label) : null };
    }
    const clicks = clickables(root).filter((c) => c !== h && !c.contains(h) && c !== box);
    // A "×" or "🗑" in a plain span with a listener and no pointer cursor is still a delete control.
    for (const el of shortTexts(root)) {
      if (el !== h && !el.contains(h) && DEL.test(norm(el.textContent)) && !clicks.includes(el)) clicks.push(el);
    }
    const del = nearest(h, clicks.filter((c) => DEL.test(labelOf(c)) || DEL.test(classes(c))));
    const tog = nearest(h, clicks.filter((c) => !del.includes(c) && c.type !== "checkbox" &&
      (TOG.test(labelOf(c)) || TOG.test(classes(c)))));
    // Unlabelled buttons in the row (icon fonts that did not load): tried last, judged by effect.
    const bare = clicks.filter((c) => !del.includes(c) && !tog.includes(c) && c.type !== "checkbox" &&
      !labelOf(c).replace(/[^\p{L}\p{N}]/gu, "") && !/edit|pencil|save|cancel/i.test(classes(c)));
    const st = css(h);
    let opacity = 1;
    for (const e of chain) opacity *= parseFloat(css(e).opacity) || 0;
    const shown = h.tagName === "INPUT" || h.tagName === "TEXTAREA" ? low(h.value) : low(h.textContent);
    const rect = root.getBoundingClientRect();
    return {
      root: path(root), holder: path(h), visible: seen(h),
      text: norm(root.innerText || "").slice(0, 200), classDone, strike, checkbox: boxInfo,
      deletes: del.map(path), toggles: tog.map(path), unlabelled: bare.map(path), top: rect.top, left: rect.left,
      // How the task looks and where it sits (some apps move done tasks to their own list).
      sig: [st.color, st.fontStyle, strike, Math.round(opacity * 10) / 10, shown.replace(low(marker), "#"),
        low(root.innerText || "").replace(low(marker), "#").slice(0, 80),
        root.parentElement ? path(root.parentElement) : ""].join("|"),
    };
  }

  const ADD = new RegExp("^\\s*[+＋➕]\\s*$|\\badd\\b|\\bcreate\\b|\\bsubmit\\b|\\bsave\\b|" +
    "tambah|hinzuf|ajouter|añadir|agregar|aggiungi|adicionar|toevoegen|dodaj|ekle|добав|添加|追加|추가", "i");
  const ADD_CLASS = /(^|[\s_-])(add|plus|create)([\s_-]|$)|fa-plus|bi-plus|icon-plus/i;
  const FILTER_RE = {
    all: /^(show )?all( (tasks|items|todos|to dos))?( \d+)?$/,
    active: new RegExp("^(show )?(active|pending|remaining|to ?do|todo|open|incomplete|not done|undone|" +
      "uncompleted|in progress)( (tasks|items|todos))?( \\d+)?$"),
    done: /^(show )?(done|completed?|finished|closed|checked)( (tasks|items|todos))?( \d+)?$/,
  };
  const filterKey = (...texts) => {
    for (const text of texts) {
      const t = low(text).replace(/[^\p{L}\p{N} ]+/gu, " ").replace(/\s+/g, " ").trim();
      for (const [k, re] of Object.entries(FILTER_RE)) if (re.test(t)) return k;
    }
    return null;
  };
  // A filter's name alone: its text, aria-label, title or label, each tried on its own.
  const names = (el) => [el.innerText || el.value || "", el.getAttribute("aria-label") || "",
    el.getAttribute("title") || "", ...(el.labels ? [...el.labels].map((l) => l.textContent) : []),
    // TodoMVC's filters are links to #/, #/active, #/completed
    el.tagName === "A" && /^#\/?\w+$/.test(el.getAttribute("href") || "") ? el.getAttribute("href").replace(/^#\/?/, "") : ""];

  function todoState(arg) {
    const input = byPath(arg.input);
    const stops = (arg.stops || []).map(byPath).filter(Boolean);
    const holders = {};
    const all = [];
    for (const m of arg.markers) { holders[m] = holdersOf(m, input); all.push(...holders[m]); }
    const items = {};
    for (const m of arg.markers) {
      items[m] = holders[m].map((h) => itemInfo(h, rootOf(h, all, input ? [input, ...stops] : stops), m));
    }
    const vis = all.filter(seen);
    let rows = null;
    if (new Set(vis.map((h) => arg.markers.find((m) => holders[m].includes(h)))).size >= 2) {
      let lca = vis[0].parentElement;
      while (lca && !vis.every((h) => lca.contains(h))) lca = lca.parentElement;
      if (lca) {
        const kids = [...lca.children].filter((c) => !SKIP.has(c.tagName) && visible(c));
        // A row's own words, leaving out its controls (×, Delete): a blank task has none.
        const words = (row) => {
          const out = [];
          const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            if (!n.parentElement.closest("button, [role=button], select, a")) out.push(n.nodeValue);
          }
          const fields = [...row.querySelectorAll("input[type=text], input:not([type]), textarea")].map((f) => f.value);
          return norm([...out, ...fields].join(" "));
        };
        rows = { path: path(lca), count: kids.length, blank: kids.filter((k) => !words(k)).length,
          texts: kids.map((k) => norm(k.innerText).slice(0, 80)) };
      }
    }
    return { items, rows, text: (document.body.innerText || "").slice(0, 4000) };
  }

  function todoControls(arg) {
    const markers = arg.markers || [];
    const all = markers.flatMap((m) => holdersOf(m, null));
    const fields = textFields(["text", "search"]).filter((f) => !all.includes(f) && !f.readOnly && !f.disabled);
    const score = (f) => (/task|to-?do|add|what|new|item|enter/i.test(hintOf(f)) ? 0 : 1);
    const input = fields.sort((a, b) => score(a) - score(b))[0] || null;
    const roots = all.map((h) => rootOf(h, all, input ? [input] : []));
    const inItem = (el) => roots.some((r) => r.contains(el)) || all.some((h) => el.contains(h));
    const clicks = clickables(document.body).filter((c) => !inItem(c) && c !== input);
    let add = null;
    if (input) {
      const usable = (c) => !DEL.test(labelOf(c)) && !filterKey(...names(c)) && c.type !== "checkbox" &&
        c.type !== "radio";
      const adds = clicks.filter((c) => usable(c) && (ADD.test(labelOf(c)) || ADD_CLASS.test(classes(c))));
      add = nearest(input, adds)[0] || null;
      // An icon-only button that submits the task field's form is its Add button.
      if (!add && input.form) {
        add = [...input.form.querySelectorAll("button, input[type=submit], input[type=image]")].find((b) =>
          visible(b) && usable(b) && (b.tagName === "INPUT" || !b.type || b.type === "submit")) || null;
      }
    }
    const filters = {};
    for (const c of clicks) {
      const label = labelOf(c);
      const k = filterKey(...names(c));
      if (!k || filters[k]) continue;
      let target = c;
      if (c.tagName === "INPUT" && c.type === "radio" && !visible(c)) target = (c.labels && c.labels[0]) || c;
      if (!visible(target)) continue;
      filters[k] = { kind: "click", path: path(target), text: label };
    }
    for (const el of shortTexts(document.body)) {
      const k = filterKey(el.textContent);
      if (k && !filters[k] && !inItem(el) && !all.some((h) => el.contains(h))) {
        filters[k] = { kind: "click", path: path(el), text: norm(el.textContent) };
      }
    }
    for (const s of document.querySelectorAll("select")) {
      if (!visible(s) || inItem(s)) continue;
      [...s.options].forEach((o, i) => {
        const k = filterKey(o.text) || filterKey(o.value);
        if (k && !filters[k]) filters[k] = { kind: "select", path: path(s), index: i, text: norm(o.text) };
      });
    }
    // Fields we cannot see into (shadow roots, frames) are "could not tell", never "absent".
    const anyField = document.querySelector("input:not([type=checkbox]):not([type=radio]):not([type=button])" +
      ":not([type=submit]):not([type=hidden]), textarea, [contenteditable], iframe, object, embed") !== null ||
      [...document.body.getElementsByTagName("*")].some((e) => e.shadowRoot);
    return { input: input && path(input), anyField, maxLength: input ? input.maxLength : -1, add: add && path(add),
      addText: add && labelOf(add), filters };
  }

  // ---- converter ----------------------------------------------------------------------------
  function convControls() {
    const fields = textFields(["number", "text", "tel", "search"]).map(fieldInfo);
    const selects = [...document.querySelectorAll("select")].filter(visible).map((s) => ({
      path: path(s), hint: hintOf(s), selected: s.selectedIndex,
      options: [...s.options].map((o) => ({ text: norm(o.text), value: o.value, disabled: o.disabled })),
    }));
    const choices = [];
    for (const c of clickables(document.body)) {
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
  function snapshot(arg) {
    const skip = byPath(arg && arg.exclude);
    const out = {};
    for (const el of document.body.getElementsByTagName("*")) {
      if (SKIP.has(el.tagName) || el === skip || el.closest("select")) continue;
      const field = el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "OUTPUT";
      if (el.tagName === "INPUT" && !["number", "text", "tel", "search"].includes(el.type)) continue;
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.nodeValue.trim());
      if (!field && !own) continue;
      if (!visible(el)) continue;
      out[path(el)] = field && el.tagName !== "OUTPUT" ? norm(el.value) : norm(el.innerText);
    }
    return out;
  }

  // For each path: the element and a few ancestors, with their visible text (unit labels nearby).
  function contextOf(arg) {
    const out = {};
    for (const p of arg.paths) {
      const chain = [];
      let el = byPath(p);
      for (let i = 0; el && el !== document.body && i < (arg.levels || 4); i++, el = el.parentElement) {
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
    return { text: document.body.innerText || "", values, field: skip ? skip.value : null };
  }

  // Every word a person could read or pick on the page, hidden parts and option lists included:
  // where none of them names a unit, the page does not offer it (absent, not "not found").
  function wordsOnPage() {
    const bits = [document.title, document.body.innerText || "", document.body.textContent || ""];
    for (const o of document.querySelectorAll("option")) bits.push(o.text, o.value);
    for (const el of document.querySelectorAll("[aria-label], [title], [placeholder], input[value], [data-unit]")) {
      bits.push(el.getAttribute("aria-label") || "", el.getAttribute("title") || "",
        el.getAttribute("placeholder") || "", el.getAttribute("data-unit") || "",
        el.tagName === "INPUT" && /^(button|submit|radio|checkbox)$/i.test(el.type) ? el.value : "");
    }
    return bits.join("\n").slice(0, 200000);
  }

  // Which of these elements a person can see now (a form hidden after Convert, until Reset).
  const shownNow = (arg) => arg.paths.map((p) => visible(byPath(p)));

  function markupCheck() {
    return {
      xss: typeof window.__xss === "undefined" ? null : String(window.__xss),
      imgs: [...document.querySelectorAll("img")].filter((i) => i.getAttribute("src") === "x").length,
      bolds: [...document.querySelectorAll("b")].filter((b) => low(b.textContent) === "bold").length,
    };
  }

  // CSS animations and transitions still running (infinite ones, like spinners, do not count).
  const animating = () => document.getAnimations().filter((a) => a.playState === "running" &&
    Number.isFinite(a.effect && a.effect.getComputedTiming().endTime)).length;

  return { todoState, todoControls, convControls, snapshot, contextOf, pageText, wordsOnPage, shownNow, markupCheck,
    animating };
})();
