"""A command's output is read to its end, however late Docker delivers it.

Docker reports an exec gone as soon as its process exits, while the output it wrote may still be on
its way (seconds later on a busy machine). The reader used to stop 0.25 s after the last data once
the exec was gone, and lost output so: a conformance test read 0 of 1000 bytes at load 25. Here a
Docker API of the test's own delivers the output only after it has said the command is gone.
"""

from __future__ import annotations

import asyncio
import queue
import threading

from agentbench.sandbox import _docker_exec
from agentbench.sandbox._docker_exec import run_command
from agentbench.sandbox._exec_reader import ExecReader
from tests.helpers.waiting import HANG_S

LATE_S = 2.0  # how long after saying "gone" this Docker delivers; far under the wait for the mark


class _LateStream:
    """An exec's output stream: what the test puts in, until closed (by us or by the test's EOF)."""

    def __init__(self) -> None:
        self.items: queue.Queue = queue.Queue()
        self.closed = threading.Event()

    def __iter__(self):
        while True:
            item = self.items.get()
            if item is None:
                return
            yield item

    def close(self) -> None:
        self.closed.set()
        self.items.put(None)


class _LateDocker:
    """The docker SDK's low-level API for one exec whose output comes after it is reported gone."""

    def __init__(self, stdout: bytes) -> None:
        self.stdout, self.stream = stdout, _LateStream()
        self.gone_said = threading.Event()
        self.closed_before_output = False

    def exec_create(self, container_id, argv, **kwargs):
        wrapped = argv[:2] == ["sh", "-c"]
        self.mark = (argv[4] + argv[5]).encode() if wrapped else b""  # the wrapper's two halves
        return {"Id": "exec-1"}

    def exec_start(self, exec_id, stream, demux):
        threading.Thread(target=self._deliver, daemon=True).start()
        return self.stream

    def exec_inspect(self, exec_id):
        self.gone_said.set()
        return {"Running": False, "ExitCode": 0}

    def _deliver(self) -> None:
        self.gone_said.wait(HANG_S)
        # Late: when the reader gives up (then the output is lost) or LATE_S after "gone".
        if self.stream.closed.wait(LATE_S):
            self.closed_before_output = True
            return
        for at in range(0, len(self.stdout), 300):
            self.stream.items.put((self.stdout[at:at + 300], None))
        if self.mark:
            self.stream.items.put((self.mark, None))
            self.stream.items.put((None, self.mark))
        self.stream.items.put(None)  # EOF: the wrapper has exited, nothing holds the stream


async def test_output_delivered_after_the_command_is_reported_gone_is_read(monkeypatch) -> None:
    monkeypatch.setattr(_docker_exec, "GUARD_S", HANG_S)  # the wait for the mark: only a hang reaches it
    docker = _LateDocker(b"a" * 1000)
    raw = await run_command(docker, "container", ["true"], timeout_s=30, cap=10_000, env={})
    assert not docker.closed_before_output, "the reader stopped before Docker delivered the output"
    assert raw.stdout == b"a" * 1000 and raw.stderr == b""
    assert raw.exit_code == 0 and not raw.truncated and not raw.timed_out


def _read(chunks: list[tuple[bytes | None, bytes | None]], cap: int, mark: bytes) -> ExecReader:
    async def go() -> ExecReader:
        reader = ExecReader(iter(chunks), cap, asyncio.get_running_loop(), mark=mark)
        reader.start()
        await reader.done
        return reader
    return asyncio.run(go())


def test_the_mark_is_found_split_across_chunks_and_taken_out() -> None:
    mark = b"0123456789abcdef"
    out = b"hello " * 50 + mark + b"late child"
    err = b"warning\n" + mark
    chunks = [(out[i:i + 1], None) for i in range(len(out))] + [(None, err[i:i + 3]) for i in range(0, len(err), 3)]
    reader = _read(chunks, 10_000, mark)
    assert bytes(reader.out) == b"hello " * 50 + b"late child" and bytes(reader.err) == b"warning\n"
    assert reader.ended.done() and not reader.truncated


def test_the_mark_is_found_past_the_cap_and_the_head_is_kept() -> None:
    mark = b"0123456789abcdef"
    reader = _read([(b"x" * 5000 + mark[:7], None), (mark[7:], None), (None, mark)], 1000, mark)
    assert bytes(reader.out) == b"x" * 1000 and reader.truncated and reader.ended.done()


def test_output_that_only_begins_like_the_mark_is_kept() -> None:
    mark = b"0123456789abcdef"
    reader = _read([(b"result 01234567", None), (b"89 done", None)], 1000, mark)
    assert bytes(reader.out) == b"result 0123456789 done" and not reader.ended.done()
