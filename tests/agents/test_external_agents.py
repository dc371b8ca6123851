"""External agents end to end on real parts: the agent's image, its --network none sandbox, the
forwarder, the host-side gateway over the bind-mounted socket, and a scripted model on loopback.

Each agent that can be installed here writes the converter the peer hands it, and the run scores
it in Chromium; the API key is looked for in the live container (every file, every process's
environment and command line) while the agent runs. Budget, endpoint-failure and wall-limit paths
run the session itself. Crush runs only where a binary is given (AGENTBENCH_CRUSH_BINARY).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentbench.agents import AgentLimits, ExternalSession, Transcript, ensure_agent_image, get_agent
from agentbench.errors import ModelHTTPError
from agentbench.models import Reply
from tests.helpers.peer import PEER_MODEL, ScriptedPeer

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-agentbench-test-7f3c9a1e5d"
PLACEHOLDER = "agentbench-gateway"  # what the agents are configured with instead of the key
CONVERTER = (ROOT / "agentbench/models/demo_data/careful/converter/index.html").read_text()


def _crush_or_skip() -> None:
    if not os.environ.get("AGENTBENCH_CRUSH_BINARY"):
        pytest.skip("Crush needs its binary (its npm package downloads it from GitHub releases, unreachable "
                    "here): set AGENTBENCH_CRUSH_BINARY=/path/to/crush to run this test.")


@pytest.fixture(scope="session")
def agent_image(docker_client):
    """Build (once per pinned version, else reuse) an agent's image; returns its tag."""
    built: dict[str, str] = {}

    def get(name: str) -> str:
        if name == "crush":
            _crush_or_skip()
        if name not in built:
            t0 = time.monotonic()
            built[name] = ensure_agent_image(get_agent(name).image(), docker_client)
            print(f"agent image {built[name]} ready in {time.monotonic() - t0:.1f} s")
        return built[name]

    return get


class _Inspector:
    """Looks into the agent's live container at its first model request (preflight's come before it)."""

    def __init__(self, client: Any, label: str) -> None:
        self.client, self.label = client, label
        self.report: dict[str, Any] | None = None
        self.error: Exception | None = None
        self._once = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> None:
        if self.report is not None or not self._once.acquire(blocking=False):
            return
        try:
            boxes = self.client.containers.list(filters={"label": f"agentbench.cell={self.label}"})
            if boxes:  # none yet: a preflight request, made before the sandbox exists
                (box,) = boxes
                self._inspect(box)
        except Exception as exc:  # noqa: BLE001 - the peer would turn it into a 500; the test reports it
            self.error = exc
        finally:
            self._once.release()

    def _inspect(self, box: Any) -> None:
        procs = "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f; done 2>/dev/null"
        # Files: everything the container changed (its image was built before the key existed) and
        # its tmpfs folders, which Docker's diff does not see.
        changed = [c["Path"] for c in box.diff() or [] if c["Kind"] in (0, 1)]
        places = " ".join(shlex.quote(p) for p in [*changed, "/tmp", "/home", "/workspace", "/run", "/var/tmp"])
        files = f"grep -rlsFf <(printf %s \"$K\") {places}"
        # The key is handed in halves and joined in an unexported variable: the scan's own environment
        # must not hold it, or it would find itself.
        half = len(KEY) // 2
        script = (f'K="$K1$K2"; unset K1 K2; echo files:; {files}; echo procs:; {procs} | grep -cFf <(printf %s "$K"); '
                  f"echo control:; {procs} | grep -cF -- {PLACEHOLDER}; true")
        res = box.exec_run(["bash", "-c", script], user="0", environment={"K1": KEY[:half], "K2": KEY[half:]})
        self.report = {"out": res.output.decode(errors="replace"), "attrs": box.attrs}


def _run_cli(tmp_path: Path, peer: ScriptedPeer, agent: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "models.toml").write_text(
        f'[models.peer]\nbase_url = "{peer.start()}"\nmodel = "{PEER_MODEL}"\napi_key_env = "PEER_KEY"\n'
        'request_timeout_s = 120\nmax_retries = 1\n')
    env = {**os.environ, "PEER_KEY": KEY, "AGENTBENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "agentbench.cli", "run", "--model", "peer", "--agent", agent, "--task", "converter",
         "--out", str(tmp_path / "runs")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.browser
@pytest.mark.parametrize("agent", ["opencode", "aider", "crush"])
def test_agent_writes_the_converter_and_it_is_scored(agent: str, tmp_path: Path, docker_client, chromium_path,
                                                     agent_image) -> None:
    agent_image(agent)
    inspect = _Inspector(docker_client, f"converter/peer@{agent}/r1")
    usage = {"prompt_tokens": 1234, "completion_tokens": 321}
    peer = ScriptedPeer("index.html", CONVERTER, usage=usage, on_request=inspect)
    with peer:
        proc = _run_cli(tmp_path, peer, agent)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    (run_dir,) = list((tmp_path / "runs").iterdir())
    attempt = run_dir / "converter" / f"peer@{agent}" / "r1"
    result = json.loads((attempt / "result.json").read_text())
    assert result["outcome"] == "scored" and result["verdict"] == "pass", result
    assert result["agent"]["agent"] == agent and result["agent"]["status"] == "finished"
    assert (attempt / "artefact/index.html").read_text() == CONVERTER
    assert sorted(p.name for p in (attempt / "artefact").iterdir()) == ["index.html"]  # the agent's junk left out

    # The key reached the model, added by the gateway on the host; the agent only ever held a placeholder.
    agent_calls = [b for b in peer.requests if "ping" not in json.dumps(b.get("tools") or [])]
    assert agent_calls and all(h.get("Authorization") == f"Bearer {KEY}" for h in peer.request_headers)
    assert inspect.error is None, f"looking into the sandbox failed: {inspect.error!r}"
    assert inspect.report is not None, "the agent made no model request"
    out = inspect.report["out"]
    files, rest = out.split("procs:\n")
    procs, control = rest.split("control:\n")
    assert files.strip() == "files:", f"the key is in files of the sandbox: {files}"
    assert procs.strip() == "0", "the key is in a process's environment or command line in the sandbox"
    assert int(control.strip()) >= 1, "the scan did not see the agent's configuration (it cannot be trusted)"
    attrs = inspect.report["attrs"]
    assert KEY not in json.dumps(attrs["Config"]["Env"]) and attrs["HostConfig"]["NetworkMode"] == "none"
    stored = "".join(p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file())
    assert KEY not in stored, "the key was written into the run folder"

    # Usage and speed come from the gateway's record, the same for every agent.
    exchanges = (attempt / "gateway.jsonl").read_text().splitlines()
    n = len(exchanges)  # the gateway's record; the peer also saw the preflight's requests
    assert 1 <= n <= len(agent_calls) and result["speed"]["requests"] == n
    assert result["speed"]["prompt_tokens"] == n * usage["prompt_tokens"]
    assert result["speed"]["completion_tokens"] == n * usage["completion_tokens"]
    assert all(json.loads(e)["request"]["model"] == PEER_MODEL for e in exchanges)
    assert (attempt / "agent" / "stderr.txt").is_file()


async def _session(agent: str, peer: ScriptedPeer, tmp_path: Path, limits: AgentLimits):
    model = peer.config(request_timeout_s=120.0, max_retries=1)
    session = ExternalSession(get_agent(agent), model=model, api_key=KEY, adir=tmp_path,
                              labels={"agentbench.test": "external"})
    try:
        with Transcript(tmp_path / "transcript.jsonl") as transcript:
            outcome = await session.run(prompt="Write a unit converter.", limits=limits, entry="index.html",
                                        transcript=transcript)
        await session.sandbox.copy_out(tmp_path / "artefact")
        return outcome, session
    finally:
        await session.sandbox.close()


def test_budget_stops_the_agent_at_the_gateway(tmp_path: Path, agent_image) -> None:
    """opencode's title request uses the one turn allowed; the next is refused and the agent ended."""
    agent_image("opencode")
    peer = ScriptedPeer("index.html", CONVERTER)
    with peer:
        t0 = time.monotonic()
        outcome, session = asyncio.run(_session("opencode", peer, tmp_path,
                                                AgentLimits(max_turns=1, max_tokens=100_000, wall_s=300)))
        took = time.monotonic() - t0
    assert outcome.status == "budget" and outcome.budget_hit == "max_turns", outcome
    assert outcome.turns == 1 and len(peer.requests) == 1
    assert session.gateway is not None and session.gateway.record.refused >= 1
    assert took < 120, f"the agent was not ended when its budget was spent ({took:.0f} s)"


def test_endpoint_failure_is_an_infra_error_whatever_aider_exits(tmp_path: Path, agent_image) -> None:
    """aider exits 0 when every request failed: the gateway's record decides, and it says the endpoint."""
    agent_image("aider")
    peer = ScriptedPeer("index.html", CONVERTER, fail_status=503)
    with peer, pytest.raises(ModelHTTPError) as caught:
        asyncio.run(_session("aider", peer, tmp_path, AgentLimits(max_turns=10, max_tokens=100_000, wall_s=300)))
    assert caught.value.status == 503 and "aider" in str(caught.value)
    assert len(peer.requests) >= 2  # the gateway retried (max_retries=1) before giving up
    assert not (tmp_path / "artefact" / "index.html").exists()


def test_requests_the_agent_built_that_the_endpoint_rejects_are_a_model_outcome(tmp_path: Path,
                                                                                   agent_image) -> None:
    """A 400 is the request's fault, and the agent built it: no-artefact with the reason, never infra."""
    agent_image("aider")
    peer = ScriptedPeer("index.html", CONVERTER, fail_status=400)
    with peer:
        outcome, session = asyncio.run(_session("aider", peer, tmp_path,
                                                AgentLimits(max_turns=10, max_tokens=100_000, wall_s=300)))
    assert outcome.status == "no-artefact" and outcome.stop_reason == "rejected", outcome
    assert "rejected the request aider built" in (outcome.detail or "") and "HTTP 400" in outcome.detail
    assert len(peer.requests) >= 1 and session.gateway is not None and session.gateway.record.ok == 0
    entry = tmp_path / "artefact" / "index.html"
    assert not entry.exists() or entry.stat().st_size == 0  # aider makes the file it is given, empty


def test_hung_agent_is_killed_at_the_wall_limit(tmp_path: Path, agent_image) -> None:
    agent_image("aider")

    class Hanging(ScriptedPeer):
        def _answer(self, body: dict[str, Any]) -> Reply:
            self.sleep(600)  # the model never answers in time; stop() cuts it short
            return super()._answer(body)

    peer = Hanging("index.html", CONVERTER)
    with peer:
        t0 = time.monotonic()
        outcome, _ = asyncio.run(_session("aider", peer, tmp_path, AgentLimits(max_turns=10, max_tokens=100_000,
                                                                                wall_s=12)))
        took = time.monotonic() - t0
    assert outcome.status == "budget" and outcome.budget_hit == "wall", outcome
    # Far under the model's 600 s: the wall limit ended it (start-up and teardown may be slow here).
    assert took < 200, f"the session outlived its wall limit by far ({took:.0f} s)"
