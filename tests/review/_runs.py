"""Stored runs for the reviewer tests, built from the store's own models: no agent runs here."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

from agentbench.checks._model import CheckResult, Evidence
from agentbench.config import ModelConfig
from agentbench.store import AttemptResult, CellRef, RunManifest, attempt_dir, write_json

FLAPPY_IDS = ["core-loop", "pipes-vary", "score-per-pipe", "game-over-and-restart", "same-speed-any-monitor",
              "restart-not-skipped", "fair-to-play"]


def png(rgb: tuple[int, int, int], width: int = 6, height: int = 3) -> bytes:
    """A real, tiny PNG of one colour (so tests can tell images apart by their bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def source(marker: str) -> str:
    return (f"<!DOCTYPE html><html><body><canvas id=c></canvas><script>\n// {marker}\n"
            "let last = 0; function loop(t) { const dt = (t - last) / 1000; last = t; requestAnimationFrame(loop); }\n"
            "requestAnimationFrame(loop);\n</script></body></html>\n")


def _checks(refresh: str) -> list[CheckResult]:
    ok = [CheckResult(id=cid, status="pass", detail=f"{cid} ok")
          for cid in ("syntax", "load", "runtime-errors", "flap-input", "game-over", "restart")]
    ok[1].evidence = [Evidence(kind="file", label="the page after 1 s", path="evidence/load.png")]
    rr = CheckResult(id="refresh-rate", status=refresh, detail="speed factor 240 Hz vs 60 Hz: 4.0" if refresh == "fail"
                     else "same speed", evidence=[
                         Evidence(kind="value", label="speed factor 240 Hz vs 60 Hz", value=4.0),
                         Evidence(kind="file", label="60 Hz run", path="evidence/refresh-rate-60hz.png"),
                         Evidence(kind="file", label="240 Hz run", path="evidence/refresh-rate-240hz.png"),
                         Evidence(kind="file", label="outside the attempt", path="../../../../run.json"),
                     ])
    return [*ok, rr]


def build_run(root: Path, *, models: dict[str, str] | None = None, repeats: int = 1, run_id: str = "run-r",
              no_artefact: tuple[str, ...] = ()) -> Path:
    """A flappy run: each model (name -> served model id) gets ``repeats`` scored attempts."""
    models = models or {"alpha": "alpha-coder"}
    run_dir = root / run_id
    cells = [CellRef(task="flappy", model=m, repeat=r) for r in range(1, repeats + 1) for m in models]
    configs = {m: ModelConfig(name=m, base_url="http://127.0.0.1:9/v1", model=served).model_dump(mode="json")
               for m, served in models.items()}
    write_json(run_dir / "run.json", RunManifest(run_id=run_id, models=configs, tasks=["flappy"], repeats=repeats,
                                                 cells=cells, status="completed"))
    for i, cell in enumerate(cells):
        adir = attempt_dir(run_dir, cell)
        if cell.model in no_artefact:
            write_json(adir / "result.json", AttemptResult(run_id=run_id, task="flappy", model=cell.model,
                                                           repeat=cell.repeat, outcome="no-artefact"))
            continue
        (adir / "artefact").mkdir(parents=True)
        (adir / "artefact" / "index.html").write_text(source(f"artefact of {cell.model} r{cell.repeat}"))
        (adir / "evidence").mkdir()
        (adir / "evidence" / "load.png").write_bytes(png((10, 10, 10 + i)))
        (adir / "evidence" / "refresh-rate-60hz.png").write_bytes(png((60, 0, i)))
        (adir / "evidence" / "refresh-rate-240hz.png").write_bytes(png((240, 0, i)))
        result = AttemptResult(run_id=run_id, task="flappy", model=cell.model, repeat=cell.repeat, outcome="scored",
                               verdict="fail", score=0.86, checks=_checks("fail"), artefact_path="artefact",
                               checklist=[{"id": "score", "status": "unknown"}])
        write_json(adir / "result.json", result)
    return run_dir


def answer(met: dict[str, bool] | None = None, *, score: float = 6, verdict: str = "Plays, but too fast at 240 Hz.",
           ids: list[str] = FLAPPY_IDS, fenced: bool = False) -> str:
    """A review answer in the format the prompt asks for."""
    met = met or {}
    body = json.dumps({"criteria": [{"id": i, "met": met.get(i, True), "reason": f"because {i}"} for i in ids],
                       "score": score, "verdict": verdict})
    return f"Here is my review.\n```json\n{body}\n```\n" if fenced else body


def last_user_text(request: dict[str, Any]) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
