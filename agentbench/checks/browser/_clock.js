// Virtual clock, injected with add_init_script before any page code runs.
//
// The harness replaces every clock a page can read or wait on, then steps frames itself:
// frame n runs at virtual time n * 1000 / fps (computed, never accumulated), timers due before
// a frame run first, then the frame's requestAnimationFrame callbacks.  A real task
// (MessageChannel) is yielded between frames so promise-based loops see every frame.
// Every callback is wrapped so an exception is reported (reportError -> page error) and the
// clock keeps going.  window.__AB_CFG = {fps, seed, epoch, capWidth} is prepended by Python;
// the harness sets the session's fps and capture width with sync() after every load, so one
// browser context can serve sessions at different rates (see BrowserHarness: pooled contexts).
(() => {
  "use strict";
  if (window.__agentbenchClock) return;
  const cfg = window.__AB_CFG || { fps: 60, seed: 1, epoch: 1704067200000, capWidth: 160 };
  try { delete window.__AB_CFG; } catch (e) { /* ignore */ }

  // Natives saved before page code can touch them.
  const N = {
    Date: window.Date,
    MessageChannel: window.MessageChannel,
    Promise: window.Promise,
    reportError: window.reportError ? window.reportError.bind(window) : null,
    createElement: Document.prototype.createElement,
    fillText: CanvasRenderingContext2D.prototype.fillText,
    beginPath: CanvasRenderingContext2D.prototype.beginPath,
    ellipse: CanvasRenderingContext2D.prototype.ellipse,
    fill: CanvasRenderingContext2D.prototype.fill,
    drawImage: CanvasRenderingContext2D.prototype.drawImage,
    getImageData: CanvasRenderingContext2D.prototype.getImageData,
    getContext: HTMLCanvasElement.prototype.getContext,
    getTransform: CanvasRenderingContext2D.prototype.getTransform,
    getRect: Element.prototype.getBoundingClientRect,
    querySelectorAll: Document.prototype.querySelectorAll,
    getComputedStyle: window.getComputedStyle.bind(window),
    btoa: window.btoa.bind(window),
    fromCharCode: String.fromCharCode,
    realNow: performance.now.bind(performance),
    Function: window.Function,
    Blob: window.Blob,
    Response: window.Response,
    CompressionStream: window.CompressionStream,
    stringify: JSON.stringify.bind(JSON),
  };
  const defineValue = (obj, name, value) =>
    Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });

  // ---- state -------------------------------------------------------------------------------
  const S = {
    id: Math.floor(N.realNow() * 1000) + "-" + Math.floor(Math.random() * 1e9),
    fps: cfg.fps, capWidth: cfg.capWidth, frame: 0, now: 0, reads: 0, stepping: false, noSave: false,
    timers: new Map(), nextTimer: 1, nest: 0,
    rafs: new Map(), nextRaf: 1,
    dialogs: [], dialogCount: 0, opened: [],
    texts: new Map(),               // canvas text -> {first, last, count, cv, x, y}
    circles: [], lastCircles: [],   // arcs drawn this frame / in the last frame that drew any
    pending: [],                    // arcs of the current path, recorded when it is filled or stroked
    errors: 0,
  };
  const SPIN_READS = 10000;
  const FAINT = 0.35;  // circles drawn fainter than this (trails, glows) are not balls
  // A reload or same-origin navigation continues the tab's virtual time, as a real clock would:
  // the time is handed to the next document through sessionStorage when this one is hidden.
  const SAVE_KEY = "__agentbench_clock";
  try {
    const saved = JSON.parse(window.sessionStorage.getItem(SAVE_KEY) || "null");
    if (saved && saved.fps > 0) { S.fps = saved.fps; S.frame = saved.frame; S.now = saved.now; }
  } catch (e) { /* storage unavailable: the harness re-syncs the clock after load */ }
  window.addEventListener("pagehide", () => {
    if (S.noSave) return;  // the harness is resetting the page for the next session
    try {
      window.sessionStorage.setItem(SAVE_KEY, JSON.stringify({ fps: S.fps, frame: S.frame, now: S.now }));
    } catch (e) { /* ignore */ }
  });

  // Reading the clock: a busy-wait on performance.now/Date.now would never end on a frozen clock,
  // so after SPIN_READS reads inside one callback every read advances time by 1 us.
  function readNow() {
    if (++S.reads > SPIN_READS) S.now += 0.001;
    return S.now;
  }

  // ---- seeded Math.random (mulberry32) ------------------------------------------------------
  // The first load is deterministic (both refresh-rate runs see the same "random" game); a reload
  // gets fresh randomness, as a person's reload would (ids made with Math.random must not repeat).
  let seed = (cfg.seed >>> 0) || 1;
  try {
    const nav = performance.getEntriesByType("navigation")[0];
    if (nav && nav.type !== "navigate") seed = (seed ^ Math.floor(Math.random() * 4294967295)) >>> 0 || 1;
  } catch (e) { /* keep the configured seed */ }
  defineValue(Math, "random", function random() {
    seed = (seed + 0x6D2B79F5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  });

  // ---- performance.now and Date --------------------------------------------------------------
  defineValue(performance, "now", function now() { return readNow(); });
  const NDate = N.Date;
  function FakeDate(...args) {
    if (!new.target) return new NDate(cfg.epoch + readNow()).toString();
    if (args.length === 0) return Reflect.construct(NDate, [cfg.epoch + readNow()], new.target);
    return Reflect.construct(NDate, args, new.target);
  }
  FakeDate.prototype = NDate.prototype;
  FakeDate.now = function now() { return Math.floor(cfg.epoch + readNow()); };
  FakeDate.UTC = NDate.UTC;
  FakeDate.parse = NDate.parse;
  defineValue(NDate.prototype, "constructor", FakeDate);
  defineValue(window, "Date", FakeDate);

  // ---- callbacks -------------------------------------------------------------------------------
  function report(err) {
    S.errors++;
    try {
      if (N.reportError) N.reportError(err);
    } catch (e) { /* reporting must never stop the clock */ }
  }
  function invoke(fn, self, args) {
    S.reads = 0;
    try { fn.apply(self, args); } catch (err) { report(err); }
  }
  function toFunction(cb) {
    if (typeof cb === "function") return cb;
    const code = String(cb);
    return () => N.Function(code)();
  }

  // ---- timers --------------------------------------------------------------------------------
  function addTimer(cb, delay, args, repeat) {
    delay = Number(delay) || 0;
    if (delay < 0) delay = 0;
    const nest = S.nest + 1;
    if (nest > 5 && delay < 4) delay = 4;  // HTML: nested timeouts are clamped to 4 ms
    if (repeat && delay < 1) delay = 1;
    const id = S.nextTimer++;
    S.timers.set(id, { id, due: S.now + delay, fn: toFunction(cb), args, delay, repeat, nest });
    return id;
  }
  const clearTimer = (id) => { S.timers.delete(Number(id)); };
  defineValue(window, "setTimeout", function setTimeout(cb, delay, ...args) {
    return addTimer(cb, delay, args, false);
  });
  defineValue(window, "setInterval", function setInterval(cb, delay, ...args) {
    return addTimer(cb, delay, args, true);
  });
  defineValue(window, "clearTimeout", function clearTimeout(id) { clearTimer(id); });
  defineValue(window, "clearInterval", function clearInterval(id) { clearTimer(id); });
  defineValue(window, "requestIdleCallback", function requestIdleCallback(cb) {
    return addTimer(() => cb({ didTimeout: false, timeRemaining: () => 10 }), 1, [], false);
  });
  defineValue(window, "cancelIdleCallback", function cancelIdleCallback(id) { clearTimer(id); });

  // Run every timer due at or before `limit`, in due order, each at its own due time.
  function runTimers(limit) {
    let ran = 0;
    for (let guard = 0; guard < 100000; guard++) {
      let next = null;
      for (const t of S.timers.values()) {
        if (t.due <= limit && (next === null || t.due < next.due || (t.due === next.due && t.id < next.id))) {
          next = t;
        }
      }
      if (next === null) break;
      if (next.due > S.now) S.now = next.due;
      if (next.repeat) {
        let delay = next.delay;
        next.nest++;
        if (next.nest > 5 && delay < 4) delay = 4;
        next.due = Math.max(next.due + delay, S.now + 0.001);
      } else {
        S.timers.delete(next.id);
      }
      const saved = S.nest;
      S.nest = next.nest;
      invoke(next.fn, window, next.args);
      S.nest = saved;
      ran++;
    }
    return ran;
  }

  // ---- animation frames ----------------------------------------------------------------------
  const raf = function requestAnimationFrame(cb) {
    const id = S.nextRaf++;
    S.rafs.set(id, cb);
    return id;
  };
  const caf = function cancelAnimationFrame(id) { S.rafs.delete(Number(id)); };
  defineValue(window, "requestAnimationFrame", raf);
  defineValue(window, "cancelAnimationFrame", caf);
  defineValue(window, "webkitRequestAnimationFrame", raf);
  defineValue(window, "webkitCancelAnimationFrame", caf);

  // ---- dialogs and popups: answered at once, recorded -------------------------------------------
  const dialog = (kind, answer) => function (message) {
    S.dialogCount++;
    if (S.dialogs.length < 50) S.dialogs.push(kind + ": " + String(message === undefined ? "" : message));
    return answer;
  };
  defineValue(window, "alert", dialog("alert", undefined));
  defineValue(window, "confirm", dialog("confirm", false));
  defineValue(window, "prompt", dialog("prompt", null));
  defineValue(window, "open", function open(url) {
    if (S.opened.length < 20) S.opened.push(String(url));
    return null;
  });

  // More built-ins, captured at init like N (the game probes' readers use them after page code ran).
  const G = {
    play: HTMLMediaElement.prototype.play,
    then: Promise.prototype.then,
    addColorStop: CanvasGradient.prototype.addColorStop,
    WeakMap: window.WeakMap,
    scrollIntoView: Element.prototype.scrollIntoView,
    setAttribute: Element.prototype.setAttribute,
    round: Math.round,
    hypot: Math.hypot,
    getAnimations: Document.prototype.getAnimations,
    animTime: window.Animation ? Object.getOwnPropertyDescriptor(Animation.prototype, "currentTime") : null,
    animState: window.Animation ? Object.getOwnPropertyDescriptor(Animation.prototype, "playState") : null,
  };

  // ---- sound: a person's browser plays it or stays silent, never shows an error -----------------
  // Autoplay is allowed in the harness's Chromium; play() can still reject (a codec we lack, a
  // play() cut short by pause()). A person hears nothing and sees nothing, so the promise the page
  // gets always resolves and no rejection becomes a page error.
  defineValue(HTMLMediaElement.prototype, "play", function play() {
    let p;
    try { p = G.play.call(this); } catch (e) { return N.Promise.resolve(); }
    if (!p || typeof p !== "object") return N.Promise.resolve();
    return new N.Promise((resolve) => { G.then.call(p, resolve, () => resolve()); });
  });

  // ---- canvas instrumentation: text and circles drawn (what a person would read and see) ------
  const C2D = CanvasRenderingContext2D.prototype;
  // Gradient stops, read back by styleAlpha/styleKey: a glow fades to transparent at its edge, a
  // shaded ball does not.
  const gradStops = new G.WeakMap();
  defineValue(CanvasGradient.prototype, "addColorStop", function addColorStop(offset, colour) {
    try {
      const rec = gradStops.get(this) || { first: "", edge: -1, edgeAlpha: 1, n: 0 };
      if (rec.n++ < 4) rec.first += (rec.first ? "/" : "") + String(colour).slice(0, 24);
      if (Number(offset) >= rec.edge) { rec.edge = Number(offset); rec.edgeAlpha = colourAlpha(String(colour)); }
      gradStops.set(this, rec);
    } catch (e) { /* ignore */ }
    return G.addColorStop.call(this, offset, colour);
  });
  function colourAlpha(style) {
    if (style === "transparent") return 0;
    if (style.charCodeAt(0) === 35) {
      if (style.length === 9) return parseInt(style.slice(7), 16) / 255;
      if (style.length === 5) return parseInt(style.slice(4), 16) / 15;
      return 1;
    }
    const i = style.lastIndexOf(",");
    if ((style.startsWith("rgba") || style.startsWith("hsla")) && i > 0) return parseFloat(style.slice(i + 1));
    const slash = style.lastIndexOf("/");
    if (slash > 0 && style.endsWith(")")) {  // rgb(0 0 0 / 50%)
      const v = parseFloat(style.slice(slash + 1));
      return style.slice(slash).includes("%") ? v / 100 : v;
    }
    return 1;
  }
  for (const name of ["fillText", "strokeText"]) {
    const orig = C2D[name];
    defineValue(C2D, name, function (text, ...rest) {
      try {
        const key = String(text).slice(0, 200);
        let rec = S.texts.get(key);
        if (rec) { rec.last = S.now; rec.count++; } else if (S.texts.size < 500) {
          rec = { first: S.now, last: S.now, count: 1 };
          S.texts.set(key, rec);
        }
        if (rec) {  // where it was drawn (its centre, canvas px): a drawn "Play" button can be clicked
          const m = N.getTransform.call(this);
          const x = Number(rest[0]) || 0, y = Number(rest[1]) || 0;
          const w = key.length * (parseFloat(this.font) || 10) * 0.5;
          const al = this.textAlign;
          const cx = al === "center" ? x : (al === "right" || al === "end") ? x - w / 2 : x + w / 2;
          const cy = this.textBaseline === "top" ? y + 5 : this.textBaseline === "middle" ? y : y - 5;
          rec.cv = this.canvas; rec.x = m.a * cx + m.c * cy + m.e; rec.y = m.b * cx + m.d * cy + m.f;
        }
      } catch (e) { /* ignore */ }
      return orig.call(this, text, ...rest);
    });
  }
  // An arc is recorded when its path is filled or stroked (the colour is often set after arc()),
  // with how opaque it was drawn: faint trails and glows are not balls. A flat ellipse (a shadow
  // on the floor) is not a ball either.
  function recordCircle(ctx, x, y, rx, ry, a0, a1) {
    try {
      const sweep = Math.abs(a1 - a0);
      if (!(sweep >= Math.PI) || S.pending.length > 200) return;
      if (Math.min(rx, ry) < 0.5 * Math.max(rx, ry)) return;
      const m = N.getTransform.call(ctx);
      const scale = Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      S.pending.push([ctx.canvas, m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f,
        Math.max(rx, ry) * scale]);
    } catch (e) { /* ignore */ }
  }
  function styleAlpha(style) {
    if (typeof style === "string") return colourAlpha(style);
    const rec = style && gradStops.get(style);
    return rec ? rec.edgeAlpha : 1;  // a gradient: as opaque as its outer edge; a pattern: opaque
  }
  // What colour a ball is drawn in (for telling balls apart): the style, a gradient's stops.
  function styleKey(style) {
    if (typeof style === "string") return style.slice(0, 40);
    const rec = style && gradStops.get(style);
    return rec ? rec.first.slice(0, 80) : "pattern";
  }
  function commitCircles(ctx, style) {
    if (!S.pending.length) return;
    try {
      const alpha = ctx.globalAlpha * styleAlpha(style);
      const key = styleKey(style);
      for (const c of S.pending) {
        if (c.length === 4 && c[0] === ctx.canvas && S.circles.length < 2000) {
          c.push(alpha, key);
          S.circles.push(c);
        }
      }
    } catch (e) { /* ignore */ }
  }
  // A round sprite (a ball image drawn square) is a ball as much as an arc is.
  defineValue(C2D, "drawImage", function drawImage(img, ...a) {
    try {
      let dx, dy, dw, dh;
      if (a.length >= 8) { dx = a[4]; dy = a[5]; dw = a[6]; dh = a[7]; }
      else if (a.length >= 4) { dx = a[0]; dy = a[1]; dw = a[2]; dh = a[3]; }
      else { dx = a[0]; dy = a[1]; dw = img && (img.naturalWidth || img.width); dh = img && (img.naturalHeight || img.height); }
      dw = Math.abs(Number(dw)); dh = Math.abs(Number(dh));
      const cw = this.canvas.width, ch = this.canvas.height;
      if (dw >= 3 && Math.abs(dw - dh) <= 0.15 * Math.max(dw, dh) && dw < 0.4 * Math.min(cw, ch)
          && S.circles.length < 2000) {
        const m = N.getTransform.call(this);
        const x = Number(dx) + dw / 2, y = Number(dy) + dh / 2;
        const scale = Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
        const src = img && typeof img.src === "string" ? img.src.slice(-40) : "image";
        S.circles.push([this.canvas, m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f, dw / 2 * scale,
          this.globalAlpha, "img:" + src]);
      }
    } catch (e) { /* ignore */ }
    return N.drawImage.call(this, img, ...a);
  });
  for (const [name, arity] of [["arc", 3], ["ellipse", 4]]) {
    const orig = C2D[name];
    defineValue(C2D, name, function (...a) {
      if (arity === 3) recordCircle(this, a[0], a[1], a[2], a[2], a[3], a[4]);
      else recordCircle(this, a[0], a[1], a[2], a[3], a[5], a[6]);
      return orig.apply(this, a);
    });
  }
  const beginPath = C2D.beginPath;
  defineValue(C2D, "beginPath", function () { S.pending = []; return beginPath.call(this); });
  for (const [name, prop] of [["fill", "fillStyle"], ["stroke", "strokeStyle"]]) {
    const orig = C2D[name];
    defineValue(C2D, name, function (...a) {
      if (!(a[0] instanceof Path2D)) commitCircles(this, this[prop]);
      return orig.apply(this, a);
    });
  }
  // WebGL canvases keep their drawing buffer so a capture between frames is not blank.
  defineValue(HTMLCanvasElement.prototype, "getContext", function getContext(kind, opts) {
    if (typeof kind === "string" && kind.indexOf("webgl") === 0) {
      opts = Object.assign({}, opts || {}, { preserveDrawingBuffer: true });
    }
    return N.getContext.call(this, kind, opts);
  });

  // ---- capture ---------------------------------------------------------------------------------
  // A person sees a canvas that is laid out inside the viewport and not hidden by itself or an
  // ancestor (an offscreen buffer canvas, or one under an opacity-0 parent, is not the game).
  function shown(el, r) {
    const vw = window.innerWidth || 800, vh = window.innerHeight || 600;
    if (r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh) return false;
    if (el.checkVisibility) return el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    const st = N.getComputedStyle(el);
    return !(st.display === "none" || st.visibility === "hidden" || Number(st.opacity) === 0);
  }
  function visibleCanvases() {
    const out = [];
    for (const c of N.querySelectorAll.call(document, "canvas")) {
      const r = N.getRect.call(c);
      if (r.width < 8 || r.height < 8 || c.width < 8 || c.height < 8) continue;
      if (!shown(c, r)) continue;
      out.push({ c, r });
    }
    return out;
  }
  let small = null;
  let canvasCache = null;  // the visible canvases, looked up once per run() (layout is costly)
  // Capture the largest visible canvas (layered canvases composed in document order) downscaled
  // to capWidth; returns metadata and the raw RGB bytes (compressed later, per batch).
  // Pages without a canvas are captured as a raster of their element boxes (background colours,
  // rounded boxes, images, text) drawn into the small canvas: fast enough to capture inside the
  // stepping evaluate, and what moves on screen moves in it.
  const bgImages = new Map();  // background-image url -> an <img> of ours (the page loaded it already)
  function bgImage(css) {
    // url("...") as computed style writes it (quotes inside escaped), or url(...) unquoted
    let i = css.indexOf("url(");
    if (i < 0) return null;
    i += 4;
    let url = "";
    const q = css[i];
    if (q === '"' || q === "'") {
      for (let k = i + 1; k < css.length && css[k] !== q; k++) {
        if (css[k] === "\\" && k + 1 < css.length) k++;
        url += css[k];
      }
    } else {
      const end = css.indexOf(")", i);
      url = css.slice(i, end < 0 ? css.length : end).trim();
    }
    if (!url) return null;
    let img = bgImages.get(url);
    if (img === undefined && bgImages.size < 50) {
      img = N.createElement.call(document, "img");
      G.setAttribute.call(img, "src", url);
      bgImages.set(url, img);
    }
    return img || null;
  }
  function rasterDom(sctx, w, h) {
    const vw = window.innerWidth || 800, vh = window.innerHeight || 600;
    const sx = w / vw, sy = h / vh;
    const bodyBg = N.getComputedStyle(document.body || document.documentElement).backgroundColor;
    const rootBg = N.getComputedStyle(document.documentElement).backgroundColor;
    sctx.fillStyle = "#fff"; sctx.fillRect(0, 0, w, h);
    for (const bg of [rootBg, bodyBg]) {
      if (bg && bg !== "rgba(0, 0, 0, 0)" && bg !== "transparent") { sctx.fillStyle = bg; sctx.fillRect(0, 0, w, h); }
    }
    const all = N.querySelectorAll.call(document, "body *");
    for (let i = 0; i < all.length && i < 3000; i++) {
      const el = all[i];
      const tag = el.tagName;
      if (tag === "SCRIPT" || tag === "STYLE" || tag === "TEMPLATE" || tag === "HEAD") continue;
      const r = N.getRect.call(el);
      if (r.width <= 0 || r.height <= 0 || r.right < 0 || r.bottom < 0 || r.left > vw || r.top > vh) continue;
      const st = N.getComputedStyle(el);
      if (st.visibility === "hidden" || Number(st.opacity) === 0) continue;
      const x = r.left * sx, y = r.top * sy, bw = r.width * sx, bh = r.height * sy;
      if (el instanceof SVGElement) {  // SVG shapes: their fill, as an ellipse or a box
        const fill = st.fill;
        if (tag !== "svg" && tag !== "g" && fill && fill !== "none" && fill.startsWith("rgb")) {
          sctx.fillStyle = fill;
          if (tag === "circle" || tag === "ellipse") {
            N.beginPath.call(sctx);
            N.ellipse.call(sctx, x + bw / 2, y + bh / 2, bw / 2, bh / 2, 0, 0, Math.PI * 2);
            N.fill.call(sctx);
          } else {
            sctx.fillRect(x, y, bw, bh);
          }
        }
        if (tag !== "text" && tag !== "tspan") continue;
      }
      const bg = st.backgroundColor;
      if (bg && bg !== "rgba(0, 0, 0, 0)" && bg !== "transparent") {
        sctx.fillStyle = bg;
        const rad = parseFloat(st.borderTopLeftRadius) || 0;
        if (rad * 2 >= Math.min(r.width, r.height) * 0.9) {
          N.beginPath.call(sctx);
          N.ellipse.call(sctx, x + bw / 2, y + bh / 2, bw / 2, bh / 2, 0, 0, Math.PI * 2);
          N.fill.call(sctx);
        } else {
          sctx.fillRect(x, y, bw, bh);
        }
      }
      const bgi = st.backgroundImage;
      if (bgi && bgi.indexOf("url(") >= 0) {  // a sprite drawn as a background image (a DOM bird)
        const img = bgImage(bgi);
        if (img && img.complete && img.naturalWidth > 0) {
          try { N.drawImage.call(sctx, img, x, y, bw, bh); } catch (e) { /* not drawable */ }
        }
      }
      const bwid = parseFloat(st.borderTopWidth) || 0;
      if (bwid > 0 && st.borderTopStyle !== "none") {
        sctx.strokeStyle = st.borderTopColor; sctx.lineWidth = Math.max(0.5, bwid * sx);
        sctx.strokeRect(x, y, bw, bh);
      }
      if (tag === "IMG" || tag === "CANVAS" || tag === "VIDEO") {
        try { N.drawImage.call(sctx, el, x, y, bw, bh); } catch (e) { /* not drawable */ }
        continue;
      }
      for (const node of el.childNodes) {
        if (node.nodeType !== 3) continue;
        const text = node.textContent.trim();
        if (!text) continue;
        const size = (parseFloat(st.fontSize) || 16) * sy;
        sctx.fillStyle = st.color;
        sctx.font = `${st.fontWeight} ${Math.max(1, size)}px ${st.fontFamily}`;
        sctx.textBaseline = "top";
        N.fillText.call(sctx, text, x, y + Math.max(0, (bh - size) / 2), bw + 1);
      }
    }
  }
  function captureRaw() {
    const list = canvasCache || visibleCanvases();
    let main = list[0] || null;
    for (const it of list) if (it.r.width * it.r.height > main.r.width * main.r.height) main = it;
    if (!small) small = N.createElement.call(document, "canvas");
    let w, h;
    if (main === null) {
      w = S.capWidth; h = Math.max(8, Math.round(w * (window.innerHeight || 600) / (window.innerWidth || 800)));
    } else {
      w = Math.max(8, Math.min(S.capWidth, Math.round(main.r.width)));
      h = Math.max(8, Math.round(w * main.r.height / main.r.width));
    }
    if (small.width !== w || small.height !== h) { small.width = w; small.height = h; }
    const sctx = N.getContext.call(small, "2d", { willReadFrequently: true });
    if (main === null) {
      rasterDom(sctx, w, h);
    } else {
      sctx.fillStyle = "#fff";
      sctx.fillRect(0, 0, w, h);
      const sx = w / main.r.width, sy = h / main.r.height;
      for (const it of list) {  // layered canvases are composed in document order
        const dx = (it.r.left - main.r.left) * sx, dy = (it.r.top - main.r.top) * sy;
        if (dx >= w || dy >= h || dx + it.r.width * sx <= 0 || dy + it.r.height * sy <= 0) continue;
        try { N.drawImage.call(sctx, it.c, dx, dy, it.r.width * sx, it.r.height * sy); } catch (e) { /* tainted */ }
      }
    }
    // RGBA as read (Python drops the alpha bytes at C speed: a per-pixel JS loop is slow in a
    // fresh renderer whose JIT is cold).
    const rgb = new Uint8Array(N.getImageData.call(sctx, 0, 0, w, h).data.buffer);
    if (main === null) {
      return { meta: { w, h, circles: [], canvas: null, dom: true,
        rect: [0, 0, window.innerWidth || 800, window.innerHeight || 600] }, rgb };
    }
    const circles = [];
    for (const [cv, x, y, r, a] of S.lastCircles) if (cv === main.c && a >= FAINT) circles.push([x, y, r]);
    return {
      meta: { w, h, circles, canvas: [main.c.width, main.c.height],
        rect: [main.r.left, main.r.top, main.r.width, main.r.height] },
      rgb,
    };
  }
  function toBase64(bytes) {
    const parts = [];
    for (let i = 0; i < bytes.length; i += 8192) {
      parts.push(N.fromCharCode.apply(null, bytes.subarray(i, i + 8192)));
    }
    return N.btoa(parts.join(""));
  }
  // Deflate a batch of raw captures natively; Python inflates with zlib.
  async function pack(raws) {
    let total = 0;
    for (const r of raws) total += r.length;
    const all = new Uint8Array(total);
    let o = 0;
    for (const r of raws) { all.set(r, o); o += r.length; }
    const stream = new N.Blob([all]).stream().pipeThrough(new N.CompressionStream("deflate"));
    const packed = new Uint8Array(await new N.Response(stream).arrayBuffer());
    return toBase64(packed);
  }
  async function capture() {
    const c = captureRaw();
    c.meta.data = await pack([c.rgb]);
    return c.meta;
  }

  // ---- ball tracking: the visible canvas that draws the most circles, else round DOM elements ----
  function pickTrackCanvas() {
    const list = visibleCanvases();
    let best = null, bestN = 0, big = null;
    for (const it of list) {
      let n = 0;
      for (const c of S.lastCircles) if (c[0] === it.c && c[4] >= FAINT) n++;
      if (n > bestN) { best = it.c; bestN = n; }
      if (big === null || it.r.width * it.r.height > big.r.width * big.r.height) big = it;
    }
    if (best) return best;
    if (big) return null;  // a canvas that has drawn no circle yet: look again next frame
    return findDomBalls();
  }
  // Round elements (border-radius of half their size, SVG circles and ellipses) that a person
  // sees as balls; their arena is the element they are positioned in (an <svg>, a box, else the
  // viewport). Looked up once; their boxes are read every frame.
  function findDomBalls() {
    const els = [];
    const all = N.querySelectorAll.call(document, "body *");
    for (let i = 0; i < all.length && i < 3000; i++) {
      const el = all[i];
      const tag = el.tagName.toLowerCase();
      const r = N.getRect.call(el);
      if (r.width < 3 || r.height < 3 || r.width > 300 || Math.abs(r.width - r.height) > 0.5 * r.width) continue;
      if (tag === "circle" || tag === "ellipse") { els.push(el); continue; }
      if (el instanceof SVGElement) continue;
      const st = N.getComputedStyle(el);
      const rad = parseFloat(st.borderTopLeftRadius) || 0;
      const pct = st.borderTopLeftRadius.endsWith("%") ? rad / 100 * r.width : rad;
      if (pct * 2 >= 0.9 * Math.min(r.width, r.height) && (st.position === "absolute" || st.position === "fixed"
          || st.transform !== "none" || st.position === "relative")) els.push(el);
    }
    if (!els.length) return null;
    const first = els[0];
    let arena = first instanceof SVGElement ? first.ownerSVGElement : first.offsetParent;
    if (arena === document.body || arena === document.documentElement) arena = null;
    const cols = els.map((el) => {
      const st = N.getComputedStyle(el);
      return (el instanceof SVGElement ? st.fill : st.backgroundColor + " " + st.backgroundImage).slice(0, 60);
    });
    return { dom: true, els, arena, cols };
  }
  function arenaRect(t) {
    if (t.arena) {  // inside its border: where a ball can be seen
      const r = N.getRect.call(t.arena), el = t.arena;
      if (!(el.clientWidth > 0)) return r;
      return { left: r.left + el.clientLeft, top: r.top + el.clientTop, width: el.clientWidth, height: el.clientHeight };
    }
    return { left: 0, top: 0, width: window.innerWidth || 800, height: window.innerHeight || 600 };
  }
  function domCircles(t, out) {
    const a = arenaRect(t);
    for (const el of t.els) {
      if (!el.isConnected) continue;
      const r = N.getRect.call(el);
      if (r.width <= 0) continue;
      out.push([r.left + r.width / 2 - a.left, r.top + r.height / 2 - a.top, Math.max(r.width, r.height) / 2]);
    }
  }
  function trackSize(t) {
    if (!t.dom) return [t.width, t.height];
    const a = arenaRect(t);
    return [Math.round(a.width), Math.round(a.height)];
  }

  // ---- bodies: what a person takes for balls, logged every `every` frames for the ball probes ----
  // Every opaque circle drawn (a ball, its highlight, its outline): which of them are balls is
  // decided from how they move (Python: a highlight rides on its ball). A circle drawn twice at
  // the same place (fill, then stroke) is logged once.
  const B = { every: 0, target: undefined, log: [], colours: [], ids: new Map(), rescan: 0 };
  function colourId(key) {
    let id = B.ids.get(key);
    if (id === undefined && B.colours.length < 200) { id = B.colours.length; B.colours.push(key); B.ids.set(key, id); }
    return id === undefined ? -1 : id;
  }
  function dedupe(cs) {
    const out = [];
    for (let i = 0; i < cs.length && out.length < 400; i++) {
      const c = cs[i];
      const x = G.round(c[0] * 10) / 10, y = G.round(c[1] * 10) / 10, r = G.round(c[2] * 10) / 10;
      let dup = false;
      for (let k = out.length - 1; k >= 0 && k >= out.length - 3; k--) {
        const o = out[k];
        if (o[0] === x && o[1] === y && o[2] === r) { dup = true; break; }
      }
      if (!dup) out.push([x, y, r, c[3]]);
    }
    return out;
  }
  function logBodies() {
    const t = B.target;
    if (t === undefined || t === null || (t.dom && ++B.rescan % 30 === 0) || (t.nodeType && !t.isConnected)) {
      B.target = pickTrackCanvas();
    }
    const cs = [];
    let size = null;
    if (B.target && B.target.dom) {
      const a = arenaRect(B.target);
      size = [G.round(a.width), G.round(a.height)];
      for (let k = 0; k < B.target.els.length; k++) {
        const el = B.target.els[k];
        if (!el.isConnected) continue;
        const r = N.getRect.call(el);
        if (r.width <= 0) continue;
        cs.push([r.left + r.width / 2 - a.left, r.top + r.height / 2 - a.top, Math.max(r.width, r.height) / 2,
          colourId(B.target.cols[k])]);
      }
    } else if (B.target) {
      size = [B.target.width, B.target.height];
      const src = S.circles.length ? S.circles : (S.frame - S.lastCircleFrame <= 6 ? S.lastCircles : []);
      for (const [cv, x, y, r, a, key] of src) if (cv === B.target && a >= FAINT) cs.push([x, y, r, colourId(key || "")]);
    }
    if (B.log.length < 20000) B.log.push([S.frame, dedupe(cs), size]);
  }

  // ---- stepping --------------------------------------------------------------------------------
  let channel = null, wake = null;  // one channel for every yield (creating one costs more)
  function yieldTask() {
    if (channel === null) {
      channel = new N.MessageChannel();
      channel.port1.onmessage = () => { const w = wake; wake = null; if (w) w(); };
    }
    return new N.Promise((resolve) => { wake = resolve; channel.port2.postMessage(0); });
  }
  function frameTime(n) { return n * 1000 / S.fps; }
  // CSS animations and transitions (and element.animate()) follow the virtual clock too: every
  // frame each running one is set to its virtual age (it keeps running, so readers that wait for
  // running animations still see it), so a fade-in shows after a virtual second and a blinking
  // hint blinks alike in every run of the same script. One the page paused is left alone.
  const anims = new G.WeakMap();  // Animation -> virtual time it started at (ms)
  function stepAnimations() {
    if (!G.getAnimations || !G.animTime) return;
    let list;
    try { list = G.getAnimations.call(document); } catch (e) { return; }
    for (let i = 0; i < list.length && i < 500; i++) {
      const a = list[i];
      try {
        if (G.animState.get.call(a) !== "running") continue;
        let start = anims.get(a);
        if (start === undefined) {
          start = S.now - (Number(G.animTime.get.call(a)) || 0);
          anims.set(a, start);
        }
        G.animTime.set.call(a, S.now - start);
      } catch (e) { /* an animation the page replaced or cancelled */ }
    }
  }
  async function stepFrame() {
    S.frame++;
    const ft = frameTime(S.frame);
    S.circles = [];
    if (runTimers(ft) > 0) await null;  // let promise continuations of timers run first
    if (S.now < ft) S.now = ft;
    const due = Array.from(S.rafs.entries());
    S.rafs.clear();
    for (const [, cb] of due) invoke(cb, window, [ft]);
    stepAnimations();
    await yieldTask();
    if (S.circles.length) { S.lastCircles = S.circles; S.lastCircleFrame = S.frame; }
    if (B.every > 0 && S.frame % B.every === 0) { try { logBodies(); } catch (e) { /* ignore */ } }
  }

  const api = {
    // The harness calls every method through here: one JSON string is far cheaper for
    // Playwright to carry than a structured value.
    async call(method, args) {
      const result = await api[method](...args);
      return N.stringify(result === undefined ? null : result);
    },
    // Run frames up to `toFrame`; capture when a frame reaches capBase + k * capMs (k >= 1).
    async run(toFrame, capBase, capMs, capIndex, expectId, track) {
      if (expectId && expectId !== S.id) return { stale: true };
      const out = [], raws = [], tracks = [];
      let trackCanvas = null;
      S.stepping = true;
      canvasCache = null;
      try {
        while (S.frame < toFrame) {
          await stepFrame();
          if (track) {  // circles drawn on the canvas that draws them, every frame (cheap: no pixels)
            if (trackCanvas === null) trackCanvas = pickTrackCanvas() || undefined;  // once per run()
            const cs = [];
            if (trackCanvas && trackCanvas.dom) {
              domCircles(trackCanvas, cs);
            } else if (trackCanvas) {
              for (const [cv, x, y, r, a] of S.lastCircles) if (cv === trackCanvas && a >= FAINT) cs.push([x, y, r]);
            }
            tracks.push([S.frame, cs]);
          }
          if (capMs > 0 && frameTime(S.frame) >= capBase + capIndex * capMs - 1e-6) {
            capIndex++;
            if (canvasCache === null) canvasCache = visibleCanvases();
            const c = captureRaw();
            c.meta.frame = S.frame; out.push(c.meta); raws.push(c.rgb);
          }
        }
      } finally { S.stepping = false; canvasCache = null; }
      const data = raws.length ? await pack(raws) : "";
      return { frame: S.frame, now: S.now, captures: out, data, capIndex, dialogs: S.dialogs.slice(), tracks,
        trackSize: trackCanvas ? trackSize(trackCanvas) : null };
    },
    capture,
    hasCanvas() { return visibleCanvases().length > 0; },
    // Log the bodies (see logBodies) every `every` frames from now on (0: stop).
    bodyTrack(every) { B.every = every | 0; B.log = []; B.target = undefined; return true; },
    // The bodies logged since the last call: {log: [[frame, [[x, y, r, colourId]...], [w, h]]...], colours}.
    bodies() { const log = B.log; B.log = []; return { log, colours: B.colours.slice() }; },
    // A person scrolls the game into view: the largest canvas (else the largest element with a
    // drawn background) when it does not fit in the viewport where it is.
    reveal() {
      const vw = window.innerWidth || 800, vh = window.innerHeight || 600;
      let best = null, area = 0;
      for (const c of N.querySelectorAll.call(document, "canvas")) {
        const r = N.getRect.call(c);
        if (r.width < 50 || r.height < 50 || r.width * r.height <= area) continue;
        best = c; area = r.width * r.height;
      }
      if (!best) return false;
      const r = N.getRect.call(best);
      if (r.top >= 0 && r.left >= 0 && r.bottom <= vh + 1 && r.right <= vw + 1) return false;
      if (r.top < 0 && r.bottom > vh) return false;  // taller than the window: it is in view
      G.scrollIntoView.call(best, { block: r.height > vh ? "start" : "center", inline: "nearest" });
      return true;
    },
    // The largest visible canvas's box in CSS px (the viewport when there is none).
    mainRect() {
      const list = visibleCanvases();
      let main = list[0] || null;
      for (const it of list) if (it.r.width * it.r.height > main.r.width * main.r.height) main = it;
      if (main === null) return { rect: [0, 0, window.innerWidth, window.innerHeight], canvas: false };
      return { rect: [main.r.left, main.r.top, main.r.width, main.r.height], canvas: true };
    },
    // After a navigation the new document's clock starts at 0: move it to the session's frame.
    // `fps` and `capWidth` are the session's (a pooled context serves sessions at any rate).
    sync(frame, fps, capWidth) {
      if (fps > 0) S.fps = fps;
      if (capWidth > 0) S.capWidth = capWidth;
      if (S.frame < frame) {
        const shift = frameTime(frame) - S.now;
        S.frame = frame;
        if (shift > 0) {
          S.now += shift;
          for (const t of S.timers.values()) t.due += shift;
        }
      }
      return S.id;
    },
    state() {
      return {
        id: S.id, frame: S.frame, now: S.now, dialogs: S.dialogs.slice(), dialogCount: S.dialogCount,
        opened: S.opened.slice(), pendingTimers: S.timers.size, pendingRafs: S.rafs.size,
      };
    },
    texts() {
      const out = [];
      for (const [text, r] of S.texts) out.push([text, r.first, r.last, r.count]);
      return out;
    },
    // Where to click for a control whose text matches `pattern` (a Start, Play again, Restart
    // button): a visible element (buttons and links first, the smallest box), else canvas text
    // drawn in the last half second. [x, y, what] in viewport px, or null.
    findTarget(pattern) {
      const re = new RegExp(pattern, "i");
      const vw = window.innerWidth || 800, vh = window.innerHeight || 600;
      let best = null, bestScore = Infinity;
      const all = N.querySelectorAll.call(document, "body *");
      for (let i = 0; i < all.length && i < 3000; i++) {
        const el = all[i];
        const tag = el.tagName;
        if (tag === "SCRIPT" || tag === "STYLE") continue;
        let text = "";
        if (tag === "INPUT") text = el.value || "";
        else for (const node of el.childNodes) if (node.nodeType === 3) text += node.textContent;
        text = (text.trim() || (el.getAttribute("aria-label") || "")).slice(0, 80);
        if (!text || !re.test(text)) continue;
        let target = el;  // text inside a button's <span>: click the button
        const up = el.closest && el.closest("button,a,[role=button],input");
        if (up) target = up;
        const r = N.getRect.call(target);
        if (r.width <= 0 || r.height <= 0 || !shown(target, r)) continue;
        const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
        if (cx < 0 || cy < 0 || cx > vw || cy > vh) continue;
        const clickable = up || el.onclick || el.getAttribute("onclick") || N.getComputedStyle(el).cursor === "pointer";
        const score = (clickable ? 0 : 1e7) + r.width * r.height;
        if (score < bestScore) { best = [cx, cy, text]; bestScore = score; }
      }
      if (best) return best;
      for (const [text, r] of S.texts) {
        if (!r.cv || r.last < S.now - 500 || !re.test(text) || !r.cv.isConnected) continue;
        const b = N.getRect.call(r.cv);
        if (b.width <= 0 || !shown(r.cv, b)) continue;
        return [b.left + r.x * b.width / r.cv.width, b.top + r.y * b.height / r.cv.height, text];
      }
      return null;
    },
    // Called by the harness on its own blank page (no artefact code) before the page is reused:
    // what the browser-side clear of the origin's data leaves, the tab's session storage and
    // window.name, and this document's hand-over of the clock to the next one.
    wipe() {
      S.noSave = true;
      try { window.sessionStorage.clear(); } catch (e) { /* ignore */ }
      try { window.name = ""; } catch (e) { /* ignore */ }
      return true;
    },
    domText() {
      try { return document.body ? document.body.innerText.slice(0, 20000) : ""; } catch (e) { return ""; }
    },
  };
  Object.defineProperty(window, "__agentbenchClock", { value: api, enumerable: false, configurable: false });
})();
