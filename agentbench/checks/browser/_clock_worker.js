// A dedicated worker's clock: runs in the worker before its own script, on the page's virtual time.
// _clock_workers.js starts the worker with it and its config {bc, id, rel0, date0, seed, marker, loc, src,
// key} (a script file's, _workers.serve_worker, adds hash, cu and imp: the URLs of our imports), then the
// worker's own script (imported, or after it on its first line for a module).
//
// The worker's time is the page's: performance.now starts at 0 when the page made the worker and
// runs with the page's time (rel - rel0); Date reads the page's Date. Time moves only when the
// page's frame step pushes it (over a BroadcastChannel whose name is the session's secret): the
// worker's timers due by then run in due order, each at its own due time, then its animation
// frame callbacks at the frame's time, then it answers (ack) so the page goes on only once the
// worker has caught up. The page posts `marker` to the worker when it makes it: messages reach a
// worker only after its script ran, so that message says "started" (it never reaches page code).
// Every function put in reads as native from this realm. Keep every statement ended by a
// semicolon and comments on lines of their own: Python joins the lines into one.
((cfg) => {
  "use strict";
  const apply = Reflect.apply, construct = Reflect.construct, defineProperty = Object.defineProperty;
  const getDesc = Object.getOwnPropertyDescriptor, floor = Math.floor, imul = Math.imul, mathMax = Math.max;
  const g = self;
  const N = {
    NDate: g.Date, BC: g.BroadcastChannel, bcPost: BroadcastChannel.prototype.postMessage,
    on: EventTarget.prototype.addEventListener, stop: Event.prototype.stopImmediatePropagation,
    data: getDesc(MessageEvent.prototype, "data").get, fnToString: Function.prototype.toString,
    WeakMap: g.WeakMap, wmGet: WeakMap.prototype.get, wmSet: WeakMap.prototype.set, wmHas: WeakMap.prototype.has,
    close: g.close, selfPost: g.postMessage, Number: g.Number, String: g.String, Function: g.Function, reportError: g.reportError,
    setTimeout: g.setTimeout,
  };
  const call = (fn, self2, ...args) => apply(fn, self2, args);
  const str = (v) => apply(N.String, undefined, [v]);
  const num = (v) => apply(N.Number, undefined, [v]);
  const names = new N.WeakMap();
  const native = (fn, name) => { call(N.wmSet, names, fn, name); return fn; };
  // Put where the browser has it (a worker's timers live on WorkerGlobalScope.prototype, not on self).
  const define = (obj, name, value, enumerable, like) => {
    native(value, name);
    let owner = obj;
    while (owner && !getDesc(owner, name)) owner = Object.getPrototypeOf(owner);
    const desc = owner ? getDesc(owner, name) : null;
    const was = like || (desc && desc.value);
    if (typeof was === "function") defineProperty(value, "length", { value: was.length, configurable: true });
    defineProperty(owner || obj, name, { value, writable: true, configurable: true, enumerable: desc ? desc.enumerable : !!enumerable });
  };
  define(Function.prototype, "toString", native({ toString() {
    if (call(N.wmHas, names, this)) return "function " + call(N.wmGet, names, this) + "() { [native code] }";
    return apply(N.fnToString, this, []);
  } }.toString, "toString"), false);

  // The timeline: our nested workers' URLs read as the worker gave them; the worker's own timeline
  // leaves out our imports (the clock's script and its own, each under our query).
  const ours = new Map(), PP = g.Performance && Performance.prototype;
  const entryName = g.PerformanceEntry && getDesc(PerformanceEntry.prototype, "name").get;
  const hidden = typeof cfg.imp === "string" && entryName ? { on: () => true, observer: true, test(e) {
    const n = call(entryName, e);
    return n === cfg.cu || n === cfg.imp;
  } } : null;
  if (entryName && PP) (__AB_PERF_JS__)(g, native, ours, hidden);
  // What a file worker fetches at its own URL (fetch("")) reads as that URL without our query; so do
  // the URLs a request or response made relative to its own URL says it has.
  const ownHref = g.WorkerLocation && getDesc(WorkerLocation.prototype, "href");
  if (cfg.hash && cfg.loc && ownHref && ownHref.get) {
    const indexOf = String.prototype.indexOf, slice = String.prototype.slice, startsWith = String.prototype.startsWith;
    const cut = (url) => { const at = call(indexOf, url, "#"); return at < 0 ? url : call(slice, url, 0, at); };
    const real = cut(call(ownHref.get, g.location)), page = cut(cfg.loc.href);
    call(Map.prototype.set, ours, real, page);
    const shown = (url) => typeof url === "string" && (url === real || call(startsWith, url, real + "#"))
      ? page + call(slice, url, real.length) : url;
    const urls = [[g.Request, "url"], [g.Response, "url"], [g.XMLHttpRequest, "responseURL"]];
    for (let i = 0; i < urls.length; i++) {
      const proto = urls[i][0] && urls[i][0].prototype, name = urls[i][1];
      const was = proto && getDesc(proto, name);
      if (!was || !was.get) continue;
      const get = was.get;
      const mine = getDesc({ get [name]() { return shown(call(get, this)); } }, name).get;
      native(mine, "get " + name);
      defineProperty(proto, name, { get: mine, set: was.set, enumerable: was.enumerable, configurable: was.configurable });
    }
  }

  const S = { now: 0, frameTime: 0, reads: 0, started: false, timers: [], byId: {}, next: 1, nest: 0,
    rafs: [], rafById: {}, nextRaf: 1 };
  const SPIN_READS = 10000;
  function readNow() {
    if (++S.reads > SPIN_READS) S.now += 0.001;
    return S.now;
  }

  let seed = (cfg.seed >>> 0) || 1;
  function draw32() {
    seed = (seed + 0x6D2B79F5) >>> 0;
    let t = seed;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  define(Math, "random", { random() { return ((draw32() >>> 5) * 67108864 + (draw32() >>> 6)) / 9007199254740992; } }.random);

  define(Performance.prototype, "now", { now() { return readNow(); } }.now, true);
  const dateNow = () => cfg.date0 + readNow();
  const NDate = N.NDate;
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
  define(g, "Date", Date);

  function invoke(fn, self2, args) {
    S.reads = 0;
    try { apply(fn, self2, args); } catch (err) { try { call(N.reportError, g, err); } catch (e) { S.reads = 0; } }
  }
  function toFunction(cb) {
    if (typeof cb === "function") return cb;
    const code = str(cb);
    return () => call(N.Function, undefined, code)();
  }
  const rest = (list, from) => {
    const out = [];
    for (let i = from; i < list.length; i++) out[out.length] = list[i];
    return out;
  };
  function addTimer(cb, delay, args, repeat) {
    delay = num(delay) || 0;
    if (delay < 0) delay = 0;
    const nest = S.nest + 1;
    if (nest > 5 && delay < 4) delay = 4;
    if (repeat && delay < 1) delay = 1;
    const id = S.next++;
    const t = { id, due: S.now + delay, fn: toFunction(cb), args, delay, repeat, nest, dead: false };
    S.timers[S.timers.length] = t;
    S.byId[id] = t;
    return id;
  }
  function clearTimer(id) {
    const t = S.byId[num(id)];
    if (t) { t.dead = true; delete S.byId[t.id]; }
  }
  define(g, "setTimeout", { setTimeout(cb, delay) { return addTimer(cb, delay, rest(arguments, 2), false); } }.setTimeout, true);
  define(g, "setInterval", { setInterval(cb, delay) { return addTimer(cb, delay, rest(arguments, 2), true); } }.setInterval, true);
  define(g, "clearTimeout", { clearTimeout(id) { clearTimer(id); } }.clearTimeout, true);
  define(g, "clearInterval", { clearInterval(id) { clearTimer(id); } }.clearInterval, true);
  if (typeof g.requestAnimationFrame === "function") {
    define(g, "requestAnimationFrame", { requestAnimationFrame(cb) {
      const id = S.nextRaf++;
      const r = { id, cb, dead: false };
      S.rafs[S.rafs.length] = r;
      S.rafById[id] = r;
      return id;
    } }.requestAnimationFrame, true);
    define(g, "cancelAnimationFrame", { cancelAnimationFrame(id) {
      const r = S.rafById[num(id)];
      if (r) { r.dead = true; delete S.rafById[r.id]; }
    } }.cancelAnimationFrame, true);
  }
  function pick(limit) {
    let next = null;
    for (let i = 0; i < S.timers.length; i++) {
      const t = S.timers[i];
      if (!t.dead && t.due <= limit && (next === null || t.due < next.due || (t.due === next.due && t.id < next.id))) next = t;
    }
    return next;
  }
  function runTimers(limit) {
    for (let guard = 0; guard < 100000; guard++) {
      const t = pick(limit);
      if (t === null) break;
      if (t.due > S.now) S.now = t.due;
      if (t.repeat) {
        let delay = t.delay;
        t.nest++;
        if (t.nest > 5 && delay < 4) delay = 4;
        t.due = mathMax(t.due + delay, S.now + 0.001);
      } else {
        t.dead = true;
        delete S.byId[t.id];
      }
      const saved = S.nest;
      S.nest = t.nest;
      invoke(t.fn, g, t.args);
      S.nest = saved;
    }
    if (S.timers.length > 64) {
      const live = [];
      for (let i = 0; i < S.timers.length; i++) if (!S.timers[i].dead) live[live.length] = S.timers[i];
      S.timers = live;
    }
  }
  function runRafs(ft) {
    if (S.now < ft) S.now = ft;
    S.frameTime = ft;
    const due = S.rafs;
    S.rafs = [];
    S.rafById = {};
    for (let i = 0; i < due.length; i++) if (!due[i].dead) invoke(due[i].cb, g, [ft]);
  }

  // Its location reads as the URL the page made it from (it runs from a copy of ours: cfg.loc holds
  // the href and the parts that differ).
  const WL = typeof WorkerLocation === "function" ? WorkerLocation.prototype : null;
  if (WL && cfg.loc) {
    const loc = cfg.loc;
    // A script file's worker: the page's fragment is on the URL it runs at (the browser never sends it).
    const hash = cfg.hash ? getDesc(WL, "hash") : null;
    if (hash && hash.get) loc.href += call(hash.get, g.location);
    const getters = { get href() { return loc.href; }, get pathname() { return loc.pathname; },
      get search() { return loc.search; }, get hash() { return loc.hash; } };
    for (const name of ["href", "pathname", "search", "hash"]) {
      const was = getDesc(WL, name);
      if (typeof loc[name] !== "string" || !was || !was.get) continue;
      const get = native(getDesc(getters, name).get, "get " + name);
      defineProperty(WL, name, { get, set: was.set, enumerable: was.enumerable, configurable: true });
    }
    define(WL, "toString", { toString() { return loc.href; } }.toString, true);
  }

  // The page's time comes over a BroadcastChannel of a secret name, or, for a data: worker (an opaque
  // origin), over the worker's own port, tagged with the secret (taken off before any listener of its).
  // A data: worker's URL holds no secret: it learns the tag from the page's first message (the marker,
  // posted before any page code can post).
  let port = null;
  const bc = cfg.port ? null : new N.BC(cfg.bc);
  const say = (msg) => {
    try {
      if (bc !== null) call(N.bcPost, bc, msg);
      else if (port !== null) { msg.ab = port; call(N.selfPost, g, msg); }
    } catch (e) { S.reads = 0; }
  };
  function pushed(m) {
    // The page's pushes only: other workers' answers come on the channel too.
    if (!S.started || !m || m.t !== "push") return;
    const target = m.rel - cfg.rel0;
    runTimers(target);
    runRafs(m.ft - cfg.rel0);
    if (S.now < target) S.now = target;
    say({ t: "ack", id: cfg.id, k: m.k });
  }
  if (bc !== null) call(N.on, bc, "message", (ev) => pushed(call(N.data, ev)));
  // A SharedWorker gets no marker (a message would reach the page's port): it says it started in a task
  // after the one that runs its script (a browser's own timer, before ours replace it).
  if (cfg.shared) {
    call(N.setTimeout, g, () => { S.started = true; say({ t: "ready", id: cfg.id }); }, 0);
  }
  call(N.on, g, "message", (ev) => {
    const m = call(N.data, ev);
    if (port !== null && m !== null && typeof m === "object" && m.ab === port) { call(N.stop, ev); pushed(m); return; }
    if (S.started || cfg.shared) return;
    if (cfg.port && typeof m === "string") port = m;
    else if (m !== cfg.marker) return;
    call(N.stop, ev);
    S.started = true;
    say({ t: "ready", id: cfg.id });
  }, true);
  define(g, "close", { close() {
    say({ t: "bye", id: cfg.id });
    return apply(N.close, this, []);
  } }.close, true);

  // Workers this worker makes (from a blob: URL or a classic script of the artefact's) run on the same
  // clock: told to the page as born (before this worker answers), started as the page starts its own.
  const NW = g.Worker;
  if (typeof NW === "function" && typeof cfg.src === "string") {
    const M = {
      post: NW.prototype.postMessage, terminate: NW.prototype.terminate, createURL: URL.createObjectURL,
      revokeURL: URL.revokeObjectURL, Blob: g.Blob, blobType: getDesc(Blob.prototype, "type").get,
      Map: g.Map, mapGet: Map.prototype.get, mapSet: Map.prototype.set, mapDelete: Map.prototype.delete,
      URL: g.URL, urlHref: getDesc(URL.prototype, "href").get, stringify: JSON.stringify,
      indexOf: String.prototype.indexOf, slice: String.prototype.slice, startsWith: String.prototype.startsWith,
      TypeError: g.TypeError, origin: g.location.origin, base: g.location.href,
    };
    const blobs = new M.Map(), made = [];
    let kids = 0;
    define(URL, "createObjectURL", { createObjectURL(obj) {
      const url = apply(M.createURL, this, arguments);
      try {
        if (obj instanceof M.Blob && kids < 200 && !call(M.startsWith, call(M.blobType, obj), "image/")) call(M.mapSet, blobs, url, obj);
      } catch (e) { S.reads = 0; }
      return url;
    } }.createObjectURL, true, M.createURL);
    define(URL, "revokeObjectURL", { revokeObjectURL(url) {
      try { call(M.mapDelete, blobs, str(url)); } catch (e) { S.reads = 0; }
      return apply(M.revokeURL, this, arguments);
    } }.revokeObjectURL, true, M.revokeURL);
    const sameOrigin = (scriptURL, opts) => {
      if (typeof scriptURL !== "string" || (opts && opts.type === "module")) return null;
      try {
        const href = call(M.urlHref, construct(M.URL, [scriptURL, cfg.loc ? cfg.loc.href : M.base]));
        return call(M.startsWith, href, M.origin + "/") ? href : null;
      } catch (e) {
        return null;
      }
    };
    const Worker = function Worker(scriptURL) {
      if (!new.target) {
        throw new M.TypeError("Failed to construct 'Worker': Please use the 'new' operator, this DOM object " +
          "constructor cannot be called as a function.");
      }
      const opts = arguments[1];
      const blob = typeof scriptURL === "string" ? call(M.mapGet, blobs, scriptURL) : undefined;
      const file = blob === undefined ? sameOrigin(scriptURL, opts) : null;
      if ((blob === undefined && file === null) || kids >= 200) return construct(NW, arguments, new.target);
      kids++;
      const id = cfg.id + "." + kids, rel0 = cfg.rel0 + S.now, date0 = cfg.date0 + S.now;
      const seed = (cfg.seed ^ (kids * 0x9E3779B1)) >>> 0;
      const args = [];
      for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
      say({ t: "born", id });
      let own = null;
      if (file !== null) {
        const cut = call(M.indexOf, file, "#"), bare = cut < 0 ? file : call(M.slice, file, 0, cut);
        args[0] = bare + (call(M.indexOf, bare, "?") < 0 ? "?" : "&") + cfg.key + "=" +
          id + "_" + rel0 + "_" + date0 + "_" + seed + (cut < 0 ? "" : call(M.slice, file, cut));
        call(M.mapSet, ours, args[0], file);
      } else {
        const wcfg = { bc: cfg.bc, id, rel0, date0, seed, marker: cfg.marker, src: cfg.src, key: cfg.key,
          loc: { href: scriptURL, pathname: call(M.slice, scriptURL, 5) } };
        const prefix = cfg.src + "(" + call(M.stringify, JSON, wcfg) + ");";
        const parts = opts && opts.type === "module" ? [prefix, blob]
          : [prefix + "importScripts(" + call(M.stringify, JSON, call(M.createURL, URL, blob)) + ");"];
        own = args[0] = call(M.createURL, URL, new M.Blob(parts, { type: call(M.blobType, blob) || "text/javascript" }));
      }
      let w;
      try {
        w = construct(NW, args, new.target);
      } finally {
        if (own !== null) call(M.revokeURL, URL, own);
      }
      made[made.length] = [w, id];
      call(M.post, w, cfg.marker);
      return w;
    };
    defineProperty(Worker, "prototype", { value: NW.prototype, writable: false, enumerable: false, configurable: false });
    defineProperty(NW.prototype, "constructor", { value: Worker, writable: true, configurable: true, enumerable: false });
    define(g, "Worker", Worker, false, NW);
    define(NW.prototype, "terminate", { terminate() {
      for (let i = 0; i < made.length; i++) if (made[i][0] === this) say({ t: "bye", id: made[i][1] });
      return apply(M.terminate, this, []);
    } }.terminate, true, M.terminate);
  }
})
