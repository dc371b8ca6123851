"""Stored runs built from the store's own models (plus tiny artefacts): no agent runs here."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from agentbench.checks._model import CheckResult, Evidence
from agentbench.store import (
    AttemptResult,
    CellRef,
    InfraError,
    RunManifest,
    SpeedStats,
    attempt_dir,
    write_json,
)

# Counts rAF callbacks per virtual second and Space presses; says who it is and the parse mode.
PROBE = """<!DOCTYPE html>
<html><head><title>probe</title></head><body>
<h1 id="who">{uid}</h1><p>rate <span id="rate">-</span> keys <span id="keys">0</span>
mode <span id="mode"></span> random <span id="rnd"></span></p>
<script>
document.getElementById("mode").textContent = document.compatMode;
document.getElementById("rnd").textContent = Math.random().toFixed(6);
let n = 0, first = null, keys = 0;
addEventListener("keydown", (e) => {{ if (e.key === " ") document.getElementById("keys").textContent = ++keys; }});
function loop(t) {{
  n++; if (first === null) first = t;
  if (n > 30) document.getElementById("rate").textContent = ((n - 1) * 1000 / (t - first)).toFixed(1);
  requestAnimationFrame(loop);
}}
requestAnimationFrame(loop);
requestAnimationFrame(() => {{ throw new Error("planted once"); }});  // must not stop the clock
</script></body></html>
"""

# Tries every way out of its iframe and writes what happened into its own page.
ESCAPE = """<!DOCTYPE html>
<html><body><h1 id="who">{uid}</h1><p id="out"></p><p id="api">api:pending</p>
<script>
const out = [];
const attempt = (name, fn) => {{ try {{ fn(); out.push(name + ":reached"); }} catch (e) {{ out.push(name + ":blocked"); }} }};
attempt("parent-dom", () => {{ parent.document.body.innerHTML = "PWNED"; }});
attempt("top-title", () => {{ top.document.title = "PWNED"; }});
attempt("frame-element", () => {{ if (!window.frameElement) throw new Error("null"); window.frameElement.remove(); }});
attempt("storage", () => {{ localStorage.setItem("x", "1"); }});
attempt("cookie", () => {{ document.cookie = "x=1"; if (!document.cookie) throw new Error("none"); }});
document.getElementById("out").textContent = out.join(" ") + " origin:" + self.origin;
fetch("/api/verdict", {{ method: "POST", headers: {{ "Content-Type": "application/json" }},
  body: JSON.stringify({{ run: "{run}", task: "flappy", model: "beta", repeat: 1, verdict: "pass", note: "forged" }}) }})
  .then((r) => {{ document.getElementById("api").textContent = "api:" + r.status; }},
        () => {{ document.getElementById("api").textContent = "api:blocked"; }});
</script></body></html>
"""

# index.html + app.js: the report must inline the local script, as the checks served it.
SPLIT_HTML = """<!doctype html><html><head><link rel="stylesheet" href="style.css"></head>
<body><h1 id="who">{uid}</h1><p id="split">not run</p><a href="#">a link</a><script src="app.js"></script></body></html>
"""
SPLIT_JS = 'document.getElementById("split").textContent = "inlined script ran";\n'


def png(width: int = 8, height: int = 4, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A tiny valid PNG, for evidence files."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _item(iid: str, status: str, static: str | None, behaviour: str | None, disagreement: str | None = None,
          links: list[str] | None = None) -> dict:
    """A checklist item as checks/_checklist.py stores it (ItemResult.model_dump)."""
    return {"id": iid, "text": f"item {iid}", "kind": "feature", "required": True, "weight": 1.0, "status": status,
            "decided_by": "check:refresh-rate" if iid == "frame-rate" else "check:load", "static": static,
            "behaviour": behaviour, "evidence": f"static: {static}\ncheck: {behaviour}", "links": links or [],
            "disagreement": disagreement}


def _attempt(run_dir: Path, run_id: str, task: str, model: str, repeat: int, **kw) -> tuple[CellRef, Path]:
    cell = CellRef(task=task, model=model, repeat=repeat)
    adir = attempt_dir(run_dir, cell)
    (adir / "artefact").mkdir(parents=True)
    kw.setdefault("speed", SpeedStats(requests=3, prompt_tokens=1200, completion_tokens=800, decode_tok_s=55.5))
    result = AttemptResult(run_id=run_id, task=task, model=model, repeat=repeat, artefact_path="artefact",
                           wall_s=42.0, cost_usd=0.0123, **kw)
    (adir / "transcript.jsonl").write_text('{"role": "user", "content": "build it"}\n')
    write_json(adir / "result.json", result)
    return cell, adir


def build_run(root: Path, run_id: str = "run-a") -> Path:
    """A run with every kind of attempt the report must show.

    flappy/alpha r1, r2  pass (probe artefacts)      flappy/beta r1  fail: refresh-rate x4, page errors
    todo/alpha r1        fail: persistence (split)   todo/beta r1    no-artefact
    converter/alpha r1   fail: expected vs shown     converter/beta r1  infra-error
    """
    run_dir = root / run_id
    cells = []

    def ok(cid: str) -> CheckResult:
        return CheckResult(id=cid, status="pass", detail=f"{cid} fine")

    for rep in (1, 2):
        uid = f"{run_id}/flappy/alpha/r{rep}"
        cell, adir = _attempt(run_dir, run_id, "flappy", "alpha", rep, outcome="scored", verdict="pass", score=1.0,
                              checklist=[_item("loads", "pass", None, "pass"),
                                         _item("frame-rate", "pass", "pass", "pass")],
                              checklist_summary={"feature_score": 1.0, "finish_score": None, "disagreements": [],
                                                 "required_failed": [], "unknown": []},
                              checks=[ok("load"), ok("runtime-errors"), CheckResult(
                                  id="refresh-rate", status="pass", detail="same motion at 60 and 240 Hz",
                                  data={"factor": 1.02})])
        (adir / "artefact" / "index.html").write_text(PROBE.format(uid=uid))
        cells.append(cell)

    cell, adir = _attempt(
        run_dir, run_id, "flappy", "beta", 1, outcome="scored", verdict="fail", score=1 / 3,
        checklist=[_item("loads", "pass", None, "pass"),
                   _item("frame-rate", "fail", "pass", "fail", "source uses delta time; at 240 Hz it moved 4.0x faster",
                         ["evidence/strip-240.png", "../../../../run.json"])],
        checklist_summary={"feature_score": 0.5, "finish_score": None, "required_failed": ["frame-rate"],
                           "disagreements": ["frame-rate: source uses delta time; at 240 Hz it moved 4.0x faster"],
                           "unknown": []},
        checks=[ok("load"),
                CheckResult(id="runtime-errors", status="fail", detail="2 page errors",
                            data={"errors": ["TypeError: bird is undefined (at index.html:12)",
                                             "<img src=x onerror=alert(1)>"]}),
                CheckResult(id="refresh-rate", status="fail", detail="motion is tied to the frame rate",
                            data={"factor": 4.0, "fit_r2": 0.99},
                            evidence=[Evidence(kind="file", label="60 Hz filmstrip", path="evidence/strip-60.png"),
                                      Evidence(kind="file", label="240 Hz filmstrip", path="evidence/strip-240.png"),
                                      Evidence(kind="file", label="outside", path="../../../../run.json")])])
    (adir / "evidence").mkdir()
    (adir / "evidence" / "strip-60.png").write_bytes(png(rgb=(30, 160, 30)))
    (adir / "evidence" / "strip-240.png").write_bytes(png(rgb=(200, 30, 30)))
    (adir / "artefact" / "index.html").write_text(ESCAPE.format(uid=f"{run_id}/flappy/beta/r1", run=run_id))
    (adir / "review-gpt.json").write_text('{"verdict": "pass", "summary": "the bird flies", "confidence": 0.7}')
    cells.append(cell)

    cell, adir = _attempt(
        run_dir, run_id, "todo", "alpha", 1, outcome="scored", verdict="fail", score=0.5,
        checks=[ok("add"), CheckResult(id="persistence", status="fail", detail="items lost on reload",
                                       evidence=[Evidence(kind="value", label="items before/after reload",
                                                          value={"before": ["milk", "eggs"], "after": []})]),
                CheckResult(id="filter", status="error", detail="no filter control found")])
    (adir / "artefact" / "index.html").write_text(SPLIT_HTML.format(uid=f"{run_id}/todo/alpha/r1"))
    (adir / "artefact" / "app.js").write_text(SPLIT_JS)
    (adir / "artefact" / "style.css").write_text("h1 { color: rgb(1, 2, 3); }\n")
    cells.append(cell)

    cell, _ = _attempt(run_dir, run_id, "todo", "beta", 1, outcome="no-artefact")
    cells.append(cell)

    cell, adir = _attempt(
        run_dir, run_id, "converter", "alpha", 1, outcome="scored", verdict="fail", score=0.0,
        checks=[CheckResult(id="length", status="fail", detail="1 of 2 conversions wrong",
                            evidence=[Evidence(kind="value", label="typed vs shown", value=[
                                {"input": "1 km", "expected": "1000 m", "shown": "1000 m"},
                                {"input": "1 mi", "expected": "1609.34 m", "shown": "NaN"}])])])
    (adir / "artefact" / "index.html").write_text(PROBE.format(uid=f"{run_id}/converter/alpha/r1"))
    cells.append(cell)

    cell, _ = _attempt(run_dir, run_id, "converter", "beta", 1, outcome="infra-error",
                       error=InfraError(kind="model-endpoint", message="502 after 5 retries", status=502))
    cells.append(cell)

    manifest = RunManifest(run_id=run_id, models={"alpha": {}, "beta": {}}, tasks=["flappy", "todo", "converter"],
                           repeats=2, cells=cells, status="completed")
    write_json(run_dir / "run.json", manifest)
    return run_dir


def plant_verdicts(run_dir: Path) -> None:
    """One too-generous (flappy/alpha/r1), one too-strict (flappy/beta/r1), one agreement (todo/alpha/r1)."""
    from agentbench.report import record_verdict

    record_verdict(run_dir, "flappy", "alpha", 1, "fail", "bird falls through pipes")
    record_verdict(run_dir, "flappy", "beta", 1, "pass", "plays fine on my 60 Hz screen")
    record_verdict(run_dir, "todo", "alpha", 1, "fail")
