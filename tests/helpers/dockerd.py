"""A second, throwaway Docker engine: its own dockerd on its own unix socket, data root and exec root.

    with SecondEngine() as engine:      # about 2 s to start
        engine.address                  # unix:///tmp/abe-XXXX/d.sock
        engine.kill()                   # SIGKILL: the engine is lost, as a crashed machine is
    # stopped, its containers gone, its mounts undone and its folder removed, on every path

No networking (``--bridge=none --iptables=false --ip-forward=false``): sandboxes run with
``--network none``, so nothing of the host's network is touched. Needs root and ``dockerd``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Self

from .waiting import HANG_S

__all__ = ["SecondEngine", "remove_stale_engines"]

PREFIX = "abe-"  # short: the containerd socket path under the exec root must stay under 108 bytes


class SecondEngine:
    """A dockerd started (and always cleaned up) by this process."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX, dir="/tmp"))
        self.socket = self.root / "d.sock"
        self.address = f"unix://{self.socket}"
        self.proc: subprocess.Popen[bytes] | None = None
        # Its containers get their own cgroup subtree, so cleanup finds exactly their processes.
        self.cgroup_parent = f"/{self.root.name}"

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, timeout_s: float = HANG_S) -> None:
        if shutil.which("dockerd") is None:
            raise RuntimeError("dockerd is not installed (apt-get install docker.io)")
        (self.root / "daemon.json").write_text("{}")  # never the host's /etc/docker/daemon.json
        log = open(self.root / "dockerd.log", "ab")  # noqa: SIM115 - owned by the child from here
        self.proc = subprocess.Popen(
            ["dockerd", "--host", self.address, "--data-root", str(self.root / "data"),
             "--exec-root", str(self.root / "x"), "--pidfile", str(self.root / "d.pid"),
             "--config-file", str(self.root / "daemon.json"), "--bridge=none", "--iptables=false",
             "--ip-forward=false", "--ip-masq=false", "--userland-proxy=false",
             "--cgroup-parent", self.cgroup_parent],
            stdout=log, stderr=log, start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the second dockerd exited ({self.proc.returncode}): {self.log_tail()}")
            if self.ping():
                return
            time.sleep(0.2)
        raise RuntimeError(f"the second dockerd did not answer within {timeout_s:.0f} s: {self.log_tail()}")

    def client(self) -> Any:
        import docker

        return docker.DockerClient(base_url=self.address, timeout=60)

    def ping(self) -> bool:
        try:
            client = self.client()
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:  # noqa: BLE001 - not up (yet)
            return False

    def log_tail(self, lines: int = 20) -> str:
        path = self.root / "dockerd.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL dockerd, as a crashed machine loses it (close() still cleans up after it)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self, timeout_s: float = 30) -> None:
        """SIGTERM dockerd (it stops its containers and its containerd), SIGKILL after timeout_s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        """Stop the engine, leave no container, mount or file of it behind."""
        self.stop(timeout_s=3)  # its data is thrown away: no need to wait for a graceful shutdown
        # A killed dockerd leaves its containerd shims and their containers running.
        _kill_leftovers(self.root)
        _kill_cgroup(self.cgroup_parent)
        _unmount_under(self.root)
        shutil.rmtree(self.root, ignore_errors=True)


def _kill_leftovers(root: Path) -> None:
    """SIGKILL any process still started from under root (containerd, shims), by pid."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if str(root) in cmdline:
                os.kill(int(proc.name), signal.SIGKILL)


def _kill_cgroup(parent: str) -> None:
    """SIGKILL every process in the engine's cgroup subtree, then remove the (empty) cgroups."""
    tops = [d / parent.lstrip("/") for d in Path("/sys/fs/cgroup").iterdir()]
    tops = [t for t in tops if t.is_dir()]
    for _round in range(5):
        found = False
        for top in tops:
            for procs in top.rglob("cgroup.procs"):
                with contextlib.suppress(OSError, ValueError):
                    for pid in procs.read_text().split():
                        found = True
                        os.kill(int(pid), signal.SIGKILL)
        if not found:
            break
        time.sleep(0.2)
    for top in tops:
        for d in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(str(p)), reverse=True):
            with contextlib.suppress(OSError):
                d.rmdir()
        with contextlib.suppress(OSError):
            top.rmdir()


def _unmount_under(root: Path) -> None:
    mounts = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            point = line.split()[4]
            if point.startswith(str(root)):
                mounts.append(point)
    for point in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def remove_stale_engines() -> list[str]:
    """Remove the folders of earlier sessions' engines whose dockerd is gone (a killed test run)."""
    removed = []
    for path in Path("/tmp").glob(f"{PREFIX}*"):
        pidfile = path / "d.pid"
        with contextlib.suppress(OSError, ValueError):
            if pidfile.exists():
                pid = int(pidfile.read_text().strip() or 0)
                if pid and Path(f"/proc/{pid}").exists():
                    continue  # another session's engine, still running
            elif time.time() - path.stat().st_mtime < 600:
                continue  # starting right now, perhaps
            if not (path / "daemon.json").exists():
                continue  # not one of ours
            _kill_leftovers(path)
            _kill_cgroup(f"/{path.name}")
            _unmount_under(path)
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    return removed

