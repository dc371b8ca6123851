"""Offline demo models: recorded agent sessions replayed over real loopback HTTP.

The demo models go through exactly the same path as a real endpoint (ChatClient -> HTTP ->
OpenAI-compatible server -> completion or SSE stream), so ``agentbench run --model demo`` works
without any network or API key and exercises everything but the model itself.

Two variants are served: ``agentbench-demo-careful`` (looks at the workspace, writes a carefully
made page, checks it with node, sometimes reads it back, then finishes) and
``agentbench-demo-rushed`` (writes a quick page and finishes). The recorded turns live in
``demo_data/sessions.json``; the pages they write in ``demo_data/<variant>/<task>/index.html``.

A request is matched to its task by finding which task's prompt is contained in the first user
message, to its variant by ``model``, and to its turn by the number of assistant messages it
already holds. Past the recorded turns the model answers in plain text (which ends a session).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Self

import structlog

from ._server import OpenAICompatServer, Reply

__all__ = ["DEMO_DATA", "DEMO_MODEL_IDS", "DemoServer", "load_sessions"]

log = structlog.get_logger()

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"
DEMO_MODEL_IDS = {"agentbench-demo-rushed": "rushed", "agentbench-demo-careful": "careful"}
AFTER_SCRIPT = "The work is complete: index.html is in /workspace."


def _tokens(text: str) -> int:
    """A rough token count (about 4 characters per token, as for English text and code)."""
    return max(1, (len(text) + 3) // 4) if text else 0


def load_sessions(root: Path = DEMO_DATA) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The recorded sessions: ``{variant: {task: [turn, ...]}}``."""
    data = json.loads((root / "sessions.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def _text_of(content: Any) -> str:
    """Message content as text, whether a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _error(status: int, message: str) -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "invalid_request_error"}})


class DemoServer:
    """Serve the demo models on 127.0.0.1 (a free port) for the given tasks.

    ``task_prompts`` maps task id to the prompt text the agent sends. Use as a context manager
    (or ``start()``/``stop()``); ``base_url`` is the endpoint to give ChatClient.
    """

    def __init__(self, task_prompts: dict[str, str], *, data_dir: Path = DEMO_DATA) -> None:
        self.task_prompts = {task: prompt.strip() for task, prompt in task_prompts.items()}
        self.data_dir = data_dir
        self.sessions = load_sessions(data_dir)
        self._server = OpenAICompatServer(self._handle, models=sorted(DEMO_MODEL_IDS))
        self.base_url: str | None = None

    def start(self) -> str:
        self.base_url = self._server.start()
        log.debug("demo.start", base_url=self.base_url, tasks=sorted(self.task_prompts))
        return self.base_url

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def requests(self) -> list[Any]:
        """The requests the server received (for tests and debugging)."""
        return self._server.requests

    # --- request handling -------------------------------------------------------------------

    def _task_of(self, messages: list[dict[str, Any]]) -> str | None:
        first_user = next((_text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
        # The longest matching prompt wins, in case one task's prompt contains another's.
        matches = [t for t, p in self.task_prompts.items() if p and p in first_user]
        return max(matches, key=lambda t: len(self.task_prompts[t])) if matches else None

    def _handle(self, request: dict[str, Any]) -> Reply:
        model = request.get("model")
        variant = DEMO_MODEL_IDS.get(model) if isinstance(model, str) else None
        if variant is None:
            return _error(400, f"Unknown demo model {model!r}; this server serves {', '.join(sorted(DEMO_MODEL_IDS))}.")
        messages = request.get("messages")
        if not isinstance(messages, list):
            return _error(400, "The request has no 'messages' list.")
        task = self._task_of(messages)
        if task is None:
            return _error(
                400,
                "The demo model does not recognise this task: the first user message contains none of the "
                f"prompts of the tasks it was started for ({', '.join(sorted(self.task_prompts)) or 'none'}).",
            )
        turns = self.sessions.get(variant, {}).get(task)
        if turns is None:
            return _error(400, f"The demo model {model} has no recorded session for task {task!r}.")
        index = sum(1 for m in messages if m.get("role") == "assistant")
        turn = turns[index] if index < len(turns) else {"content": AFTER_SCRIPT}
        return self._reply(variant, task, index, turn, request)

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"$demo_file"}:
            return (self.data_dir / value["$demo_file"]).read_text(encoding="utf-8")
        return value

    def _reply(self, variant: str, task: str, index: int, turn: dict[str, Any], request: dict[str, Any]) -> Reply:
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("content")}
        if turn.get("reasoning"):
            message["reasoning_content"] = turn["reasoning"]
        calls = []
        for i, call in enumerate(turn.get("tool_calls", [])):
            args = {k: self._resolve(v) for k, v in call["arguments"].items()}
            calls.append({
                "id": f"call_{variant[:4]}_{task}_{index}_{i}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(args, ensure_ascii=False)},
            })
        if calls:
            message["tool_calls"] = calls
        # Usage measured from the texts, so it grows with the conversation like a real one.
        prompt = _tokens(json.dumps(request.get("messages", []), ensure_ascii=False))
        prompt += _tokens(json.dumps(request.get("tools", []))) if request.get("tools") else 0
        reasoning = int(turn.get("reasoning_tokens", _tokens(turn.get("reasoning") or "")))
        output = _tokens(turn.get("content") or "") + sum(
            _tokens(c["function"]["name"] + c["function"]["arguments"]) + 4 for c in calls
        )
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": output + reasoning,
            "total_tokens": prompt + output + reasoning,
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }
        return Reply(message=message, usage=usage, finish_reason="tool_calls" if calls else "stop")
