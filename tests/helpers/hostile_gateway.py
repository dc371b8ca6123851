"""An external "agent" that attacks the model gateway from inside its sandbox, then writes its page.

It runs in the opencode image (for its node) as the sandbox user, like any external agent, and
attacks what an agent can reach: the gateway socket mounted at /run/agentbench and the
forwarder on the container's loopback. The attacks are the issue's:

* ``bodies``: 20 connections at once, each declaring and sending a 60 MB body;
* ``halfopen``: about 20,000 connections opened and left with half a request head;
* ``chat``: three 60 MB chat requests through the forwarder, as an HTTP client would send them.

:func:`attack_session` runs one such session (and, beside it, an honest opencode session on its own
gateway: another cell of the run) while sampling this process's memory and open descriptors.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbench.agents import AgentLimits, AgentPlan, ExternalSession, Transcript, get_agent

__all__ = ["ATTACKS", "AttackReport", "HostileAgent", "attack_session"]

ATTACKS = ("bodies", "halfopen", "chat")
MB = 1024 * 1024

SCRIPT = r"""
const net = require("net"), http = require("http");
const SOCK = "/run/agentbench/gateway.sock", MB = 1024 * 1024, chunk = Buffer.alloc(MB, 120);
const log = (...a) => console.error("attack:", ...a);
function body(conn, bytes) {   // write `bytes` as fast as the other end takes them, until it closes
  return new Promise((done) => {
    let sent = 0, closed = false;
    // Read (and drop) the answer: a paused socket never sees the gateway's end of the stream, and
    // node would exit with the write still queued, before the other attacks ran.
    conn.resume();
    conn.on("error", () => {}); conn.on("close", () => { closed = true; done(sent); });
    const pump = () => { while (!closed && sent < bytes) { sent += MB; if (!conn.write(chunk)) return conn.once("drain", pump); }
                         if (!closed) conn.end(); };
    pump();
  });
}
async function bodies() {
  const runs = [];
  for (let i = 0; i < 20; i++) runs.push(new Promise((ok) => {
    const c = net.connect(SOCK, () => {
      c.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${60 * MB}\r\n\r\n`);
      body(c, 60 * MB).then(ok);
    });
    c.on("error", () => ok(0));
  }));
  log("bodies: sent", (await Promise.all(runs)).reduce((a, b) => a + b, 0) / MB, "MB before the gateway closed");
}
async function halfopen() {
  const open = []; let failed = 0;
  for (let i = 0; i < 20000; i++) {
    const c = net.connect(SOCK); c.on("error", () => { failed++; }); c.on("connect", () => c.write("POST /v1/chat/comp"));
    open.push(c);
    if (i % 500 === 499) await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 3000));
  log("halfopen: tried", open.length, "failed", failed);
  open.forEach((c) => c.destroy());
}
async function chat() {
  for (let i = 0; i < 3; i++) {
    const status = await new Promise((ok) => {
      const req = http.request({host: "127.0.0.1", port: 4141, method: "POST", path: "/v1/chat/completions",
                                headers: {"content-type": "application/json", "content-length": 60 * MB + 60}},
        (res) => { res.resume(); ok(res.statusCode); });
      req.on("error", (e) => ok("error " + e.code));
      req.write('{"model":"x","messages":[{"role":"user","content":"');
      let sent = 0; const more = () => { while (sent < 60 * MB) { sent += MB; if (!req.write(chunk)) return req.once("drain", more); }
                                         req.end('"}]}' + " ".repeat(56)); };
      more();
    });
    log("chat: 60 MB request answered", status);
  }
}
(async () => {
  const which = process.argv.slice(2);
  for (const name of which) { const t = Date.now(); await ({bodies, halfopen, chat})[name](); log(name, "took", Date.now() - t, "ms"); }
})();
"""


class HostileAgent:
    """An adapter (see agents/_adapter.py) whose session is the attacks, then ``index.html``."""

    name = "hostile-gateway"

    def __init__(self, attacks: tuple[str, ...] = ATTACKS) -> None:
        self.attacks = attacks

    def image(self) -> Any:
        return get_agent("opencode").image()  # node is all it needs

    def plan(self, *, base_url: str, model_id: str, prompt: str, entry: str,
             max_tokens_per_request: int | None) -> AgentPlan:
        home = "/tmp/agentbench"
        return AgentPlan(files={f"{home}/attack.js": SCRIPT},
                         command=f"node {home}/attack.js {' '.join(self.attacks)}; "
                                 f"printf '<!doctype html><p>ok</p>' > {entry}")


@dataclass
class AttackReport:
    rss_before_mb: float
    rss_peak_mb: float
    fds_before: int
    fds_peak: int
    wall_s: float
    hostile: Any  # the hostile session's AgentOutcome
    honest: Any  # the honest session's AgentOutcome (None when not run)
    exchanges_bytes: int
    rejected: int
    connections_refused: int
    upstream_requests: int
    log: str = ""
    samples: list[tuple[float, float, int]] = field(default_factory=list)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def _one(agent: Any, peer: Any, adir: Path) -> tuple[Any, ExternalSession]:
    adir.mkdir(parents=True, exist_ok=True)
    session = ExternalSession(agent, model=peer.config(request_timeout_s=120.0, max_retries=1), api_key="sk-attack",
                              adir=adir, labels={"agentbench.test": "gateway-attack"})
    try:
        with Transcript(adir / "transcript.jsonl") as transcript:
            outcome = await session.run(prompt="Write a page.", limits=AgentLimits(max_turns=10, max_tokens=100_000,
                                                                                  wall_s=400),
                                        entry="index.html", transcript=transcript)
        await session.sandbox.copy_out(adir / "artefact")
        return outcome, session
    finally:
        await session.sandbox.close()


def attack_session(peer: Any, tmp: Path, *, attacks: tuple[str, ...] = ATTACKS, honest: bool = True) -> AttackReport:
    """Run the hostile session (and an honest one beside it) while sampling this process."""
    samples: list[tuple[float, float, int]] = []
    stop = threading.Event()
    t0 = time.monotonic()

    def sample() -> None:
        while not stop.is_set():
            samples.append((round(time.monotonic() - t0, 2), _rss_mb(), _fds()))
            stop.wait(0.05)

    before = (_rss_mb(), _fds())
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    async def both() -> list[Any]:
        runs = [_one(HostileAgent(attacks), peer, tmp / "hostile")]
        if honest:
            runs.append(_one(get_agent("opencode"), peer, tmp / "honest"))
        return await asyncio.gather(*runs)

    try:
        done = asyncio.run(both())
    finally:
        stop.set()
        sampler.join()
    (hostile, session), *rest = done
    record = session.gateway.record
    exchanges = tmp / "hostile" / "gateway.jsonl"
    return AttackReport(
        rss_before_mb=round(before[0], 1), rss_peak_mb=round(max(s[1] for s in samples), 1), fds_before=before[1],
        fds_peak=max(s[2] for s in samples), wall_s=round(time.monotonic() - t0, 1), hostile=hostile,
        honest=rest[0][0] if rest else None, exchanges_bytes=exchanges.stat().st_size if exchanges.exists() else 0,
        rejected=len(getattr(record, "rejected", [])), connections_refused=getattr(record, "connections_refused", 0),
        upstream_requests=len(peer.requests),
        log=(tmp / "hostile" / "agent" / "stderr.txt").read_text(errors="replace")
        if (tmp / "hostile" / "agent" / "stderr.txt").exists() else "",
        samples=samples)
