"""Pure logic of the builtin agent's tools: argument checking and text tool-call detection.

Execution against the real Docker sandbox is covered in test_builtin_agent.py; here a sandbox
that fails on any use proves that rejected calls never reach it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentbench.agents import TOOL_NAMES, TOOL_SCHEMAS, execute, find_text_tool_calls
from agentbench.agents._tools import parse_arguments, truncate_middle
from agentbench.sandbox import Sandbox


@dataclass
class Call:
    id: str
    name: str
    arguments: str


class UntouchableSandbox(Sandbox):
    """Fails the test if a tool reaches it."""

    def _touched(self, *args: object, **kwargs: object):
        raise AssertionError(f"the sandbox was used: {args} {kwargs}")

    async def exec(self, command: str, *, timeout_s: float | None = None):
        self._touched(command)

    async def write_file(self, path: str, content: str | bytes) -> None:
        self._touched(path)

    async def read_file(self, path: str) -> bytes:
        self._touched(path)

    async def list_files(self, path: str = ".") -> list[str]:
        self._touched(path)

    async def copy_out(self, dest: Path) -> None:
        self._touched(dest)

    async def copy_in(self, src: Path) -> None:
        self._touched(src)

    async def close(self) -> None:
        pass


def test_schemas_are_exactly_the_five_tools() -> None:
    assert TOOL_NAMES == ("write_file", "read_file", "list_files", "run", "finish")
    by_name = {s["function"]["name"]: s["function"]["parameters"] for s in TOOL_SCHEMAS}
    assert by_name["write_file"]["required"] == ["path", "content"]
    assert by_name["list_files"]["required"] == []
    assert by_name["run"]["required"] == ["command"]
    assert by_name["run"]["properties"]["timeout_s"]["type"] == "number"
    assert all(p["additionalProperties"] is False for p in by_name.values())
    json.dumps(TOOL_SCHEMAS)  # serialisable as sent


@pytest.mark.parametrize(
    ("name", "raw", "problem"),
    [
        ("write_file", '{"path": "index.html", "content": "<html>', "not valid JSON"),
        ("write_file", '["index.html", "x"]', "must be a JSON object, got array"),
        ("write_file", '"index.html"', "must be a JSON object, got string"),
        ("write_file", '{"path": "index.html"}', "missing required field(s) 'content'"),
        ("write_file", '{"path": "a", "content": 42}', "field 'content' must be a string, got 42"),
        ("write_file", '{"path": "a", "content": "x", "mode": "w"}', "unknown field(s) 'mode'"),
        ("run", '{"command": "ls", "timeout_s": "60"}', "field 'timeout_s' must be a number"),
        ("run", '{"command": "ls", "timeout_s": true}', "field 'timeout_s' must be a number"),
        ("read_file", "", "missing required field(s) 'path'"),
        ("finish", "null", "must be a JSON object, got null"),
    ],
)
def test_bad_arguments_are_rejected_with_the_reason(name: str, raw: str, problem: str) -> None:
    args, found = parse_arguments(name, raw)
    assert args is None
    assert problem in found


def test_good_arguments_are_accepted_unchanged() -> None:
    assert parse_arguments("run", '{"command": "ls", "timeout_s": 5}') == ({"command": "ls", "timeout_s": 5}, None)
    assert parse_arguments("list_files", "") == ({}, None)
    assert parse_arguments("list_files", "{}") == ({}, None)


@pytest.mark.parametrize(
    ("name", "raw", "expect"),
    [
        ("write_file", '{"path": "index.html", "content": "<html>', "write_file expects a JSON object"),
        ("write_file", '{"path": "a.html", "content": 42}', '"content": string'),
        ("delete_file", '{"path": "index.html"}', "there is no such tool"),
        ("run", '{"command": "ls", "timeout_s": -1}', "must be positive"),
    ],
)
async def test_rejected_calls_never_reach_the_sandbox(name: str, raw: str, expect: str) -> None:
    outcome = await execute(Call("c1", name, raw), UntouchableSandbox())
    assert outcome.is_error
    assert expect in outcome.content
    assert "Call the tool again" in outcome.content


async def test_unknown_tool_lists_the_available_ones() -> None:
    outcome = await execute(Call("c1", "shell", '{"command": "ls"}'), UntouchableSandbox())
    assert outcome.is_error
    assert "write_file, read_file, list_files, run, finish" in outcome.content


async def test_finish_needs_no_sandbox_and_carries_the_summary() -> None:
    outcome = await execute(Call("c1", "finish", '{"summary": "built it"}'), UntouchableSandbox())
    assert outcome.finished and not outcome.is_error
    assert outcome.summary == "built it"


@pytest.mark.parametrize(
    ("content", "count", "kind"),
    [
        ('<tool_call>\n{"name": "write_file", "arguments": {"path": "a", "content": "b"}}\n</tool_call>',
         1, "<tool_call> tag"),
        ("<tool_call>\n<function=write_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>",
         1, "<tool_call> tag"),
        ('Writing it now.\n```json\n{"name": "write_file", "arguments": {"path": "a", "content": "b"}}\n```',
         1, "JSON tool call in the message text"),
        ('{"name": "finish", "parameters": {"summary": "done"}}', 1, "JSON tool call in the message text"),
        (("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n```json\n{}\n```"
         "<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>finish\n```json\n{}\n```"
         "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"), 2, "DeepSeek tool-call tokens"),
        (('<｜DSML｜function_calls>\n<｜DSML｜invoke name="write_file">\n'
         '<｜DSML｜parameter name="path" string="true">index.html</｜DSML｜parameter>\n'
         "</｜DSML｜invoke>\n</｜DSML｜function_calls>"), 1, "DeepSeek DSML markup"),
        ('[TOOL_CALLS][{"name": "list_files", "arguments": {}}]', 1, "[TOOL_CALLS] token"),
    ],
)
def test_text_tool_calls_are_found(content: str, count: int, kind: str) -> None:
    n, kinds = find_text_tool_calls(content)
    assert n == count
    assert kind in kinds


@pytest.mark.parametrize(
    "content",
    [
        None,
        "",
        "I wrote index.html and checked it with node. It is done.",
        "Use `localStorage` for persistence:\n```js\nconst items = JSON.parse(x);\n```",
        '```json\n{"name": "todo-app", "version": "1.0.0"}\n```',
    ],
)
def test_ordinary_answers_are_not_tool_calls(content: str | None) -> None:
    assert find_text_tool_calls(content) == (0, [])


def test_truncate_middle_keeps_both_ends_and_says_so() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    short = truncate_middle(text, 1000)
    assert short.startswith("HEAD") and short.endswith("TAIL")
    assert "characters omitted" in short
    assert len(short) < 1100
    assert truncate_middle("small", 1000) == "small"
