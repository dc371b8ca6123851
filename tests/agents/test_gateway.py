"""The model gateway holds against the sandbox at the other end of its socket.

The gateway runs here on its real unix socket in front of a scripted model on loopback; the
requests are what a hostile agent sends (the socket is mounted into its sandbox): fields the key
should not pay for, token caps of every JSON type, bodies far over the cap, heads that never end,
floods of connections, and requests whose records would fill the disk.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
from pathlib import Path
from typing import Any

import pytest

from agentbench.agents import ModelGateway, Transcript
from agentbench.agents._gateway_http import BODY_LIMIT
from agentbench.agents._gateway_policy import CHAT_FIELDS, RECORD_BYTES
from agentbench.models import Reply
from tests.helpers.scripted import ScriptedServer, text
from tests.helpers.waiting import HANG_S, until_async

CHAT = "/v1/chat/completions"


async def _request(sock: Path, body: bytes | None = None, *, head: bytes | None = None,
                   timeout_s: float = HANG_S) -> tuple[int, bytes]:
    """One raw HTTP exchange on the socket; (status, response body); timeout_s only a hang reaches."""
    reader, writer = await asyncio.open_unix_connection(str(sock))
    try:
        if head is None:
            head = (f"POST {CHAT} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body or b'')}\r\n\r\n").encode()
        writer.write(head + (body or b""))
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout_s)
    finally:
        writer.close()
    status = int(raw.split(b" ", 2)[1]) if raw else 0
    return status, raw.partition(b"\r\n\r\n")[2]


def _chat(**fields: Any) -> bytes:
    return json.dumps({"model": "whatever", "messages": [{"role": "user", "content": "hi"}], **fields}).encode()


class _Gateway:
    def __init__(self, server: ScriptedServer, tmp_path: Path, **kw: Any) -> None:
        cfg = server.config(max_retries=0, **kw.pop("model", {}))
        self.transcript = Transcript(tmp_path / "transcript.jsonl")
        self.gateway = ModelGateway(cfg, api_key="sk-test", max_turns=kw.pop("max_turns", 50),
                                    max_tokens=kw.pop("max_tokens", 100_000), transcript=self.transcript,
                                    exchanges=tmp_path / "gateway.jsonl", **kw)

    async def __aenter__(self) -> tuple[ModelGateway, Path]:
        await self.gateway.start()
        return self.gateway, self.gateway.socket_dir / "gateway.sock"

    async def __aexit__(self, *exc: object) -> None:
        await self.gateway.aclose()
        self.gateway.remove_dir()
        self.transcript.close()


@pytest.mark.parametrize("limit", [1000, None], ids=["per-request-cap", "session-budget"])
async def test_only_chat_fields_go_upstream_and_every_token_cap_is_an_integer_within_limits(
        tmp_path: Path, limit: int | None) -> None:
    hostile = [{"max_completion_tokens": "99999"}, {"max_tokens": 1e9}, {"max_tokens": True},
               {"max_completion_tokens": 10**100}, {"max_tokens": None, "max_completion_tokens": -5},
               {"max_tokens": 5_000_000, "n": 64, "logit_bias": {"50256": 100}, "best_of": 20, "extra_body": {},
                "stream_options": {"include_usage": False, "x": 1}, "store": True, "metadata": {"a": "b"}}]
    with ScriptedServer(*[text("ok") for _ in hostile]) as server:
        async with _Gateway(server, tmp_path, model={"max_tokens": limit}, max_tokens=20_000) as (gw, sock):
            for fields in hostile:
                status, body = await _request(sock, _chat(**fields))
                assert status == 200, body
        sent = server.requests
    budget = 20_000
    for fields, got in zip(hostile, sent, strict=True):
        assert set(got) <= CHAT_FIELDS and "n" not in got, got  # n forced to 1 (its default)
        caps = [got[k] for k in ("max_tokens", "max_completion_tokens") if k in got]
        for cap in caps:
            assert type(cap) is int and 1 <= cap <= (limit or budget), (fields, got)
        if limit is not None:
            assert caps, got  # a cap always goes up when one is configured
    assert {"logit_bias", "best_of", "extra_body", "store", "metadata"} <= gw.record.dropped_fields


async def test_a_body_over_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        async with _Gateway(server, tmp_path) as (gw, sock):
            for head in (f"POST {CHAT} HTTP/1.1\r\nContent-Length: {60 * 2**20}\r\n\r\n".encode(),
                         f"POST {CHAT} HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{BODY_LIMIT + 1:x}\r\n".encode()):
                # No body follows: a gateway that waited for it would answer 408 (its body timeout), not 413.
                status, body = await _request(sock, head=head, timeout_s=HANG_S)
                assert status == 413 and b"bytes" in body
            assert len(gw.record.rejected) == 2 and gw.record.turns == 0
        assert server.requests == []
    lines = (tmp_path / "gateway.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["response"]["rejected"]["status"] == 413 for line in lines)


async def test_request_heads_and_bodies_must_arrive_in_time(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        async with _Gateway(server, tmp_path, header_timeout_s=0.5, body_timeout_s=0.5) as (gw, sock):
            for head in (b"POST /v1/chat/comp", f"POST {CHAT} HTTP/1.1\r\nContent-Length: 100\r\n\r\n{{".encode()):
                status, body = await _request(sock, head=head, timeout_s=HANG_S)
                # The configured 0.5 s fired (the defaults are 15 s and 60 s): the answer names it.
                assert status == 408 and b"within 0.5 s" in body, body


async def test_a_flood_of_connections_is_bounded_and_the_gateway_serves_again(tmp_path: Path) -> None:
    with ScriptedServer(text("still here")) as server:
        async with _Gateway(server, tmp_path, max_connections=8, header_timeout_s=1.0) as (gw, sock):
            flood = []
            for _ in range(300):  # half-open: connected, a few bytes of a head, then nothing
                try:
                    _, writer = await asyncio.open_unix_connection(str(sock))
                except OSError:
                    continue
                writer.write(b"POST /v1/chat")
                flood.append(writer)
            peak = 0

            def every_one_seen() -> bool:  # each flood connection was refused, or held until its 408
                nonlocal peak
                peak = max(peak, gw._open)
                timed_out = sum(1 for r in gw.record.rejected if r["status"] == 408)
                return gw.record.connections_refused + gw._open + timed_out >= len(flood)

            await until_async(every_one_seen, "the gateway to take every connection of the flood")
            # At most 8 were held at once (8 per header timeout: the rest were refused at the door).
            assert peak <= 8 and gw.record.connections_refused >= 200, (peak, gw.record.connections_refused)
            await until_async(lambda: gw._open == 0, "the held connections to time out and free their slots")
            status, body = await _request(sock, _chat())
            assert status == 200 and b"still here" in body
            for writer in flood:
                writer.close()


async def test_records_are_bounded_with_a_marker_where_cut(tmp_path: Path) -> None:
    huge = "x" * (3 * 2**20)  # under the body cap, far over what a record keeps
    with ScriptedServer(Reply(message={"role": "assistant", "content": "y" * (2 * 2**20)})) as server:
        async with _Gateway(server, tmp_path, model={"stream": False}) as (gw, sock):
            status, _ = await _request(sock, json.dumps({"messages": [{"role": "user", "content": huge}]}).encode())
            assert status == 200
        assert server.requests[0]["messages"][0]["content"] == huge  # forwarded whole
    for name in ("gateway.jsonl", "transcript.jsonl"):
        lines = (tmp_path / name).read_text().splitlines()
        assert max(len(line.encode()) for line in lines) <= RECORD_BYTES, name
        assert "characters cut here" in "".join(lines), name


async def test_the_open_file_limit_is_raised_to_the_hard_limit(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard <= 256:
        pytest.skip(f"hard limit {hard}: nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        with ScriptedServer() as server:
            async with _Gateway(server, tmp_path):
                assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == hard
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _connects_as(uid: int, sock: Path) -> bool:
    """Whether a process of ``uid`` can connect to ``sock`` (a forked child drops to it)."""
    import socket

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock))
            code = 0
        except OSError:
            code = 13
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="trying other uids on the socket needs root")
async def test_only_the_sandbox_user_reaches_the_socket(tmp_path: Path) -> None:
    import pwd

    from agentbench.sandbox._users import SANDBOX_UID

    others = sorted({1000, 65534} | {p.pw_uid for p in pwd.getpwall() if 1000 <= p.pw_uid < 60000})
    with ScriptedServer() as server:
        async with _Gateway(server, tmp_path) as (_gw, sock):
            folder = os.stat(sock.parent)
            assert folder.st_uid == SANDBOX_UID and folder.st_mode & 0o077 == 0
            assert _connects_as(SANDBOX_UID, sock)
            for uid in others[:4]:  # uid 1000 was the sandbox's uid, and the host's first user
                assert not _connects_as(uid, sock), uid


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user, to run the gateway without root, needs root")
def test_without_root_a_posix_acl_lets_only_the_sandbox_user_in(tmp_path: Path) -> None:
    """agentbench in the docker group, not root: it cannot give the folder away, so an ACL names the sandbox user."""
    import socket
    import tempfile

    from agentbench.agents._socket_dir import private_socket_dir, restrict_socket
    from agentbench.sandbox._users import SANDBOX_UID

    owner = 54321  # an account of no one, as the non-root agentbench
    shared = Path(tempfile.mkdtemp(prefix="agentbench-acl-test-"))  # pytest's own temp folder is root's alone
    shared.chmod(0o777)
    where = shared / "where"
    ready, done = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: the gateway's side, without root
        code = 1
        os.close(ready[0])
        os.close(done[1])
        try:
            os.setgroups([])
            os.setgid(owner)
            os.setuid(owner)
            os.environ["TMPDIR"] = str(shared)
            tempfile.tempdir = None
            folder = private_socket_dir()
            path = folder / "gateway.sock"
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(path))
            server.listen(64)
            restrict_socket(folder, path)
            where.write_text(str(path))
            os.write(ready[1], b"1")
            os.read(done[0], 1)  # serve until the parent has tried
            server.close()
            path.unlink()
            folder.rmdir()
            code = 0
        finally:
            os._exit(code)
    os.close(ready[1])
    os.close(done[0])
    try:
        assert os.read(ready[0], 1) == b"1", "the gateway side could not set up its socket without root"
        sock = Path(where.read_text())
        assert os.stat(sock.parent).st_uid == owner and os.stat(sock.parent).st_mode & 0o007 == 0
        assert _connects_as(SANDBOX_UID, sock)
        assert not _connects_as(1000, sock) and not _connects_as(65534, sock)
    finally:
        os.close(done[1])  # the child's read returns: it cleans up and exits
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        os.close(ready[0])
        import shutil

        shutil.rmtree(shared, ignore_errors=True)
    assert status == 0


def test_a_host_account_holding_one_of_our_uids_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import pwd

    from agentbench.errors import SandboxError
    from agentbench.sandbox import _users

    taken = pwd.getpwuid(os.getuid())
    monkeypatch.setattr(_users, "OURS", {**_users.OURS, taken.pw_uid: "the sandbox user"})
    monkeypatch.setattr(_users, "_checked", False)
    with pytest.raises(SandboxError, match=f"host user '{taken.pw_name}'.*usermod"):
        _users.check_host_users()
    monkeypatch.setattr(_users, "OURS", {60600: "the sandbox user"})
    _users.check_host_users()  # no account here holds it
