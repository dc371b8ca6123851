// A part of the harness's view (see _view.js): ball tracking and the bodies log.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
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
  // sees as balls; their arena is the box they are all shown in (arenaOf). Looked up once (again
  // every 30 logs); their boxes are read every frame.
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
    const cols = els.map((el) => {
      const st = N.getComputedStyle(el);
      return (el instanceof SVGElement ? st.fill : st.backgroundColor + " " + st.backgroundImage).slice(0, 200);
    });
    return { dom: true, els, arena: arenaOf(els), cols };
  }
  // The stage a person sees the balls in: the nearest box that holds every ball (their nearest
  // common ancestor, else the first above it that positions or clips what it holds), an <svg>
  // for SVG circles; null (the viewport) when that is the page itself. A box that holds one ball
  // of several (a lane that carries it sideways) is part of the ball, not the stage.
  function arenaOf(els) {
    let box = els[0].parentElement;
    for (let k = 1; k < els.length && box; k++) {
      while (box && !box.contains(els[k])) box = box.parentElement;
    }
    for (; box && box !== document.body && box !== document.documentElement; box = box.parentElement) {
      if (box instanceof SVGSVGElement) return box;
      if (box instanceof SVGElement) continue;  // a group: the <svg> above it
      const st = N.getComputedStyle(box);
      if (st.position !== "static" || st.overflowX !== "visible" || st.overflowY !== "visible") return box;
    }
    return null;
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
  // the same place (fill, then stroke) is logged once, in both colours (a black outline on every
  // ball does not make them one colour).
  const B = { every: 0, target: undefined, log: [], colours: [], ids: new Map(), rescan: 0 };
  function colourId(key) {
    let id = B.ids.get(key);
    if (id === undefined && B.colours.length < 200) { id = B.colours.length; B.colours.push(key); B.ids.set(key, id); }
    return id === undefined ? -1 : id;
  }
  function dedupe(cs) {  // [x, y, r, colour key] -> [x, y, r, colour id]
    const out = [];
    for (let i = 0; i < cs.length && out.length < 400; i++) {
      const c = cs[i];
      const x = Math.round(c[0] * 10) / 10, y = Math.round(c[1] * 10) / 10, r = Math.round(c[2] * 10) / 10;
      let dup = false;
      for (let k = out.length - 1; k >= 0 && k >= out.length - 3; k--) {
        const o = out[k];
        if (o[0] === x && o[1] === y && o[2] === r) {
          if (o[3] !== c[3] && o[3].length < 300 && !o[3].split(" & ").includes(c[3])) o[3] += " & " + c[3];
          dup = true;
          break;
        }
      }
      if (!dup) out.push([x, y, r, c[3]]);
    }
    for (const o of out) o[3] = colourId(o[3]);
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
          B.target.cols[k]]);
      }
    } else if (B.target) {
      size = [B.target.width, B.target.height];
      const src = age <= 6 ? S.lastCircles : [];
      for (const [cv, x, y, r, a, key] of src) if (cv === B.target && a >= FAINT) cs.push([x, y, r, key || ""]);
    }
    if (B.log.length < 20000) B.log.push([frame, dedupe(cs), size]);
  }

