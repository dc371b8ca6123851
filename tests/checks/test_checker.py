"""Browser checks in the checker container: locked down, warm across artefacts, replaced when it dies,
page memory bounded by the container, and no Chromium on the host during `agentbench check` / `run`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import docker
import pytest

from agentbench.checks._checker import CheckerContainer, read_artefact_files
from agentbench.errors import CheckError
from agentbench.sandbox._checker_image import checker_code_files
from agentbench.sandbox._owner import PID
from agentbench.sandbox._users import CHECKER_UID, CHROMIUM_UID

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "agentbench" / "models" / "demo_data"
FIXTURES = Path(__file__).parent / "fixtures_checker"


def test_the_baked_code_covers_what_the_browser_checks_import() -> None:
    # The engine and the worker, then every built-in task's probes (the worker imports them by name).
    code = ("import sys, importlib, agentbench.checks.browser as b, agentbench.checks.browser._worker; "
            "from agentbench.checks._tasks import BUILTIN_PROBES; "
            "[importlib.import_module(m) for m in BUILTIN_PROBES.values()]; "
            "print('\\n'.join(m.__file__ for n, m in sorted(sys.modules.items()) "
            "if n.startswith('agentbench') and getattr(m, '__file__', None)))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=True)
    baked = {name for name, _ in checker_code_files()}
    loaded = {"agentbench/" + Path(f).resolve().relative_to(ROOT / "agentbench").as_posix()
              for f in proc.stdout.split()}
    assert loaded - baked == set(), "add these to CODE_MODULES in agentbench/sandbox/_checker_image.py"


def test_artefact_files_are_regular_files_inside_and_capped(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "index.html").write_text("<p>hi")
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "a.js").write_text("1")
    (tmp_path / "shadow").symlink_to("/etc/passwd")
    (tmp_path / "up").symlink_to("/etc", target_is_directory=True)
    os.mkfifo(tmp_path / "pipe")
    assert read_artefact_files(tmp_path) == [("index.html", b"<p>hi"), ("js/a.js", b"1")]
    monkeypatch.setattr("agentbench.checks._checker.MAX_FILE_BYTES", 4)
    with pytest.raises(CheckError, match="index.html is 5 bytes"):
        read_artefact_files(tmp_path)


def _statuses(results) -> dict[str, str]:
    return {r.id: r.status for r in results}


#: What a check of a task the checker has no probes for runs: the load check and the page's errors
#: (a page judged in a few seconds, where a full flappy check takes twenty).
ONLY_LOAD = "no-such-task"


@pytest.fixture(scope="module")
def checker(docker_client, checker_image):
    """One checker container for the tests that use one directly (each starts in ~10 s on 2 cores).

    A test that kills it or whose page takes it down leaves the replacing to ``check``, as a run
    does; ``started`` counts the containers it has started."""
    shared = CheckerContainer(docker_client, memory="1g")
    yield shared
    asyncio.run(shared.close())
    assert shared.container is None


@pytest.mark.docker
async def test_one_locked_down_container_checks_many_artefacts_and_is_replaced_when_it_dies(
        tmp_path: Path, checker: CheckerContainer, checker_image) -> None:
    await checker.start()
    started = checker.started
    attrs = checker.container.attrs
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none" and attrs["Config"]["User"] == f"{CHECKER_UID}:{CHECKER_UID}"
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    assert host["ReadonlyRootfs"] is True and host["Memory"] == 2**30 == host["MemorySwap"]
    assert host["PidsLimit"] > 0 and host["NanoCpus"] > 0 and set(host["Tmpfs"]) == {"/tmp", "/home/checker"}
    assert checker.container.image.tags == [checker_image]

    rushed = await checker.check("flappy", DEMO / "rushed" / "flappy", tmp_path / "a" / "evidence")
    careful = await checker.check("flappy", DEMO / "careful" / "flappy", tmp_path / "b" / "evidence")
    assert _statuses(rushed)["refresh-rate"] == "fail" and _statuses(careful)["refresh-rate"] == "pass"
    assert set(_statuses(careful).values()) == {"pass"}
    shot = next(e for r in careful if r.id == "load" for e in r.evidence if e.kind == "file")
    assert (tmp_path / "b" / shot.path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert checker.started == started  # one warm container served both

    # Chromium runs as its own uid in there, the worker as the checker's (no host account has
    # either), and the root is read-only.
    def uids_of(start: str) -> str:  # the Uid lines of processes whose command line starts so
        script = (f"for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null | grep -q '^{start}' "
                  "&& grep Uid $d/status; done; touch /x")
        return checker.container.exec_run(["sh", "-c", script]).output.decode()

    chromium = uids_of("/usr/lib/chromium/chromium-headless-shell ")  # the browser, renderers, GPU...
    assert f"Uid:\t{CHROMIUM_UID}\t{CHROMIUM_UID}" in chromium and f"{CHECKER_UID}" not in chromium
    assert "Read-only file system" in chromium
    assert f"Uid:\t{CHECKER_UID}\t{CHECKER_UID}" in uids_of("python3 -m agentbench.checks.browser._worker")
    # What a compromised renderer (Chromium's uid) would do to forge an answer: open the
    # worker's pipes through /proc. It cannot; the worker's own uid can (the control).
    find = ("for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null | "
            "grep -q '^python3 -m agentbench.checks.browser._worker' && p=$d; done; ")
    for uid, allowed in ((CHROMIUM_UID, False), (CHECKER_UID, True)):
        tried = checker.container.exec_run(
            ["sh", "-c", find + "ls $p/fd >/dev/null 2>&1 && for f in $p/fd/*; do : >> $f && echo wrote; done; "
                                "echo done"], user=f"{uid}:{uid}")
        assert ("wrote" in tried.output.decode()) is allowed, (uid, tried.output)
    # The worker still answers after the control's writes to its pipes.
    poked = await checker.check(ONLY_LOAD, DEMO / "careful" / "flappy", tmp_path / "p" / "evidence")
    assert _statuses(poked) == {"load": "pass", "runtime-errors": "pass"} and checker.started == started

    checker.container.kill()
    again = await checker.check("flappy", DEMO / "careful" / "flappy", tmp_path / "c" / "evidence")
    assert _statuses(again) == _statuses(careful) and checker.started == started + 1


@pytest.mark.docker
async def test_a_page_that_allocates_without_bound_is_stopped_by_the_container(
        tmp_path: Path, checker: CheckerContainer) -> None:
    """64 MB ArrayBuffers per frame (outside V8's heap limit): the container's memory limit (1 GiB) ends it."""
    assert checker.memory == "1g"
    began = time.monotonic()
    results = await checker.check("flappy", FIXTURES / "membomb", tmp_path / "bomb" / "evidence")
    assert time.monotonic() - began < 120
    load = next(r for r in results if r.id == "load")
    assert load.status == "fail" and ("crashed" in load.detail or "memory" in load.detail), load.detail
    # The checker (or its replacement) goes on checking the next artefact: loads and judges it.
    after = await checker.check(ONLY_LOAD, DEMO / "careful" / "flappy", tmp_path / "ok" / "evidence")
    assert _statuses(after) == {"load": "pass", "runtime-errors": "pass"}, [r.detail for r in after]
    shot = next(e for r in after if r.id == "load" for e in r.evidence if e.kind == "file")
    assert (tmp_path / "ok" / shot.path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.docker
async def test_artefacts_checked_at_once_do_not_see_each_others_page_errors(
        tmp_path: Path, checker: CheckerContainer) -> None:
    """A run's cells ask at once; the rushed converter's TypeErrors must stay its own."""
    rushed, careful = await asyncio.gather(
        checker.check("converter", DEMO / "rushed" / "converter", tmp_path / "r" / "evidence"),
        checker.check("flappy", DEMO / "careful" / "flappy", tmp_path / "c" / "evidence"))
    assert _statuses(rushed)["runtime-errors"] == "fail"
    assert _statuses(careful)["runtime-errors"] == "pass", [r.detail for r in careful]


@pytest.mark.docker
def test_a_link_out_of_the_artefact_never_reaches_the_page(tmp_path: Path, docker_client, checker_image) -> None:
    """`shadow -> /etc/passwd` beside the page: the page's fetch gets a 404, the file stays out of the results."""
    art = tmp_path / "art"
    art.mkdir()
    (art / "index.html").write_text(
        "<!doctype html><canvas id=c width=200 height=100></canvas><script>"
        "document.getElementById('c').getContext('2d').fillRect(0, 0, 120, 60);"
        "fetch('/shadow').then(r => r.text()).then(t => { throw new Error('GOT ' + t.slice(0, 40)); });"
        "</script>")
    (art / "shadow").symlink_to("/etc/passwd")
    proc = subprocess.run([sys.executable, "-m", "agentbench.cli", "check", "--task", "flappy", str(art), "--json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "AGENTBENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)})
    assert "GOT not found" in proc.stdout, proc.stdout + proc.stderr
    assert "root:x:0:0" not in proc.stdout


# -- no Chromium on the host --------------------------------------------------------------------------

def _chromium_processes() -> list[tuple[int, int, str]]:
    """(pid, parent pid, cgroup) of every process whose executable name starts with chrom."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                head, _, rest = f.read().partition(") ")
            name = head.partition("(")[2]
            with open(f"/proc/{entry}/cgroup") as f:
                cgroup = f.read().strip()
        except OSError:
            continue
        if name.startswith("chrom") or name.startswith("headless_shell"):
            found.append((int(entry), int(rest.split()[1]), cgroup))
    return found


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().partition(") ")[2].split()[1])
        except OSError:
            return False
        if pid <= 1:
            return False
    return False


def _run_watching(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600):
    """Run the CLI; meanwhile sample chromium processes.

    Returns (exit code, stdout, stderr, Chromium pids on the host under it, in a container, the CLI's pid).
    """
    proc = subprocess.Popen([sys.executable, "-m", "agentbench.cli", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "AGENTBENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT), **(env or {})})
    on_host: set[int] = set()
    contained: set[int] = set()
    done = threading.Event()

    broke: list[BaseException] = []

    def watch() -> None:
        try:
            while not done.is_set():
                for pid, _, cgroup in _chromium_processes():
                    if "docker" in cgroup or "containerd" in cgroup:
                        contained.add(pid)
                    elif _descends_from(pid, proc.pid):
                        on_host.add(pid)
                time.sleep(0.05)
        except BaseException as exc:  # a dead watcher would read as "no Chromium anywhere"
            broke.append(exc)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        done.set()
        watcher.join()
    assert not broke, f"the process scan broke: {broke[0]!r}"
    return proc.returncode, out, err, on_host, contained, proc.pid


@pytest.mark.docker
def test_agentbench_check_runs_no_chromium_on_the_host(tmp_path: Path, docker_client, checker_image) -> None:
    began = time.time()
    rc, out, err, on_host, contained, pid = _run_watching(
        ["check", "--task", "flappy", str(DEMO / "careful" / "flappy"), str(DEMO / "rushed" / "flappy"), "--json"],
        tmp_path)
    assert rc == 1, err  # the rushed one fails refresh-rate
    assert on_host == set() and contained, (on_host, contained)
    assert '"path"' in out and "ON THIS HOST" not in err
    # Its checker containers are gone when the CLI is (this CLI's: another agentbench process on the
    # same engine may have its own running meanwhile).
    # The engine's list as it is (no inspect of each: a neighbour's container may be mid-removal).
    left = docker_client.api.containers(all=True, filters={"label": "agentbench.kind=checker"})
    assert [c["Id"] for c in left if float((c["Labels"] or {}).get("agentbench.created", "0")) >= began
            and (c["Labels"] or {}).get(PID) == str(pid)] == []


@pytest.mark.docker
@pytest.mark.browser
def test_host_browser_is_an_explicit_warned_opt_in(tmp_path: Path, docker_client, chromium_path) -> None:
    """The positive control of the scan above: with --host-browser, Chromium does run under the CLI."""
    rc, out, err, on_host, _, _ = _run_watching(
        ["check", "--task", "flappy", "--host-browser", str(DEMO / "careful" / "flappy")], tmp_path,
        env={"AGENTBENCH_CHROMIUM": chromium_path})
    assert rc == 0, err
    assert "ON THIS HOST" in err and on_host


@pytest.mark.docker
@pytest.mark.slow
def test_agentbench_run_checks_in_the_container_not_on_the_host(tmp_path: Path, docker_client,
                                                                checker_image) -> None:
    rc, out, err, on_host, contained, _ = _run_watching(["run", "--model", "demo", "--task", "flappy"], tmp_path)
    assert rc == 0, err + out
    assert on_host == set() and contained, (on_host, contained)
    (result,) = (tmp_path / "artefacts").rglob("result.json")
    assert '"refresh-rate"' in result.read_text()


@pytest.mark.docker
def test_a_killed_cli_leaves_no_running_checker(tmp_path: Path, docker_client, checker_image) -> None:
    began = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "agentbench.cli", "check", "--task", "flappy",
                             str(DEMO / "careful" / "flappy")], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    from tests.helpers.waiting import until

    mine: list = []

    def started() -> bool:  # this CLI's checker is up (or the CLI ended without one: a failure below)
        mine[:] = [c for c in docker_client.containers.list(filters={"label": "agentbench.kind=checker"},
                                                                ignore_removed=True)
                   if float(c.labels.get("agentbench.created", "0")) >= began
                   and c.labels.get(PID) == str(proc.pid)]  # this CLI's, not another process's
        return bool(mine) or proc.poll() is not None

    def stopped() -> bool:  # stopped, or already removed (it removes itself once stopped)
        try:
            mine[0].reload()
        except docker.errors.NotFound:
            return True
        return mine[0].status != "running"

    try:
        until(started, "the CLI to start its checker container", every_s=0.1)
        assert mine, "the CLI never started a checker container"
        assert proc.poll() is None, "the check ended before the test could kill it"
        proc.kill()
        proc.wait(10)
        until(stopped, "the killed CLI's checker container to stop", every_s=0.2)
    finally:
        proc.kill()
        for c in mine:
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:  # 409: it is removing itself already (once stopped)
                if exc.status_code != 409:
                    raise
