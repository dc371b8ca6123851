// A part of the virtual clock (see _clock.js): what a person's Chrome has and the headless shell lacks.
// The parts are one closure, joined in order by _scripts.py; this one is not a script alone.
  // ---- a person's Chrome --------------------------------------------------------------------------------
  // The checker's browser is Chromium's headless shell. It has no PDF viewer (navigator.plugins and
  // navigator.mimeTypes are empty, navigator.pdfViewerEnabled is false), no window.chrome, and it says
  // Notification.permission "denied" while the permissions API says "prompt": the classic ways a page
  // tells a headless browser from a person's. Where the browser lacks them they read as Chromium's full
  // browser shows them (headless or not), from the same interfaces; where it has them (the hosts' own
  // chromium) they stay the browser's, but for chrome.loadTimes() and chrome.csi(), which tell time
  // (below). An interface this browser lacks is left out, never the clock.
  const objectCreate = Object.create;
  try { (() => {
    const nav = navigator;
    const pdfGet = getterOf(Navigator.prototype, "pdfViewerEnabled");
    if (!pdfGet || call(pdfGet, nav) !== false) return;  // a browser with a PDF viewer: a person's already
    wrapGetter(Navigator.prototype, "pdfViewerEnabled", getDesc({ get pdfViewerEnabled() {
      call(pdfGet, this);  // a foreign receiver throws as the browser's getter does
      return true;
    } }, "pdfViewerEnabled").get);

    // Notification.permission: "default" (never asked), as the permissions API's "prompt" says.
    if (typeof Notification === "function") {
      const realPerm = getterOf(Notification, "permission");
      if (realPerm) {
        wrapGetter(Notification, "permission", getDesc({ get permission() {
          const v = call(realPerm, this);
          return v === "denied" ? "default" : v;
        } }, "permission").get);
      }
    }

    // navigator.plugins and navigator.mimeTypes: the five PDF viewer entries every Chrome lists, each
    // with its two MIME types; objects of the browser's own interfaces (PluginArray, Plugin,
    // MimeTypeArray, MimeType) whose getters and methods answer for them.
    const kinds = [PluginArray, Plugin, MimeTypeArray, MimeType];
    if (kinds.some((k) => typeof k !== "function")) return;
    const realPlugins = getterOf(Navigator.prototype, "plugins"), realMimes = getterOf(Navigator.prototype, "mimeTypes");
    if (!realPlugins || !realMimes || call(getterOf(PluginArray.prototype, "length"), call(realPlugins, nav)) !== 0) return;
    const records = new N.WeakMap();  // one of our objects -> its fields, items and names
    const own = (o, key, value, enumerable) => defineProperty(o, key, { value, writable: false, enumerable, configurable: true });
    function listOf(proto, fields, items, nameOf) {
      const o = objectCreate(proto), named = objectCreate(null);
      for (let i = 0; i < items.length; i++) own(o, str(i), items[i], true);
      for (let i = 0; i < items.length; i++) {
        const name = nameOf(items[i]);
        if (!(name in named)) { named[name] = items[i]; own(o, name, items[i], false); }
      }
      call(N.wmSet, records, o, { fields, items, named });
      return o;
    }
    const PDF = "Portable Document Format";
    const typeOf = (m) => call(N.wmGet, records, m).fields.type;
    const nameOf = (p) => call(N.wmGet, records, p).fields.name;
    const plugins = [];
    let firstMimes = null;
    const names = ["PDF Viewer", "Chrome PDF Viewer", "Chromium PDF Viewer", "Microsoft Edge PDF Viewer", "WebKit built-in PDF"];
    for (let i = 0; i < names.length; i++) {
      const fields = { name: names[i], filename: "internal-pdf-viewer", description: PDF };
      const mimes = [];
      for (const type of ["application/pdf", "text/pdf"]) {
        const m = objectCreate(MimeType.prototype);
        call(N.wmSet, records, m, { fields: { type, suffixes: "pdf", description: PDF, enabledPlugin: null }, items: [], named: null });
        push(mimes, m);
      }
      const p = listOf(Plugin.prototype, fields, mimes, typeOf);
      for (let j = 0; j < mimes.length; j++) call(N.wmGet, records, mimes[j]).fields.enabledPlugin = p;
      push(plugins, p);
      if (firstMimes === null) firstMimes = mimes;
    }
    const pluginArray = listOf(PluginArray.prototype, {}, plugins, nameOf);
    const mimeArray = listOf(MimeTypeArray.prototype, {}, firstMimes, typeOf);

    const field = (proto, name, compute) => {
      const real = getterOf(proto, name);
      if (!real) return;
      wrapGetter(proto, name, getDesc({ get [name]() {
        const r = call(N.wmGet, records, this);
        return r === undefined ? call(real, this) : compute(r);
      } }, name).get);
    };
    const methods = (proto, iface) => {
      const realItem = proto.item, realNamed = proto.namedItem;
      const needs = (method, args) => {
        if (args.length === 0) {
          throw new TypeError(`Failed to execute '${method}' on '${iface}': 1 argument required, but only 0 present.`);
        }
      };
      define(proto, "item", { item(index) {
        const r = call(N.wmGet, records, this);
        if (r === undefined) return apply(realItem, this, arguments);
        needs("item", arguments);
        const v = r.items[index >>> 0];
        return v === undefined ? null : v;
      } }.item, true);
      define(proto, "namedItem", { namedItem(name) {
        const r = call(N.wmGet, records, this);
        if (r === undefined) return apply(realNamed, this, arguments);
        needs("namedItem", arguments);
        const v = r.named[str(name)];
        return v === undefined ? null : v;
      } }.namedItem, true);
    };
    for (const [proto, iface] of [[PluginArray.prototype, "PluginArray"], [Plugin.prototype, "Plugin"],
      [MimeTypeArray.prototype, "MimeTypeArray"]]) {
      field(proto, "length", (r) => r.items.length);
      methods(proto, iface);
    }
    for (const name of ["name", "filename", "description"]) field(Plugin.prototype, name, (r) => r.fields[name]);
    for (const name of ["type", "suffixes", "description", "enabledPlugin"]) field(MimeType.prototype, name, (r) => r.fields[name]);
    wrapGetter(Navigator.prototype, "plugins", getDesc({ get plugins() { call(realPlugins, this); return pluginArray; } }, "plugins").get);
    wrapGetter(Navigator.prototype, "mimeTypes", getDesc({ get mimeTypes() { call(realMimes, this); return mimeArray; } }, "mimeTypes").get);
  })(); } catch (e) { /* an interface unlike Chromium's: the browser's own stays */ }

  // window.chrome: loadTimes() and csi(), their times on this clock (the browser's own, where it has
  // them, tell real time), and app where the browser has no window.chrome.
  try { (() => {
    // Date's value at DOMContentLoaded and at load (0: not yet), from the clock's time, not a read:
    // a read would start the work of the task it falls in (an iframe's load runs in the page's).
    let ready = 0, loaded = 0;
    const stamp = () => originDate() + nowGet();
    call(N.addEventListener, document, "DOMContentLoaded", () => { ready = stamp(); }, true);
    call(N.addEventListener, window, "load", () => { loaded = stamp(); }, true);
    let navType = "navigate";
    try { navType = call(N.navEntries, performance, "navigation")[0].type; } catch (e) { /* a new navigation */ }
    const secs = (ms) => floor(ms) / 1000;
    const loadTimes = native([() => {
      const start = secs(originDate());
      return {
        requestTime: start, startLoadTime: start, commitLoadTime: secs(originDate() + START / 2),
        finishDocumentLoadTime: ready ? secs(ready) : 0, finishLoadTime: loaded ? secs(loaded) : 0,
        firstPaintTime: ready ? secs(ready) : 0, firstPaintAfterLoadTime: 0,
        navigationType: navType === "reload" ? "Reload" : navType === "back_forward" ? "BackForward" : "Other",
        wasFetchedViaSpdy: false, wasNpnNegotiated: false, npnNegotiatedProtocol: "",
        wasAlternateProtocolAvailable: false, connectionInfo: "unknown",
      };
    }][0], "");
    const csi = native([() => ({
      startE: floor(originDate()), onloadT: loaded ? floor(loaded) : 0, pageT: readNow(),
      tran: navType === "reload" ? 16 : navType === "back_forward" ? 6 : 15,
    })][0], "");
    const had = getDesc(window, "chrome");
    if (had && had.value && typeof had.value === "object") {
      for (const [name, fn] of [["loadTimes", loadTimes], ["csi", csi]]) {
        const d = getDesc(had.value, name);
        if (d && typeof d.value === "function") defineProperty(had.value, name, { value: fn, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
      }
      return;
    }
    if (had) return;
    const app = {
      isInstalled: false,
      getDetails: native({ getDetails() { return null; } }.getDetails, "getDetails"),
      getIsInstalled: native({ getIsInstalled() { return false; } }.getIsInstalled, "getIsInstalled"),
      installState: native({ installState(callback) {
        if (typeof callback !== "function") throw new TypeError("Error in invocation of app.installState(function callback)");
        call(N.queueMicrotask, window, () => callback("not_installed"));
      } }.installState, "installState"),
      runningState: native({ runningState() { return "cannot_run"; } }.runningState, "runningState"),
      InstallState: { DISABLED: "disabled", INSTALLED: "installed", NOT_INSTALLED: "not_installed" },
      RunningState: { CANNOT_RUN: "cannot_run", READY_TO_RUN: "ready_to_run", RUNNING: "running" },
    };
    defineProperty(window, "chrome", { value: { loadTimes, csi, app }, writable: true, enumerable: true, configurable: true });
  })(); } catch (e) { /* an interface unlike Chromium's: the browser's own stays */ }

  // ---- the window in a screen ---------------------------------------------------------------------------
  // A headless browser's window is its viewport: outerWidth and outerHeight equal the viewport's size,
  // and a page that compares them sees no tab strip and no toolbar. A person's Chrome draws them above
  // the page (about 85 px at 100%), in every realm of the tab (an iframe reads the tab's window). Where
  // the browser's outer size is the viewport's, it reads as a person's Chrome window of that viewport.
  // (The screen around it is the browser's own: the context is made with a person's screen size.)
  try { (() => {
    const view = cfg.view;
    if (!isArray(view) || view.length !== 2) return;
    const extra = { outerWidth: 0, outerHeight: 85 };
    for (const [name, i] of [["outerWidth", 0], ["outerHeight", 1]]) {
      const real = getterOf(window, name);
      if (!real) continue;
      // Read when asked (at document start the window may not be sized yet): a window whose outer size
      // is not the viewport's has its own frame, and stays the browser's.
      const seen = (self) => { const v = call(real, self); return v === view[i] ? v + extra[name] : v; };
      const get = name === "outerWidth"
        ? getDesc({ get outerWidth() { return seen(this); } }, "outerWidth").get
        : getDesc({ get outerHeight() { return seen(this); } }, "outerHeight").get;
      wrapGetter(window, name, get);
    }
  })(); } catch (e) { /* a window unlike Chromium's: the browser's own stays */ }
