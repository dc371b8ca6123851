"""The transcript: one JSON line per record, on disk as soon as it is written."""

from __future__ import annotations

import json

from agentbench.agents import Transcript
from agentbench.models import RequestStats, Usage


def test_each_record_is_on_disk_before_close(tmp_path) -> None:
    path = tmp_path / "sub" / "t.jsonl"
    transcript = Transcript(path)
    transcript.message({"role": "assistant", "content": "", "tool_calls": []}, turn=1, reasoning="thinking")
    transcript.request(turn=1, stats=RequestStats(wall_s=0.5, attempts=2), usage=Usage(prompt_tokens=7),
                       finish_reason="stop")
    # Read by another handle while still open: nothing may sit in a buffer (a crash would lose it).
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["kind"] for r in lines] == ["message", "request"]
    assert lines[0]["reasoning"] == "thinking" and lines[0]["turn"] == 1
    assert lines[1]["stats"]["attempts"] == 2 and lines[1]["usage"]["prompt_tokens"] == 7
    assert all(r["ts"].endswith("+00:00") for r in lines)
    transcript.close()
    transcript.close()  # twice is fine


def test_reading_skips_a_torn_last_line(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    with Transcript(path) as transcript:
        transcript.event("start", agent="builtin")
    with path.open("a", encoding="utf-8") as f:
        f.write('{"kind": "message", "mess')  # the process died mid-write
    assert [r["event"] for r in Transcript.read(path)] == ["start"]
