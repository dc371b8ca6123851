#!/usr/bin/env python3
"""Show, in real Chromium, what the demo artefacts do: each rushed defect and each careful fix.

Run: ``python tests/demo/verify_demo_artefacts.py`` (not a pytest file). Prints one table row per
observation and exits 1 if any observation differs from what README.md in demo_data promises.
The artefacts are served from a loopback HTTP server; flappy and ball also run on a tiny virtual
clock (rAF + performance.now + seeded Math.random) so 60 Hz and 240 Hz can be compared exactly.
This script knows each artefact's colours; the generic probes in agentbench/checks must not.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Page, async_playwright

DEMO = Path(__file__).resolve().parents[2] / "agentbench" / "models" / "demo_data"
CHROMIUM = os.environ.get("AGENTBENCH_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
VIEWPORT = {"width": 800, "height": 600}

# Minimal virtual clock: frames run only when the script calls __vc.advance(seconds, fps).
VCLOCK = """(() => {
  let seed = 12345;
  Math.random = () => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 4294967296; };
  let now = 0, queue = [], nextId = 1;
  performance.now = () => now;
  window.requestAnimationFrame = (cb) => { const id = nextId++; queue.push({ id, cb }); return id; };
  window.cancelAnimationFrame = (id) => { queue = queue.filter((e) => e.id !== id); };
  // Record every circle drawn (in canvas pixels) so ball positions are read without any
  // knowledge of the page's variables, and occlusion by other balls does not matter.
  const arc = CanvasRenderingContext2D.prototype.arc;
  let arcs = [];
  CanvasRenderingContext2D.prototype.arc = function (x, y, r, ...rest) {
    const m = this.getTransform();
    arcs.push([m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f, r * Math.hypot(m.a, m.b)]);
    return arc.call(this, x, y, r, ...rest);
  };
  window.__vc = {
    arcs: [], outside: 0, frames: 0,
    advance(seconds, fps) {
      const start = now, frames = Math.round(seconds * fps);
      for (let i = 1; i <= frames; i++) {
        now = start + (i * 1000) / fps;
        const due = queue; queue = []; arcs = [];
        for (const { cb } of due) { try { cb(now); } catch (e) { reportError(e); } }
        const c = document.querySelector('canvas');
        const out = arcs.some(([x, y, r]) => x - r < -0.5 || y - r < -0.5 || x + r > c.width + 0.5 || y + r > c.height + 0.5);
        this.outside += out ? 1 : 0; this.frames += 1; this.arcs = arcs;
      }
    },
  };
})();"""

# Colour statistics of the largest canvas: pixel count and centroid (as fractions) per colour.
COLOUR_STATS = """([colours, tol]) => {
  const c = [...document.querySelectorAll('canvas')].sort((a, b) => b.width * b.height - a.width * a.height)[0];
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const acc = colours.map(() => ({ n: 0, x: 0, y: 0 }));
  for (let i = 0, p = 0; i < d.length; i += 4, p++) {
    for (let k = 0; k < colours.length; k++) {
      const [r, g, b] = colours[k];
      if (Math.abs(d[i] - r) <= tol && Math.abs(d[i + 1] - g) <= tol && Math.abs(d[i + 2] - b) <= tol) {
        const a = acc[k]; a.n++; a.x += p % c.width; a.y += Math.floor(p / c.width);
      }
    }
  }
  return acc.map((a) => a.n ? { n: a.n, x: a.x / a.n / c.width, y: a.y / a.n / c.height } : { n: 0, x: null, y: null });
}"""

# The vertical gap of the nearest pipe ahead of x0 (fractions), found by its green pixels.
PIPE_GAP = """([x0, groundTop]) => {
  const c = document.querySelector('canvas');
  const ctx = c.getContext('2d');
  const green = (d, i) => d[i + 1] > d[i] + 40 && d[i + 1] > d[i + 2] + 40;
  const rows = Math.floor(c.height * groundTop);
  for (let x = Math.floor(x0 * c.width); x < c.width; x += 2) {
    const d = ctx.getImageData(x, 0, 1, rows).data;
    if (!green(d, 0)) continue;            // not a pipe body (top pipes start at the top edge)
    // The gap is the first long non-green run (short ones are the score drawn over the pipe).
    for (let y = 0; y < rows;) {
      while (y < rows && green(d, y * 4)) y++;
      const top = y;
      while (y < rows && !green(d, y * 4)) y++;
      if (y - top > 0.12 * c.height && y < rows) return (top + y) / 2 / c.height;
    }
  }
  return null;
}"""

CANVAS_PNG = "() => document.querySelector('canvas').toDataURL('image/png')"

FLAPPY = {"rushed": {"bird": (0xF7, 0xDC, 0x3C), "ground": 520 / 600},
          "careful": {"bird": (0xFF, 0xD2, 0x3F), "ground": 550 / 640}}
BALL = {"rushed": [(0xFF, 0x6B, 0x6B), (0xFE, 0xCA, 0x57), (0x48, 0xDB, 0xFB), (0x1D, 0xD1, 0xA1),
                   (0x5F, 0x27, 0xCD), (0xFF, 0x9F, 0xF3)],
        "careful": [(0xEF, 0x44, 0x44), (0xF5, 0x9E, 0x0B), (0x22, 0xC5, 0x5E), (0x3B, 0x82, 0xF6),
                    (0xA8, 0x55, 0xF7), (0xEC, 0x48, 0x99), (0x14, 0xB8, 0xA6)]}


@dataclass
class Row:
    variant: str
    task: str
    check: str
    expect: str
    observed: str
    ok: bool


ROWS: list[Row] = []


def record(variant: str, task: str, check: str, expect: str, observed: str, ok: bool) -> None:
    ROWS.append(Row(variant, task, check, expect, observed, bool(ok)))


class Session:
    """A fresh context + page that records uncaught errors and console errors."""

    def __init__(self, browser, base: str, variant: str, task: str, *, vclock: bool) -> None:
        self.browser, self.url, self.vclock = browser, f"{base}/{variant}/{task}/index.html", vclock
        self.errors: list[str] = []

    async def __aenter__(self) -> Page:
        self.context = await self.browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        if self.vclock:
            await self.context.add_init_script(VCLOCK)
        page = await self.context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"{exc.name}: {exc.message}"))
        page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        await page.goto(self.url)
        return page

    async def __aexit__(self, *exc) -> None:
        await self.context.close()


async def advance(page: Page, seconds: float, fps: int) -> None:
    await page.evaluate("([s, f]) => window.__vc.advance(s, f)", [seconds, fps])


async def stats(page: Page, colours, tol: int = 10) -> list[dict]:
    return await page.evaluate(COLOUR_STATS, [[list(c) for c in colours], tol])


async def canvas_click(page: Page) -> None:
    box = await page.locator("canvas").first.bounding_box()
    await page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def errs(errors: list[str]) -> str:
    return "none" if not errors else f"{len(errors)}: {errors[0][:60]}"


# ---------------------------------------------------------------- canvas tasks at real time

async def realtime_canvas(browser, base: str, variant: str, task: str) -> None:
    s = Session(browser, base, variant, task, vclock=False)
    async with s as page:
        await page.wait_for_timeout(600)
        if task == "flappy":
            await page.keyboard.press("Space")
            await page.wait_for_timeout(300)
            await canvas_click(page)
        await page.wait_for_timeout(600)
        colours = await page.evaluate("""() => {
            const c = document.querySelector('canvas'); const t = document.createElement('canvas');
            t.width = 64; t.height = 48; t.getContext('2d').drawImage(c, 0, 0, 64, 48);
            const d = t.getContext('2d').getImageData(0, 0, 64, 48).data; const s = new Set();
            for (let i = 0; i < d.length; i += 4) s.add(d[i] >> 4 << 8 | d[i+1] >> 4 << 4 | d[i+2] >> 4);
            return s.size; }""")
    record(variant, task, "real-time draws", "canvas drawn, no errors",
           f"{colours} colours, errors {errs(s.errors)}", colours > 3 and not s.errors)


# ---------------------------------------------------------------- flappy

async def flappy_bird_y(page: Page, variant: str) -> float | None:
    return (await stats(page, [FLAPPY[variant]["bird"]]))[0]["y"]


async def flappy_after_flap(browser, base: str, variant: str, fps: int) -> tuple[float, float, list[str]]:
    s = Session(browser, base, variant, "flappy", vclock=True)
    async with s as page:
        await advance(page, 0.5, fps)
        before = await flappy_bird_y(page, variant)
        await page.keyboard.press("Space")
        await advance(page, 0.15, fps)
        after = await flappy_bird_y(page, variant)
    return before, after, s.errors


async def flappy(browser, base: str, variant: str) -> None:
    b60, a60, e60 = await flappy_after_flap(browser, base, variant, 60)
    b240, a240, e240 = await flappy_after_flap(browser, base, variant, 240)
    record(variant, "flappy", "flap (Space) lifts bird", "bird rises within 0.15 s",
           f"y {b60:.3f} -> {a60:.3f} (60 Hz)", a60 is not None and a60 < b60 - 0.02)
    diff = abs(a240 - a60) if None not in (a60, a240) else float("inf")
    if variant == "rushed":
        record(variant, "flappy", "60 vs 240 Hz", "DEFECT: 240 Hz runs 4x faster",
               f"y at +0.15 s: 60 Hz {a60:.3f}, 240 Hz {a240:.3f} (diff {diff:.3f} of height)", diff > 0.05)
    else:
        record(variant, "flappy", "60 vs 240 Hz", "same position at same time",
               f"y at +0.15 s: 60 Hz {a60:.3f}, 240 Hz {a240:.3f} (diff {diff:.4f})", diff < 0.003)

    s = Session(browser, base, variant, "flappy", vclock=True)
    async with s as page:
        await advance(page, 0.5, 60)
        await canvas_click(page)  # the first flap by mouse
        await advance(page, 0.1, 60)
        clicked = await flappy_bird_y(page, variant)
        await advance(page, 3.0, 60)  # no more input: the bird falls to the ground
        shot1 = await page.evaluate(CANVAS_PNG)
        bird_visible = (await stats(page, [FLAPPY[variant]["bird"]]))[0]["n"]
        await advance(page, 0.5, 60)
        frozen = shot1 == await page.evaluate(CANVAS_PNG)
        record(variant, "flappy", "ground ends game", "frozen + dimmed Game Over screen",
               f"frozen={frozen}, bird colour px under overlay={bird_visible}", frozen and bird_visible == 0)
        await page.keyboard.press("Space")
        await advance(page, 0.1, 60)
        restarted_y = await flappy_bird_y(page, variant)
        shot2 = await page.evaluate(CANVAS_PNG)
        await advance(page, 0.3, 60)
        moving = shot2 != await page.evaluate(CANVAS_PNG)
        record(variant, "flappy", "restart (Space)", "fresh game, bird near start",
               f"bird y={restarted_y if restarted_y is None else round(restarted_y, 3)} "
               f"(first flap at {clicked:.3f}), moving={moving}",
               restarted_y is not None and abs(restarted_y - clicked) < 0.05 and moving)

    # A pixel autopilot: flap when the bird sinks below the next gap's centre. Surviving 7 s
    # means several pipes were passed, so gaps are flyable and pipe collisions are fair.
    s = Session(browser, base, variant, "flappy", vclock=True)
    async with s as page:
        await advance(page, 0.3, 60)
        await page.keyboard.press("Space")
        cooldown, alive_for = 0, 0.0
        for i in range(7 * 30):
            await advance(page, 1 / 30, 60)
            y = await flappy_bird_y(page, variant)
            if y is None:
                break
            alive_for = (i + 1) / 30
            gap = await page.evaluate(PIPE_GAP, [0.2, FLAPPY[variant]["ground"] - 0.01])
            target = (gap if gap is not None else 0.45) + 0.03
            cooldown -= 1
            if y > target and cooldown <= 0:
                await page.keyboard.press("Space")
                cooldown = 5
    record(variant, "flappy", "autopilot through pipes", "survives 7 s (>= 3 pipes)",
           f"alive {alive_for:.1f} s, errors {errs(s.errors + e60 + e240)}", alive_for >= 6.9 and not s.errors)


# ---------------------------------------------------------------- ball

async def ball_position(browser, base: str, variant: str, fps: int) -> tuple[float, float]:
    s = Session(browser, base, variant, "ball", vclock=True)
    async with s as page:
        await advance(page, 1.0, fps)
        x, y, _ = await page.evaluate("() => window.__vc.arcs[0]")
    return x, y


async def ball(browser, base: str, variant: str) -> None:
    x60, y60 = await ball_position(browser, base, variant, 60)
    x240, y240 = await ball_position(browser, base, variant, 240)
    dist = ((x60 - x240) ** 2 + (y60 - y240) ** 2) ** 0.5
    obs = f"ball 0 at 1 s: 60 Hz ({x60:.0f},{y60:.0f}), 240 Hz ({x240:.0f},{y240:.0f}), {dist:.1f} px apart"
    if variant == "rushed":
        record(variant, "ball", "60 vs 240 Hz", "DEFECT: 240 Hz runs 4x faster", obs, dist > 20)
    else:
        record(variant, "ball", "60 vs 240 Hz", "same position at same time", obs, dist < 1.0)

    s = Session(browser, base, variant, "ball", vclock=True)
    async with s as page:
        ys, counts = [], set()
        for _ in range(40):  # 10 s at 60 Hz, sampled every 0.25 s
            await advance(page, 0.25, 60)
            arcs = await page.evaluate("() => window.__vc.arcs")
            counts.add(len(arcs))
            ys.append(arcs[0][1])
        outside, frames = await page.evaluate("() => [window.__vc.outside, window.__vc.frames]")
        await advance(page, 2.0, 240)  # the same page continued on a fast display
        outside240 = await page.evaluate("() => window.__vc.outside") - outside
        colours = sum(1 for b in await stats(page, BALL[variant]) if b["n"])
    record(variant, "ball", "bounds (10 s + 2 s)", "no circle crosses a canvas edge",
           f"frames outside: {outside}/{frames} at 60 Hz, {outside240} at 240 Hz; circles/frame {sorted(counts)}; "
           f"colours on screen {colours}/{len(BALL[variant])}",
           outside == 0 and outside240 == 0 and len(counts) == 1 and colours >= len(BALL[variant]) - 1)
    early = max(ys[:8]) - min(ys[:8])
    late = max(ys[-8:]) - min(ys[-8:])
    record(variant, "ball", "energy loss", "bounces shrink, balls settle",
           f"ball 0 vertical range 0-2 s {early:.0f} px, 8-10 s {late:.1f} px; errors {errs(s.errors)}",
           late < 0.3 * early and not s.errors)


# ---------------------------------------------------------------- todo

async def todo(browser, base: str, variant: str) -> None:
    s = Session(browser, base, variant, "todo", vclock=False)
    async with s as page:
        box = page.get_by_placeholder("What needs to be done?")
        items = page.locator("li")
        await box.fill("Buy milk")
        await box.press("Enter")
        await box.fill("Walk the dog")
        await page.get_by_role("button", name="Add", exact=True).click()
        texts = await items.all_inner_texts()
        record(variant, "todo", "add (Enter, Add button)", "2 items",
               f"{len(texts)} items: {[t.split(chr(10))[0].strip() for t in texts]}",
               len(texts) == 2 and "Buy milk" in texts[0] and "Walk the dog" in texts[1])

        await box.fill("   ")
        await box.press("Enter")
        await page.get_by_role("button", name="Add", exact=True).click()
        record(variant, "todo", "blank input", "adds nothing", f"{await items.count()} items",
               await items.count() == 2)

        evil = "<b>bold</b> & <img src=x>"
        await box.fill(evil)
        await box.press("Enter")
        shown = await items.nth(2).inner_text()
        markup = await page.locator("li b, li img").count()
        record(variant, "todo", "escaping", "markup shown as text", f"text {shown.strip()[:30]!r}, elements {markup}",
               evil in shown and markup == 0)

        milk = items.filter(has_text="Buy milk")
        await milk.get_by_role("checkbox").check()
        await page.get_by_role("button", name=re.compile(r"^(Done|Completed)$")).click()
        done_view = [t.split("\n")[0].strip() for t in await items.all_inner_texts()]
        await page.get_by_role("button", name="Active", exact=True).click()
        active_view = [t.split("\n")[0].strip() for t in await items.all_inner_texts()]
        await page.get_by_role("button", name="All", exact=True).click()
        record(variant, "todo", "complete + filter", "Done=[milk], Active=[dog, markup]",
               f"Done={done_view}, Active={[a[:12] for a in active_view]}",
               done_view == ["Buy milk"] and len(active_view) == 2 and "Buy milk" not in active_view)

        await items.filter(has_text="<b>").get_by_role("button", name=re.compile(r"delete|×", re.I)).click()
        after_delete = await items.count()
        record(variant, "todo", "delete", "3 -> 2 items", f"{after_delete} items", after_delete == 2)

        await page.reload()
        await page.wait_for_load_state()
        kept = [t.split("\n")[0].strip() for t in await items.all_inner_texts()]
        milk_done = await items.filter(has_text="Buy milk").get_by_role("checkbox").is_checked() if kept else None
    if variant == "rushed":
        record(variant, "todo", "persistence (reload)", "DEFECT: items vanish after reload",
               f"after reload: {kept}; errors {errs(s.errors)}", kept == [] and not s.errors)
    else:
        record(variant, "todo", "persistence (reload)", "both items, milk still done",
               f"after reload: {kept}, milk done={milk_done}; errors {errs(s.errors)}",
               kept == ["Buy milk", "Walk the dog"] and milk_done is True and not s.errors)


# ---------------------------------------------------------------- converter

async def converter(browser, base: str, variant: str) -> None:
    s = Session(browser, base, variant, "converter", vclock=False)
    async with s as page:
        category = page.get_by_label("Category")
        result = page.locator("#result")
        value = page.get_by_label("Value")

        async def choose(cat: str, frm: str, to: str) -> None:
            if await category.count():
                await category.select_option(label=cat)
            else:
                await page.get_by_role("button", name=cat, exact=True).click()
            await page.get_by_label("From").select_option(label=frm)
            await page.get_by_label("To").select_option(label=to)

        async def type_value(text: str) -> str:
            await value.fill("")
            await value.click()
            await page.keyboard.type(text)
            return (await result.inner_text()).strip()

        cases = [("length", "Length", "Kilometers (km)", "Meters (m)", "1", "1000 m"),
                 ("weight", "Weight", "Pounds (lb)", "Grams (g)", "1", "453.592 g"),
                 ("temperature", "Temperature", "Celsius (°C)", "Fahrenheit (°F)", "100", "212 °F")]
        for check, cat, frm, to, typed, want in cases:
            before = len(s.errors)
            await choose(cat, frm, to)
            got = await type_value(typed)
            new_errors = s.errors[before:]
            obs = f"{typed} {frm.split('(')[1][:-1]} -> {got!r}; errors {errs(new_errors)}"
            if variant == "rushed" and check != "temperature":
                record(variant, "converter", check, "DEFECT: TypeError per keystroke, no result", obs,
                       got == "" and any("TypeError" in e for e in new_errors))
            else:
                record(variant, "converter", check, f"{typed} -> {want}", obs, got == want and not new_errors)

        await choose("Temperature", "Celsius (°C)", "Kelvin (K)")
        live = [await type_value("2")]
        await page.keyboard.type("5")
        live.append((await result.inner_text()).strip())
        record(variant, "converter", "live update (°C->K)", "2 -> 275.15 K, 25 -> 298.15 K", f"{live}",
               live == ["275.15 K", "298.15 K"])

        bad = {text: await type_value(text) for text in ("1e", "-", "")}
        hint = (await page.locator("body").inner_text())
        nonsense = re.search(r"NaN|undefined|Infinity", hint)
        record(variant, "converter", "bad input", "empty result or message, no NaN",
               f"{bad}; errors {errs(s.errors) if variant == 'careful' else 'see above'}",
               all(not re.search(r"\d", v) for v in bad.values()) and not nonsense
               and (variant == "rushed" or not s.errors))


# ---------------------------------------------------------------- main

def serve() -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            # Chromium asks every origin for /favicon.ico; a 404 would log a console error
            # that no artefact caused.
            if self.path == "/favicon.ico":
                self.send_response(204)
                self.end_headers()
                return
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(DEMO)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def print_table() -> None:
    heads = ("variant", "task", "check", "expect", "observed", "ok")
    cells = [(r.variant, r.task, r.check, r.expect, r.observed, "OK" if r.ok else "FAIL") for r in ROWS]
    widths = [min(90, max(len(h), *(len(c[i]) for c in cells))) for i, h in enumerate(heads)]
    line = "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))
    print(line)
    print("-" * len(line))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)))


async def main() -> int:
    server, base = serve()
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                for variant in ("rushed", "careful"):
                    for task in ("flappy", "ball"):
                        await realtime_canvas(browser, base, variant, task)
                    await flappy(browser, base, variant)
                    await ball(browser, base, variant)
                    await todo(browser, base, variant)
                    await converter(browser, base, variant)
            finally:
                await browser.close()
    finally:
        server.shutdown()
    print_table()
    failed = sum(not r.ok for r in ROWS)
    print(f"\n{len(ROWS) - failed}/{len(ROWS)} observations as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
