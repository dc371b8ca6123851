"""The conformance suite every sandbox backend must pass (parametrised by the `backend` fixture)."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from agentbench.errors import PathEscape, SandboxError
from agentbench.sandbox import SandboxLimits
from agentbench.sandbox._users import SANDBOX_UID
from tests.helpers.waiting import HANG_S

pytestmark = pytest.mark.docker


# ---- commands ---------------------------------------------------------------------------------


async def test_exec_reports_output_exit_code_and_environment(sandbox):
    result = await sandbox.exec("echo out; echo err >&2; pwd; echo $HOME; [[ 1 == 1 ]] && echo bash; exit 3")
    assert result.exit_code == 3
    assert result.stdout.splitlines() == ["out", "/workspace", "/home/agent", "bash"]
    assert result.stderr == "err\n"
    assert not result.timed_out and not result.truncated and not result.ok
    ok = await sandbox.exec("node --version")
    assert ok.ok and ok.stdout.startswith("v")


async def test_runs_as_the_sandbox_uid_not_root(sandbox):
    result = await sandbox.exec("id -u; id -g; touch /etc/x 2>&1 || echo refused")
    assert result.stdout.split()[:2] == [str(SANDBOX_UID)] * 2
    assert "refused" in result.stdout


async def test_has_no_capabilities_and_no_new_privileges(sandbox):
    status = (await sandbox.exec("grep -E '^(Cap(Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status")).stdout
    fields = dict(line.split(":\t") for line in status.splitlines())
    for cap in ("CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(fields[cap], 16) == 0, status
    assert fields["NoNewPrivs"] == "1"


async def test_exec_past_its_time_limit_is_killed_and_reported(sandbox):
    # The bounds: under the host-side guard's backstop (timeout + 2 s grace + 10 s), so the
    # command's own time limit ended it; far over what it takes on a busy machine (~1 s, ~3 s).
    started = time.monotonic()
    result = await sandbox.exec("echo before; sleep 30; echo after", timeout_s=1)
    assert result.timed_out and not result.ok
    assert result.stdout == "before\n"  # killed, not run to the end
    assert time.monotonic() - started < 10

    # A command that ignores SIGTERM is killed after the grace period.
    started = time.monotonic()
    result = await sandbox.exec("trap '' TERM; sleep 30; echo after", timeout_s=1)
    assert result.timed_out and "after" not in result.stdout
    assert time.monotonic() - started < 10

    # The sandbox is still usable, and nothing of the killed commands survives.
    procs = await sandbox.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    assert procs.ok and "sleep 30" not in procs.stdout and "sleep" in procs.stdout  # init's `sleep infinity`


async def test_background_child_does_not_hold_the_exec_open(sandbox):
    # Held open by the child, the exec would end at its limit (4 * HANG_S) or the child's end (600 s),
    # both past the bound, which only a slow machine's exec of a second or two never reaches.
    started = time.monotonic()
    result = await sandbox.exec("sleep 600 & echo started", timeout_s=4 * HANG_S)
    assert result.ok and result.stdout == "started\n" and not result.timed_out
    assert time.monotonic() - started < HANG_S


async def test_a_command_exiting_124_quickly_is_not_a_timeout(sandbox):
    result = await sandbox.exec("exit 124", timeout_s=10)
    assert result.exit_code == 124 and not result.timed_out


async def test_output_is_capped_and_flagged(sandbox):
    result = await sandbox.exec("head -c 300000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2")
    assert result.truncated
    assert 0 < len(result.stdout) < 300000 and set(result.stdout) == {"a"}
    assert 0 < len(result.stderr) < 300000 and set(result.stderr) == {"b"}
    small = await sandbox.exec("head -c 1000 /dev/zero | tr '\\0' a")
    assert not small.truncated and len(small.stdout) == 1000


# ---- isolation and limits ---------------------------------------------------------------------


async def test_no_network_inside(sandbox):
    # A real server on the host's loopback: the sandbox's 127.0.0.1 is its own, so nothing arrives.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except (TimeoutError, OSError):
                continue

    watcher = threading.Thread(target=accept, daemon=True)
    watcher.start()
    try:
        interfaces = await sandbox.exec("ls /sys/class/net")
        assert interfaces.stdout.split() == ["lo"]
        for target in (f"127.0.0.1/{port}", "192.0.2.1/80"):  # 192.0.2.0/24 is TEST-NET-1: never real
            # A connect must fail at once, not time out: a dropped SYN would hang for minutes (past
            # the 10 s limit: timed_out); only an immediate refusal says refused or unreachable.
            result = await sandbox.exec(f"echo hi > /dev/tcp/{target}", timeout_s=10)
            assert result.exit_code != 0 and not result.timed_out, (target, result)
            assert "refused" in result.stderr or "unreachable" in result.stderr, result.stderr
    finally:
        stop.set()
        watcher.join()
        try:  # anything still waiting in the backlog counts too
            accepted.append(server.accept())
        except (TimeoutError, OSError):
            pass
        server.close()
    assert accepted == []


async def test_pid_limit_holds_against_a_fork_bomb(make_sandbox, backend):
    sandbox = await make_sandbox(limits=SandboxLimits(pids=64, exec_timeout_s=30))
    started = time.monotonic()
    # The shell the command runs in forks on forever itself, so the limit must stop it: the classic
    # `:(){ :|:& };:; wait` can end (its first pipeline exits) before any fork fails, which a busy
    # CI machine showed (exit 0, no error, 0.15 s).
    result = await sandbox.exec(":(){ :|:& :; }; :", timeout_s=2)
    assert time.monotonic() - started < 15
    assert "Resource temporarily unavailable" in result.stderr, result
    assert result.timed_out, result
    current, limit = backend.pids_in_use(sandbox)
    assert limit == 64 and current <= 64
    started = time.monotonic()
    await sandbox.close()
    assert time.monotonic() - started < 15
    assert not backend.exists(sandbox)


async def test_memory_limit_kills_a_hog(make_sandbox):
    sandbox = await make_sandbox(limits=SandboxLimits(memory_mb=128, exec_timeout_s=30))
    hog = "node -e 'const b=[]; for (let i=0;i<100;i++) b.push(Buffer.alloc(10*1024*1024, 1)); console.log(\"all\")'"
    result = await sandbox.exec(hog, timeout_s=20)
    assert result.exit_code == 137 and not result.timed_out, result
    assert "all" not in result.stdout
    assert (await sandbox.exec("echo alive")).stdout == "alive\n"


async def test_close_removes_the_sandbox(make_sandbox, backend):
    sandbox = await make_sandbox()
    await sandbox.write_file("f.txt", "x")
    assert backend.exists(sandbox)
    await sandbox.close()
    assert not backend.exists(sandbox)
    await sandbox.close()  # twice is fine
    with pytest.raises(SandboxError, match="closed"):
        await sandbox.exec("true")


# ---- files ------------------------------------------------------------------------------------


async def test_write_read_round_trip_text_and_binary(sandbox):
    binary = bytes(range(256)) * 300
    await sandbox.write_file("index.html", "<h1>héllo</h1>\n")
    await sandbox.write_file("deep/er/data.bin", binary)
    await sandbox.write_file("naïve name.txt", b"")
    assert await sandbox.read_file("index.html") == "<h1>héllo</h1>\n".encode()
    assert await sandbox.read_file("deep/er/data.bin") == binary
    assert await sandbox.read_file("naïve name.txt") == b""
    await sandbox.write_file("index.html", "v2")
    assert await sandbox.read_file("./index.html") == b"v2"
    # Written files and the folders made for them belong to the sandbox user, who can change them.
    owners = await sandbox.exec("stat -c %u:%g deep deep/er deep/er/data.bin && echo more >> deep/er/data.bin"
                                " && touch deep/er/new")
    assert owners.ok and owners.stdout.split() == [f"{SANDBOX_UID}:{SANDBOX_UID}"] * 3, owners


async def test_read_sees_files_made_by_commands_and_errors_are_clear(sandbox):
    await sandbox.exec("mkdir -p src && printf 'a\\nb' > src/x.js")
    assert await sandbox.read_file("src/x.js") == b"a\nb"
    with pytest.raises(SandboxError, match="No such file"):
        await sandbox.read_file("missing.txt")
    with pytest.raises(SandboxError, match="folder"):
        await sandbox.read_file("src")
    with pytest.raises(SandboxError, match="folder"):
        await sandbox.write_file("src", "would replace the folder")
    assert await sandbox.read_file("src/x.js") == b"a\nb"


async def test_list_files(sandbox):
    assert await sandbox.list_files() == []
    await sandbox.write_file("b.txt", "1")
    await sandbox.write_file("a/c.txt", "2")
    await sandbox.exec("mkdir -p a/empty && touch a/z.js")
    assert await sandbox.list_files() == ["a/c.txt", "a/z.js", "b.txt"]
    assert await sandbox.list_files("a") == ["a/c.txt", "a/z.js"]
    assert await sandbox.list_files("b.txt") == ["b.txt"]


async def test_copy_in_and_copy_out(sandbox, tmp_path: Path):
    src = tmp_path / "src"
    (src / "js").mkdir(parents=True)
    (src / "index.html").write_text("<script src=js/app.js></script>")
    (src / "js" / "app.js").write_text("console.log(1)")
    (src / "img.bin").write_bytes(bytes(range(256)))
    await sandbox.copy_in(src)
    assert await sandbox.list_files() == ["img.bin", "index.html", "js/app.js"]
    owners = await sandbox.exec("stat -c %u index.html js js/app.js && echo edit >> js/app.js")
    assert owners.ok and owners.stdout.split() == [str(SANDBOX_UID)] * 3
    await sandbox.write_file("made/inside.txt", "new")
    # A link out of the workspace must not become a link out of the destination folder.
    await sandbox.exec("ln -s /etc/passwd leak")

    dest = tmp_path / "out"
    await sandbox.copy_out(dest)
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file() or p.is_symlink())
    assert files == ["img.bin", "index.html", "js/app.js", "made/inside.txt"]
    assert (dest / "js" / "app.js").read_text() == "console.log(1)edit\n"
    assert (dest / "img.bin").read_bytes() == bytes(range(256))
    assert (dest / "made" / "inside.txt").stat().st_uid == os.getuid()


async def test_lexical_escapes_are_refused(sandbox):
    for path in ["../x", "a/../../x", "/etc/passwd", "/workspace/index.html", "a\x00b", ""]:
        with pytest.raises(PathEscape):
            await sandbox.write_file(path, "x")
        with pytest.raises(PathEscape):
            await sandbox.read_file(path)
        with pytest.raises(PathEscape):
            await sandbox.list_files(path)
    assert await sandbox.list_files() == []


async def test_symlink_escapes_are_refused(sandbox):
    made = await sandbox.exec("ln -s / root && ln -s /etc/passwd pw && ln -s ../etc up && mkdir d"
                              " && ln -s d/f inner && echo ok > d/f")
    assert made.ok
    for path in ("root/etc/passwd", "pw", "up/passwd"):
        with pytest.raises(PathEscape, match="symlink"):
            await sandbox.read_file(path)
    with pytest.raises(PathEscape):
        await sandbox.write_file("root/tmp/escaped", "x")
    with pytest.raises(PathEscape):
        await sandbox.write_file("pw", "x")
    with pytest.raises(PathEscape):
        await sandbox.list_files("root")
    assert (await sandbox.exec("test ! -e /tmp/escaped && test -L pw && echo intact")).stdout == "intact\n"
    # A link that stays inside the workspace is fine.
    assert await sandbox.read_file("inner") == b"ok\n"
    await sandbox.write_file("inner", "changed")
    assert await sandbox.read_file("d/f") == b"changed"
