// A part of the harness's view (see _view.js): captures of canvases and the DOM.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
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
    // Painted in the order z-index says (a positioned element's, inherited by what it holds; document
    // order among equals): a bird with z-index 2 shows over the pipes added after it, as on screen.
    const zOf = new Map(), order = [];
    for (let i = 0; i < all.length && i < 3000; i++) {
      const el = all[i], st = N.getComputedStyle(el);
      let z = zOf.get(el.parentElement) || 0;
      if (st.position !== "static" && st.zIndex !== "auto") z = parseInt(st.zIndex, 10) || 0;
      zOf.set(el, z);
      order.push([z, i, el]);
    }
    order.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [, , el] of order) {
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
      } else if (bgi && bgi.indexOf("gradient(") >= 0) {  // a gradient (a CSS pipe): the mean of its colours
        let r = 0, g = 0, b = 0, n = 0;
        for (const c of bgi.match(/rgba?\([^)]*\)/g) || []) {
          const v = c.slice(c.indexOf("(") + 1, -1).split(",").map(Number);
          if (v.length > 3 && !(v[3] > 0)) continue;
          r += v[0]; g += v[1]; b += v[2]; n++;
        }
        if (n) { sctx.fillStyle = `rgb(${Math.round(r / n)}, ${Math.round(g / n)}, ${Math.round(b / n)})`; sctx.fillRect(x, y, bw, bh); }
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

