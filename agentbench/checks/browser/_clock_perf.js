// What a page or a worker reads of its performance timeline, as a person's browser shows it. A worker
// from a script file is asked for at its URL with a query of ours (see _workers.py); the entry the
// browser makes for that request must read with the URL the page gave, by every reader: an entry's
// name, toJSON, getEntriesByName (on performance and on an observer's list, which find it by the
// page's URL and never by ours). Our imports (a classic worker's, in its own timeline; a module worker's,
// in the page's) are left out by every reader (getEntries, by type, by name, an observer's list; in a
// worker, an observer called for them alone is not called). Joined by _workers.py into
// _clock_workers.js (the page) and _clock_worker.js (a worker, one line: keep every statement ended
// by a semicolon and comments on lines of their own).
// (g, native, ours, hidden): the global; the clock's registry (a replaced function reads as native);
// a Map of our URLs to the page's; {on(), test(entry), observer}: whether any entry may be ours to
// leave out, whether this one is, whether to keep an observer from a call for ours alone (or null).
// Costs nothing until a worker is made: every replacement calls the browser's own while ours is empty.
((g, native, ours, hidden) => {
  "use strict";
  const apply = Reflect.apply, construct = Reflect.construct, getDesc = Object.getOwnPropertyDescriptor;
  const defineProperty = Object.defineProperty;
  const PE = g.PerformanceEntry, P = g.Performance, L = g.PerformanceObserverEntryList;
  const RT = g.PerformanceResourceTiming, PO = g.PerformanceObserver;
  if (typeof PE !== "function" || typeof P !== "function" || typeof RT !== "function") return;
  const N = {
    name: getDesc(PE.prototype, "name").get, start: getDesc(PE.prototype, "startTime").get,
    toJSON: RT.prototype.toJSON, mapGet: Map.prototype.get, mapSize: getDesc(Map.prototype, "size").get,
    entries: Map.prototype.entries, next: Object.getPrototypeOf(new Map().entries()).next, String: g.String,
    indexOf: String.prototype.indexOf, slice: String.prototype.slice, startsWith: String.prototype.startsWith,
  };
  const call = (fn, self, ...args) => apply(fn, self, args);
  const mine = () => call(N.mapSize, ours) > 0;
  // One of ours reads as the page's URL (with the fragment of the request's, when ours has none).
  const shown = (internal) => {
    const page = call(N.mapGet, ours, internal);
    if (page !== undefined) return page;
    const at = call(N.indexOf, internal, "#");
    const base = at < 0 ? undefined : call(N.mapGet, ours, call(N.slice, internal, 0, at));
    return base === undefined ? internal : base + call(N.slice, internal, at);
  };
  // A replacement where the browser has it, with the browser's length and property attributes.
  const put = (obj, name, value) => {
    const was = getDesc(obj, name);
    if (!was || typeof was.value !== "function") return null;
    native(value, name);
    defineProperty(value, "length", { value: was.value.length, configurable: true });
    defineProperty(obj, name, { value, writable: was.writable, enumerable: was.enumerable, configurable: was.configurable });
    return was.value;
  };
  const visible = (list) => {
    if (!hidden || !hidden.on()) return list;
    let out = null;
    for (let i = 0; i < list.length; i++) {
      if (hidden.test(list[i])) { if (out === null) { out = []; for (let j = 0; j < i; j++) out[j] = list[j]; } }
      else if (out !== null) out[out.length] = list[i];
    }
    return out === null ? list : out;
  };

  const nameGet = N.name;
  const getter = getDesc({ get name() { return mine() ? shown(call(nameGet, this)) : call(nameGet, this); } }, "name").get;
  const was = getDesc(PE.prototype, "name");
  native(getter, "get name");
  defineProperty(PE.prototype, "name", { get: getter, set: was.set, enumerable: was.enumerable, configurable: was.configurable });

  const toJSON = N.toJSON;
  put(RT.prototype, "toJSON", { toJSON() {
    const out = apply(toJSON, this, []);
    if (mine()) {
      const internal = call(nameGet, this), page = shown(internal);
      if (page !== internal) defineProperty(out, "name", { value: page, writable: true, enumerable: true, configurable: true });
    }
    return out;
  } }.toJSON);

  // By name: the browser's answer for the name, less ours, with ours whose page URL is that name, in
  // the timeline's order (by start time).
  function byName(fn, self, args) {
    if (args.length < 1 || (!mine() && !(hidden && hidden.on()))) return apply(fn, self, args);
    const name = `${args[0]}`;
    const rest = args.length > 1 && args[1] !== undefined ? [`${args[1]}`] : [];
    const found = visible(apply(fn, self, [name, ...rest]));
    if (!mine()) return found;
    let out = [];
    for (let i = 0; i < found.length; i++) if (shown(call(nameGet, found[i])) === name) out[out.length] = found[i];
    const it = call(N.entries, ours);
    for (let step = call(N.next, it); !step.done; step = call(N.next, it)) {
      const rw = step.value[0], page = step.value[1];
      let asked = null;
      if (page === name) asked = rw;
      else if (call(N.startsWith, name, page + "#") && call(N.indexOf, page, "#") < 0) asked = rw + call(N.slice, name, page.length);
      if (asked === null) continue;
      const more = visible(apply(fn, self, [asked, ...rest]));
      if (more.length === 0) continue;
      const merged = [];
      let i = 0, j = 0;
      while (i < out.length || j < more.length) {
        const takeOut = j >= more.length || (i < out.length && call(N.start, out[i]) <= call(N.start, more[j]));
        merged[merged.length] = takeOut ? out[i++] : more[j++];
      }
      out = merged;
    }
    return out;
  }
  const pByName = P.prototype.getEntriesByName;
  put(P.prototype, "getEntriesByName", { getEntriesByName(name) { return byName(pByName, this, arguments); } }.getEntriesByName);
  const lByName = L && L.prototype.getEntriesByName;
  if (lByName) put(L.prototype, "getEntriesByName", { getEntriesByName(name) { return byName(lByName, this, arguments); } }.getEntriesByName);
  if (!hidden) return;

  // ---- a worker's own timeline: our import of its script is left out -------------------------------------
  const pAll = P.prototype.getEntries, pByType = P.prototype.getEntriesByType;
  put(P.prototype, "getEntries", { getEntries() { return visible(apply(pAll, this, arguments)); } }.getEntries);
  put(P.prototype, "getEntriesByType", { getEntriesByType(type) { return visible(apply(pByType, this, arguments)); } }.getEntriesByType);
  if (L) {
    const lAll = L.prototype.getEntries, lByType = L.prototype.getEntriesByType;
    put(L.prototype, "getEntries", { getEntries() { return visible(apply(lAll, this, arguments)); } }.getEntries);
    put(L.prototype, "getEntriesByType", { getEntriesByType(type) { return visible(apply(lByType, this, arguments)); } }.getEntriesByType);
  }
  // An observer the browser would not call (its list holds our entries alone) is not called (in a
  // worker only: the callback's wrapper is a frame on its stack, which a page's must never show).
  if (hidden.observer && typeof PO === "function" && L) {
    const lAll = L.prototype.getEntries;
    function PerformanceObserver(callback) {
      if (!new.target) return apply(PO, this, arguments);
      const args = [];
      for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
      if (typeof callback === "function") {
        args[0] = function (list) {
          if (hidden.on()) {
            const all = apply(lAll, list, []);
            if (all.length > 0 && visible(all).length === 0) return undefined;
          }
          return apply(callback, this, arguments);
        };
      }
      return construct(PO, args, new.target);
    }
    defineProperty(PerformanceObserver, "prototype", { value: PO.prototype, writable: false, enumerable: false, configurable: false });
    Object.setPrototypeOf(PerformanceObserver, Object.getPrototypeOf(PO));
    const statics = Reflect.ownKeys(PO);
    for (let i = 0; i < statics.length; i++) {
      const key = statics[i];
      if (key !== "prototype" && key !== "length" && key !== "name") defineProperty(PerformanceObserver, key, getDesc(PO, key));
    }
    defineProperty(PO.prototype, "constructor", { value: PerformanceObserver, writable: true, configurable: true, enumerable: false });
    put(g, "PerformanceObserver", PerformanceObserver);
  }
})
