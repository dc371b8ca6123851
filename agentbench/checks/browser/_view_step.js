// A part of the harness's view (see _view.js): stepping the clock, the api the harness calls, reader libraries.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
  // ---- stepping --------------------------------------------------------------------------------
  // A real task between frames. scheduler.postTask's callback is no event: the page's promise
  // continuations run after it with window.event undefined, as after a browser's own frame. After a
  // MessageChannel's message they would read our message event there (a tell), so it is the fallback.
  let channel = null, wake = null;  // one channel for every yield (creating one costs more)
  const noop = () => {};
  function yieldTask() {
    if (N.postTask) return N.postTask(noop);
    if (channel === null) {
      channel = new N.MessageChannel();
      channel.port1.onmessage = () => { const w = wake; wake = null; if (w) w(); };
    }
    return new N.Promise((resolve) => { wake = resolve; channel.port2.postMessage(0); });
  }
  let fps = 60;
  function frameTime(n) { return n * 1000 / fps; }
  // CSS animations and transitions (and element.animate()) follow the virtual clock too: the
  // browser's document timelines stand still (rate 0, set over CDP by _harness.py), and every frame
  // each running animation is set to its virtual age (it keeps running, so readers that wait for
  // running animations still see it), so a fade-in shows after a virtual second, a blinking hint
  // blinks alike in every run of the same script, and a capture taken after a frame shows that
  // frame however long the machine took to take it. One the page paused is left alone.
  const anims = new WeakMap();  // Animation -> {start: virtual time it started at (ms), timing}
  // document.getAnimations() leaves out those in shadow trees and in iframes: open shadow roots and
  // same-origin iframes (whose timelines stand still too) are looked for every 8th step (not every
  // frame) and their animations stepped too; an iframe's document is read anew each step (it may
  // have navigated). One of another origin is out of this world's reach.
  let shadowRoots = [], frames = [], steps = 0;
  function findRoots() {
    const roots = [], found = [], stack = [document];
    while (stack.length && roots.length + found.length < 200) {
      for (const el of stack.pop().querySelectorAll("*")) {
        if (el.shadowRoot) { roots.push(el.shadowRoot); stack.push(el.shadowRoot); }
        if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
          found.push(el);
          let doc = null;
          try { doc = el.contentDocument; } catch (e) { /* another origin */ }
          if (doc) stack.push(doc);
        }
      }
    }
    shadowRoots = roots; frames = found;
  }
  // Where an animation's time `t` falls: before its delay (-1), in iteration i (i >= 0), past its
  // end (-2). A change is a point where the browser sends an event (animationstart, animationiteration,
  // animationend, transitionend, finish). Read from its timing, kept from when it was first seen (no
  // style flush per frame).
  function phase(timing, t) {
    if (!(t >= timing.delay)) return -1;
    const local = t - timing.delay;
    if (local >= timing.active) return -2;
    return timing.duration > 0 ? Math.floor(local / timing.duration) : 0;
  }
  function stepAnimations(now) {
    let list, due = false;
    try {
      if (steps++ % 8 === 0) findRoots();
      list = document.getAnimations();
      for (const r of shadowRoots) list = list.concat(r.getAnimations());
      for (const f of frames) {
        let doc = null;
        try { doc = f.contentDocument; } catch (e) { /* another origin */ }
        if (doc && doc !== document) list = list.concat(doc.getAnimations());
      }
    } catch (e) { return false; }
    for (let i = 0; i < list.length && i < 500; i++) {
      const a = list[i];
      try {
        if (a.playState !== "running") continue;
        let seen = anims.get(a);
        if (seen === undefined) {
          // Virtual age 0 in the frame it is first seen in: it was made in that frame (or, at load,
          // before the first). Its timeline stands still, so it has not moved since it was made.
          const c = a.effect ? a.effect.getComputedTiming() : null;
          seen = { start: now, timing: c && { delay: Number(c.delay) || 0, active: Number(c.activeDuration),
            duration: Number(c.duration) || 0 } };
          anims.set(a, seen);
        }
        const was = Number(a.currentTime), t = now - seen.start;
        a.currentTime = t;
        if (!due && seen.timing && phase(seen.timing, was) !== phase(seen.timing, t)) due = true;
      } catch (e) { /* an animation the page replaced or cancelled */ }
    }
    return due;
  }
  // The browser dispatches animation events (animationstart/iteration/end, transitionend, finish)
  // as it renders a frame. A frame in which an animation crossed such a point waits for that
  // rendering, so their handlers run at that frame's virtual time, as in a browser that plays it:
  // a row removed on transitionend is gone, and its save timer set, before time goes on or anything
  // is read, however busy the machine (before, they ran whenever the browser next rendered, often
  // after the harness had read the page or played on). At most one wait per 1/60 virtual s (a
  // crossing in between waits for the next such frame, or the end of the run): a page of
  // animations that iterate every frame costs at most 60 renderings per virtual second. A browser
  // that renders nothing for RENDER_WAIT_MS goes on without it (a hung renderer is the step limit's).
  const RENDER_WAIT_MS = 500, RENDER_GAP_MS = 1000 / 60;
  let eventsDue = false, renderedAt = -Infinity;
  function rendering() {
    return new N.Promise((resolve) => {
      let done = false;
      const end = () => { if (!done) { done = true; resolve(); } };
      N.raf(end);
      N.setTimeout(end, RENDER_WAIT_MS);
    });
  }
  async function dispatchAnimationEvents(now, last) {
    if (!eventsDue || (!last && now - renderedAt < RENDER_GAP_MS - 1e-6)) return;
    eventsDue = false;
    renderedAt = now;
    await rendering();
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
          let st = clock("frame", frame + 1, expectId);
          if (st === NO_CLOCK) return { noClock: true };
          if (st && st.stale) return { stale: true };
          frame = S.frame = frame + 1;
          // The frame's calls, one at a time: the clock arms one, we dispatch it from this world
          // (so the page's stack shows its callback alone); after its timers, promise
          // continuations run before its animation frame callbacks.
          for (let guard = 0; (st === 1 || st === 2) && guard < 1000000; guard++) {
            if (st === 1) window.dispatchEvent(new Event(ARMED));
            else await null;
            st = clock("next");
          }
          if (stepAnimations(frameTime(frame))) eventsDue = true;
          await dispatchAnimationEvents(frameTime(frame), frame >= toFrame);
          if (globalThis.__abWorkers.any) await globalThis.__abWorkers.step();  // _workers_view.js
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
