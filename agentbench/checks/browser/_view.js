// The harness's view of the page: runs in an isolated world (CDP Page.createIsolatedWorld), where
// page code cannot see it or replace the built-ins it uses; it shares only the DOM with the page.
// Python puts the session's {channel, capWidth} where __AB_VIEW_CONFIG__ stands.
//
// It steps the page's virtual clock (_clock.js, in the main world) one frame at a time over a
// window event named by the per-session secret `channel`, yields a real task between frames,
// and reads what a person sees: canvases (pixels), the DOM (boxes, styles, text), and what the
// clock recorded (canvas text and circles, dialogs). Readers of the probes (_find.js and the
// like) are installed here too, with `lib`.
globalThis.__abView = ((cfg) => {
  "use strict";
  const N = {
    Promise: window.Promise,
    createElement: Document.prototype.createElement,
    fillText: CanvasRenderingContext2D.prototype.fillText,
    beginPath: CanvasRenderingContext2D.prototype.beginPath,
    ellipse: CanvasRenderingContext2D.prototype.ellipse,
    fill: CanvasRenderingContext2D.prototype.fill,
    drawImage: CanvasRenderingContext2D.prototype.drawImage,
    getImageData: CanvasRenderingContext2D.prototype.getImageData,
    getContext: HTMLCanvasElement.prototype.getContext,
    getRect: Element.prototype.getBoundingClientRect,
    querySelectorAll: Document.prototype.querySelectorAll,
    getComputedStyle: window.getComputedStyle.bind(window),
    btoa: window.btoa.bind(window),
    fromCharCode: String.fromCharCode,
    Blob: window.Blob,
    Response: window.Response,
    CompressionStream: window.CompressionStream,
    MessageChannel: window.MessageChannel,
  };
  const S = { capWidth: cfg.capWidth || 160, lastCircles: [], frame: 0 };
  const FAINT = 0.35;  // circles drawn fainter than this (trails, glows) are not balls

  // ---- the clock, over the channel -----------------------------------------------------------------------
  let box;
  window.addEventListener(cfg.channel + ":r", (ev) => { box = ev.detail; });
  const NO_CLOCK = { noClock: true };
  function clock(method, ...args) {
    box = undefined;
    window.dispatchEvent(new CustomEvent(cfg.channel, { detail: JSON.stringify([method, args]) }));
    if (box === undefined) return NO_CLOCK;  // no clock in this document (not the artefact's page)
    const out = JSON.parse(box);
    if ("err" in out) {
      const e = new Error(out.err);
      e.tampered = out.tampered;
      throw e;
    }
    return out.ok;
  }
  // Circles from the clock name their canvas by its index among the document's canvases.
  function resolveCircles(list) {
    const canvases = document.getElementsByTagName("canvas");
    const out = [];
    for (const [i, x, y, r, a, key] of list || []) if (i >= 0 && canvases[i]) out.push([canvases[i], x, y, r, a, key]);
    return out;
  }

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
      img.setAttribute("src", url);
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
      const x = Math.round(c[0] * 10) / 10, y = Math.round(c[1] * 10) / 10, r = Math.round(c[2] * 10) / 10;
      let dup = false;
      for (let k = out.length - 1; k >= 0 && k >= out.length - 3; k--) {
        const o = out[k];
        if (o[0] === x && o[1] === y && o[2] === r) { dup = true; break; }
      }
      if (!dup) out.push([x, y, r, c[3]]);
    }
    return out;
  }
  function logBodies(frame, age) {
    const t = B.target;
    if (t === undefined || t === null || (t.dom && ++B.rescan % 30 === 0) || (t.nodeType && !t.isConnected)) {
      B.target = pickTrackCanvas();
    }
    const cs = [];
    let size = null;
    if (B.target && B.target.dom) {
      const a = arenaRect(B.target);
      size = [Math.round(a.width), Math.round(a.height)];
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
      const src = age <= 6 ? S.lastCircles : [];
      for (const [cv, x, y, r, a, key] of src) if (cv === B.target && a >= FAINT) cs.push([x, y, r, colourId(key || "")]);
    }
    if (B.log.length < 20000) B.log.push([frame, dedupe(cs), size]);
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
  let fps = 60;
  function frameTime(n) { return n * 1000 / fps; }
  // CSS animations and transitions (and element.animate()) follow the virtual clock too: every
  // frame each running one is set to its virtual age (it keeps running, so readers that wait for
  // running animations still see it), so a fade-in shows after a virtual second and a blinking
  // hint blinks alike in every run of the same script. One the page paused is left alone.
  const anims = new WeakMap();  // Animation -> virtual time it started at (ms)
  // document.getAnimations() leaves out those in shadow trees: open shadow roots are looked for
  // every 8th step (not every frame) and their animations stepped too.
  let shadowRoots = [], steps = 0;
  function findShadowRoots() {
    const out = [], stack = [document];
    while (stack.length && out.length < 200) {
      for (const el of stack.pop().querySelectorAll("*")) {
        if (el.shadowRoot) { out.push(el.shadowRoot); stack.push(el.shadowRoot); }
      }
    }
    return out;
  }
  function stepAnimations(now) {
    let list;
    try {
      if (steps++ % 8 === 0) shadowRoots = findShadowRoots();
      list = document.getAnimations();
      for (const r of shadowRoots) list = list.concat(r.getAnimations());
    } catch (e) { return; }
    for (let i = 0; i < list.length && i < 500; i++) {
      const a = list[i];
      try {
        if (a.playState !== "running") continue;
        let start = anims.get(a);
        if (start === undefined) {
          start = now - (Number(a.currentTime) || 0);
          anims.set(a, start);
        }
        a.currentTime = now - start;
      } catch (e) { /* an animation the page replaced or cancelled */ }
    }
  }

  const api = {
    // The harness calls every method through here: one JSON string is far cheaper to carry
    // than a structured value. A failure inside the clock says whether the page had replaced
    // built-ins (then the page broke its own world: a verdict, not a harness gap).
    async call(method, args) {
      try {
        const result = await api[method](...args);
        return JSON.stringify(result === undefined ? null : result);
      } catch (err) {
        return JSON.stringify({ harnessError: String(err && err.message), tampered: err.tampered || [] });
      }
    },
    // Run frames up to `toFrame`; capture when a frame reaches capBase + k * capMs (k >= 1).
    async run(toFrame, capBase, capMs, capIndex, expectId, track) {
      const out = [], raws = [], tracks = [];
      let trackCanvas = null;
      canvasCache = null;
      let frame = S.frame;
      try {
        while (frame < toFrame) {
          // A clip that plays must know its length before time goes on (its end is a timer): wait
          // for its metadata, a condition bounded by the clock (~2 s of real time in all per document).
          for (let spin = 0; spin < 300; spin++) {
            const pending = clock("mediaPending");
            if (typeof pending !== "number" || pending === 0) break;
            await new Promise((r) => setTimeout(r, 10));
          }
          const started = clock("frame", frame + 1, expectId);
          if (started === NO_CLOCK) return { noClock: true };
          if (started.stale) return { stale: true };
          frame = S.frame = frame + 1;
          if (started.ran > 0) {  // let promise continuations of timers run first
            await null;
            clock("rafs");
          }
          stepAnimations(frameTime(frame));
          await yieldTask();
          const due = capMs > 0 && frameTime(frame) >= capBase + capIndex * capMs - 1e-6;
          const logNow = B.every > 0 && frame % B.every === 0;
          let age = 0;
          if (track || due || logNow) {
            const c = clock("commit", true);
            S.lastCircles = resolveCircles(c[0]);
            age = c[1];
          }
          if (logNow) { try { logBodies(frame, age); } catch (e) { /* ignore */ } }
          if (track) {  // circles drawn on the canvas that draws them, every frame (cheap: no pixels)
            if (trackCanvas === null) trackCanvas = pickTrackCanvas() || undefined;  // once per run()
            const cs = [];
            if (trackCanvas && trackCanvas.dom) {
              domCircles(trackCanvas, cs);
            } else if (trackCanvas) {
              for (const [cv, x, y, r, a] of S.lastCircles) if (cv === trackCanvas && a >= FAINT) cs.push([x, y, r]);
            }
            tracks.push([frame, cs]);
          }
          if (due) {
            capIndex++;
            if (canvasCache === null) canvasCache = visibleCanvases();
            const c = captureRaw();
            c.meta.frame = frame; out.push(c.meta); raws.push(c.rgb);
          }
        }
      } finally { canvasCache = null; }
      const data = raws.length ? await pack(raws) : "";
      const state = clock("state");
      return { frame, now: frameTime(frame), captures: out, data, capIndex,
        dialogs: state === NO_CLOCK ? [] : state.dialogs, doc: state === NO_CLOCK ? null : state.id, tracks,
        trackSize: trackCanvas ? trackSize(trackCanvas) : null };
    },
    async capture() {
      const circles = clock("circles");
      S.lastCircles = circles === NO_CLOCK ? [] : resolveCircles(circles);
      return capture();
    },
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
      best.scrollIntoView({ block: r.height > vh ? "start" : "center", inline: "nearest" });
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
    // After a load: the new document's clock takes the session's frame and rate.
    sync(frame, rate, capWidth) {
      if (rate > 0) fps = rate;
      if (capWidth > 0) S.capWidth = capWidth;
      S.frame = frame;
      const id = clock("sync", frame, rate);
      return id === NO_CLOCK ? null : id;
    },
    state() {
      const st = clock("state");
      return st === NO_CLOCK ? null : st;
    },
    // Canvas text drawn so far: [text, first ms, last ms, times drawn].
    texts() {
      const t = clock("texts");
      return t === NO_CLOCK ? [] : t.map((r) => r.slice(0, 4));
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
        const clickable = up || el.getAttribute("onclick") || N.getComputedStyle(el).cursor === "pointer";
        const score = (clickable ? 0 : 1e7) + r.width * r.height;
        if (score < bestScore) { best = [cx, cy, text]; bestScore = score; }
      }
      if (best) return best;
      const texts = clock("texts");
      if (texts === NO_CLOCK) return null;
      const canvases = document.getElementsByTagName("canvas");
      const now = frameTime(S.frame);
      for (const [text, , last, , idx, x, y] of texts) {
        const cv = idx >= 0 ? canvases[idx] : null;
        if (!cv || last < now - 500 || !re.test(text)) continue;
        const b = N.getRect.call(cv);
        if (b.width <= 0 || !shown(cv, b)) continue;
        return [b.left + x * b.width / cv.width, b.top + y * b.height / cv.height, text];
      }
      return null;
    },
    // Called by the harness on its own blank page (no artefact code) before the page is reused:
    // what the browser-side clear of the origin's data leaves, the tab's session storage and name.
    wipe() {
      try { window.sessionStorage.clear(); } catch (e) { /* ignore */ }
      try { window.name = ""; } catch (e) { /* ignore */ }
      return true;
    },
    domText() {
      try { return document.body ? document.body.innerText.slice(0, 20000) : ""; } catch (e) { return ""; }
    },
  };

  // Readers of the probes, installed once per document: `source` is an expression whose value is
  // an object of functions; `read` calls one with a JSON-able argument.
  const libs = Object.create(null);
  return {
    call: api.call,
    lib(name, source) { if (!(name in libs)) libs[name] = (0, eval)(source); return true; },
    has(name) { return name in libs; },
    read(name, fn, arg) { return libs[name][fn](arg); },
  };
})(__AB_VIEW_CONFIG__);
