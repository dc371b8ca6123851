"""The builtin agent: a plain tool loop on the host, every tool executed inside the sandbox.

One session: system prompt + task prompt -> ask the model (with tools) -> run each tool call in
the sandbox and answer it with a ``tool`` message -> repeat, until one of:

* ``finish``: the model called finish. If the entry file does not exist yet, the first finish is
  refused with a tool error (the model may still write it); a second one ends the session.
* ``answer``: a plain reply with no tool call once the entry file exists. Before it exists the
  first plain reply gets a nudge ("no tool was called; use the tools..."); a second plain reply
  in a row ends the session (a model that twice answers in prose will not start using tools).
* a budget: ``max_turns`` (model requests), ``max_tokens`` (prompt + completion tokens summed
  over the session, checked before each request), ``wall`` (the whole loop under one
  ``asyncio.timeout``), ``length`` (a reply cut off at the per-request token limit that carries
  no usable tool call; asking again would only repeat it).

Tool calls written as text in a reply without API tool calls (``<tool_call>``, fenced JSON,
DeepSeek tokens or DSML) are failed calls: never executed, counted in ``text_tool_calls`` and
answered with a user message saying so; they neither end the session nor use up the nudge.
Calls with invalid arguments get a tool error and the model may try again. ``run`` is capped by
the remaining wall time. ModelError and SandboxError propagate to the caller (infrastructure
errors); the transcript keeps everything up to them. A SandboxError because the sandbox stopped
while the engine stayed sound (``sandbox.ended_from_inside``: the agent's commands stopped it)
ends the session instead: ``no-artefact``, stop reason ``sandbox-ended``, the reason in ``detail``.

Status: ``finished`` (ended by finish or answer, entry file present), ``no-artefact`` (ended
without it), ``budget`` (a limit stopped it; ``budget_hit`` says which, ``entry_exists`` whether
there is something to check all the same).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field

from ..errors import SandboxError
from ..models._client import ChatClient
from ..models._types import RequestStats, ToolCall, Usage
from ..sandbox import Sandbox, ended_from_inside
from ._tools import TOOL_SCHEMAS, ToolOutcome, execute, find_text_tool_calls
from ._transcript import Transcript

__all__ = ["SYSTEM_PROMPT", "AgentLimits", "AgentOutcome", "BuiltinAgent"]

log = structlog.get_logger()

SYSTEM_PROMPT = """\
You are a coding agent working alone in a sandboxed Linux container. Your workspace is \
/workspace: every path you give is relative to it, and every command runs in it.

Deliver the task the user gives you as files in /workspace. The entry file {entry} must exist when you \
finish: it is what will be opened in a web browser and used, as a person would use it.

Tools (call them through the tools API, never by writing a tool call in your message text):
- write_file(path, content): create or overwrite a file with its complete content.
- read_file(path), list_files(path): look at the workspace.
- run(command, timeout_s): run a bash command. node is available for checking JavaScript. \
There is no network: nothing can be downloaded or installed, and the page must not load \
anything from the internet (no CDNs).
- finish(summary): call once when the work is complete; it ends the session.
"""

NUDGE = (
    "No tool was called, and /workspace/{entry} does not exist yet. Nothing you write in a message "
    "is saved. Use the tools: write_file to create {entry}, check it if you like, then call finish."
)
TEXT_CALL_REPLY = (
    "Your last message contained {n} tool call(s) written as text ({kinds}). They were NOT executed: "
    "nothing happened in /workspace. Call tools only through the tools API (function calling), "
    "with the arguments as a JSON object."
)
FINISH_REFUSED = (
    "Error: finish was refused: /workspace/{entry} does not exist. Write it with write_file, then call "
    "finish again. (A second finish without it ends the session with no artefact.)"
)

# sandbox-ended: the agent's commands stopped its sandbox (the engine and a fresh container were fine);
# rejected: an external agent's requests were refused (by the endpoint or the gateway) as built.
StopReason = Literal["finish", "answer", "max_turns", "max_tokens", "wall", "length", "sandbox-ended", "rejected"]
BUDGET_STOPS = ("max_turns", "max_tokens", "wall", "length")


class AgentLimits(BaseModel):
    """The budget of one session."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(default=30, gt=0)
    max_tokens: int = Field(default=200_000, gt=0)  # prompt + completion, summed over the session
    wall_s: float = Field(default=900.0, gt=0)


class AgentOutcome(BaseModel):
    """How a session ended and what it cost."""

    status: Literal["finished", "no-artefact", "budget"]
    stop_reason: StopReason
    budget_hit: str | None = None
    entry_exists: bool = False
    turns: int = 0
    usage: Usage = Field(default_factory=Usage)  # summed over requests
    requests: list[RequestStats] = Field(default_factory=list)  # one per model request
    tool_calls: int = 0  # calls made through the tools API (valid or not)
    tool_errors: int = 0  # of those, calls that could not be carried out
    text_tool_calls: int = 0  # calls written as text in the message: never executed
    nudges: int = 0
    summary: str | None = None  # finish's summary, or the final plain answer
    detail: str | None = None  # why the session ended so, when it was not the model's own choice
    wall_s: float = 0.0


async def entry_exists(sandbox: Sandbox, entry: str, *, nonempty: bool = False) -> bool:
    """Whether the entry file is in the workspace (``nonempty``: and not empty).

    A sandbox that does not answer within the bound says nothing about the artefact: SandboxError
    (the caller's infrastructure path), never "missing" (a model outcome, no-artefact).
    """
    result = await sandbox.exec(f"test -{'s' if nonempty else 'f'} {shlex.quote(entry)}", timeout_s=60)
    if result.timed_out:
        raise SandboxError(f"could not tell whether {entry} exists: the sandbox did not answer `test` "
                           "within 60 s")
    return result.exit_code == 0


class _Session:
    """One run of the loop: the conversation, the counters and the rules of the module docstring."""

    def __init__(self, *, sandbox: Sandbox, client: ChatClient, limits: AgentLimits, entry: str,
                 transcript: Transcript, max_tokens_per_request: int | None) -> None:
        self.sandbox, self.client, self.limits, self.entry = sandbox, client, limits, entry
        self.transcript = transcript
        self.max_tokens_per_request = max_tokens_per_request
        self.entry_verified = False
        self.deadline = asyncio.get_running_loop().time() + limits.wall_s
        self.messages: list[dict[str, Any]] = []
        self.turns = 0
        self.usage = Usage()
        self.requests: list[RequestStats] = []
        self.tool_calls = self.tool_errors = self.text_tool_calls = self.nudges = 0
        self.plain_in_a_row = 0
        self.finish_refusals = 0
        self.summary: str | None = None
        self.stop: StopReason | None = None

    @property
    def tokens(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens

    def add(self, message: dict[str, Any], reasoning: str | None = None) -> None:
        """Append to the conversation and the transcript (with reasoning the history leaves out)."""
        self.messages.append(message)
        kept = message.get("reasoning_content") or message.get("reasoning")
        self.transcript.message(message, turn=self.turns, reasoning=None if kept else reasoning)

    async def loop(self) -> None:
        """Ask, act, repeat; returns with ``self.stop`` set (the wall limit is the caller's)."""
        while self.stop is None:
            if self.turns >= self.limits.max_turns:
                self.stop = "max_turns"
            elif self.tokens >= self.limits.max_tokens:
                self.stop = "max_tokens"
            else:
                await self.turn()

    async def turn(self) -> None:
        result = await self.client.chat(self.messages, tools=TOOL_SCHEMAS, max_tokens=self.max_tokens_per_request)
        self.turns += 1
        self.usage = self.usage + result.usage
        self.requests.append(result.stats)
        self.transcript.request(turn=self.turns, stats=result.stats, usage=result.usage,
                                finish_reason=result.finish_reason)
        self.add(result.message, result.reasoning)

        if result.finish_reason == "length" and not any(_args_are_json(c) for c in result.tool_calls):
            self.stop = "length"
        elif result.tool_calls:
            self.plain_in_a_row = 0
            await self.run_calls(result.tool_calls)
        else:
            await self.answered(result.content)

    async def run_calls(self, calls: list[ToolCall]) -> None:
        loop = asyncio.get_running_loop()
        for call in calls:
            outcome = await execute(call, self.sandbox, max_timeout_s=max(1.0, self.deadline - loop.time()))
            self.entry_verified = False  # any tool call may have changed the workspace
            if outcome.finished:
                if self.finish_refusals >= 1:
                    self.stop, self.summary = "finish", outcome.summary
                elif await entry_exists(self.sandbox, self.entry):
                    self.stop, self.summary = "finish", outcome.summary
                    self.entry_verified = True  # saves the final check one sandbox exec
                else:
                    self.finish_refusals += 1
                    outcome = ToolOutcome(content=FINISH_REFUSED.format(entry=self.entry), is_error=True,
                                          duration_s=outcome.duration_s)
            self.tool_calls += 1
            self.tool_errors += int(outcome.is_error)
            self.transcript.tool(turn=self.turns, call_id=call.id, name=call.name, is_error=outcome.is_error,
                                 duration_s=outcome.duration_s)
            self.add({"role": "tool", "tool_call_id": call.id, "content": outcome.content})

    async def answered(self, content: str | None) -> None:
        """A reply without API tool calls: text tool calls, a final answer, or prose to nudge."""
        n, kinds = find_text_tool_calls(content)
        if n:
            self.text_tool_calls += n
            self.transcript.event("text-tool-calls", turn=self.turns, count=n, kinds=kinds)
            self.add({"role": "user", "content": TEXT_CALL_REPLY.format(n=n, kinds=", ".join(kinds))})
            return
        self.summary = content
        self.plain_in_a_row += 1
        if self.plain_in_a_row >= 2 or await entry_exists(self.sandbox, self.entry):
            self.stop = "answer"
            return
        self.nudges += 1
        self.transcript.event("nudge", turn=self.turns)
        self.add({"role": "user", "content": NUDGE.format(entry=self.entry)})


class BuiltinAgent:
    """The builtin tool-loop agent (see the module docstring for the rules it follows)."""

    name = "builtin"

    async def run(
        self,
        *,
        prompt: str,
        sandbox: Sandbox,
        client: ChatClient,
        limits: AgentLimits,
        entry: str,
        transcript: Transcript,
        max_tokens_per_request: int | None = None,
    ) -> AgentOutcome:
        """Run one session to its end and say how it ended.

        Raises ModelError (an infrastructure error: the caller records the cell as such) and
        SandboxError, after writing an ``error`` event to the transcript. ``transcript`` stays
        open: it belongs to the caller.
        """
        started = time.monotonic()
        s = _Session(sandbox=sandbox, client=client, limits=limits, entry=entry, transcript=transcript,
                     max_tokens_per_request=max_tokens_per_request)
        transcript.event("start", agent=self.name, entry=entry, limits=limits.model_dump(),
                         max_tokens_per_request=max_tokens_per_request)
        s.add({"role": "system", "content": SYSTEM_PROMPT.format(entry=entry)})
        s.add({"role": "user", "content": prompt})
        detail: str | None = None
        try:
            async with asyncio.timeout_at(s.deadline) as wall:
                await s.loop()
        except SandboxError as exc:
            # The agent's own command may have stopped its sandbox: a model outcome, when the engine
            # and a fresh container say the infrastructure is sound.
            detail = await ended_from_inside(sandbox, exc)
            if detail is None:
                transcript.event("error", error_type=type(exc).__name__, error=str(exc), turns=s.turns)
                raise
            s.stop = "sandbox-ended"
        except BaseException as exc:
            if not (isinstance(exc, TimeoutError) and wall.expired()):
                transcript.event("error", error_type=type(exc).__name__, error=str(exc), turns=s.turns)
                raise
            s.stop = "wall"
        try:
            exists = s.stop != "sandbox-ended" and (s.entry_verified or await entry_exists(sandbox, entry))
        except SandboxError as exc:  # the sandbox did not answer: nothing known of the artefact
            transcript.event("error", error_type=type(exc).__name__, error=str(exc), turns=s.turns)
            raise
        assert s.stop is not None
        if s.stop in BUDGET_STOPS:
            status = "budget"
        else:
            status = "finished" if exists else "no-artefact"
        outcome = AgentOutcome(
            status=status, stop_reason=s.stop, budget_hit=s.stop if status == "budget" else None,
            entry_exists=exists, turns=s.turns, usage=s.usage, requests=s.requests,
            tool_calls=s.tool_calls, tool_errors=s.tool_errors, text_tool_calls=s.text_tool_calls,
            nudges=s.nudges, summary=s.summary, detail=detail, wall_s=round(time.monotonic() - started, 3),
        )
        transcript.event("stop", **outcome.model_dump(exclude={"requests", "usage"}),
                         usage=outcome.usage.model_dump(), tokens=s.tokens)
        log.info("agent.stop", status=status, stop_reason=s.stop, turns=s.turns, tokens=s.tokens)
        return outcome


def _args_are_json(call: Any) -> bool:
    try:
        return isinstance(json.loads(call.arguments or "{}"), dict)
    except (json.JSONDecodeError, TypeError):
        return False
