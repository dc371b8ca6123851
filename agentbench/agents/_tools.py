"""The builtin agent's tools: OpenAI schemas, strict argument checking, execution in a sandbox.

Arguments arrive as a raw JSON string that may be anything. They are parsed with ``json.loads``
and checked against the schema; anything wrong (invalid JSON, not an object, a missing, unknown
or wrongly typed field, an unknown tool) becomes a tool error that says what was wrong and what
was expected. A tool is never run on guessed or repaired arguments: the model must call again.

Also here: detection of tool calls the model wrote as *text* in its message instead of using the
tools API (``<tool_call>`` tags, fenced JSON, DeepSeek tokens and DSML). They are never executed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..errors import DockerUnavailable, ImageMissing, PathEscape, SandboxError
from ..models._text_calls import find_text_tool_calls
from ..models._types import ToolCall
from ..sandbox import Sandbox

__all__ = [
    "MAX_RUN_TIMEOUT_S",
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "ToolOutcome",
    "execute",
    "find_text_tool_calls",
    "truncate_middle",
]

WORKSPACE = "/workspace"
MAX_RUN_TIMEOUT_S = 300.0
DEFAULT_RUN_TIMEOUT_S = 60.0
# What the model sees of a command's output, a file or a listing: enough to debug, small enough
# that one noisy command cannot flood the context.
MAX_RUN_OUTPUT_CHARS = 12_000
MAX_READ_CHARS = 60_000
MAX_LIST_ENTRIES = 500


@dataclass(frozen=True)
class _Param:
    type: str  # JSON schema type: "string" or "number"
    description: str
    required: bool = True


_TOOLS: dict[str, tuple[str, dict[str, _Param]]] = {
    "write_file": (
        ("Create or overwrite a file in the workspace (/workspace) with the given text content. "
        "Parent folders are created."),
        {
            "path": _Param("string", "Path relative to /workspace, e.g. 'index.html'."),
            "content": _Param("string", "The complete new content of the file."),
        },
    ),
    "read_file": (
        "Read a text file from the workspace.",
        {"path": _Param("string", "Path relative to /workspace.")},
    ),
    "list_files": (
        "List the files under a folder of the workspace, recursively.",
        {"path": _Param("string", "Folder relative to /workspace (default '.').", required=False)},
    ),
    "run": (
        ("Run a shell command in /workspace (bash; node is available; there is no network). "
        "Returns the exit code, stdout and stderr."),
        {
            "command": _Param("string", "The shell command line."),
            "timeout_s": _Param(
                "number", f"Seconds before the command is killed (default 60, at most {MAX_RUN_TIMEOUT_S:.0f}).",
                required=False,
            ),
        },
    ),
    "finish": (
        "Call once when the work is done: ends the session.",
        {"summary": _Param("string", "A short summary of what you built.")},
    ),
}

TOOL_NAMES: tuple[str, ...] = tuple(_TOOLS)

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": spec.type, "description": spec.description} for p, spec in params.items()},
                "required": [p for p, spec in params.items() if spec.required],
                "additionalProperties": False,
            },
        },
    }
    for name, (description, params) in _TOOLS.items()
]


class ToolOutcome(BaseModel):
    """What one tool call produced: the text the model sees, and whether the call failed.

    ``is_error`` means the call could not be carried out (bad arguments, unknown tool, path
    outside the workspace, missing file). A command that exits non-zero or times out is not a
    tool error: the tool worked and reports what happened.
    """

    content: str
    is_error: bool = False
    finished: bool = False
    summary: str | None = None
    duration_s: float = 0.0


def _expected(name: str) -> str:
    params = _TOOLS[name][1]
    fields = ", ".join(
        f'"{p}": {spec.type}{"" if spec.required else " (optional)"}' for p, spec in params.items()
    )
    return f"{name} expects a JSON object {{{fields}}}"


def _tool_error(name: str, problem: str) -> ToolOutcome:
    expected = _expected(name) if name in _TOOLS else f"Available tools: {', '.join(TOOL_NAMES)}"
    return ToolOutcome(
        content=f"Error: the {name} call was not executed: {problem}. {expected}. "
        "Call the tool again with corrected arguments.",
        is_error=True,
    )


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _type_ok(value: Any, json_type: str) -> bool:
    if json_type == "string":
        return isinstance(value, str)
    # bool is an int subclass in Python, but true/false is not a number of seconds.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse_arguments(name: str, raw: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """``(arguments, None)`` if ``raw`` matches the tool's schema, else ``(None, problem)``."""
    params = _TOOLS[name][1]
    text = raw if raw is not None else ""
    if text.strip() == "":
        # An empty string is how some servers send "no arguments"; it means {} and nothing else.
        args: Any = {}
    else:
        try:
            args = json.loads(text)
        except json.JSONDecodeError as exc:
            preview = text if len(text) <= 120 else text[:120] + "..."
            return None, (f"the arguments are not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno}; "
                          f"got {preview!r})")
    if not isinstance(args, dict):
        return None, f"the arguments must be a JSON object, got {_json_type(args)} {text.strip()[:60]}"
    unknown = sorted(set(args) - set(params))
    if unknown:
        return None, f"unknown field(s) {', '.join(repr(u) for u in unknown)}"
    missing = [p for p, spec in params.items() if spec.required and p not in args]
    if missing:
        return None, f"missing required field(s) {', '.join(repr(m) for m in missing)}"
    for p, value in args.items():
        if not _type_ok(value, params[p].type):
            return None, f"field {p!r} must be a {params[p].type}, got {json.dumps(value)[:60]}"
    return args, None


def _workspace_path(path: str) -> str:
    """Accept '/workspace/x' as the same file as 'x' (the system prompt names /workspace)."""
    if path == WORKSPACE or path == WORKSPACE + "/":
        return "."
    if path.startswith(WORKSPACE + "/"):
        return path[len(WORKSPACE) + 1:]
    return path


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of ``text`` within ``limit`` characters, saying what was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters omitted ...]\n{text[-half:]}"


async def _run_tool(name: str, args: dict[str, Any], sandbox: Sandbox, max_timeout_s: float | None) -> ToolOutcome:
    if name == "write_file":
        path = _workspace_path(args["path"])
        if not path.strip() or path == ".":
            return _tool_error(name, "field 'path' must name a file")
        data = args["content"].encode("utf-8")
        await sandbox.write_file(path, data)
        return ToolOutcome(content=f"Wrote {len(data)} bytes to {path}.")
    if name == "read_file":
        path = _workspace_path(args["path"])
        data = await sandbox.read_file(path)
        if b"\0" in data[:8192]:
            return ToolOutcome(content=f"{path} is a binary file of {len(data)} bytes; not shown.")
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_READ_CHARS:
            text = text[:MAX_READ_CHARS] + f"\n[... truncated: the file has {len(text)} characters ...]"
        return ToolOutcome(content=text)
    if name == "list_files":
        path = _workspace_path(args.get("path", "."))
        files = sorted(await sandbox.list_files(path))
        if not files:
            return ToolOutcome(content=f"No files under {WORKSPACE if path == '.' else path}.")
        shown = files[:MAX_LIST_ENTRIES]
        more = f"\n[... and {len(files) - len(shown)} more]" if len(files) > len(shown) else ""
        return ToolOutcome(content="\n".join(shown) + more)
    if name == "run":
        asked = float(args.get("timeout_s", DEFAULT_RUN_TIMEOUT_S))
        if asked <= 0:
            return _tool_error(name, f"field 'timeout_s' must be positive, got {asked:g}")
        cap = MAX_RUN_TIMEOUT_S if max_timeout_s is None else min(MAX_RUN_TIMEOUT_S, max_timeout_s)
        timeout = max(1.0, min(asked, cap))
        result = await sandbox.exec(args["command"], timeout_s=timeout)
        head = f"exit code: {result.exit_code}"
        if result.timed_out:
            head = f"timed out after {timeout:g} s (killed); exit code: {result.exit_code}"
        if result.truncated:
            head += "\n(note: the output was cut off by the sandbox; only its start was kept)"
        if timeout < asked:
            head += f"\n(note: timeout lowered from {asked:g} s to {timeout:g} s)"
        budget = MAX_RUN_OUTPUT_CHARS // 2
        out = truncate_middle(result.stdout, budget + max(0, budget - len(result.stderr)))
        err = truncate_middle(result.stderr, budget + max(0, budget - len(result.stdout)))
        return ToolOutcome(content=f"{head}\n--- stdout ---\n{out}\n--- stderr ---\n{err}")
    assert name == "finish"
    return ToolOutcome(content="Finish recorded.", finished=True, summary=args["summary"])


async def _assert_alive(sandbox: Sandbox, original: SandboxError) -> None:
    try:
        probe = await sandbox.exec("true", timeout_s=30)
    except SandboxError as exc:
        raise exc from original
    if not probe.ok:
        raise original


async def execute(call: ToolCall, sandbox: Sandbox, *, max_timeout_s: float | None = None) -> ToolOutcome:
    """Check one tool call's arguments and run it in ``sandbox``.

    ``call`` is a ToolCall (``id``, ``name``, ``arguments`` as the raw JSON string).
    ``max_timeout_s`` caps ``run``'s timeout further (the session's remaining wall time).
    Problems the model can fix come back as ``is_error`` outcomes; sandbox failures that are not
    the model's doing (the container died, the engine went away) propagate as SandboxError.
    """
    started = time.monotonic()
    name = call.name
    if name not in _TOOLS:
        outcome = _tool_error(str(name), "there is no such tool")
    else:
        args, problem = parse_arguments(name, call.arguments)
        if problem is not None:
            outcome = _tool_error(name, problem)
        else:
            try:
                outcome = await _run_tool(name, args, sandbox, max_timeout_s)
            except PathEscape as exc:
                outcome = ToolOutcome(
                    content=f"Error: the {name} call was not executed, the path is outside the workspace: {exc} "
                    f"Use a path relative to {WORKSPACE}, like 'index.html'.",
                    is_error=True,
                )
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
                outcome = ToolOutcome(content=f"Error: {name} failed: {exc}", is_error=True)
            except (DockerUnavailable, ImageMissing):
                raise
            except SandboxError as exc:
                if name == "run":
                    raise
                # A missing file and a dead container are both SandboxError; only the first is the
                # model's to fix. If the sandbox still runs a command, it was the request.
                await _assert_alive(sandbox, exc)
                outcome = ToolOutcome(content=f"Error: {name} failed: {exc}", is_error=True)
    outcome.duration_s = time.monotonic() - started
    return outcome
