// A part of the virtual clock (see _clock.js): the performance timeline's times on this clock.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
  // ---- entries' times ----------------------------------------------------------------------------------
  // The browser stamps the timeline's entries (the navigation, resources, paints, marks, measures) and
  // performance.timing with real times; a page compares them with performance.now(). They read on
  // this document's clock: the clock keeps marks of the real time and the time the page was shown (at
  // a read, at a frame), and a real time reads as the time of the mark before it plus the real time
  // since, never past the next mark (nor, after the last, past what the page has read); a time before
  // this script ran (the navigation's fetch and response) is scaled into the document's start (60-180
  // ms in a top document, see START), so a response ends before the first script reads the clock. A
  // mark or measure given its times by the page keeps them. Zero (what did not happen) stays zero.
  const TM = { real: [initStart], v: [S.now] };
  function timeMark(v) {
    const n = TM.real.length, real = call(N.realNow, performance);
    // (frames are played faster than real time: a new frame's time is a mark however little real time passed)
    if (!(v >= TM.v[n - 1]) || (real - TM.real[n - 1] < 1 && v - TM.v[n - 1] < 1)) return;
    if (n >= 50000) {  // a long session: every other mark is enough
      let k = 1;
      for (let i = 2; i < n; i += 2) { TM.real[k] = TM.real[i]; TM.v[k] = TM.v[i]; k++; }
      TM.real.length = TM.v.length = k;
    }
    push(TM.real, real);
    push(TM.v, v);
  }
  function virtualOf(t) {
    if (!(t > 0)) return t;
    const R = TM.real, V = TM.v, n = R.length;
    if (t <= R[0]) return R[0] > 0 ? t * V[0] / R[0] : V[0];
    let lo = 0, hi = n - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (R[mid] <= t) lo = mid; else hi = mid - 1; }
    const v = V[lo] + (t - R[lo]), cap = lo + 1 < n ? V[lo + 1] : mathMax(V[lo], up ? V[lo] : S.shown);
    return v > cap ? cap : v;
  }
  try { (() => {
    const PE = window.PerformanceEntry, P = window.Performance;
    if (typeof PE !== "function" || typeof P !== "function") return;
    const given = new N.WeakMap();  // entries whose times the page gave
    const fixed = new N.WeakMap();  // measures: [startTime, duration] on this clock, worked out when made
    const startGet = getterOf(PE.prototype, "startTime"), durGet = getterOf(PE.prototype, "duration");
    if (!startGet || !durGet) return;
    const startOf = (e, s) => {
      if (call(N.wmHas, given, e)) return s;
      const f = call(N.wmGet, fixed, e);
      return f !== undefined ? f[0] : virtualOf(s);
    };
    const spanOf = (e, s, d) => {
      const f = call(N.wmGet, fixed, e);
      if (f !== undefined) return f[1];
      return call(N.wmHas, given, e) || !(d > 0) ? d : virtualOf(s + d) - virtualOf(s);
    };
    wrapGetter(PE.prototype, "startTime", getDesc({ get startTime() {
      return startOf(this, call(startGet, this));
    } }, "startTime").get);
    wrapGetter(PE.prototype, "duration", getDesc({ get duration() {
      const d = call(durGet, this);
      return spanOf(this, call(startGet, this), d);
    } }, "duration").get);
    // Every other time an entry has (a resource's phases, the navigation's events, an event's processing).
    const TIMES = ["workerStart", "redirectStart", "redirectEnd", "fetchStart", "domainLookupStart", "domainLookupEnd",
      "connectStart", "connectEnd", "secureConnectionStart", "requestStart", "firstInterimResponseStart",
      "finalResponseHeadersStart", "responseStart", "responseEnd", "unloadEventStart", "unloadEventEnd",
      "domInteractive", "domContentLoadedEventStart", "domContentLoadedEventEnd", "domComplete", "loadEventStart",
      "loadEventEnd", "processingStart", "processingEnd", "renderTime", "loadTime", "criticalCHRestart"];
    const kinds = ["PerformanceResourceTiming", "PerformanceNavigationTiming", "PerformanceEventTiming",
      "LargestContentfulPaint", "PerformancePaintTiming", "PerformanceMark", "PerformanceMeasure",
      "PerformanceLongTaskTiming", "PerformanceElementTiming"];
    const isTime = Object.create(null);
    for (let i = 0; i < TIMES.length; i++) isTime[TIMES[i]] = true;
    const protos = [PE.prototype];
    for (let i = 0; i < kinds.length; i++) {
      const k = window[kinds[i]];
      if (typeof k !== "function") continue;
      push(protos, k.prototype);
      for (let j = 0; j < TIMES.length; j++) {
        const real = getterOf(k.prototype, TIMES[j]);
        if (!real || !getDesc(k.prototype, TIMES[j])) continue;
        wrapGetter(k.prototype, TIMES[j], getDesc({ get [TIMES[j]]() { return virtualOf(call(real, this)); } }, TIMES[j]).get);
      }
    }
    // toJSON of each: the browser's, its times read on this clock.
    for (let i = 0; i < protos.length; i++) {
      const proto = protos[i], realJSON = getDesc(proto, "toJSON");
      if (!realJSON || typeof realJSON.value !== "function") continue;
      const was = realJSON.value;
      define(proto, "toJSON", { toJSON() {
        const out = call(was, this);
        if (!out || typeof out !== "object") return out;
        const s = out.startTime, d = out.duration, ks = objectKeys(out);
        for (let j = 0; j < ks.length; j++) if (isTime[ks[j]] && typeof out[ks[j]] === "number") out[ks[j]] = virtualOf(out[ks[j]]);
        if (typeof s === "number") out.startTime = startOf(this, s);
        if (typeof d === "number" && typeof s === "number") out.duration = spanOf(this, s, d);
        return out;
      } }.toJSON, realJSON.enumerable);
    }
    // A mark at a time the page gave (not now), a measure between times it gave: its times as given.
    const realMark = P.prototype.mark, realMeasure = P.prototype.measure;
    if (typeof realMark === "function") {
      define(P.prototype, "mark", { mark(markName) {
        const before = call(N.realNow, performance), e = apply(realMark, this, arguments);
        try {
          const s = call(startGet, e);
          if (!(s >= before - 0.2 && s <= call(N.realNow, performance) + 0.2)) call(N.wmSet, given, e, true);
        } catch (err) { /* no entry */ }
        return e;
      } }.mark, getDesc(P.prototype, "mark").enumerable);
    }
    // A measure's ends, each as the page named it: a time it gave (in an options object: start, end,
    // duration) as given; a mark by its name as that mark reads; none (the time origin, now) as the
    // browser's real time reads on this clock. The browser measured between real times and the page's
    // numbers alike; it is read as worked out here.
    const byName = P.prototype.getEntriesByName;
    const markAt = (self, name, real) => {
      const list = call(byName, self, name, "mark");
      const m = list.length ? list[list.length - 1] : null;
      return m === null ? virtualOf(real) : startOf(m, call(startGet, m));
    };
    if (typeof realMeasure === "function") {
      define(P.prototype, "measure", { measure(measureName) {
        const e = apply(realMeasure, this, arguments);
        try {
          const s = call(startGet, e), d = call(durGet, e), a1 = arguments[1];
          let start = a1, end = arguments[2], dur;
          if (a1 !== null && typeof a1 === "object") { start = a1.start; end = a1.end; dur = a1.duration; }
          let sv = typeof start === "number" ? start : typeof start === "string" ? markAt(this, start, s) : null;
          let ev = typeof end === "number" ? end : typeof end === "string" ? markAt(this, end, s + d) : null;
          if (typeof dur === "number") {
            if (sv !== null) ev = sv + dur;
            else if (ev !== null) sv = ev - dur;
          }
          if (sv === null) sv = virtualOf(s);
          if (ev === null) ev = virtualOf(s + d);
          call(N.wmSet, fixed, e, [sv, ev - sv]);
        } catch (err) { /* no entry, or options the page's getters broke: as the browser has it */ }
        return e;
      } }.measure, getDesc(P.prototype, "measure").enumerable);
    }
    // performance.timing: Date's times (whole ms) of the same moments, 0 for what did not happen.
    const PT = window.PerformanceTiming;
    if (typeof PT !== "function" || !realOrigin) return;
    const ptNames = ["navigationStart", "unloadEventStart", "unloadEventEnd", "redirectStart", "redirectEnd",
      "fetchStart", "domainLookupStart", "domainLookupEnd", "connectStart", "connectEnd", "secureConnectionStart",
      "requestStart", "responseStart", "responseEnd", "domLoading", "domInteractive", "domContentLoadedEventStart",
      "domContentLoadedEventEnd", "domComplete", "loadEventStart", "loadEventEnd"];
    const navStart = getterOf(PT.prototype, "navigationStart");
    if (!navStart) return;
    const dated = (x, self) => {
      if (!(x > 0)) return x;
      const origin = call(navStart, self);
      return floor(originDate() + (x === origin ? 0 : virtualOf(x - origin)));
    };
    for (let i = 0; i < ptNames.length; i++) {
      const real = getterOf(PT.prototype, ptNames[i]);
      if (!real) continue;
      wrapGetter(PT.prototype, ptNames[i], getDesc({ get [ptNames[i]]() { return dated(call(real, this), this); } }, ptNames[i]).get);
    }
    const ptJSON = getDesc(PT.prototype, "toJSON");
    if (ptJSON && typeof ptJSON.value === "function") {
      const was = ptJSON.value;
      define(PT.prototype, "toJSON", { toJSON() {
        const out = call(was, this);
        if (!out || typeof out !== "object") return out;
        const ks = objectKeys(out);
        for (let j = 0; j < ks.length; j++) if (typeof out[ks[j]] === "number") out[ks[j]] = dated(out[ks[j]], this);
        return out;
      } }.toJSON, ptJSON.enumerable);
    }
  })(); } catch (e) { /* a browser without one of these: left out, never the clock */ }
