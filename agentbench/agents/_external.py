"""Run one session of an external agent (opencode, aider, Crush) in its sandbox, behind the gateway.

The sandbox is the agent's own image, still ``--network none``, with the gateway's socket folder
mounted read-only at ``/run/agentbench``. One bash command writes the adapter's files, starts
``forwarder.js`` on the container's loopback and runs the agent under the task's wall limit. The
session ends when the agent exits, when the gateway refuses a request for the budget (the agent is
then ended at once) or at the wall limit (it is killed).

The outcome is decided from the gateway's record and the files, never from the agent's exit code
(aider exits 0 when every request failed):

* ``budget``: the gateway refused a request (``max_turns``/``max_tokens``) or the wall limit hit;
* ``no-artefact`` with the reason in ``detail`` when the entry file is missing because of what the
  agent did: the endpoint rejected the last request it built (400, 413, 422: a malformed or
  oversized request is the agent's, not the endpoint's), the gateway refused its requests (over
  the size cap, not a chat request), or its sandbox stopped while the engine answered and a fresh
  container started (``sandbox.ended_from_inside``);
* ``infra-error`` (raised as ModelError): the latest forwarded request failed upstream for the
  endpoint's reasons (5xx, 401/403/404, 429, transport) and the entry file is missing (also when
  the budget was then spent, but only on failed requests: aider retries by itself);
  ``AgentCrashed`` (a SandboxError) when the agent made no request at all, not even a rejected
  one, and left no entry file (it could not start: see its stderr in ``agent/``);
* else ``finished`` when the entry file exists, ``no-artefact`` when it does not.

The runner copies the workspace out and closes the sandbox, as for the builtin agent. The
agent's stdout and stderr (the last 64 KiB each) are kept in ``agent/`` as extra evidence.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shlex
import time
from pathlib import Path
from typing import Any

import structlog

from ..config import ModelConfig
from ..errors import ModelError, ModelHTTPError, SandboxError
from ..sandbox import ended_from_inside
from ._builtin import AgentLimits, AgentOutcome, entry_exists
from ._gateway import CONTAINER_DIR, SOCKET_NAME, ModelGateway
from ._images import ensure_agent_image
from ._registry import AGENT_HOME, AgentPlan, ExternalAgent, task_prompt
from ._transcript import Transcript

__all__ = ["GATEWAY_PORT", "AgentCrashed", "ExternalSession", "session_script"]

log = structlog.get_logger()

GATEWAY_PORT = 4141  # on the sandbox's own loopback
LOG_TAIL = 64 * 1024
# Upstream statuses that reject the request itself (malformed, too large, unprocessable): the
# request is the agent's work, so its failure is a model outcome. Others (auth, missing model,
# rate limits, server errors) are the endpoint's.
REQUEST_REJECTED = (400, 413, 422)


class AgentCrashed(SandboxError):
    """The external agent ended without one model request and without the entry file."""


def _heredoc(path: str, content: str) -> str:
    mark = "AGENTBENCH_" + secrets.token_hex(8)
    return f"mkdir -p {shlex.quote(str(Path(path).parent))}\ncat > {shlex.quote(path)} <<'{mark}'\n{content}\n{mark}\n"


def session_script(plan: AgentPlan, *, port: int = GATEWAY_PORT) -> str:
    """The one bash command of a session: files, environment, forwarder, then the agent."""
    parts = ["set -u", f"mkdir -p {AGENT_HOME}"]
    parts += [_heredoc(p, c) for p, c in plan.files.items()]
    parts += [f"export {k}={shlex.quote(v)}" for k, v in plan.env.items()]
    parts += [
        f"node /opt/agentbench/forwarder.js {port} {CONTAINER_DIR}/{SOCKET_NAME} 2>{AGENT_HOME}/forwarder.log &",
        # The agent starts once the forwarder listens (node takes a moment to start).
        f"for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done",
        f"( {plan.command} ) >{AGENT_HOME}/agent.stdout 2>{AGENT_HOME}/agent.stderr",
        "rc=$?",
        "echo \"agentbench: agent exited $rc\" >&2",
        "exit $rc",
    ]
    return "\n".join(parts)


async def _keep_logs(sandbox: Any, adir: Path) -> None:
    """Copy the tails of the agent's logs into ``agent/`` (best effort: evidence, not results)."""
    out = adir / "agent"
    out.mkdir(exist_ok=True)
    for name in ("agent.stdout", "agent.stderr", "forwarder.log"):
        try:
            res = await sandbox.exec(f"tail -c {LOG_TAIL} {AGENT_HOME}/{name} 2>/dev/null", timeout_s=20)
        except Exception as exc:  # noqa: BLE001 - evidence only: the attempt goes on without it
            log.warning("agent.logs_lost", file=name, error=str(exc))
            continue
        (out / (name.replace("agent.", "").replace(".log", "") + ".txt")).write_text(res.stdout, encoding="utf-8")


def _require_local_engine(name: str) -> None:
    """The gateway's socket is bind-mounted from this host: only an engine on this host can mount it."""
    from ..sandbox._binding import bound_engine

    engine = bound_engine()
    address = engine.config.address if engine is not None else None
    if address is not None and not address.startswith("unix://"):
        raise SandboxError(
            f"The {name} agent needs a Docker engine on this machine (its model gateway is a unix socket "
            f"bind-mounted into the sandbox), but this cell was placed on engine '{engine.config.name}' at "
            f"{address}. Run external agents with --engine local (or a unix:// engine).")


class ExternalSession:
    """An external agent with the builtin agent's ``run`` signature, so the runner treats both alike.

    Its sandbox is its own (``self.sandbox``): the agent's image with the gateway's socket mounted,
    created inside ``run``. The caller copies the workspace out of it and closes it, as for the
    builtin agent; ``run`` ignores the ``sandbox`` and ``client`` it is given.
    """

    def __init__(self, agent: ExternalAgent, *, model: ModelConfig, api_key: str | None, adir: Path,
                 base_url: str | None = None, labels: dict[str, str] | None = None) -> None:
        from ..sandbox import LazySandbox

        self.agent, self.model, self.adir, self.base_url, self.labels = agent, model, adir, base_url, labels
        self.name = agent.name
        self._api_key = api_key
        self._ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.gateway: ModelGateway | None = None
        session = self

        class _SessionSandbox(LazySandbox):
            async def close(self) -> None:
                try:
                    await super().close()
                finally:  # the socket folder outlives the container (see ModelGateway.remove_dir)
                    if session.gateway is not None:
                        session.gateway.remove_dir()

        self.sandbox = _SessionSandbox(lambda: self._ready)

    async def run(self, *, prompt: str, sandbox: Any = None, client: Any = None, limits: AgentLimits,
                  entry: str, transcript: Transcript, max_tokens_per_request: int | None = None) -> AgentOutcome:
        """Run one session to its end (see the module docstring for how its outcome is decided)."""
        try:
            return await self._run(prompt, limits, entry, transcript, max_tokens_per_request)
        finally:
            if not self._ready.done():  # no container was made: whoever waits on the sandbox stops
                self._ready.set_exception(SandboxError(f"no sandbox was created for {self.name}"))

    async def _run(self, prompt: str, limits: AgentLimits, entry: str, transcript: Transcript,
                   max_tokens_per_request: int | None) -> AgentOutcome:
        from docker.types import Mount

        from ..sandbox import DockerSandbox

        agent, model, adir = self.agent, self.model, self.adir
        _require_local_engine(agent.name)
        started = time.monotonic()
        image = await asyncio.to_thread(ensure_agent_image, agent.image(),
                                        log=lambda m: log.info("agent.image", msg=m))
        plan = agent.plan(base_url=f"http://127.0.0.1:{GATEWAY_PORT}/v1", model_id=model.model,
                          prompt=task_prompt(prompt, entry), entry=entry,
                          max_tokens_per_request=max_tokens_per_request)
        transcript.event("start", agent=agent.name, image=image, entry=entry, limits=limits.model_dump(),
                         max_tokens_per_request=max_tokens_per_request)
        gateway = self.gateway = ModelGateway(
            model, api_key=self._api_key, base_url=self.base_url, max_turns=limits.max_turns,
            max_tokens=limits.max_tokens, max_tokens_per_request=max_tokens_per_request, transcript=transcript,
            exchanges=adir / "gateway.jsonl", keep_dir=True)
        stop_reason = "answer"
        exit_code: int | None = None
        async with gateway:
            mount = Mount(CONTAINER_DIR, str(gateway.socket_dir), type="bind", read_only=True)
            box = await DockerSandbox.create(image=image, labels=self.labels, mounts=[mount])
            self._ready.set_result(box)
            remaining = max(1.0, limits.wall_s - (time.monotonic() - started))
            session = asyncio.ensure_future(box.exec(session_script(plan), timeout_s=remaining))
            budget = asyncio.ensure_future(gateway.stopped.wait())
            try:
                await asyncio.wait([session, budget], return_when=asyncio.FIRST_COMPLETED)
            finally:
                budget.cancel()
                if not session.done():
                    session.cancel()  # kills every process of the session in the sandbox
                    with contextlib.suppress(asyncio.CancelledError):
                        await session
            ended: str | None = None
            if not session.cancelled():
                try:
                    result = session.result()
                except SandboxError as exc:
                    ended = await ended_from_inside(box, exc)  # the agent stopped its own sandbox?
                    if ended is None:
                        raise
                else:
                    exit_code = result.exit_code
                    if result.timed_out:
                        stop_reason = "wall"
            if gateway.record.cap_hit:
                stop_reason = gateway.record.cap_hit
            if ended is not None:
                return self._sandbox_ended(gateway.record, ended, started, transcript)
            await _keep_logs(box, adir)
            if plan.junk:
                await box.exec("rm -rf -- " + " ".join(shlex.quote(j) for j in plan.junk), timeout_s=30)
            # -s: aider creates the file it is given empty before its first request
            exists = await entry_exists(box, entry, nonempty=True)
        return self._outcome(gateway.record, stop_reason, exit_code, exists, started, adir, transcript)

    def _sandbox_ended(self, record: Any, why: str, started: float, transcript: Transcript) -> AgentOutcome:
        outcome = AgentOutcome(status="no-artefact", stop_reason="sandbox-ended", turns=record.turns,
                               usage=record.usage, requests=record.requests, detail=why,
                               summary=f"{self.agent.name}'s sandbox stopped",
                               wall_s=round(time.monotonic() - started, 3))
        transcript.event("stop", **outcome.model_dump(exclude={"requests", "usage"}), usage=outcome.usage.model_dump())
        log.info("agent.stop", agent=self.agent.name, status="no-artefact", stop_reason="sandbox-ended", detail=why)
        return outcome

    def _outcome(self, record: Any, stop_reason: str, exit_code: int | None, exists: bool, started: float,
                 adir: Path, transcript: Transcript) -> AgentOutcome:
        name = self.agent.name
        status = "budget" if stop_reason in ("max_turns", "max_tokens", "wall") else \
            "finished" if exists else "no-artefact"
        outcome = AgentOutcome(
            status=status, stop_reason=stop_reason, budget_hit=stop_reason if status == "budget" else None,
            entry_exists=exists, turns=record.turns, usage=record.usage, requests=record.requests,
            summary=f"{name} exited {exit_code}" if exit_code is not None else f"{name} was stopped",
            wall_s=round(time.monotonic() - started, 3),
        )
        transcript.event("stop", **outcome.model_dump(exclude={"requests", "usage"}),
                         usage=outcome.usage.model_dump(), tokens=record.tokens, exit_code=exit_code,
                         gateway_errors=len(record.errors))
        log.info("agent.stop", agent=name, status=status, stop_reason=stop_reason, turns=record.turns,
                 tokens=record.tokens, exit_code=exit_code)
        if not exists:
            rejected = _rejected(record, name)
            if rejected is not None:
                # The requests the agent built were refused: the model (through its agent) failed.
                outcome.detail = rejected
                if status != "budget":
                    outcome.status, outcome.stop_reason = "no-artefact", "rejected"
                transcript.event("rejected", detail=rejected)
                return outcome
            # A budget spent on failed requests (aider retries on its own) is the endpoint's fault too.
            if record.last_failed and (status != "budget" or record.ok == 0):
                last = record.errors[-1]
                message = (f"The model endpoint failed under {name} (turn {last['turn']}, {last['attempts']} "
                           f"attempt(s)): {last['message']}")
                if last["status"]:
                    raise ModelHTTPError(message, status=last["status"], body=last["body"])
                raise ModelError(message)
            if status != "budget" and record.turns == 0:
                raise AgentCrashed(f"{name} exited {exit_code} without any model request; see "
                                   f"{adir / 'agent' / 'stderr.txt'}.")
        return outcome


def _rejected(record: Any, name: str) -> str | None:
    """Why the agent's own requests failed, when they did (None: they did not, or the endpoint failed)."""
    if record.last_failed and record.errors[-1]["status"] in REQUEST_REJECTED:
        last = record.errors[-1]
        return (f"the endpoint rejected the request {name} built (turn {last['turn']}, HTTP {last['status']}): "
                f"{last['body'][:300] or last['message']}")
    if not record.last_failed and record.rejected:
        last = record.rejected[-1]
        return (f"the gateway refused the {len(record.rejected)} request(s) {name} built, none reached the model "
                f"(last: HTTP {last['status']}, {last['message']})")
    return None
