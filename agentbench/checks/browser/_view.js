// The harness's view of the page: runs in an isolated world (CDP Page.createIsolatedWorld), where
// page code cannot see it or replace the built-ins it uses; it shares only the DOM with the page.
// Python puts the session's {channel, capWidth} where __AB_VIEW_CONFIG__ stands.
//
// It steps the page's virtual clock (_clock.js, in the main world) one frame at a time over a
// window event named by the per-session secret `channel`, yields a real task between frames,
// and reads what a person sees: canvases (pixels), the DOM (boxes, styles, text), and what the
// clock recorded (canvas text and circles, dialogs). Readers of the probes (_find.js and the
// like) are installed here too, with `lib`.
//
// One closure in parts, joined in this order by _scripts.py: this file (the clock's channel),
// _view_capture.js (captures), _view_bodies.js (ball tracking), _view_step.js (stepping, the api).
globalThis.__abView = ((cfg) => {
  "use strict";
  const N = {
    Promise: window.Promise,
    createElement: Document.prototype.createElement,
    fillText: CanvasRenderingContext2D.prototype.fillText,
    beginPath: CanvasRenderingContext2D.prototype.beginPath,
    ellipse: CanvasRenderingContext2D.prototype.ellipse,
    fill: CanvasRenderingContext2D.prototype.fill,
    drawImage: CanvasRenderingContext2D.prototype.drawImage,
    getImageData: CanvasRenderingContext2D.prototype.getImageData,
    getContext: HTMLCanvasElement.prototype.getContext,
    getRect: Element.prototype.getBoundingClientRect,
    querySelectorAll: Document.prototype.querySelectorAll,
    getComputedStyle: window.getComputedStyle.bind(window),
    btoa: window.btoa.bind(window),
    fromCharCode: String.fromCharCode,
    Blob: window.Blob,
    Response: window.Response,
    CompressionStream: window.CompressionStream,
    MessageChannel: window.MessageChannel,
    raf: window.requestAnimationFrame.bind(window),
    setTimeout: window.setTimeout.bind(window),
    postTask: window.scheduler && typeof scheduler.postTask === "function" ? scheduler.postTask.bind(scheduler) : null,
  };
  const S = { capWidth: cfg.capWidth || 160, lastCircles: [], frame: 0 };
  const FAINT = 0.35;  // circles drawn fainter than this (trails, glows) are not balls

  // ---- the clock, over the channel -----------------------------------------------------------------------
  let box;
  window.addEventListener(cfg.channel + ":r", (ev) => { box = ev.detail; });
  const NO_CLOCK = { noClock: true };
  const ARMED = cfg.channel + ":c";  // the event a call armed by the clock listens for
  function clock(method, ...args) {
    box = undefined;
    window.dispatchEvent(new CustomEvent(cfg.channel, { detail: JSON.stringify([method, args]) }));
    if (box === undefined) return NO_CLOCK;  // no clock in this document (not the artefact's page)
    const out = JSON.parse(box);
    if ("err" in out) {
      const e = new Error(out.err);
      e.tampered = out.tampered;
      throw e;
    }
    return out.ok;
  }
  // Circles from the clock name their canvas by its index among the document's canvases.
  function resolveCircles(list) {
    const canvases = document.getElementsByTagName("canvas");
    const out = [];
    for (const [i, x, y, r, a, key] of list || []) if (i >= 0 && canvases[i]) out.push([canvases[i], x, y, r, a, key]);
    return out;
  }

