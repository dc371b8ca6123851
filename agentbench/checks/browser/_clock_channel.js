// A part of the virtual clock (see _clock.js): stepping (driven by the harness), the channel, iframe links.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
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
    // Frame n begins: the timers due up to its time, then its animation frame callbacks, as steps
    // (see step: the view dispatches each armed call and asks for the next).
    frame(n, expectId) {
      if (expectId && expectId !== S.id) return { stale: true };
      commit();
      S.frame = n;
      return startFrame(frameRel(n));
    },
    next() { return step(); },
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
          names: nativeNames, rel: nowGet, set: nowSet, date: dateNow, origin: originDate, touch: pageTouch,
          shown() { return up ? up.shown() - S.offset : shownGet(); },
          adopt(kid) { push(kids, kid); },
          // A linked clock's set-up ran inside the page's task: that real time is not the page's work.
          skip(ms) {
            if (up) up.skip(ms);
            else if (S.anchor >= 0) S.anchor += ms;
          },
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
        callOne(limit) { return firstCall(limit - S.offset); },
        rafCalls(ft, out) { return rafCalls(ft - S.offset, out); },
      });
    } catch (e) { /* the parent's document is gone */ }
    try { up.skip(call(N.realNow, performance) - initStart); } catch (e) { /* the parent's document is gone */ }
  }
  const channel = cfg.channel, reply = cfg.channel + ":r";
  call(N.addEventListener, window, channel, (ev) => {
    S.lastEnd = -1;  // the harness's task: no gap across it is the page's work
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
