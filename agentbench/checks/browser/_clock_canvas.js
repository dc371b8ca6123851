// A part of the virtual clock (see _clock.js): canvas instrumentation (text and circles drawn).
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
  // ---- canvas instrumentation: text and circles drawn (what a person would read and see) --------------
  const C2D = CanvasRenderingContext2D.prototype;
  // Gradient stops, read back by styleAlpha/styleKey: a glow fades to transparent at its edge, a
  // shaded ball does not.
  const gradStops = new N.WeakMap();
  define(CanvasGradient.prototype, "addColorStop", { addColorStop(offset, colour) {
    try {
      const rec = call(N.wmGet, gradStops, this) || { first: "", edge: -1, edgeAlpha: 1, n: 0 };
      if (rec.n++ < 4) rec.first += (rec.first ? "/" : "") + call(N.strSlice, str(colour), 0, 24);
      const at = apply(N.Number, undefined, [offset]);
      if (at >= rec.edge) { rec.edge = at; rec.edgeAlpha = colourAlpha(str(colour)); }
      call(N.wmSet, gradStops, this, rec);
    } catch (e) { /* ignore */ }
    return call(N.addColorStop, this, offset, colour);
  } }.addColorStop, true);
  function colourAlpha(style) {
    if (style === "transparent") return 0;
    if (call(N.charCodeAt, style, 0) === 35) {
      if (style.length === 9) return call(N.parseInt, undefined, call(N.strSlice, style, 7), 16) / 255;
      if (style.length === 5) return call(N.parseInt, undefined, call(N.strSlice, style, 4), 16) / 15;
      return 1;
    }
    const i = call(N.lastIndexOf, style, ",");
    if ((call(N.startsWith, style, "rgba") || call(N.startsWith, style, "hsla")) && i > 0) {
      return call(N.parseFloat, undefined, call(N.strSlice, style, i + 1));
    }
    const slash = call(N.lastIndexOf, style, "/");
    if (slash > 0 && call(N.endsWith, style, ")")) {  // rgb(0 0 0 / 50%)
      const v = call(N.parseFloat, undefined, call(N.strSlice, style, slash + 1));
      return call(N.includes, call(N.strSlice, style, slash), "%") ? v / 100 : v;
    }
    return 1;
  }
  const hooks = {
    fillText: C2D.fillText, strokeText: C2D.strokeText, arc: C2D.arc, ellipse: C2D.ellipse,
    beginPath: C2D.beginPath, fill: C2D.fill, stroke: C2D.stroke,
  };
  function recordText(ctx, text, x, y) {
    try {
      const key = call(N.strSlice, str(text), 0, 200);
      let rec = textIndex[key];
      const at = S.originAbs + nowGet();
      if (rec) { rec.last = at; rec.count++; } else if (S.textList.length < 500) {
        rec = { text: key, first: at, last: at, count: 1, cv: null, x: 0, y: 0 };
        textIndex[key] = rec;
        push(S.textList, rec);
      }
      if (rec) {  // where it was drawn (its centre, canvas px): a drawn "Play" button can be clicked
        const m = call(N.getTransform, ctx);
        x = apply(N.Number, undefined, [x]) || 0; y = apply(N.Number, undefined, [y]) || 0;
        const w = key.length * (call(N.parseFloat, undefined, call(N.font, ctx)) || 10) * 0.5;
        const al = call(N.textAlign, ctx), bl = call(N.textBaseline, ctx);
        const cx = al === "center" ? x : (al === "right" || al === "end") ? x - w / 2 : x + w / 2;
        const cy = bl === "top" ? y + 5 : bl === "middle" ? y : y - 5;
        rec.cv = call(N.canvasOf, ctx); rec.x = m.a * cx + m.c * cy + m.e; rec.y = m.b * cx + m.d * cy + m.f;
      }
    } catch (e) { /* ignore */ }
  }
  define(C2D, "fillText", { fillText(text, x, y, maxWidth) {
    recordText(this, text, x, y);
    return apply(hooks.fillText, this, arguments.length > 3 ? [text, x, y, maxWidth] : [text, x, y]);
  } }.fillText, true);
  define(C2D, "strokeText", { strokeText(text, x, y, maxWidth) {
    recordText(this, text, x, y);
    return apply(hooks.strokeText, this, arguments.length > 3 ? [text, x, y, maxWidth] : [text, x, y]);
  } }.strokeText, true);
  // An arc is recorded when its path is filled or stroked (the colour is often set after arc()),
  // with how opaque it was drawn: faint trails and glows are not balls. A flat ellipse (a shadow
  // on the floor) is not a ball either.
  function recordCircle(ctx, x, y, rx, ry, a0, a1) {
    try {
      const sweep = abs(a1 - a0);
      if (!(sweep >= PI) || S.pending.length > 200) return;
      if (mathMin(rx, ry) < 0.5 * mathMax(rx, ry)) return;
      const m = call(N.getTransform, ctx);
      const scale = sqrt(abs(m.a * m.d - m.b * m.c));
      push(S.pending, [call(N.canvasOf, ctx), m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f,
        mathMax(rx, ry) * scale]);
    } catch (e) { /* ignore */ }
  }
  function styleAlpha(style) {
    if (typeof style === "string") return colourAlpha(style);
    const rec = style && call(N.wmGet, gradStops, style);
    return rec ? rec.edgeAlpha : 1;  // a gradient: as opaque as its outer edge; a pattern: opaque
  }
  // What colour a ball is drawn in (for telling balls apart): the style, a gradient's stops.
  function styleKey(style) {
    if (typeof style === "string") return call(N.strSlice, style, 0, 40);
    const rec = style && call(N.wmGet, gradStops, style);
    return rec ? call(N.strSlice, rec.first, 0, 80) : "pattern";
  }
  function commitCircles(ctx, style) {
    if (!S.pending.length) return;
    try {
      const alpha = call(N.globalAlpha, ctx) * styleAlpha(style);
      const key = styleKey(style);
      const cv = call(N.canvasOf, ctx);
      for (let i = 0; i < S.pending.length; i++) {
        const c = S.pending[i];
        if (c.length === 4 && c[0] === cv && S.circles.length < 2000) {
          push(c, alpha);
          push(c, key);
          push(S.circles, c);
        }
      }
    } catch (e) { /* ignore */ }
  }
  // A round sprite (a ball image drawn square) is a ball as much as an arc is.
  define(C2D, "drawImage", { drawImage(img, a0, a1, a2, a3, a4, a5, a6, a7) {
    const n = arguments.length - 1;
    try {
      let dx, dy, dw, dh;
      if (n >= 8) { dx = a4; dy = a5; dw = a6; dh = a7; }
      else if (n >= 4) { dx = a0; dy = a1; dw = a2; dh = a3; }
      else { dx = a0; dy = a1; dw = img && (img.naturalWidth || img.width); dh = img && (img.naturalHeight || img.height); }
      dw = abs(apply(N.Number, undefined, [dw])); dh = abs(apply(N.Number, undefined, [dh]));
      const cv = call(N.canvasOf, this);
      const cw = call(N.canvasWidth, cv), ch = call(N.canvasHeight, cv);
      if (dw >= 3 && abs(dw - dh) <= 0.15 * mathMax(dw, dh) && dw < 0.4 * mathMin(cw, ch) && S.circles.length < 2000) {
        const m = call(N.getTransform, this);
        const x = apply(N.Number, undefined, [dx]) + dw / 2, y = apply(N.Number, undefined, [dy]) + dh / 2;
        const scale = sqrt(abs(m.a * m.d - m.b * m.c));
        const src = img && typeof img.src === "string" ? call(N.strSlice, img.src, -40) : "image";
        push(S.circles, [cv, m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f, dw / 2 * scale,
          call(N.globalAlpha, this), "img:" + src]);
      }
    } catch (e) { /* ignore */ }
    return apply(N.drawImage, this, arguments);
  } }.drawImage, true);
  define(C2D, "arc", { arc(x, y, r, a0, a1, ccw) {
    recordCircle(this, x, y, r, r, a0, a1);
    return apply(hooks.arc, this, arguments);
  } }.arc, true);
  define(C2D, "ellipse", { ellipse(x, y, rx, ry, rot, a0, a1, ccw) {
    recordCircle(this, x, y, rx, ry, a0, a1);
    return apply(hooks.ellipse, this, arguments);
  } }.ellipse, true);
  define(C2D, "beginPath", { beginPath() { S.pending = []; return apply(hooks.beginPath, this, []); } }.beginPath, true);
  // A Path2D keeps its circles (path px); filling or stroking it draws them under the context's
  // transform then (one unit circle filled under a per-ball scale is as much a ball as an arc).
  // A path copied with new Path2D(path) or built from SVG path text is not followed.
  const P2D = N.Path2D.prototype;
  const pathHooks = { arc: P2D.arc, ellipse: P2D.ellipse, addPath: P2D.addPath };
  const pathCircles = new N.WeakMap();
  function pathCircle(path, x, y, rx, ry, a0, a1) {
    try {
      if (!(abs(a1 - a0) >= PI)) return;
      x = apply(N.Number, undefined, [x]); y = apply(N.Number, undefined, [y]);
      rx = apply(N.Number, undefined, [rx]); ry = apply(N.Number, undefined, [ry]);
      if (!(mathMin(rx, ry) >= 0.5 * mathMax(rx, ry))) return;
      let list = call(N.wmGet, pathCircles, path);
      if (!list) { list = []; call(N.wmSet, pathCircles, path, list); }
      if (list.length < 50) push(list, [x, y, mathMax(rx, ry)]);
    } catch (e) { /* ignore */ }
  }
  function commitPath(ctx, path, style) {
    try {
      const list = call(N.wmGet, pathCircles, path);
      if (!list) return;
      const m = call(N.getTransform, ctx);
      const scale = sqrt(abs(m.a * m.d - m.b * m.c));
      const alpha = call(N.globalAlpha, ctx) * styleAlpha(style), key = styleKey(style), cv = call(N.canvasOf, ctx);
      for (let i = 0; i < list.length && S.circles.length < 2000; i++) {
        const c = list[i];
        push(S.circles, [cv, m.a * c[0] + m.c * c[1] + m.e, m.b * c[0] + m.d * c[1] + m.f, c[2] * scale, alpha, key]);
      }
    } catch (e) { /* ignore */ }
  }
  define(P2D, "arc", { arc(x, y, r, a0, a1, ccw) {
    pathCircle(this, x, y, r, r, a0, a1);
    return apply(pathHooks.arc, this, arguments);
  } }.arc, true);
  define(P2D, "ellipse", { ellipse(x, y, rx, ry, rot, a0, a1, ccw) {
    pathCircle(this, x, y, rx, ry, a0, a1);
    return apply(pathHooks.ellipse, this, arguments);
  } }.ellipse, true);
  define(P2D, "addPath", { addPath(path, transform) {
    const out = apply(pathHooks.addPath, this, arguments);  // throws as the browser's for a wrong path
    try {
      const list = transform === undefined ? call(N.wmGet, pathCircles, path) : undefined;
      for (let i = 0; list && i < list.length; i++) pathCircle(this, list[i][0], list[i][1], list[i][2], list[i][2], 0, 2 * PI);
    } catch (e) { /* ignore */ }
    return out;
  } }.addPath, true);
  define(C2D, "fill", { fill(a, b) {
    if (a instanceof N.Path2D) commitPath(this, a, call(N.fillStyle, this));
    else commitCircles(this, call(N.fillStyle, this));
    return apply(hooks.fill, this, arguments);
  } }.fill, true);
  define(C2D, "stroke", { stroke(a) {
    if (a instanceof N.Path2D) commitPath(this, a, call(N.strokeStyle, this));
    else commitCircles(this, call(N.strokeStyle, this));
    return apply(hooks.stroke, this, arguments);
  } }.stroke, true);
  // WebGL canvases keep their drawing buffer so a capture between frames is not blank.
  define(HTMLCanvasElement.prototype, "getContext", { getContext(kind, opts) {
    if (typeof kind === "string" && call(N.indexOf, kind, "webgl") === 0) {
      opts = apply(N.assign, undefined, [{}, opts || {}, { preserveDrawingBuffer: true }]);
    }
    return call(N.getContext, this, kind, opts);
  } }.getContext, true);

  // Canvases are named to the harness by their place among the document's canvases (elements do
  // not cross from this world to the harness's): -1 for one that is not in the document.
  function canvasIndex(cv, list) {
    for (let i = 0; i < list.length; i++) if (list[i] === cv) return i;
    return -1;
  }
  function circlesOut(circles) {
    const list = call(N.byTag, document, "canvas"), out = [];
    for (let i = 0; i < circles.length; i++) {
      const c = circles[i];
      push(out, [canvasIndex(c[0], list), c[1], c[2], c[3], c[4], c[5]]);
    }
    return out;
  }

