// The page's side of its workers' clocks: runs in the page's main world right after the clock (the
// same registered script and config; _workers.py puts _clock_worker.js, as one line, where
// __AB_WORKER_JS__ stands).
//
// A dedicated worker the page makes from a blob: URL starts with the worker clock, then runs its own
// script (the page's Blob, unread), so its first statement already runs on the page's virtual time. The harness's frame step (_workers_view.js, in the isolated world) asks
// here, over window events named by the session's secret, whether workers are still starting,
// pushes the page's time to every started worker over a BroadcastChannel of a secret name, and
// waits until each has run what was due and answered. Worker, its terminate, SharedWorker and
// URL.createObjectURL are replaced by functions that read as native (the clock's registry).
// A worker from a script file of this origin (classic or module) is asked for at its URL with a query
// of ours (see _workers.serve_worker); a data: worker from a data: URL of ours that imports the
// page's. A SharedWorker from a blob: URL or a script file of this origin runs on the clock the same
// way (the same script URL and name give the same worker, as in a browser). A same-origin iframe's
// document makes its workers with its own realm's constructors but keeps them in the page's list
// (the "hub", asked of its parent over the secret channel): one clock, one list, one wait.
// Workers from other URLs, data: SharedWorkers and an iframe of another origin's keep their own
// real-time clock.
((cfg, workerJs) => {
  "use strict";
  const apply = Reflect.apply, construct = Reflect.construct, defineProperty = Object.defineProperty;
  const getDesc = Object.getOwnPropertyDescriptor;
  const N = {
    on: EventTarget.prototype.addEventListener, off: EventTarget.prototype.removeEventListener,
    dispatch: EventTarget.prototype.dispatchEvent, CustomEvent: window.CustomEvent,
    detail: getDesc(CustomEvent.prototype, "detail").get, data: getDesc(MessageEvent.prototype, "data").get,
    Worker: window.Worker, terminate: window.Worker && window.Worker.prototype.terminate,
    post: window.Worker && window.Worker.prototype.postMessage, BC: window.BroadcastChannel,
    bcPost: window.BroadcastChannel && BroadcastChannel.prototype.postMessage,
    createURL: URL.createObjectURL, revokeURL: URL.revokeObjectURL, Blob: window.Blob, Map: window.Map,
    mapGet: Map.prototype.get, mapSet: Map.prototype.set, mapDelete: Map.prototype.delete,
    mapSize: getDesc(Map.prototype, "size").get, blobSize: getDesc(Blob.prototype, "size").get, wmSet: WeakMap.prototype.set, String: window.String,
    stringify: JSON.stringify, parse: JSON.parse, TypeError: window.TypeError, isArray: Array.isArray,
    objectKeys: Object.keys, startsWith: String.prototype.startsWith, blobType: getDesc(Blob.prototype, "type").get,
    indexOf: String.prototype.indexOf, slice: String.prototype.slice, URL: window.URL,
    urlHref: getDesc(URL.prototype, "href").get, encode: encodeURIComponent,
    urlPath: getDesc(URL.prototype, "pathname").get, urlSearch: getDesc(URL.prototype, "search").get,
    urlHash: getDesc(URL.prototype, "hash").get, endsWith: String.prototype.endsWith, atob: window.atob,
    btoa: window.btoa,
    stop: Event.prototype.stopImmediatePropagation, baseURI: getDesc(Node.prototype, "baseURI").get,
    Shared: window.SharedWorker,
    closed: (getDesc(window, "closed") || getDesc(Window.prototype, "closed") || {}).get,
    docOf: (getDesc(window, "document") || getDesc(Window.prototype, "document") || {}).get,
  };
  // The document's origin (an iframe's srcdoc document has its parent's; its location's reads "null").
  const origin = typeof window.origin === "string" && window.origin !== "null" ? window.origin : window.location.origin;
  if (typeof N.Worker !== "function" || typeof N.BC !== "function") return;
  const call = (fn, self, ...args) => apply(fn, self, args);
  const str = (v) => apply(N.String, undefined, [v]);
  const ev = (name, detail) => call(N.dispatch, window, new N.CustomEvent(cfg.channel + name, { detail }));

  // Once per document (a re-registered clock may run twice in one document).
  let answered = false;
  const heard = () => { answered = true; };
  call(N.on, window, cfg.channel + ":wy", heard);
  ev(":w", "[\"ping\",[]]");
  call(N.off, window, cfg.channel + ":wy", heard);
  if (answered) return;
  const ask = { link: null };
  ev(":k", ask);
  let clock = ask.link;
  if (!clock) return;
  // An iframe's document: the page's hub (its parent's answer on the secret channel), else (a parent
  // of another origin) its workers keep their own clock.
  let hub = null;
  if (window.parent !== window) {
    try {
      const asked = { hub: null };
      call(N.dispatch, window.parent, new N.CustomEvent(cfg.channel + ":wh", { detail: asked }));
      hub = asked.hub;
    } catch (e) { hub = null; }
    if (!hub) return;
    clock = hub.clock;
  }
  // The page's Date less its performance.now (its time origin on Date's scale), read at the first
  // worker where no work moved the page's time between two reads: a worker's Date is the page's.
  const perfNow = Performance.prototype.now;
  let dateBase = null;
  function originDate() {
    if (hub !== null) return hub.originDate();
    for (let i = 0; dateBase === null || i < 20; i++) {
      const before = call(perfNow, performance), date = clock.date(), after = call(perfNow, performance);
      dateBase = date - after;
      if (before === after) break;
    }
    return dateBase;
  }
  const native = (fn, name) => { call(N.wmSet, clock.names, fn, name); return fn; };
  // Our URLs of the page's script-file workers -> the URLs the page gave: the timeline reads the latter.
  // A module worker's imports of ours (the clock, then its script) land in the page's timeline: left out.
  const ours = new N.Map(), mods = [];
  const entryName = getDesc(PerformanceEntry.prototype, "name").get, byName = Performance.prototype.getEntriesByName;
  function claimed(e) {
    for (let i = 0; i < mods.length; i++) if (mods[i].entry === e) return true;
    return false;
  }
  const hidden = { on: () => mods.length > 0, test(e) {
    const n = call(entryName, e);
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      if (n === m.clock) return true;
      if (n !== m.imp) continue;
      if (m.entry === undefined) {  // the first entry of its script that no other worker took
        const list = call(byName, performance, m.imp, "resource");
        for (let j = 0; j < list.length && m.entry === undefined; j++) if (!claimed(list[j])) m.entry = list[j];
      }
      if (m.entry === e) return true;
    }
    return false;
  } };
  (__AB_PERF_JS__)(window, native, ours, hidden);
  const define = (obj, name, value, like) => {
    native(value, name);
    defineProperty(value, "length", { value: like.length, configurable: true });
    defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: !!getDesc(obj, name).enumerable });
  };

  // ---- which blob: URLs hold which Blob (the worker's script, unread) --------------------------------------
  // Only a Blob that can be a script (not an image, sound, video or font; at most 8 MiB, 64 MiB in all)
  // is held, and only until the page revokes its URL: we keep no picture or sound alive.
  const blobs = new N.Map();
  const createURL = N.createURL, revokeURL = N.revokeURL;
  const media = ["image/", "audio/", "video/", "font/"];
  let held = 0;
  function maybeScript(blob) {
    const type = call(N.blobType, blob), size = call(N.blobSize, blob);
    for (let i = 0; i < media.length; i++) if (call(N.startsWith, type, media[i])) return false;
    return size <= 8388608 && held + size <= 67108864 && call(N.mapSize, blobs) < 2000;
  }
  define(URL, "createObjectURL", { createObjectURL(obj) {
    const url = apply(createURL, this, arguments);
    try {
      if (obj instanceof N.Blob && maybeScript(obj)) { held += call(N.blobSize, obj); call(N.mapSet, blobs, url, obj); }
    } catch (e) { /* not one of ours to hold */ }
    return url;
  } }.createObjectURL, createURL);
  define(URL, "revokeObjectURL", { revokeObjectURL(url) {
    try {
      const key = str(url), blob = call(N.mapGet, blobs, key);
      if (blob !== undefined) { held -= call(N.blobSize, blob); call(N.mapDelete, blobs, key); }
    } catch (e) { /* as the browser's: nothing to revoke */ }
    return apply(revokeURL, this, arguments);
  } }.revokeObjectURL, revokeURL);

  // The Blob a blob: URL of this document (or, in an iframe, of the page's) holds for a script.
  function blobOf(scriptURL) {
    if (typeof scriptURL !== "string") return undefined;
    const blob = call(N.mapGet, blobs, scriptURL);
    return blob === undefined && hub !== null ? hub.blob(scriptURL) : blob;
  }

  // ---- the workers -----------------------------------------------------------------------------------------------
  // state: "starting" (made, its script not yet run), "live" (waited for), "loose" (too slow or gone:
  // still told the time, never waited for), "dead"
  const W = hub !== null ? hub.W : { list: [], byId: new N.Map(), next: 1, step: 0, awaited: 0, bc: null,
    shared: new N.Map() };
  function add(id, w, port, alive) {
    const rec = { id, state: "starting", waiting: false, w, port, alive };
    W.list[W.list.length] = rec;
    call(N.mapSet, W.byId, id, rec);
    return rec;
  }
  const marker = cfg.channel + ":started";
  // Our URL for a script file of the artefact's that a worker runs (see _workers.serve_worker): our query
  // (``kind``: "_k"/"_m" a dedicated classic/module worker, "_K"/"_M" a shared one) names its clock; the
  // page's fragment (never sent) goes along, so our import of the script keeps it (a stack's frames, a
  // module's import.meta.url show it). ``clock``: the URL of a module's clock.
  function fileUrl(file, id, rel0, date0, seed, kind) {
    const cut = call(N.indexOf, file, "#"), bare = cut < 0 ? file : call(N.slice, file, 0, cut);
    const sep = call(N.indexOf, bare, "?") < 0 ? "?" : "&";
    const value = id + "_" + rel0 + "_" + date0 + "_" + seed + kind +
      (cut < 0 ? "" : "_" + call(N.encode, undefined, call(N.slice, file, cut + 1)));
    return { ours: bare + sep + cfg.wkey + "=" + value + (cut < 0 ? "" : call(N.slice, file, cut)),
             clock: bare + sep + cfg.wkey + "=c" + value };
  }
  function bc() {
    if (W.bc === null) {
      W.bc = new N.BC(cfg.channel + ":bc");
      call(N.on, W.bc, "message", (e) => told(call(N.data, e)));
    }
    return W.bc;
  }
  function told(m) {
    const rec = m && call(N.mapGet, W.byId, m.id);
    if (!rec) {  // a worker a worker made: waited for from now on, as the page's own
      if (m && m.t === "born" && typeof m.id === "string") add(m.id, null, false);
      ev(":wv", null);
      return;
    }
    if (m.t === "ready" && rec.state === "starting") rec.state = "live";
    else if (m.t === "ack" && m.k === W.step && rec.waiting) { rec.waiting = false; W.awaited--; }
    else if (m.t === "bye") { if (rec.waiting) { rec.waiting = false; W.awaited--; } rec.state = "dead"; }
    ev(":wv", null);
  }
  // A data: worker (an opaque origin: no BroadcastChannel reaches it) talks over its own port; its
  // words to us are taken off the Worker before any listener of the page's (ours is its first).
  function portHeard(e) {
    const m = call(N.data, e);
    if (m === null || typeof m !== "object" || m.ab !== marker) return;
    call(N.stop, e);
    told(m);
  }
  function settle(rec, state) {
    if (hub !== null) return hub.settle(rec, state);
    if (rec.waiting) { rec.waiting = false; W.awaited--; }
    rec.state = state;
    ev(":wv", null);
  }
  // A worker an iframe's document made ends with that document (the browser ends it; no bye comes).
  function gone(rec) {
    if (rec.state === "dead" || rec.alive === null) return false;
    let alive = false;
    try { alive = rec.alive(); } catch (e) { alive = false; }
    if (!alive) settle(rec, "dead");
    return !alive;
  }
  // This document is alive: not closed, not navigated (an iframe's).
  const me = document;
  const alive = hub === null ? null : () => !call(N.closed, window) && call(N.docOf, window) === me;
  const NWorker = N.Worker;
  function Worker(scriptURL) {
    if (!new.target) {
      throw new N.TypeError("Failed to construct 'Worker': Please use the 'new' operator, this DOM object " +
        "constructor cannot be called as a function.");
    }
    const opts = arguments[1];
    const blob = blobOf(scriptURL);
    const file = blob === undefined ? sameOrigin(scriptURL) : null;
    const data = blob === undefined && file === null ? dataURL(scriptURL) : null;
    if ((blob === undefined && file === null && data === null) || W.list.length >= 200) {
      return construct(NWorker, arguments, new.target);
    }
    const id = W.next++, rel0 = clock.rel(), module = !!(opts && opts.type === "module");
    const date0 = (dateBase === null ? originDate() : dateBase) + rel0, seed = (cfg.seed ^ (id * 0x9E3779B1)) >>> 0;
    const args = [];
    for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
    // A classic script of the artefact's own: the harness serves, at its URL with a query of ours,
    // the clock and then an import of the script itself (see _workers.serve_worker): its relative URLs
    // resolve as before, and its location and the timeline's entry read without our query.
    if (file !== null) {
      const url = fileUrl(file, id, rel0, date0, seed, module ? "_m" : "_k");
      args[0] = url.ours;
      call(N.mapSet, ours, args[0], file);
      if (module) mods[mods.length] = { clock: url.clock, imp: file, entry: undefined };
      return started(id, construct(NWorker, args, new.target), false, alive, false);
    }
    // A data: worker: a data: URL of ours (its origin stays opaque) with the clock, talking over the
    // worker's port, then an import of the page's data: URL (its stack and strictness hold).
    if (data !== null) {
      // Its URL holds no secret (the tag comes in the first message); our frames name the page's URL.
      const dcfg = { port: true, id, rel0, date0, seed, loc: data };
      const named = call(N.indexOf, data.href, " ") >= 0 ? "" : "\n//# sourceURL=" + data.href;
      // A module: the page's module imported after the clock (its own imports run after it too; it
      // names itself by its URL).
      args[0] = "data:text/javascript," + call(N.encode, undefined, workerJs + "(" + call(N.stringify, JSON, dcfg) +
        (module ? ");await import(" + call(N.stringify, JSON, data.href) + ");"
          : ");importScripts(" + call(N.stringify, JSON, named ? dataNamed(data.href, named) : data.href) + ");" + named));
      return started(id, construct(NWorker, args, new.target), true, alive, false);
    }
    const wcfg = { bc: cfg.channel + ":bc", id, rel0, date0, seed, marker, src: workerJs, key: cfg.wkey,
      loc: { href: scriptURL, pathname: call(N.slice, scriptURL, 5) } };
    // A classic worker imports the page's Blob as a script of its own (its "use strict", its line
    // and column numbers stay; the page may revoke its URL at once, so under a URL of ours); a module
    // worker (strict anyway, and whose static imports would run before the clock) has it after ours.
    const prefix = workerJs + "(" + call(N.stringify, JSON, wcfg) + ");";
    let parts;
    try {
      parts = module ? [prefix, blob]
        : [prefix + "importScripts(" + call(N.stringify, JSON, call(createURL, URL, blob)) + ");"];
    } catch (e) {
      parts = [prefix, blob];
    }
    const own = call(createURL, URL, new N.Blob(parts, { type: call(N.blobType, blob) || "text/javascript" }));
    args[0] = own;
    let w;
    try {
      w = construct(NWorker, args, new.target);
    } finally {
      call(N.revokeURL, URL, own);
    }
    return started(id, w, false, alive, false);
  }
  // The page's data: script named by its own URL, fragment included, as a browser names a worker's
  // script (an import drops the fragment): the name appended to its text (percent-encoded, or in its
  // base64); as it is when it names itself or cannot be read.
  function dataNamed(href, named) {
    try {
      const hash = call(N.indexOf, href, "#"), bare = hash < 0 ? href : call(N.slice, href, 0, hash);
      const comma = call(N.indexOf, bare, ","), meta = call(N.slice, bare, 0, comma), body = call(N.slice, bare, comma + 1);
      if (comma < 0) return href;
      if (!call(N.endsWith, meta, ";base64")) {
        return call(N.indexOf, body, "sourceURL") >= 0 ? href : bare + call(N.encode, undefined, named);
      }
      if (call(N.indexOf, body, "%") >= 0) return href;
      const text = call(N.atob, window, body);
      return call(N.indexOf, text, "sourceURL") >= 0 ? href : meta + "," + call(N.btoa, window, text + named);
    } catch (e) {
      return href;
    }
  }
  // A worker's data: URL, as its location reads it (else null).
  function dataURL(scriptURL) {
    if (typeof scriptURL !== "string") return null;
    try {
      const url = construct(N.URL, [scriptURL]);
      const href = call(N.urlHref, url);
      if (!call(N.startsWith, href, "data:")) return null;
      return { href, pathname: call(N.urlPath, url), search: call(N.urlSearch, url), hash: call(N.urlHash, url) };
    } catch (e) {
      return null;
    }
  }
  // The script's absolute URL when it is of this document's origin (else null).
  function sameOrigin(scriptURL) {
    if (typeof scriptURL !== "string") return null;
    try {
      const href = call(N.urlHref, construct(N.URL, [scriptURL, call(N.baseURI, document)]));
      return call(N.startsWith, href, origin + "/") ? href : null;
    } catch (e) {
      return null;
    }
  }
  // A worker made: in the page's list (an iframe's too: the page's own function, through the hub).
  // A SharedWorker is not posted the marker (that would reach the page's port): it says it started.
  function started(id, w, port, whileAlive, shared) {
    if (hub !== null) return hub.started(id, w, port, whileAlive, shared);
    add(id, w, port, whileAlive);
    if (port) call(N.on, w, "message", portHeard, true);
    else bc();
    if (!shared) call(N.post, w, marker);
    ev(":wn", null);
    return w;
  }
  defineProperty(Worker, "prototype", { value: NWorker.prototype, writable: false, enumerable: false, configurable: false });
  defineProperty(NWorker.prototype, "constructor", { value: Worker, writable: true, configurable: true, enumerable: false });
  define(window, "Worker", Worker, NWorker);
  const terminate = N.terminate;
  define(NWorker.prototype, "terminate", { terminate() {
    for (let i = 0; i < W.list.length; i++) if (W.list[i].w === this && W.list[i].state !== "dead") settle(W.list[i], "dead");
    return apply(terminate, this, []);
  } }.terminate, terminate);

  // ---- SharedWorker ---------------------------------------------------------------------------------------
  // One from a blob: URL or a script file of this origin starts with the worker clock (told the page's
  // time over the same BroadcastChannel; it says it started once its script ran). The same script URL
  // and name give the same worker, in this document and the page's iframes: our URL for it is kept
  // (W.shared) and handed out again, so the browser connects the new one to the running worker.
  const NShared = N.Shared;
  if (typeof NShared === "function") {
    const SharedWorker = function SharedWorker(scriptURL) {
      if (!new.target) {
        throw new N.TypeError("Failed to construct 'SharedWorker': Please use the 'new' operator, this DOM " +
          "object constructor cannot be called as a function.");
      }
      const opts = arguments[1];
      const args = [];
      for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
      const blob = blobOf(scriptURL);
      const file = blob === undefined ? sameOrigin(scriptURL) : null;
      if ((blob === undefined && file === null) || W.list.length >= 200) return construct(NShared, args, new.target);
      let name = "", module = false;
      try {
        if (typeof opts === "string") name = opts;
        else if (opts !== undefined && opts !== null) {
          if (opts.name !== undefined) name = str(opts.name);
          module = opts.type === "module";
        }
      } catch (e) { return construct(NShared, args, new.target); }
      const key = (file !== null ? file : scriptURL) + "\n" + name + "\n" + (module ? "m" : "k");
      const known = call(N.mapGet, W.shared, key);
      if (known !== undefined) {  // the running one (or, when it has ended, one made anew from our URL)
        args[0] = known;
        return construct(NShared, args, new.target);
      }
      const id = W.next++, rel0 = clock.rel();
      const date0 = originDate() + rel0, seed = (cfg.seed ^ (id * 0x9E3779B1)) >>> 0;
      if (file !== null) {
        args[0] = fileUrl(file, id, rel0, date0, seed, module ? "_M" : "_K").ours;
        call(N.mapSet, ours, args[0], file);
      } else {
        const wcfg = { bc: cfg.channel + ":bc", id, rel0, date0, seed, marker, src: workerJs, key: cfg.wkey,
          shared: true, loc: { href: scriptURL, pathname: call(N.slice, scriptURL, 5) } };
        const prefix = workerJs + "(" + call(N.stringify, JSON, wcfg) + ");";
        let parts;
        try {
          parts = module ? [prefix, blob]
            : [prefix + "importScripts(" + call(N.stringify, JSON, call(createURL, URL, blob)) + ");"];
        } catch (e) {
          parts = [prefix, blob];
        }
        args[0] = call(createURL, URL, new N.Blob(parts, { type: call(N.blobType, blob) || "text/javascript" }));
      }
      call(N.mapSet, W.shared, key, args[0]);
      return started(id, construct(NShared, args, new.target), false, alive, true);
    };
    defineProperty(SharedWorker, "prototype", { value: NShared.prototype, writable: false, enumerable: false, configurable: false });
    defineProperty(NShared.prototype, "constructor", { value: SharedWorker, writable: true, configurable: true, enumerable: false });
    define(window, "SharedWorker", SharedWorker, NShared);
  }

  // ---- the page's iframes of this origin keep their workers in the page's list --------------------------------
  const myHub = hub !== null ? hub : { W, clock, originDate, started, settle,
    blob: (url) => call(N.mapGet, blobs, url) };
  call(N.on, window, cfg.channel + ":wh", (e) => {
    try {
      const asked = call(N.detail, e);
      if (asked !== null && typeof asked === "object") asked.hub = myHub;
    } catch (err) { /* not a hub request */ }
  });

  // ---- the harness's frame step asks here -------------------------------------------------------------------
  const api = hub !== null ? { ping() { return true; } } : {
    ping() { return true; },
    // How many workers are still starting, how many answers the last push waits for, how many made.
    status() {
      let starting = 0;
      for (let i = 0; i < W.list.length; i++) if (!gone(W.list[i]) && W.list[i].state === "starting") starting++;
      return [starting, W.awaited, W.list.length];
    },
    // Tell every worker the page's time (just after a frame: the frame's time); wait for the live ones.
    push() {
      W.step++;
      W.awaited = 0;
      for (let i = 0; i < W.list.length; i++) {
        const rec = W.list[i];
        gone(rec);
        rec.waiting = rec.state === "live";
        if (rec.waiting) W.awaited++;
      }
      const rel = clock.rel();
      call(N.bcPost, bc(), { t: "push", k: W.step, rel, ft: rel });
      for (let i = 0; i < W.list.length; i++) {
        const rec = W.list[i];
        if (rec.port && rec.state !== "dead") call(N.post, rec.w, { ab: marker, t: "push", k: W.step, rel, ft: rel });
      }
      return W.awaited;
    },
    // Those that did not start or answer in time are no longer waited for.
    loosen() {
      for (let i = 0; i < W.list.length; i++) {
        const rec = W.list[i];
        if (rec.state === "starting" || rec.waiting) settle(rec, "loose");
      }
      return true;
    },
  };
  call(N.on, window, cfg.channel + ":w", (e) => {
    let out;
    try {
      const req = call(N.parse, JSON, call(N.detail, e));
      const fn = api[req[0]];
      out = call(N.stringify, JSON, fn ? apply(fn, api, N.isArray(req[1]) ? req[1] : []) : null);
    } catch (err) {
      out = "null";
    }
    ev(":wy", out);
  });
})(__AB_CONFIG__, __AB_WORKER_JS__);
