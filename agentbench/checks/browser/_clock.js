// The virtual clock: runs in the page's main world before any page code (registered per session
// over CDP with Page.addScriptToEvaluateOnNewDocument; Python puts the session's config where
// __AB_CONFIG__ stands: {fps, seed, epoch, startAbs, channel, confirm}).
//
// It replaces every clock a page can read or wait on (requestAnimationFrame, timers,
// performance.now, Date, Math.random) and records what a person would see drawn (canvas text and
// circles) and the dialogs the page opened. Frame n runs at virtual time n * 1000 / fps (computed,
// never accumulated), timers due before a frame run first, then its requestAnimationFrame
// callbacks; each callback is called as a browser calls it, with nothing of ours on its stack (see
// _clock_timers.js), and an exception it throws is the page's uncaught error; the clock goes on.
// Time moves with the page's work as it reads it, below the next frame's time (see shownGet).
//
// Nothing here is visible to the page: no globals, no storage, functions that read as native.
// The harness drives it from an isolated world (_view.js) over a window event whose name is a
// per-session secret; requests and replies are JSON strings. It uses only built-ins captured
// before page code ran and builds its replies with its own serializer, so a page that replaces
// its own built-ins (Array.from, JSON, Object.prototype.toJSON, Function.prototype.call) breaks
// itself, not the harness. Times handed to the page are the document's own (performance.now
// starts at a navigation-like 60-180 ms in a new top document, at 0 in an iframe's, as in a
// browser); times handed to the harness are the session's.
//
// The clock is one closure in parts, joined in this order by _scripts.py: this file (built-ins,
// the iframe link, native-looking functions, state, time, Math.random, Date), _clock_timers.js
// (timers, animation frames, document.timeline), _clock_sound.js (dialogs, sound),
// _clock_person.js (what a person's Chrome has and the headless shell lacks), _clock_canvas.js
// (canvas instrumentation), _clock_channel.js (stepping, the channel).
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
    bind: Function.prototype.bind,
    realNow: Performance.prototype.now,
    queueMicrotask: window.queueMicrotask,
    // Where a browser lacks one of these, what uses it is left out (caught), never the clock.
    timeline: typeof AnimationTimeline === "function" ? getDesc(AnimationTimeline.prototype, "currentTime") : undefined,
    docTimeline: getterOf(Document.prototype, "timeline"),
    closed: getterOf(window, "closed") || getterOf(Window.prototype, "closed"),
    docOf: getterOf(window, "document") || getterOf(Window.prototype, "document"),
  };
  const call = (fn, self, ...args) => apply(fn, self, args);  // rest parameters use no iterator
  // The real time this script starts: an iframe's clock is set up inside the page's task (the page
  // appends the iframe), and that time is ours, not the page's work (see skip in _clock_channel.js).
  const initStart = call(N.realNow, performance);
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
    now: 0,                   // this document's time, ms (what timers and frames run on)
    shown: 0,                 // the latest time the page read (now, plus the work done in its task)
    anchor: -1,               // the real time of the task's first read (-1: none yet in this task)
    carry: 0,                 // the work of earlier tasks since the clock last ran a callback (real ms)
    lastEnd: -1,              // the real time the last of those tasks ended (-1: the chain is broken)
    task: 0,                  // counts the tasks seen, so a late end-of-task finds its task gone
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
  // A person's browser is past the navigation's response when the first script runs: a new top
  // document's time starts at a navigation-like moment, 60-180 ms, drawn from the seed (the same
  // artefact starts at the same time in every run). Its Date starts at the session's time.
  const START = up ? 0 : 60 + ((cfg.seed >>> 0) % 1200) / 10;
  S.now = S.shown = START;
  S.originAbs -= START;
  // Time moves while the page works: within one task (a callback, a script), a read of the clock
  // adds the real time since the task's first read, once that is at least WORK_MIN_MS, coarsened
  // to 0.1 ms as Chrome's is, and kept below the next frame's time. Tasks the clock does not run (a
  // message, a posted message's reply) carry their work on to the next: a task is seen from its first
  // read or post (postMessage) to its end, and the gap to the next one seen counts too when it is
  // shorter than GAP_MS (a message's way through the event loop; a longer one is idle, or the
  // harness's). The carry ends when the clock runs a callback (its time is the callback's own) and
  // whenever the harness asks the clock anything. Only what the page reads moves: timers and frames
  // run on `now`, so when they run never depends on the machine's speed.
  const WORK_MIN_MS = 1, WORK_STEP_MS = 0.1, GAP_MS = 1;
  const frameAbs = (n) => n * 1000 / S.fps;        // the session's time of frame n
  // The document's time of frame n (computed from the frame count, so 60 Hz frames fall on exact
  // multiples of 1000 / 60 as in a fresh document).
  const frameRel = (n) => S.originRel + (n - S.originFrame) * 1000 / S.fps;

  // A busy-wait on performance.now/Date.now would never end on a frozen clock, so after SPIN_READS
  // reads inside one callback every read advances time by 1 us.
  function readNow() {
    if (++S.reads > SPIN_READS) {  // a busy-wait: the page waits on the clock, it does not work
      nowSet(nowGet() + 0.001);
      if (!up) return S.now > S.shown ? (S.shown = S.now) : S.shown;
    }
    const v = up ? up.shown() - S.offset : shownGet();
    timeMark(v);
    return v;
  }
  // The time the page reads in this (top) document: `now` plus the work of the current task.
  function shownGet() {
    let v = S.now;
    const work = S.carry + touch() - S.anchor;
    if (work >= WORK_MIN_MS) {
      v += floor(work / WORK_STEP_MS) * WORK_STEP_MS;
      let next = frameRel(S.frame);
      if (next <= S.now) next = frameRel(S.frame + 1);
      if (!S.synced) next = S.now + 1000 / S.fps;
      if (v > next - WORK_STEP_MS) v = mathMax(S.now, next - WORK_STEP_MS);
    }
    if (v > S.shown) S.shown = v;
    return S.shown;
  }
  // The page is at work now (it reads the clock, it posts a message): the real time. The first time in
  // a task starts the task's span, ended by a microtask (the task's end: see endTask).
  function touch() {
    const real = call(N.realNow, performance);
    if (S.anchor < 0) {
      if (S.lastEnd >= 0 && real - S.lastEnd < GAP_MS) S.carry += real - S.lastEnd;
      S.anchor = real;
      const task = ++S.task;
      try { call(N.queueMicrotask, window, () => { if (task === S.task) endTask(); }); } catch (e) { /* the next callback ends it */ }
    }
    return real;
  }
  function endTask() {
    if (S.anchor < 0) return;
    const real = call(N.realNow, performance);
    S.carry += real - S.anchor;
    S.lastEnd = real;
    S.anchor = -1;
  }
  // The clock runs a callback (or the harness asks): what is read from here on is work from its time.
  function newTask() { S.anchor = -1; S.carry = 0; S.lastEnd = -1; S.task++; }
  // This document's time; a linked one reads (and moves, only forward) its parent's.
  function nowGet() { return up ? up.rel() - S.offset : S.now; }
  function nowSet(v) {
    if (up) up.set(v + S.offset);
    else if (v > S.now) { S.now = v; S.carry = 0; S.lastEnd = -1; }
  }

  // A message posted is work seen (see touch): a chain of message tasks that never reads the clock
  // moves it, as it does in a browser, when it is read at its end.
  const pageTouch = () => { if (up) up.touch(); else touch(); };
  const wrapPost = (obj, name) => {
    const was = getDesc(obj, name);
    if (!was || typeof was.value !== "function") return;
    const real = was.value;
    define(obj, name, { postMessage(message) { pageTouch(); return apply(real, this, arguments); } }.postMessage, was.enumerable);
  };
  if (typeof MessagePort === "function") wrapPost(MessagePort.prototype, "postMessage");
  wrapPost(getDesc(window, "postMessage") ? window : Window.prototype, "postMessage");

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

  // ---- performance.timeOrigin and event.timeStamp --------------------------------------------------------
  // In a browser Date.now() is performance.timeOrigin + performance.now() (to a millisecond) and an
  // event's timeStamp is on performance.now()'s scale. Both follow this clock: the origin is Date's
  // value at this document's time 0; an event is stamped with this document's time when it is first
  // read (an input event's handler reads it as it is dispatched, between frames: the time the person
  // acted), never later than what performance.now() reads then.
  const originDate = () => (up ? up.origin() + S.offset : cfg.epoch + S.originAbs);
  const wrapGetter = (proto, name, get) => {
    const was = getDesc(proto, name);
    if (!was || !was.get) return;
    native(get, "get " + name);
    defineProperty(proto, name, { get, set: was.set, enumerable: was.enumerable, configurable: true });
  };
  const realOrigin = getterOf(Performance.prototype, "timeOrigin");
  wrapGetter(Performance.prototype, "timeOrigin", getDesc({ get timeOrigin() {
    call(realOrigin, this);  // a foreign receiver throws as the browser's getter does
    return originDate();
  } }, "timeOrigin").get);
  const realToJSON = Performance.prototype.toJSON;
  if (typeof realToJSON === "function") {
    define(Performance.prototype, "toJSON", { toJSON() {
      const out = call(realToJSON, this);
      if (out && typeof out === "object") out.timeOrigin = originDate();
      return out;
    } }.toJSON, true);
  }
  const realStamp = getterOf(Event.prototype, "timeStamp");
  const stamps = new N.WeakMap();
  wrapGetter(Event.prototype, "timeStamp", getDesc({ get timeStamp() {
    call(realStamp, this);  // a receiver that is no event throws as the browser's getter does
    if (!call(N.wmHas, stamps, this)) call(N.wmSet, stamps, this, nowGet());
    return call(N.wmGet, stamps, this);
  } }, "timeStamp").get);

  // window.event: the clock calls the page's callbacks from inside a window event of its own (see
  // _clock_timers.js) and talks to the harness over more (the session's channel): a page must never
  // see one, nor its name (the secret channel). In a browser a timer or frame callback runs with none.
  const eventHost = getterOf(window, "event") ? window : Window.prototype;
  const realEventGet = getterOf(eventHost, "event"), eventType = getterOf(Event.prototype, "type");
  if (realEventGet) {
    wrapGetter(eventHost, "event", getDesc({ get event() {
      const e = call(realEventGet, this);
      if (e === undefined || e === null) return e;
      const t = call(eventType, e);
      return typeof t === "string" && call(N.startsWith, t, cfg.channel) ? undefined : e;
    } }, "event").get);
  }

  // ---- callbacks ----------------------------------------------------------------------------------------------
  function report(err) {
    try { call(N.reportError, window, err); } catch (e) { /* reporting must never stop the clock */ }
  }
  function invoke(fn, self, args) {
    S.reads = 0;
    newTask();
    try { apply(fn, self, args); } catch (err) { report(err); }
  }
  function toFunction(cb) {
    if (typeof cb === "function") return cb;
    const code = str(cb);
    return () => call(N.Function, undefined, code)();
  }

