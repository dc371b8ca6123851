// The harness's frame step for the page's workers: runs in the isolated world after _view.js (the
// same config). Once the page has made a worker on the clock (_clock_workers.js says so), each
// frame step waits until every worker the page made has started, tells them all the page's time,
// and waits until each has run what was due and answered; the step's next real task then
// delivers what they posted, before the frame is captured. Both waits are conditions, bounded:
// a worker that does not start or answer within BOUND_MS of real time is no longer waited for, nor
// are any once the waits of the last WINDOW steps add up to WINDOW_MS (slow workers on a busy
// machine must never make the page's own step run past its limit and look hung).
globalThis.__abWorkers = ((cfg) => {
  "use strict";
  const BOUND_MS = 1000, WINDOW = 30, WINDOW_MS = 2500;
  const waits = [];
  let waited = 0;
  let any = false, checked = false, wake = null, box;
  window.addEventListener(cfg.channel + ":wn", () => { any = true; });
  window.addEventListener(cfg.channel + ":wv", () => { const w = wake; wake = null; if (w) w(); });
  window.addEventListener(cfg.channel + ":wy", (e) => { box = e.detail; });
  function ask(method) {
    box = undefined;
    window.dispatchEvent(new CustomEvent(cfg.channel + ":w", { detail: JSON.stringify([method, []]) }));
    return box === undefined ? null : JSON.parse(box);
  }
  // The next word from a worker, or `ms` of real time.
  function heard(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { wake = null; resolve(false); }, ms);
      wake = () => { clearTimeout(timer); resolve(true); };
    });
  }
  // Wait while status()[index] > 0, at most BOUND_MS (and the budget left); past it stop waiting for
  // those workers. How long it waited.
  async function until(index, budget) {
    const t0 = performance.now();
    const bound = Math.min(BOUND_MS, budget);
    for (;;) {
      const st = ask("status");
      if (!st || st[index] === 0) return performance.now() - t0;
      const left = bound - (performance.now() - t0);
      if (left <= 0) { ask("loosen"); return performance.now() - t0; }
      await heard(left);
    }
  }
  return {
    // Whether the page made a worker on the clock (asked once per world: it may have been made
    // before this world was).
    get any() {
      if (!checked) { checked = true; const st = ask("status"); if (st && st[2] > 0) any = true; }
      return any;
    },
    async step() {
      let spent = await until(0, WINDOW_MS - waited);
      if (ask("push")) spent += await until(1, WINDOW_MS - waited - spent);
      waits.push(spent);
      waited += spent;
      if (waits.length > WINDOW) waited -= waits.shift();
    },
  };
})(__AB_VIEW_CONFIG__);
