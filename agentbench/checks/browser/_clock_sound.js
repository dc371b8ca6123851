// A part of the virtual clock (see _clock.js): dialogs, popups and sound.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
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


  // ---- Web Audio: an AudioContext's clock is the page's -------------------------------------------------
  // A running context's currentTime moves with performance.now() (in whole render quanta of 128
  // samples, as the audio thread moves it) and stands still while it is suspended or closed, so a game
  // that times itself by it runs on the clock it is judged on. A context follows the state the browser
  // gives it (read when its time is read and when its state changes). getOutputTimestamp() pairs that
  // time with the document's. An OfflineAudioContext renders as fast as it can in any browser: its own.
  try { (() => {
    // (window's: the AudioContext below is ours)
    const NAudio = window.AudioContext, NBase = window.BaseAudioContext;
    if (typeof NAudio !== "function" || typeof NBase !== "function") return;
    const BAC = NBase.prototype;
    const A = { time: getDesc(BAC, "currentTime"), state: getterOf(BAC, "state"), rate: getterOf(BAC, "sampleRate"),
                stamp: NAudio.prototype.getOutputTimestamp, TypeError: window.TypeError,
                setProto: Object.setPrototypeOf, getProto: Object.getPrototypeOf };
    if (!A.time || !A.time.get || !A.state || !A.rate) return;
    const clocks = new N.WeakMap();  // context -> { run: s played before `since`, since: document ms it runs from, or -1 }
    const seenNow = () => (up ? up.shown() - S.offset : shownGet());
    function follow(ac, rec) {  // time runs only while the browser says the context runs
      let running = false;
      try { running = call(A.state, ac) === "running"; } catch (e) { /* a closed realm: stopped */ }
      const t = seenNow();
      if (running && rec.since < 0) rec.since = t;
      else if (!running && rec.since >= 0) { rec.run += (t - rec.since) / 1000; rec.since = -1; }
      return t;
    }
    function played(ac, rec) {  // [context time in whole render quanta, the document's time]
      const t = follow(ac, rec);
      const rate = call(A.rate, ac), s = rec.run + (rec.since >= 0 ? (t - rec.since) / 1000 : 0);
      return [floor(s * rate / 128 + 1e-9) * 128 / rate, t];
    }
    function AudioContext() {
      if (!new.target) {
        throw new A.TypeError("Failed to construct 'AudioContext': Please use the 'new' operator, this DOM object " +
          "constructor cannot be called as a function.");
      }
      const ac = construct(NAudio, arguments, new.target);
      const rec = { run: 0, since: -1 };
      call(N.wmSet, clocks, ac, rec);
      follow(ac, rec);
      call(N.addEventListener, ac, "statechange", () => { follow(ac, rec); });
      return ac;
    }
    defineProperty(AudioContext, "prototype", { value: NAudio.prototype, writable: false, enumerable: false, configurable: false });
    call(A.setProto, undefined, AudioContext, call(A.getProto, undefined, NAudio));
    defineProperty(NAudio.prototype, "constructor", { value: AudioContext, writable: true, configurable: true, enumerable: false });
    define(window, "AudioContext", AudioContext);
    const realTime = A.time.get;
    const get = getDesc({ get currentTime() {
      const real = call(realTime, this);  // a foreign receiver throws as the browser's getter does
      const rec = call(N.wmGet, clocks, this);
      return rec ? played(this, rec)[0] : real;
    } }, "currentTime").get;
    native(get, "get currentTime");
    defineProperty(BAC, "currentTime", { get, set: A.time.set, enumerable: A.time.enumerable, configurable: true });
    if (typeof A.stamp === "function") {
      define(NAudio.prototype, "getOutputTimestamp", { getOutputTimestamp() {
        const out = call(A.stamp, this);
        const rec = call(N.wmGet, clocks, this);
        if (rec && out && typeof out === "object") {
          const p = played(this, rec), ctx = p[0], t = p[1];
          const at = rec.since >= 0 ? t - (rec.run + (t - rec.since) / 1000 - ctx) * 1000 : 0;
          out.contextTime = ctx;
          out.performanceTime = ctx > 0 ? at : 0;
        }
        return out;
      } }.getOutputTimestamp, true);
    }
  })(); } catch (e) { /* a browser without Web Audio: left out, never the clock */ }
