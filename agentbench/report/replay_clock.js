// agentbench report viewer: replay an artefact on a virtual clock, paced to real time.
//
// Prepended (after the doctype) to every artefact shown in the report, inside a sandboxed
// iframe.  The report writes `window.__ABR_CFG = {fps, seed, input, start_at, id}` just before
// this script; a restart is the parent rewriting that line and reloading the iframe's srcdoc, so
// a page that breaks its own document cannot block a replay.
//
// Frame n runs at virtual time n * 1000 / fps (computed, not accumulated).  Frames are paced to
// real time: by real time e after start_at the page has seen floor(e * fps / 1000) frames, so a
// page that moves a fixed step per frame runs 4x as fast at 240 Hz as at 60 Hz on any monitor.
// Every iframe of a task gets the same start_at (wall clock, shared by all frames), so they run
// in step.  Timers due before a frame run first, each at its own due time.  One frame per real
// task (MessageChannel), so `await new Promise(requestAnimationFrame)` loops see every frame.
// Scripted input {at_ms, key} is dispatched (keydown, keypress, keyup) into this document at its
// virtual time: this is a viewer, not a check, so synthetic events are fine here.
(() => {
  "use strict";
  if (window.__abrClock) return;
  const cfg = Object.assign({ fps: 60, seed: 1, input: [], start_at: 0, id: "", epoch: 1704067200000 },
    window.__ABR_CFG || {});
  const N = {
    Date: window.Date,
    dateNow: Date.now.bind(Date),
    setTimeout: window.setTimeout.bind(window),
    MessageChannel: window.MessageChannel,
    reportError: window.reportError ? window.reportError.bind(window) : null,
    Function: window.Function,
    KeyboardEvent: window.KeyboardEvent,
    dispatch: EventTarget.prototype.dispatchEvent,
    parent: window.parent,
  };
  const define = (obj, name, value) =>
    Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });

  const S = {
    fps: Math.max(1, Number(cfg.fps) || 60), frame: 0, now: 0, reads: 0, started: false,
    startWall: Number(cfg.start_at) || 0, timers: new Map(), nextTimer: 1, nest: 0,
    rafs: new Map(), nextRaf: 1, input: (cfg.input || []).slice().sort((a, b) => a.at_ms - b.at_ms),
    inputIdx: 0, errors: 0, lastError: "",
  };

  // A busy-wait on a frozen clock never ends: past 10k reads in one callback, reads advance 1 us.
  function readNow() {
    if (++S.reads > 10000) S.now += 0.001;
    return S.now;
  }

  // ---- seeded randomness, performance.now, Date ------------------------------------------------
  let seed = (Number(cfg.seed) >>> 0) || 1;
  define(Math, "random", function random() {
    seed = (seed + 0x6D2B79F5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  });
  define(performance, "now", function now() { return readNow(); });
  function VDate(...args) {
    if (!new.target) return new N.Date(cfg.epoch + readNow()).toString();
    if (args.length === 0) return Reflect.construct(N.Date, [cfg.epoch + readNow()], new.target);
    return Reflect.construct(N.Date, args, new.target);
  }
  VDate.prototype = N.Date.prototype;
  VDate.now = function now() { return Math.floor(cfg.epoch + readNow()); };
  VDate.UTC = N.Date.UTC;
  VDate.parse = N.Date.parse;
  define(N.Date.prototype, "constructor", VDate);
  define(window, "Date", VDate);

  // ---- callbacks: one exception never stops the clock ------------------------------------------
  window.addEventListener("error", (e) => {
    S.errors++;
    S.lastError = String((e && e.message) || e);
  }, true);
  function invoke(fn, self, args) {
    S.reads = 0;
    try {
      fn.apply(self, args);
    } catch (err) {
      if (N.reportError) {
        try { N.reportError(err); } catch (e) { /* counted by the error listener or not at all */ }
      } else {
        S.errors++;
        S.lastError = String(err);
      }
    }
  }
  const toFunction = (cb) => (typeof cb === "function" ? cb : () => N.Function(String(cb))());

  // ---- timers ----------------------------------------------------------------------------------
  function addTimer(cb, delay, args, repeat) {
    delay = Math.max(0, Number(delay) || 0);
    const nest = S.nest + 1;
    if (nest > 5 && delay < 4) delay = 4;  // HTML clamps deeply nested timeouts to 4 ms
    if (repeat && delay < 1) delay = 1;
    const id = S.nextTimer++;
    S.timers.set(id, { id, due: S.now + delay, fn: toFunction(cb), args, delay, repeat, nest });
    return id;
  }
  const clearTimer = (id) => { S.timers.delete(Number(id)); };
  define(window, "setTimeout", function setTimeout(cb, delay, ...args) { return addTimer(cb, delay, args, false); });
  define(window, "setInterval", function setInterval(cb, delay, ...args) { return addTimer(cb, delay, args, true); });
  define(window, "clearTimeout", function clearTimeout(id) { clearTimer(id); });
  define(window, "clearInterval", function clearInterval(id) { clearTimer(id); });

  function runTimers(limit) {
    for (let guard = 0; guard < 10000; guard++) {
      let next = null;
      for (const t of S.timers.values()) {
        if (t.due <= limit && (next === null || t.due < next.due || (t.due === next.due && t.id < next.id))) next = t;
      }
      if (next === null) return;
      if (next.due > S.now) S.now = next.due;
      if (next.repeat) {
        next.nest++;
        next.due = Math.max(next.due + (next.nest > 5 && next.delay < 4 ? 4 : next.delay), S.now + 0.001);
      } else {
        S.timers.delete(next.id);
      }
      const saved = S.nest;
      S.nest = next.nest;
      invoke(next.fn, window, next.args);
      S.nest = saved;
    }
  }

  // ---- animation frames ------------------------------------------------------------------------
  const raf = function requestAnimationFrame(cb) {
    const id = S.nextRaf++;
    S.rafs.set(id, cb);
    return id;
  };
  const caf = function cancelAnimationFrame(id) { S.rafs.delete(Number(id)); };
  define(window, "requestAnimationFrame", raf);
  define(window, "cancelAnimationFrame", caf);
  define(window, "webkitRequestAnimationFrame", raf);

  // ---- scripted input ----------------------------------------------------------------------------
  const KEYS = { " ": ["Space", 32], Enter: ["Enter", 13], ArrowUp: ["ArrowUp", 38], ArrowDown: ["ArrowDown", 40],
    ArrowLeft: ["ArrowLeft", 37], ArrowRight: ["ArrowRight", 39], Escape: ["Escape", 27] };
  function keyInfo(key) {
    if (KEYS[key]) return KEYS[key];
    if (key.length === 1 && /[a-z]/i.test(key)) return ["Key" + key.toUpperCase(), key.toUpperCase().charCodeAt(0)];
    if (key.length === 1 && /[0-9]/.test(key)) return ["Digit" + key, key.charCodeAt(0)];
    return [key, 0];
  }
  function pressKey(key) {
    const [code, keyCode] = keyInfo(key);
    const active = document.activeElement;
    const target = active && active !== document.documentElement ? active : (document.body || document);
    for (const type of ["keydown", "keypress", "keyup"]) {
      if (type === "keypress" && key.length !== 1 && key !== "Enter") continue;
      const ev = new N.KeyboardEvent(type, { key, code, keyCode, which: keyCode, bubbles: true, cancelable: true,
        composed: true, charCode: type === "keypress" ? (key === "Enter" ? 13 : key.charCodeAt(0)) : 0 });
      N.dispatch.call(target, ev);
    }
  }
  function fire(ev) {
    if (typeof ev.key === "string" && ev.key) invoke(pressKey, null, [ev.key]);
  }

  // ---- stepping, paced to real time ----------------------------------------------------------------
  function step(n) {
    const t = (n * 1000) / S.fps;
    while (S.inputIdx < S.input.length && S.input[S.inputIdx].at_ms <= t) {
      const ev = S.input[S.inputIdx++];
      runTimers(ev.at_ms);
      if (ev.at_ms > S.now) S.now = ev.at_ms;
      fire(ev);
    }
    runTimers(t);
    if (t > S.now) S.now = t;
    S.frame = n;
    const due = S.rafs;
    S.rafs = new Map();
    for (const fn of due.values()) invoke(fn, window, [t]);
  }
  const target = () => Math.floor(((N.dateNow() - S.startWall) * S.fps) / 1000);
  const channel = new N.MessageChannel();
  let burst = 0;
  // One frame per real task; when caught up, wait on a real timer.  Every 32 frames of catch-up
  // the pump yields through a timer too, so the browser still gets to paint.
  function pump() {
    if (!S.started) {
      if (N.dateNow() < S.startWall) { N.setTimeout(pump, Math.min(50, S.startWall - N.dateNow())); return; }
      S.started = true;
    }
    if (S.frame < target()) {
      step(S.frame + 1);
      if (S.frame < target() && ++burst < 32) { channel.port2.postMessage(0); return; }
    }
    burst = 0;
    N.setTimeout(pump, 4);
  }
  channel.port1.onmessage = pump;

  // ---- status for the report: which rate, how far, how many errors -----------------------------------
  function status() {
    try {
      N.parent.postMessage({ abr: "status", id: String(cfg.id), fps: S.fps, frame: S.frame, t_ms: S.now,
        errors: S.errors, last_error: S.lastError.slice(0, 300), inputs: S.inputIdx }, "*");
    } catch (e) { /* a detached frame has no parent to tell */ }
    N.setTimeout(status, 250);
  }

  define(window, "__abrClock", Object.freeze({ state: () => ({ fps: S.fps, frame: S.frame, t_ms: S.now,
    errors: S.errors, inputs: S.inputIdx, started: S.started }) }));
  if (!S.startWall) S.startWall = N.dateNow();
  N.setTimeout(pump, 0);
  N.setTimeout(status, 0);
})();
