// A part of the virtual clock (see _clock.js): timers, animation frames and document.timeline.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
  // ---- timers (due times in document time) ---------------------------------------------------------------
  function addTimer(cb, delay, args, repeat) {
    delay = apply(N.Number, undefined, [delay]) || 0;
    if (delay < 0) delay = 0;
    const nest = S.nest + 1;
    if (nest > 5 && delay < 4) delay = 4;  // HTML: nested timeouts are clamped to 4 ms
    if (repeat && delay < 1) delay = 1;
    const id = S.nextTimer++;
    const t = { id, due: nowGet() + delay, fn: toFunction(cb), args, delay, repeat, nest, dead: false };
    heapPush(S.timers, t);
    S.timerById[id] = t;
    return id;
  }
  // S.timers is a binary heap ordered by (due, id): the timer due first is at its top, so a page
  // with hundreds of intervals (one per ball) does not scan them all for each timer it runs.
  // Cleared and fired timers are marked dead and dropped when they reach the top (or compacted).
  const before = (a, b) => a.due < b.due || (a.due === b.due && a.id < b.id);
  function heapPush(h, t) {
    let i = h.length;
    push(h, t);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!before(h[i], h[up])) break;
      const x = h[i]; h[i] = h[up]; h[up] = x;
      i = up;
    }
  }
  function heapPop(h) {
    const top = h[0], last = h[h.length - 1];
    h.length = h.length - 1;
    if (h.length) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        const x = h[i]; h[i] = h[m]; h[m] = x;
        i = m;
      }
    }
    return top;
  }
  function clearTimer(id) {
    const t = S.timerById[apply(N.Number, undefined, [id])];
    if (t) { t.dead = true; delete S.timerById[t.id]; }
  }
  function compactTimers() {
    const live = [];
    for (let i = 0; i < S.timers.length; i++) if (!S.timers[i].dead) heapPush(live, S.timers[i]);
    S.timers = live;
  }
  const rest = (list, from) => {
    const out = [];
    for (let i = from; i < list.length; i++) push(out, list[i]);
    return out;
  };
  define(window, "setTimeout", { setTimeout(cb, delay) { return addTimer(cb, delay, rest(arguments, 2), false); } }.setTimeout, true);
  define(window, "setInterval", { setInterval(cb, delay) { return addTimer(cb, delay, rest(arguments, 2), true); } }.setInterval, true);
  define(window, "clearTimeout", { clearTimeout(id) { clearTimer(id); } }.clearTimeout, true);
  define(window, "clearInterval", { clearInterval(id) { clearTimer(id); } }.clearInterval, true);
  define(window, "requestIdleCallback", { requestIdleCallback(cb) {
    return addTimer(() => cb({ didTimeout: false, timeRemaining: () => 10 }), 1, [], false);
  } }.requestIdleCallback, true);
  define(window, "cancelIdleCallback", { cancelIdleCallback(id) { clearTimer(id); } }.cancelIdleCallback, true);

  // This document's timer due first at or before `limit` (null when none).
  function pickTimer(limit) {
    const h = S.timers;
    while (h.length && h[0].dead) heapPop(h);
    return h.length && h[0].due <= limit ? h[0] : null;
  }
  // The call of a timer due now: [fn, this, args, after] (after: run once the callback returned).
  function timerCall(next) {
    if (next.due > nowGet()) nowSet(next.due);
    if (next.repeat) {
      let delay = next.delay;
      next.nest++;
      if (next.nest > 5 && delay < 4) delay = 4;
      heapPop(S.timers);  // next is the heap's top (pickTimer): it goes back in at its new due time
      next.due = mathMax(next.due + delay, nowGet() + 0.001);
      heapPush(S.timers, next);
    } else {
      next.dead = true;
      delete S.timerById[next.id];
    }
    const saved = S.nest;
    S.nest = next.nest;
    S.reads = 0;
    return [next.fn, window, next.args, () => { S.nest = saved; }];
  }
  // Linked iframes whose document is gone (removed, navigated) run nothing more.
  function pruneKids() {
    for (let i = kids.length - 1; i >= 0; i--) {
      let alive = false;
      try { alive = kids[i].alive(); } catch (e) { /* gone */ }
      if (!alive) { for (let j = i; j < kids.length - 1; j++) kids[j] = kids[j + 1]; kids.length--; }
    }
  }
  // When the first timer due at or before `limit` is due, here or in a linked iframe (Infinity: none).
  function firstDue(limit) {
    const t = pickTimer(limit);
    let due = t ? t.due : Infinity;
    for (let i = 0; i < kids.length; i++) { const d = kids[i].due(limit); if (d < due) due = d; }
    return due;
  }
  // The call of that timer (null when none is due).
  function firstCall(limit) {
    const next = pickTimer(limit);
    let due = next ? next.due : Infinity, kid = null;
    for (let i = 0; i < kids.length; i++) { const d = kids[i].due(limit); if (d < due) { due = d; kid = kids[i]; } }
    if (due === Infinity) return null;
    return kid ? kid.callOne(limit) : timerCall(next);
  }

  // ---- animation frames ----------------------------------------------------------------------------------
  function addRaf(cb) {
    const id = S.nextRaf++;
    const r = { id, cb, dead: false };
    push(S.rafs, r);
    S.rafById[id] = r;
    return id;
  }
  function cancelRaf(id) {
    const r = S.rafById[apply(N.Number, undefined, [id])];
    if (r) { r.dead = true; delete S.rafById[r.id]; }
  }
  // The webkit-prefixed ones are functions of their own in a browser, with their own names.
  define(window, "requestAnimationFrame", { requestAnimationFrame(cb) { return addRaf(cb); } }.requestAnimationFrame, true);
  define(window, "cancelAnimationFrame", { cancelAnimationFrame(id) { cancelRaf(id); } }.cancelAnimationFrame, true);
  define(window, "webkitRequestAnimationFrame", { webkitRequestAnimationFrame(cb) {
    return addRaf(cb);
  } }.webkitRequestAnimationFrame, true);
  define(window, "webkitCancelAnimationFrame", { webkitCancelAnimationFrame(id) {
    cancelRaf(id);
  } }.webkitCancelAnimationFrame, true);
  // The animation frame callbacks of frame time `ft`: this document's, then its linked iframes'
  // (those there when the frame began; HTML: the frame's documents are listed first), as
  // [record, ft, document] to call in turn (a record cancelled meanwhile is skipped).
  function rafCalls(ft, out) {
    if (nowGet() < ft) nowSet(ft);
    S.frameTime = ft;
    timeMark(ft);
    if (kids.length) pruneKids();
    const inner = kids.length ? rest(kids, 0) : kids;
    const due = S.rafs;
    S.rafs = [];
    S.rafById = Object.create(null);
    for (let i = 0; i < due.length; i++) push(out, [due[i], ft, beginRaf]);
    for (let i = 0; i < inner.length; i++) inner[i].rafCalls(ft, out);
    return out;
  }
  function beginRaf() { S.reads = 0; }

  // ---- one call at a time, with nothing of ours on the page's stack --------------------------------
  // A browser calls a callback from native code: a stack taken inside it shows the callback alone.
  // So the clock arms each call (the callback bound to its this and arguments, a listener, once, of
  // a secret event on the window) and the harness's view dispatches that event from its isolated
  // world, whose frames a page's stack never shows. An exception thrown is the page's uncaught
  // error, reported by the browser as for any callback. A frame is played as steps: 1 = a call is
  // armed, 2 = the frame's timers ran (their promise continuations run before its animation frame
  // callbacks), 0 = done.
  const ARMED = cfg.channel + ":c", ONCE = { once: true };
  const F = { phase: 0, limit: 0, ran: 0, rafs: null, i: 0, after: null };
  function armCall(fn, self, args) {
    newTask();
    if (typeof fn !== "function") {  // as a browser would (setTimeout(null) throws when due)
      report(new TypeError("The callback provided as parameter 1 is not a function."));
      return false;
    }
    // Reflect.apply bound to the call: the event it is dispatched with is left out of the
    // callback's arguments, and Reflect.apply shows no frame of its own.
    call(N.addEventListener, window, ARMED, call(N.bind, apply, undefined, fn, self, args), ONCE);
    return true;
  }
  function startFrame(limit) {
    F.phase = 1; F.limit = limit; F.ran = 0; F.rafs = null; F.i = 0; F.after = null;
    if (kids.length) pruneKids();
    return step();
  }
  function step() {
    if (F.after) { const after = F.after; F.after = null; after(); }
    for (let guard = 0; F.phase === 1 && guard < 100000; guard++) {
      const c = firstCall(F.limit);
      if (c === null) break;
      F.ran++;
      F.after = c[3];
      if (armCall(c[0], c[1], c[2])) return 1;
      F.after(); F.after = null;
    }
    if (F.phase === 1) {
      if (S.timers.length > 64) compactTimers();
      F.phase = 2;
      if (F.ran > 0) return 2;
    }
    if (F.phase === 2) { F.rafs = rafCalls(frameRel(S.frame), []); F.i = 0; F.phase = 3; }
    while (F.phase === 3 && F.i < F.rafs.length) {
      const r = F.rafs[F.i++];
      if (r[0].dead) continue;
      r[2]();
      if (armCall(r[0].cb, window, [r[1]])) return 1;
    }
    F.phase = 0; F.rafs = null;
    return 0;
  }

  // document.timeline runs on this clock: its currentTime is the current animation frame's time.
  const docTimeline = (() => { try { return call(N.docTimeline, document); } catch (e) { return null; } })();
  if (N.timeline && N.timeline.get && docTimeline) {
    const realTime = N.timeline.get;
    const get = getDesc({ get currentTime() {
      const t = call(realTime, this);
      return this === docTimeline && t !== null ? S.frameTime : t;
    } }, "currentTime").get;
    native(get, "get currentTime");
    defineProperty(AnimationTimeline.prototype, "currentTime", {
      get, set: N.timeline.set, enumerable: N.timeline.enumerable, configurable: true });
  }

