"""Cells spread over several Docker engines: settings, placement, images per engine, a lost engine.

The second engine is a real dockerd this test session starts on its own socket, data root and
exec root (tests/helpers/dockerd.py), with no networking; it is stopped and removed at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentbench._scheduler import EnginePool, NoEngineLeft, open_pool
from agentbench._settings import load_settings
from agentbench.config import DEMO_MODELS
from agentbench.errors import ConfigError, DockerUnavailable
from agentbench.runner import RunOptions, run
from agentbench.sandbox import IMAGE_TAG, image_exists
from agentbench.sandbox._engine_config import EngineConfig, select_engines
from agentbench.sandbox._engines import ENGINE_IMAGES, Engine, bind_engine, connect_engine, register_engine_image
from agentbench.store import AttemptResult
from agentbench.tasks import resolve_tasks
from tests.helpers.dockerd import SecondEngine, remove_stale_engines
from tests.helpers.gated import GatedModel
from tests.helpers.waiting import until

ROOT = Path(__file__).resolve().parent.parent


# ---- settings and --engine (pure) -----------------------------------------------------------


def test_settings_file_declares_engines(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[[engines]]\nname = "local"\nsandboxes = 4\nchecks = 2\n\n'
                    '[[engines]]\nname = "gpu1"\naddress = "ssh://bench@gpu1"\nsandboxes = 8\n\n'
                    '[[engines]]\nname = "ci"\naddress = "tcp://ci:2376"\ntls = { cert_path = "/certs" }\n')
    engines = load_settings(path).engines
    assert [(e.name, e.address, e.sandboxes, e.checks) for e in engines] == [
        ("local", None, 4, 2), ("gpu1", "ssh://bench@gpu1", 8, None), ("ci", "tcp://ci:2376", None, None)]
    assert str(engines[2].tls.ca_cert) == "/certs/ca.pem" and str(engines[2].tls.client_key) == "/certs/key.pem"
    assert load_settings(ROOT / "settings.example.toml").engines  # the example stays valid


@pytest.mark.parametrize(("text", "expected"), [
    ('[[engines]]\nname = "a"\naddress = "http://x"\n', "[[engines]] 'a': address: 'http://x' is not unix:///path"),
    ('[[engines]]\nname = "a"\nsandboxes = 0\n', "[[engines]] 'a': sandboxes: Input should be greater than 0"),
    ('[[engines]]\nname = "a"\ncapacity = 3\n', "[[engines]] 'a': capacity: Extra inputs are not permitted"),
    ('[[engines]]\nname = "b"\naddress = "tcp://10.0.0.5:2375"\n', "plain TCP: anyone who reaches that port"),
    ('[[engines]]\nname = "a"\n[[engines]]\nname = "a"\n', "engine name(s) ['a'] used twice"),
    ('[engines]\nname = "a"\n', "'engines' must be an array of tables"),
    ('engine = []\n', "unknown top-level key(s) ['engine']"),
])
def test_settings_errors_name_file_table_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_engine_option_takes_names_and_addresses() -> None:
    configured = [EngineConfig(name="gpu1", address="ssh://me@gpu1", sandboxes=8)]
    assert [e.name for e in select_engines(None, [])] == ["local"]  # DOCKER_HOST's engine by default
    assert select_engines(None, configured) == configured
    chosen = select_engines("local,gpu1,unix:///run/other/docker.sock,tcp://127.0.0.1:2375", configured)
    assert [(e.name, e.address) for e in chosen] == [
        ("local", None), ("gpu1", "ssh://me@gpu1"), ("other", "unix:///run/other/docker.sock"),
        ("127.0.0.1-2375", "tcp://127.0.0.1:2375")]  # plain TCP is allowed on loopback only
    with pytest.raises(ConfigError, match="--engine gpu2: no engine of that name .*known: gpu1, local"):
        select_engines("gpu2", configured)
    with pytest.raises(ConfigError, match="--engine tcp://db:2375: .*plain TCP"):
        select_engines("tcp://db:2375", configured)


def test_missing_tls_files_are_named_when_connecting(tmp_path: Path) -> None:
    config = EngineConfig(name="ci", address="tcp://127.0.0.1:1", tls={"cert_path": str(tmp_path)})
    with pytest.raises(DockerUnavailable, match=r"engine 'ci' \(tcp://127.0.0.1:1\): TLS file\(s\) not found: ca_cert"):
        connect_engine(config)


# ---- placement (pure logic over the pool) ---------------------------------------------------


class _Ready(Engine):
    """An engine whose images are there already: placement only."""

    async def provision(self, sources: list[Engine], notice: Any, extra: Any = None) -> None:
        return None


async def test_placement_spreads_by_capacity_and_skips_lost_engines() -> None:
    a = _Ready(EngineConfig(name="a", sandboxes=1))
    b = _Ready(EngineConfig(name="b", sandboxes=2))
    pool = EnginePool([a, b], notice=lambda _m: None)
    held, peak = [], {"a": 0, "b": 0}

    async def cell() -> None:
        async with pool.place() as engine:
            held.append(engine.name)
            peak[engine.name] = max(peak[engine.name], engine.active)
            await asyncio.sleep(0.02)

    await asyncio.gather(*(cell() for _ in range(9)))
    assert peak == {"a": 1, "b": 2} and held.count("b") > held.count("a") > 0
    pool.mark_lost(a, "test")
    async with pool.place() as engine:
        assert engine is b
    pool.mark_lost(b, "gone")
    with pytest.raises(NoEngineLeft, match="engine 'a' .*test.*engine 'b' .*gone"):
        async with pool.place():
            pass


# ---- real engines ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def second_engine(docker_client: Any):
    remove_stale_engines()
    if os.geteuid() != 0:
        pytest.skip("starting a second dockerd needs root")
    with SecondEngine() as engine:
        yield engine


def _results(run_dir: Path) -> dict[str, AttemptResult]:
    found = {}
    for path in run_dir.rglob("result.json"):
        r = AttemptResult.model_validate_json(path.read_text())
        found[f"{r.task}/{r.model}/r{r.repeat}"] = r
    return found


def _files(adir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(adir)): p.read_bytes() for p in sorted(adir.rglob("*")) if p.is_file()}


@pytest.mark.docker
async def test_a_run_spread_over_two_engines_gives_the_results_of_one(tmp_path: Path, second_engine) -> None:
    two = [EngineConfig(name="local"), EngineConfig(name="second", address=second_engine.address)]
    tasks = resolve_tasks("all")
    notices: list[str] = []
    spread = await run([DEMO_MODELS["demo"]], tasks, RunOptions(out_dir=tmp_path / "two", repeats=2, concurrency=4,
                       checks=False, preflight=False, engines=two, notice=notices.append))
    single = await run([DEMO_MODELS["demo"]], tasks, RunOptions(out_dir=tmp_path / "one", repeats=2, concurrency=4,
                       checks=False, preflight=False, engines=[EngineConfig(name="local")]))
    a, b = _results(spread.run_dir), _results(single.run_dir)
    assert len(a) == len(b) == 8
    on = {k: r.engine for k, r in a.items()}
    assert set(on.values()) == {"local", "second"}, on  # both engines took cells
    assert {r.engine for r in b.values()} == {"local"}
    for key in a:  # the same outcomes, tool calls and artefacts, byte for byte
        assert (a[key].outcome, a[key].agent.tool_calls) == (b[key].outcome, b[key].agent.tool_calls), key
        assert a[key].outcome == "scored"
        assert _files(spread.run_dir / key / "artefact") == _files(single.run_dir / key / "artefact"), key
    # The second engine got the sandbox image once, from the local engine, with a progress line.
    loads = [n for n in notices if "loading agentbench/web:latest from engine local" in n]
    assert len(loads) <= 1 and image_exists(second_engine.client(), IMAGE_TAG)
    assert not second_engine.client().containers.list(all=True, filters={"label": f"agentbench.run={spread.run_id}"})


@pytest.mark.docker
async def test_checks_sandbox_goes_to_the_cells_engine(tmp_path: Path, second_engine) -> None:
    from agentbench.checks.static._syntax import check_syntax

    pool = await open_pool([EngineConfig(name="second", address=second_engine.address)])
    (engine,) = pool.engines
    async with pool.place():
        pass  # provisions the images
    (tmp_path / "index.html").write_text("<script>\nlet a = ;\n</script>")
    since = int(time.time()) - 1
    with bind_engine(engine):
        result = await check_syntax(tmp_path)
    assert result.status == "fail" and result.detail.startswith("index.html:2: SyntaxError")
    events = list(engine.client.events(since=since, until=int(time.time()) + 1, decode=True,
                                       filters={"type": "container", "event": "create",
                                                "label": "agentbench.role=syntax"}))
    assert len(events) == 1  # created on the second engine, not on the local one


@pytest.mark.docker
async def test_browser_checks_run_in_a_checker_on_the_cells_engine(tmp_path: Path, second_engine,
                                                                  checker_image) -> None:
    from agentbench.checks._checker_pool import close_shared_checker
    from agentbench.checks._run import browser_checks
    from agentbench.runner import RunOptions as Options
    from agentbench.runner import _check_images
    from agentbench.sandbox._checker_image import CHECKER_RUNTIME_TAG

    notices: list[str] = []
    images = _check_images(Options(out_dir=tmp_path))
    assert [i.tag for i in images] == [CHECKER_RUNTIME_TAG]
    pool = await open_pool([EngineConfig(name="second", address=second_engine.address)], notices.append, images)
    (engine,) = pool.engines
    async with pool.place():
        pass  # provisions the sandbox image and the checker's runtime, from the local engine
    assert image_exists(engine.client, CHECKER_RUNTIME_TAG), notices
    since = int(time.time()) - 1
    try:
        with bind_engine(engine):
            checks = await browser_checks("flappy", ROOT / "agentbench" / "models" / "demo_data" / "careful" / "flappy",
                                          tmp_path / "evidence")
    finally:
        close_shared_checker()
    assert {c.id: c.status for c in checks}["refresh-rate"] == "pass", [(c.id, c.status, c.detail) for c in checks]
    events = list(engine.client.events(since=since, until=int(time.time()) + 1, decode=True,
                                       filters={"type": "container", "event": "create",
                                                "label": "agentbench.kind=checker"}))
    assert len(events) == 1  # the checker ran on the second engine, not on the local one


@pytest.mark.docker
async def test_an_image_no_engine_has_is_built_there_once(second_engine) -> None:
    tag = f"agentbench/engine-test:{os.getpid()}"
    calls: list[str] = []

    def build(client: Any, notice: Any) -> None:
        import io

        calls.append(client.api.base_url)
        client.images.build(fileobj=io.BytesIO(b"FROM scratch\nLABEL agentbench.test=1\n"), tag=tag, rm=True)

    saved = list(ENGINE_IMAGES)
    register_engine_image(tag, build)
    client = second_engine.client()
    try:
        pool = await open_pool([EngineConfig(name="second", address=second_engine.address)])

        async def cell() -> None:
            async with pool.place():
                await asyncio.sleep(0.01)

        await asyncio.gather(*(cell() for _ in range(4)))
        assert len(calls) == 1 and image_exists(client, tag)
    finally:
        ENGINE_IMAGES[:] = saved
        if image_exists(client, tag):
            client.images.remove(tag, force=True)


def _env() -> dict[str, str]:
    # This checkout's code, not whichever agentbench is installed.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "AGENTBENCH_ROOT": str(ROOT), "PYTHONPATH": path}


def _cli(*args: str, cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentbench.cli", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=300, **kw)


def test_an_unreachable_engine_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    sock = tmp_path / "nothing.sock"
    proc = _cli("run", "--model", "demo", "--engine", f"unix://{sock}", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"engine '{tmp_path.name}' (unix://{sock}) does not answer" in proc.stderr
    assert "leave it out with --engine" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "artefacts").exists()


def _cells_on(client: Any) -> bool:
    try:
        return bool(client.containers.list(filters={"label": "agentbench.cell"}, ignore_removed=True))
    except Exception:  # noqa: BLE001 - not up to it yet
        return False


@pytest.mark.docker
def test_an_engine_lost_mid_run_then_resume_elsewhere(tmp_path: Path, docker_client) -> None:
    remove_stale_engines()
    if os.geteuid() != 0:
        pytest.skip("starting a second dockerd needs root")
    # The engine is killed while it runs a cell's sandbox: a state the test holds (four attempts wait
    # at the gated model's gate, sandboxes up), not a moment it guesses.
    model = GatedModel()
    model.start()
    try:
        (tmp_path / "models.toml").write_text(model.models_toml())
        with SecondEngine() as doomed:
            (tmp_path / "settings.toml").write_text(
                f'[[engines]]\nname = "local"\n\n[[engines]]\nname = "doomed"\naddress = "{doomed.address}"\n')
            proc = subprocess.Popen(
                [sys.executable, "-m", "agentbench.cli", "run", "--model", "gated", "--task", "all", "--repeats",
                 "3", "--no-checks", "-j", "4", "--json"], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)
            client = doomed.client()
            try:
                until(lambda: proc.poll() is not None or (model.held == 4 and _cells_on(client)),
                      "four attempts at the gate, some on the doomed engine")
                assert proc.poll() is None, f"the run ended ({proc.returncode}) before it reached the gate"
            except BaseException:
                proc.kill()
                proc.communicate()
                raise
            doomed.kill()
            model.open()
            stdout, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, stderr  # some cells were measured
        results = {f"{r['task']}/r{r['repeat']}": r for r in json.loads(stdout)["results"]}
        assert len(results) == 12
        lost = [r for r in results.values() if r["outcome"] == "infra-error"]
        assert lost, "no cell was lost with the engine"
        for r in lost:
            assert r["error"]["kind"] == "engine" and "engine 'doomed'" in r["error"]["message"], r["error"]
        assert all(r["outcome"] == "scored" for r in results.values() if r["outcome"] != "infra-error")
        assert "engine 'doomed'" in stderr and "is out of this run" in stderr
        run_id = json.loads(stdout)["run_id"]
        # Its cells are rerun on the engine that remains; the measured ones are kept.
        again = _cli("run", "--resume", run_id, "--retry", "infra", "--engine", "local", "--json", cwd=tmp_path)
    finally:
        model.stop()
    assert again.returncode == 0, again.stderr
    final = {f"{r['task']}/r{r['repeat']}": r for r in json.loads(again.stdout)["results"]}
    assert all(r["outcome"] == "scored" for r in final.values()), [r["outcome"] for r in final.values()]
    for key, r in results.items():
        if r["outcome"] == "infra-error":
            assert final[key]["engine"] == "local"
        else:
            assert final[key]["finished_at"] == r["finished_at"] and final[key]["engine"] == r["engine"]
    assert not docker_client.containers.list(all=True, filters={"label": f"agentbench.run={run_id}"})


def test_run_options_default_to_the_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentbench.runner import _engine_configs

    monkeypatch.chdir(tmp_path)
    assert [e.name for e in _engine_configs(RunOptions(out_dir=tmp_path))] == ["local"]
    (tmp_path / "settings.toml").write_text('[[engines]]\nname = "x"\naddress = "unix:///x.sock"\n')
    assert [e.name for e in _engine_configs(RunOptions(out_dir=tmp_path))] == ["x"]
