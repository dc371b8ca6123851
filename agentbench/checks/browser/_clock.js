// The virtual clock: runs in the page's main world before any page code (registered per session
// over CDP with Page.addScriptToEvaluateOnNewDocument; Python puts the session's config where
// __AB_CONFIG__ stands: {fps, seed, epoch, startAbs, channel, confirm}).
//
// It replaces every clock a page can read or wait on (requestAnimationFrame, timers,
// performance.now, Date, Math.random) and records what a person would see drawn (canvas text and
// circles) and the dialogs the page opened. Frame n runs at virtual time n * 1000 / fps (computed,
// never accumulated), timers due before a frame run first, then its requestAnimationFrame
// callbacks; every callback is wrapped so an exception is reported (reportError -> CDP) and the
// clock keeps going.
//
// Nothing here is visible to the page: no globals, no storage, functions that read as native.
// The harness drives it from an isolated world (_view.js) over a window event whose name is a
// per-session secret; requests and replies are JSON strings. It uses only built-ins captured
// before page code ran and builds its replies with its own serializer, so a page that replaces
// its own built-ins (Array.from, JSON, Object.prototype.toJSON, Function.prototype.call) breaks
// itself, not the harness. Times handed to the page are the document's own (performance.now
// starts at 0 in a new document, as in a browser); times handed to the harness are the session's.
((cfg) => {
  "use strict";
  // ---- built-ins, captured before page code can touch them -----------------------------------------
  const apply = Reflect.apply, construct = Reflect.construct, defineProperty = Object.defineProperty;
  const getDesc = Object.getOwnPropertyDescriptor, objectKeys = Object.keys, isArray = Array.isArray;
  const parse = JSON.parse, stringify = JSON.stringify, floor = Math.floor, abs = Math.abs;
  const mathMax = Math.max, mathMin = Math.min, sqrt = Math.sqrt, imul = Math.imul, PI = Math.PI;
  const NDate = window.Date, NMath = Math;
  const getterOf = (obj, name) => { const d = getDesc(obj, name); return d ? d.get : undefined; };
  const N = {
    addEventListener: EventTarget.prototype.addEventListener,
    removeEventListener: EventTarget.prototype.removeEventListener,
    dispatchEvent: EventTarget.prototype.dispatchEvent,
    CustomEvent: window.CustomEvent,
    detail: getDesc(CustomEvent.prototype, "detail").get,
    reportError: window.reportError,
    Function: window.Function,
    fnToString: Function.prototype.toString,
    getTransform: CanvasRenderingContext2D.prototype.getTransform,
    getContext: HTMLCanvasElement.prototype.getContext,
    canvasOf: getDesc(CanvasRenderingContext2D.prototype, "canvas").get,
    globalAlpha: getDesc(CanvasRenderingContext2D.prototype, "globalAlpha").get,
    fillStyle: getDesc(CanvasRenderingContext2D.prototype, "fillStyle").get,
    strokeStyle: getDesc(CanvasRenderingContext2D.prototype, "strokeStyle").get,
    font: getDesc(CanvasRenderingContext2D.prototype, "font").get,
    textAlign: getDesc(CanvasRenderingContext2D.prototype, "textAlign").get,
    textBaseline: getDesc(CanvasRenderingContext2D.prototype, "textBaseline").get,
    byTag: Document.prototype.getElementsByTagName,
    isConnected: getDesc(Node.prototype, "isConnected").get,
    Path2D: window.Path2D,
    assign: Object.assign,
    strSlice: String.prototype.slice,
    charCodeAt: String.prototype.charCodeAt,
    lastIndexOf: String.prototype.lastIndexOf,
    startsWith: String.prototype.startsWith,
    indexOf: String.prototype.indexOf,
    parseFloat: window.parseFloat,
    parseInt: window.parseInt,
    String: window.String,
    Number: window.Number,
    WeakMap: window.WeakMap,
    wmGet: WeakMap.prototype.get,
    wmSet: WeakMap.prototype.set,
    wmHas: WeakMap.prototype.has,
    realRandom: Math.random,
    navEntries: Performance.prototype.getEntriesByType,
    play: HTMLMediaElement.prototype.play,
    then: Promise.prototype.then,
    Promise: window.Promise,
    resolve: Promise.resolve,
    addColorStop: CanvasGradient.prototype.addColorStop,
    drawImage: CanvasRenderingContext2D.prototype.drawImage,
    canvasWidth: getDesc(HTMLCanvasElement.prototype, "width").get,
    canvasHeight: getDesc(HTMLCanvasElement.prototype, "height").get,
    endsWith: String.prototype.endsWith,
    includes: String.prototype.includes,
    // Where a browser lacks one of these, what uses it is left out (caught), never the clock.
    timeline: typeof AnimationTimeline === "function" ? getDesc(AnimationTimeline.prototype, "currentTime") : undefined,
    docTimeline: getterOf(Document.prototype, "timeline"),
    closed: getterOf(window, "closed") || getterOf(Window.prototype, "closed"),
    docOf: getterOf(window, "document") || getterOf(Window.prototype, "document"),
  };
  const call = (fn, self, ...args) => apply(fn, self, args);  // rest parameters use no iterator
  const push = (arr, v) => { arr[arr.length] = v; };
  const str = (v) => apply(N.String, undefined, [v]);

  // Once per document: while the harness re-registers the clock (the new registration is added
  // before the old one is removed, so no document is ever made without one) a document may get
  // both. The second asks on the session's secret channel whether a clock already answers there.
  let answered = false;
  const heard = () => { answered = true; };
  call(N.addEventListener, window, cfg.channel + ":r", heard);
  call(N.dispatchEvent, window, new N.CustomEvent(cfg.channel, { detail: "[\"ping\",[]]" }));
  call(N.removeEventListener, window, cfg.channel + ":r", heard);
  if (answered) return;

  // ---- a document in an iframe of the page follows the page's clock ------------------------------------
  // An iframe's document (same origin) links to its parent's clock over the session's secret channel:
  // one registry of our functions for every realm (ours read through an iframe's
  // Function.prototype.toString still say [native code]), one time (its Date reads the page's; its
  // performance.now starts at 0 and runs with the page's) and its timers and animation frames run in
  // the page's frames, as in a browser. A document whose parent does not answer keeps a clock of its own.
  let up = null;
  try {
    const parent = window.parent;
    if (parent !== window) {
      const ask = { link: null };
      call(N.dispatchEvent, parent, new N.CustomEvent(cfg.channel + ":k", { detail: ask }));
      up = ask.link;
    }
  } catch (e) { up = null; }  // a parent of another origin
  const kids = [];  // the linked clocks of this document's iframes

  // ---- functions that read as native: name, length, no prototype, "[native code]" -------------------
  const nativeNames = up ? up.names : new N.WeakMap();
  const native = (fn, name) => { call(N.wmSet, nativeNames, fn, name); return fn; };
  const toStringHook = native({
    toString() {
      if (call(N.wmHas, nativeNames, this)) return "function " + call(N.wmGet, nativeNames, this) + "() { [native code] }";
      return apply(N.fnToString, this, []);
    },
  }.toString, "toString");
  // A replacement keeps the length of the function it replaces (setTimeout.length is 1, fillText's 3).
  const define = (obj, name, value, enumerable, like) => {
    native(value, name);
    const was = like || (getDesc(obj, name) || {}).value;
    if (typeof was === "function") defineProperty(value, "length", { value: was.length, configurable: true });
    defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: !!enumerable });
  };
  define(Function.prototype, "toString", toStringHook, false);

  // ---- state ---------------------------------------------------------------------------------------------
  const S = {
    id: str(floor(apply(N.realRandom, NMath, []) * 1e15)),
    fps: cfg.fps > 0 ? cfg.fps : 60,
    frame: 0,                 // the session's frame (the harness's count, across documents)
    now: 0,                   // this document's time, ms (what performance.now reads)
    offset: up ? up.rel() : 0,  // linked: the parent document's time at this document's time 0
    frameTime: 0,             // the time of the current animation frame (document.timeline's)
    originAbs: cfg.startAbs || 0,  // the session's time at this document's time 0
    originFrame: 0, originRel: 0,  // the session's frame and this document's time when it was synced
    synced: false,
    reads: 0,
    timers: [], timerById: Object.create(null), nextTimer: 1, nest: 0,
    rafs: [], rafById: Object.create(null), nextRaf: 1,
    dialogs: [], dialogCount: 0, opened: [],
    texts: new N.WeakMap(), textList: [],  // text -> record; records in first-drawn order
    circles: [], lastCircles: [],  // arcs drawn this frame / in the last frame that drew any
    lastCircleFrame: 0,
    pending: [],                   // arcs of the current path, recorded when it is filled or stroked
  };
  const textIndex = Object.create(null);
  const SPIN_READS = 10000;
  const frameAbs = (n) => n * 1000 / S.fps;        // the session's time of frame n
  // The document's time of frame n (computed from the frame count, so 60 Hz frames fall on exact
  // multiples of 1000 / 60 as in a fresh document).
  const frameRel = (n) => S.originRel + (n - S.originFrame) * 1000 / S.fps;

  // A busy-wait on performance.now/Date.now would never end on a frozen clock, so after SPIN_READS
  // reads inside one callback every read advances time by 1 us.
  function readNow() {
    if (++S.reads > SPIN_READS) nowSet(nowGet() + 0.001);
    return nowGet();
  }
  // This document's time; a linked one reads (and moves, only forward) its parent's.
  function nowGet() { return up ? up.rel() - S.offset : S.now; }
  function nowSet(v) {
    if (up) up.set(v + S.offset);
    else if (v > S.now) S.now = v;
  }

  // ---- seeded Math.random: 53-bit values like V8's, from two mulberry32 draws ------------------------
  // The first load of a check is deterministic (both refresh-rate runs see the same game); a
  // reload gets fresh randomness, as a person's reload would (ids made with Math.random must not repeat).
  let seed = (cfg.seed >>> 0) || 1;
  try {
    const nav = call(N.navEntries, performance, "navigation")[0];
    if (nav && nav.type !== "navigate") seed = (seed ^ floor(apply(N.realRandom, NMath, []) * 4294967295)) >>> 0 || 1;
  } catch (e) { /* keep the configured seed */ }
  function draw32() {
    seed = (seed + 0x6D2B79F5) >>> 0;
    let t = seed;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  define(NMath, "random", { random() { return ((draw32() >>> 5) * 67108864 + (draw32() >>> 6)) / 9007199254740992; } }.random);

  // ---- performance.now and Date -----------------------------------------------------------------------------
  define(Performance.prototype, "now", { now() { return readNow(); } }.now, true);
  const dateNow = () => (up ? up.date() : cfg.epoch + S.originAbs + readNow());
  // Seven parameters: Date.length is 7; own properties in the native order.
  function Date(year, monthIndex, day, hours, minutes, seconds, ms) {
    if (!new.target) return str(construct(NDate, [dateNow()]));
    if (arguments.length === 0) return construct(NDate, [dateNow()], new.target);
    return construct(NDate, arguments, new.target);
  }
  defineProperty(Date, "prototype", { value: NDate.prototype, writable: false, enumerable: false, configurable: false });
  define(Date, "now", { now() { return floor(dateNow()); } }.now, false, NDate.now);
  define(Date, "parse", NDate.parse);
  define(Date, "UTC", NDate.UTC);
  native(Date, "Date");
  defineProperty(NDate.prototype, "constructor", { value: Date, writable: true, configurable: true, enumerable: false });
  define(window, "Date", Date);

  // ---- callbacks ----------------------------------------------------------------------------------------------
  function report(err) {
    try { call(N.reportError, window, err); } catch (e) { /* reporting must never stop the clock */ }
  }
  function invoke(fn, self, args) {
    S.reads = 0;
    try { apply(fn, self, args); } catch (err) { report(err); }
  }
  function toFunction(cb) {
    if (typeof cb === "function") return cb;
    const code = str(cb);
    return () => call(N.Function, undefined, code)();
  }

  // ---- timers (due times in document time) ---------------------------------------------------------------
  function addTimer(cb, delay, args, repeat) {
    delay = apply(N.Number, undefined, [delay]) || 0;
    if (delay < 0) delay = 0;
    const nest = S.nest + 1;
    if (nest > 5 && delay < 4) delay = 4;  // HTML: nested timeouts are clamped to 4 ms
    if (repeat && delay < 1) delay = 1;
    const id = S.nextTimer++;
    const t = { id, due: nowGet() + delay, fn: toFunction(cb), args, delay, repeat, nest, dead: false };
    push(S.timers, t);
    S.timerById[id] = t;
    return id;
  }
  function clearTimer(id) {
    const t = S.timerById[apply(N.Number, undefined, [id])];
    if (t) { t.dead = true; delete S.timerById[t.id]; }
  }
  function compactTimers() {
    const live = [];
    for (let i = 0; i < S.timers.length; i++) if (!S.timers[i].dead) push(live, S.timers[i]);
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
    let next = null;
    for (let i = 0; i < S.timers.length; i++) {
      const t = S.timers[i];
      if (!t.dead && t.due <= limit && (next === null || t.due < next.due || (t.due === next.due && t.id < next.id))) {
        next = t;
      }
    }
    return next;
  }
  function runTimer(next) {
    if (next.due > nowGet()) nowSet(next.due);
    if (next.repeat) {
      let delay = next.delay;
      next.nest++;
      if (next.nest > 5 && delay < 4) delay = 4;
      next.due = mathMax(next.due + delay, nowGet() + 0.001);
    } else {
      next.dead = true;
      delete S.timerById[next.id];
    }
    const saved = S.nest;
    S.nest = next.nest;
    invoke(next.fn, window, next.args);
    S.nest = saved;
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
  // Run that timer; false when none is due.
  function runFirst(limit) {
    const next = pickTimer(limit);
    let due = next ? next.due : Infinity, kid = null;
    for (let i = 0; i < kids.length; i++) { const d = kids[i].due(limit); if (d < due) { due = d; kid = kids[i]; } }
    if (due === Infinity) return false;
    if (kid) kid.runOne(limit); else runTimer(next);
    return true;
  }
  // Run every timer due at or before `limit`, in due order, each at its own due time.
  function runTimers(limit) {
    let ran = 0;
    if (kids.length) pruneKids();
    for (let guard = 0; guard < 100000; guard++) {
      if (!runFirst(limit)) break;
      ran++;
    }
    if (S.timers.length > 64) compactTimers();
    return ran;
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
  // Run this document's animation frame callbacks at frame time `ft`, then its linked iframes'.
  // The iframes are those there when the frame began (HTML: the frame's documents are listed first).
  function runRafs(ft) {
    if (nowGet() < ft) nowSet(ft);
    S.frameTime = ft;
    if (kids.length) pruneKids();
    const inner = kids.length ? rest(kids, 0) : kids;
    const due = S.rafs;
    S.rafs = [];
    S.rafById = Object.create(null);
    for (let i = 0; i < due.length; i++) if (!due[i].dead) invoke(due[i].cb, window, [ft]);
    for (let i = 0; i < inner.length; i++) inner[i].rafs(ft);
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

  // ---- dialogs and popups: answered at once, recorded ---------------------------------------------------
  const dialog = (kind, answer) => function (message) {
    S.dialogCount++;
    if (S.dialogs.length < 50) push(S.dialogs, kind + ": " + call(N.strSlice, str(message === undefined ? "" : message), 0, 2000));
    return answer;
  };
  define(window, "alert", { alert(message) { return call(dialog("alert", undefined), this, message); } }.alert, true);
  define(window, "confirm", { confirm(message) { return call(dialog("confirm", !!cfg.confirm), this, message); } }.confirm, true);
  define(window, "prompt", { prompt(message) { return call(dialog("prompt", null), this, message); } }.prompt, true);
  define(window, "open", { open(url) {
    if (S.opened.length < 20) push(S.opened, call(N.strSlice, str(url), 0, 2000));
    return null;
  } }.open, true);

  // ---- sound: a person's browser plays it or stays silent, never shows an error ----------------------
  // Autoplay is allowed in the harness's Chromium; play() can still reject (a codec we lack, a
  // play() cut short by pause()). A person hears nothing and sees nothing, so the promise the page
  // gets always resolves and no rejection becomes a page error.
  //
  // Sound plays on the virtual clock: a clip played for d seconds ends d virtual seconds later (its
  // `ended` event runs as a timer at that time), whatever the machine's load. The element is never
  // played for real (the harness's Chromium is muted anyway); paused, ended and currentTime read the
  // virtual playback. Its length is the file's own: the harness waits (a condition, bounded) for the
  // metadata of a clip that plays before the next frame runs (see mediaPending).
  const MP = HTMLMediaElement.prototype;
  const M = {
    paused: getDesc(MP, "paused"), ended: getDesc(MP, "ended"), time: getDesc(MP, "currentTime"),
    duration: getterOf(MP, "duration"), loop: getterOf(MP, "loop"), ready: getterOf(MP, "readyState"),
    net: getterOf(MP, "networkState"), rate: getterOf(MP, "playbackRate"), error: getterOf(MP, "error"),
    pause: MP.pause, load: MP.load, Event: window.Event,
  };
  const plays = new N.WeakMap();  // element -> { playing, pos (s, when not playing), from, start, timer, ended }
  const playing = [];             // the records playing now
  const mediaEvent = (el, type) => invoke(() => call(N.dispatchEvent, el, new M.Event(type)), window, []);
  function recOf(el) {
    let rec = call(N.wmGet, plays, el);
    if (!rec) {
      rec = { el, playing: false, pos: call(M.time.get, el) || 0, from: 0, start: 0, timer: 0, ended: false };
      call(N.wmSet, plays, el, rec);
    }
    return rec;
  }
  function durationOf(el) {
    const d = call(M.duration, el);
    return typeof d === "number" && d === d ? d : NaN;  // NaN until the metadata is in
  }
  function rateOf(el) { const r = call(M.rate, el); return r > 0 ? r : 1; }
  function positionOf(rec) {
    if (!rec.playing) return rec.pos;
    const at = rec.from + (nowGet() - rec.start) / 1000 * rateOf(rec.el);
    const d = durationOf(rec.el);
    return d === d && at > d ? d : at;
  }
  function unarm(rec) { if (rec.timer) { clearTimer(rec.timer); rec.timer = 0; } }
  function stopPlaying(rec) {
    rec.pos = positionOf(rec);
    rec.playing = false;
    unarm(rec);
    for (let i = 0; i < playing.length; i++) if (playing[i] === rec) { playing[i] = playing[playing.length - 1]; playing.length--; break; }
  }
  // The clip's end as a timer at its due time (armed once its length is known).
  function arm(rec) {
    const d = durationOf(rec.el);
    if (!rec.playing || rec.timer || d !== d) return;
    const left = mathMax(0, (d - positionOf(rec)) / rateOf(rec.el) * 1000);
    rec.timer = addTimer(() => {
      rec.timer = 0;
      if (!rec.playing) return;
      if (call(M.loop, rec.el)) { rec.from = 0; rec.start = nowGet(); arm(rec); return; }
      stopPlaying(rec);
      rec.pos = d;
      rec.ended = true;
      mediaEvent(rec.el, "timeupdate");
      mediaEvent(rec.el, "pause");
      mediaEvent(rec.el, "ended");
    }, left, [], false);
  }
  define(MP, "play", { play() {
    const rec = recOf(this);
    if (!rec.playing) {
      const d = durationOf(this);
      if (rec.ended || (d === d && rec.pos >= d)) rec.pos = 0;
      rec.ended = false;
      rec.playing = true;
      rec.from = rec.pos;
      rec.start = nowGet();
      push(playing, rec);
      arm(rec);
      const el = this;
      call(N.then, call(N.resolve, N.Promise), () => { mediaEvent(el, "play"); mediaEvent(el, "playing"); });
    }
    return call(N.resolve, N.Promise);
  } }.play, true);
  define(MP, "pause", { pause() {
    const rec = call(N.wmGet, plays, this);
    if (rec && rec.playing) {
      stopPlaying(rec);
      const el = this;
      call(N.then, call(N.resolve, N.Promise), () => { mediaEvent(el, "timeupdate"); mediaEvent(el, "pause"); });
    }
    try { call(M.pause, this); } catch (e) { /* as the browser's */ }
  } }.pause, true);
  const accessor = (name, desc, get, set) => {
    native(get, "get " + name);
    if (set) native(set, "set " + name);
    defineProperty(MP, name, { get, set: set || desc.set, enumerable: desc.enumerable, configurable: true });
  };
  accessor("paused", M.paused, getDesc({ get paused() {
    const rec = call(N.wmGet, plays, this);
    return rec ? !rec.playing : call(M.paused.get, this);
  } }, "paused").get);
  accessor("ended", M.ended, getDesc({ get ended() {
    const rec = call(N.wmGet, plays, this);
    return rec ? rec.ended : call(M.ended.get, this);
  } }, "ended").get);
  const timeAccess = getDesc({
    get currentTime() {
      const rec = call(N.wmGet, plays, this);
      return rec ? positionOf(rec) : call(M.time.get, this);
    },
    set currentTime(v) {
      call(M.time.set, this, v);
      const rec = call(N.wmGet, plays, this);
      if (!rec) return;
      const t = apply(N.Number, undefined, [v]);
      rec.pos = rec.from = t === t && t > 0 ? t : 0;
      rec.start = nowGet();
      rec.ended = false;
      unarm(rec);
      arm(rec);
    },
  }, "currentTime");
  accessor("currentTime", M.time, timeAccess.get, timeAccess.set);
  // Clips that play with their length not yet known and still loading: the harness waits for them.
  // Each report of "still loading" buys the harness ~10 ms of real waiting: a clip is waited for at
  // most MEDIA_WAITS times and a document at most MEDIA_WAITS_ALL in all (~2 s, well inside the
  // harness's 5 s limit on one step), so a source that never loads (an empty MediaSource) costs a
  // moment once, not seconds every frame, and never makes the page look hung.
  const MEDIA_WAITS = 150, MEDIA_WAITS_ALL = 200;
  let mediaWaits = 0;
  function mediaPending() {
    let n = 0;
    for (let i = 0; i < playing.length; i++) {
      const rec = playing[i];
      if (durationOf(rec.el) === durationOf(rec.el)) { arm(rec); continue; }
      if (call(M.error, rec.el) || call(M.net, rec.el) === 3) continue;  // no source: never ends, as in a browser
      if ((rec.waits = (rec.waits || 0) + 1) > MEDIA_WAITS || ++mediaWaits > MEDIA_WAITS_ALL) continue;
      if (call(M.ready, rec.el) === 0 && call(M.net, rec.el) === 0) { try { call(M.load, rec.el); } catch (e) { /* */ } }
      n++;
    }
    return n;
  }

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
  define(C2D, "fill", { fill(a, b) {
    if (!(a instanceof N.Path2D)) commitCircles(this, call(N.fillStyle, this));
    return apply(hooks.fill, this, arguments);
  } }.fill, true);
  define(C2D, "stroke", { stroke(a) {
    if (!(a instanceof N.Path2D)) commitCircles(this, call(N.strokeStyle, this));
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

  // ---- stepping, driven by the harness one frame at a time ---------------------------------------------
  // frame(n): the circles of the frame before are committed, then frame n begins: timers due up to
  // its time run (the harness lets their promise continuations run), then rafs(): its animation
  // frame callbacks. The harness yields a real task between frames.
  function commit() {
    if (S.circles.length) { S.lastCircles = S.circles; S.lastCircleFrame = S.frame; }
    S.circles = [];
  }
  const api = {
    ping() { return true; },
    mediaPending() { return mediaPending(); },
    frame(n, expectId) {
      if (expectId && expectId !== S.id) return { stale: true };
      commit();
      S.frame = n;
      const ran = runTimers(frameRel(n));
      // No timer ran, so no promise continuation waits: the frame's callbacks run at once (one
      // request per frame instead of two).
      if (ran === 0) api.rafs();
      return { ran };
    },
    rafs() {
      runRafs(frameRel(S.frame));
      return null;
    },
    // The circles of the frame just drawn (else of the last frame that drew any), and how many
    // frames ago that was.
    commit(track) { commit(); return track ? [circlesOut(S.lastCircles), S.frame - S.lastCircleFrame] : null; },
    circles() { return circlesOut(S.lastCircles); },
    // After a load the harness moves a new document to the session's frame and rate; this
    // document's own time (performance.now) goes on from where it is, as in a browser.
    sync(frame, fps) {
      if (fps > 0 && !S.synced) S.fps = fps;
      if (!S.synced) {
        S.originFrame = frame;
        S.originRel = nowGet();
        S.originAbs = frameAbs(frame) - S.originRel;
        S.synced = true;
      }
      if (S.frame < frame) S.frame = frame;
      return S.id;
    },
    state() {
      return {
        id: S.id, frame: S.frame, now: S.originAbs + nowGet(), dialogs: S.dialogs, dialogCount: S.dialogCount,
        opened: S.opened, pendingTimers: S.timers.length, pendingRafs: S.rafs.length,
      };
    },
    // Canvas text drawn so far: [text, first ms, last ms, times, canvas index, x, y] (session times).
    texts() {
      const list = call(N.byTag, document, "canvas"), out = [];
      for (let i = 0; i < S.textList.length; i++) {
        const r = S.textList[i];
        const idx = r.cv && call(N.isConnected, r.cv) ? canvasIndex(r.cv, list) : -1;
        push(out, [r.text, r.first, r.last, r.count, idx, r.x, r.y]);
      }
      return out;
    },
  };

  // ---- the channel -------------------------------------------------------------------------------------------
  // A plain-data serializer of our own: JSON.stringify would call a toJSON the page put on
  // Object.prototype or Array.prototype.
  function ser(v) {
    if (v === null || v === undefined) return "null";
    const t = typeof v;
    if (t === "number") return v === v && v !== Infinity && v !== -Infinity ? stringify(v) : "null";
    if (t === "string" || t === "boolean") return stringify(v);
    if (isArray(v)) {
      let out = "[";
      for (let i = 0; i < v.length; i++) out += (i ? "," : "") + ser(v[i]);
      return out + "]";
    }
    if (t === "object") {
      const ks = objectKeys(v);
      let out = "{";
      for (let i = 0; i < ks.length; i++) out += (i ? "," : "") + stringify(ks[i]) + ":" + ser(v[ks[i]]);
      return out + "}";
    }
    return "null";
  }
  // Which captured built-ins the page replaced (said when a request fails: the page broke its world).
  const watched = [
    [Function.prototype, "call"], [Function.prototype, "apply"], [Array, "from"], [JSON, "stringify"],
    [JSON, "parse"], [Object, "keys"], [Reflect, "apply"], [EventTarget.prototype, "dispatchEvent"],
    [window, "CustomEvent"],
  ];
  const pristine = [];
  for (let i = 0; i < watched.length; i++) push(pristine, watched[i][0][watched[i][1]]);
  function tampered() {
    const out = [];
    for (let i = 0; i < watched.length; i++) {
      try { if (watched[i][0][watched[i][1]] !== pristine[i]) push(out, watched[i][1]); } catch (e) { push(out, watched[i][1]); }
    }
    return out;
  }
  call(N.addEventListener, window, cfg.channel + ":k", (ev) => {
    try {
      const ask = call(N.detail, ev);
      if (ask && typeof ask === "object" && ask.link === null) {
        ask.link = {
          names: nativeNames, rel: nowGet, set: nowSet, date: dateNow,
          adopt(kid) { push(kids, kid); },
        };
      }
    } catch (e) { /* not a link request */ }
  });
  if (up) {
    try {
      const me = document;
      const alive = () => !call(N.closed, window) && call(N.docOf, window) === me;
      up.adopt({
        alive,
        due(limit) {  // a document removed by a timer just run has none due
          if (!alive()) return Infinity;
          if (kids.length) pruneKids();
          return firstDue(limit - S.offset) + S.offset;
        },
        runOne(limit) { runFirst(limit - S.offset); },
        rafs(ft) { runRafs(ft - S.offset); },
      });
    } catch (e) { /* the parent's document is gone */ }
  }
  const channel = cfg.channel, reply = cfg.channel + ":r";
  call(N.addEventListener, window, channel, (ev) => {
    let out;
    try {
      const req = parse(call(N.detail, ev));
      const fn = api[req[0]];
      out = "{\"ok\":" + ser(fn ? apply(fn, api, isArray(req[1]) ? req[1] : []) : null) + "}";
    } catch (err) {
      let msg = "error";
      try { msg = str(err && err.message); } catch (e) { /* keep "error" */ }
      out = "{\"err\":" + stringify(msg) + ",\"tampered\":" + ser(tampered()) + "}";
    }
    call(N.dispatchEvent, window, new N.CustomEvent(reply, { detail: out }));
  });
})(__AB_CONFIG__);
