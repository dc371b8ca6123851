"""The `syntax` check, with node in a real Docker sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentbench.checks.static._syntax import check_syntax
from agentbench.sandbox import IMAGE_TAG, DockerSandbox, build_image, image_exists


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    if not image_exists(docker_client, IMAGE_TAG):
        build_image(docker_client, log=lambda _msg: None)
    return IMAGE_TAG


def _site(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "site" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "site"


def _line_of(text: str, needle: str) -> int:
    """1-based line of the first occurrence of needle (asserting it is there once)."""
    assert text.count(needle) == 1, needle
    return text[: text.index(needle)].count("\n") + 1


GOOD_PAGE = """<!doctype html>
<html><head><title>ok</title>
<script type="application/json" id="cfg">{"not": javascript at all</script>
<script type="text/template"><div>{{ broken( }}</div></script>
<script src="https://cdn.example/remote.js"></script>
</head><body>
<canvas id="c"></canvas>
<script>
  // Valid classic code that a CommonJS wrapper would wrongly reject.
  let require = 1, module = 2;
  const c = document.getElementById('c');
  function loop(t) { requestAnimationFrame(loop); }
  <!-- an HTML-like comment, legal in classic scripts
</script>
<script type="module">
  import { step } from './js/physics.mjs';
  await Promise.resolve(step(1));
</script>
<script src="js/app.js" defer></script>
</body></html>
"""


@pytest.mark.docker
async def test_a_good_page_passes_and_lists_every_script(tmp_path, sandbox_image):
    site = _site(tmp_path, {
        "index.html": GOOD_PAGE,
        "js/app.js": "window.addEventListener('keydown', e => { if (e.code === 'Space') flap(); });\n",
        "js/physics.mjs": "import { g } from './consts.js';\nexport function step(dt) { return g * dt; }\n",
        "js/consts.js": "export const g = 9.81;\n",
    })
    result = await check_syntax(site)
    assert result.status == "pass", result.detail
    labels = [e.label for e in result.evidence]
    ok = [e.label for e in result.evidence if e.value == "ok"]
    assert result.data == {"checked": 5, "errors": 0}
    assert ok == ["index.html:8 (inline) [classic]", "index.html:15 (inline) [module]", "js/app.js [classic]",
                  "js/physics.mjs [module]", "js/consts.js [module]"]
    skipped = [label for label in labels if label not in ok]
    assert any("application/json" in label for label in skipped)
    assert any("text/template" in label for label in skipped)
    assert any("remote.js" in label for label in skipped)


@pytest.mark.docker
async def test_broken_inline_script_names_index_html_and_the_line(tmp_path, sandbox_image):
    page = (
        "<!doctype html>\n<html><body>\n<p>hello</p>\n<script>let ok = 1;\n"
        "function draw() {\n  ctx.fillRect(0, 0, 10, 10;\n}\n</script>\n"
        "<script\n  data-note='attributes over two lines'>\nlet fine = 2;\nlet broken = {a: 1,,};\n</script>\n"
        "</body></html>\n"
    )
    site = _site(tmp_path, {"index.html": page})
    result = await check_syntax(site)
    assert result.status == "fail"
    first = _line_of(page, "ctx.fillRect(0, 0, 10, 10;")
    second = _line_of(page, "let broken")
    assert f"index.html:{first}: SyntaxError: missing ) after argument list" in result.detail
    assert f"index.html:{second}: SyntaxError: Unexpected token ','" in result.detail
    assert result.data["errors"] == 2


@pytest.mark.docker
async def test_module_scripts_are_parsed_as_modules(tmp_path, sandbox_image):
    # `with` is legal in a sloppy classic script and a syntax error in a (strict) module.
    page = "<html><body>\n<script>with (Math) { var r = PI; }</script>\n<script type=\"module\">\n" \
           "const x = 1;\nwith (Math) { var r = PI; }\n</script>\n</body></html>\n"
    site = _site(tmp_path, {"index.html": page})
    result = await check_syntax(site)
    assert result.status == "fail"
    assert result.detail.startswith(f"index.html:{_line_of(page, 'const x = 1;') + 1}: SyntaxError")
    assert "Strict mode code may not include a with statement" in result.detail
    assert result.data == {"checked": 2, "errors": 1}


@pytest.mark.docker
async def test_classic_scripts_follow_browser_rules_not_commonjs(tmp_path, sandbox_image):
    page = "<html><body><script>\nlet a = 1;\nreturn a;\n</script></body></html>\n"
    result = await check_syntax(_site(tmp_path, {"index.html": page}))
    assert result.status == "fail"
    assert "index.html:3: SyntaxError: Illegal return statement" in result.detail


@pytest.mark.docker
async def test_broken_external_and_imported_files_are_named(tmp_path, sandbox_image):
    site = _site(tmp_path, {
        "index.html": "<html><body>\n<script src=\"js/game.js\"></script>\n"
                      "<script type=\"module\" src=\"./main.mjs?v=2\"></script>\n</body></html>\n",
        "js/game.js": "const bird = { y: 0 };\n\nfunction flap() {\n  bird.y -= 10\n  }}\n",
        "main.mjs": "import './lib/util.js';\nconsole.log('main');\n",
        "lib/util.js": "export const a = 1;\nexport const b = ;\n",
    })
    result = await check_syntax(site)
    assert result.status == "fail"
    assert "js/game.js:5: SyntaxError: Unexpected token '}'" in result.detail
    assert "lib/util.js:2: SyntaxError: Unexpected token ';'" in result.detail
    assert "main.mjs" not in result.detail


async def test_missing_entry_fails_without_docker(tmp_path):
    result = await check_syntax(tmp_path)
    assert result.status == "fail" and result.detail == "index.html not found"


@pytest.mark.docker
async def test_missing_script_file_fails(tmp_path, sandbox_image):
    site = _site(tmp_path, {"index.html": "<html>\n<body>\n<script src='gone.js'></script></body></html>"})
    result = await check_syntax(site)
    assert result.status == "fail"
    assert result.detail == "index.html:3: script src 'gone.js' not found"


@pytest.mark.docker
async def test_a_given_sandbox_is_used_and_left_clean(tmp_path, sandbox_image, docker_client):
    site = _site(tmp_path, {"game.html": "<script>\nvar x = ;\n</script>"})
    async with await DockerSandbox.create(client=docker_client) as box:
        await box.write_file("index.html", "agent's work")
        result = await check_syntax(site / "game.html", box)
        assert result.status == "fail" and result.detail.startswith("game.html:2: SyntaxError")
        assert await box.list_files() == ["index.html"]


@pytest.mark.docker
async def test_a_run_in_which_node_never_started_is_tried_once_more(tmp_path, sandbox_image, docker_client):
    """Under heavy load an exec once came back with exit 126 and nothing said: the engine's "cannot
    execute", not the artefact's fault. The check runs node once more and gives the verdict."""
    site = _site(tmp_path, {"index.html": "<script>\nvar x = ;\n</script>"})
    async with await DockerSandbox.create(client=docker_client) as box:
        real_exec, calls = box.exec, []

        async def first_never_runs(command: str, **kwargs):
            calls.append(command)
            # The first run of node is answered as the engine answered it; the rest run for real.
            return await real_exec("exit 126" if len(calls) == 1 else command, **kwargs)

        box.exec = first_never_runs
        result = await check_syntax(site, box)
        assert result.status == "fail" and result.detail.startswith("index.html:2: SyntaxError"), result.detail
        assert sum(c.startswith("node ") for c in calls) == 2, calls
        assert await box.list_files() == []  # the first run's folder too


async def test_no_engine_is_a_harness_error_not_a_verdict(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    site = _site(tmp_path, {"index.html": "<script>let a = 1;</script>"})
    result = await check_syntax(site)
    assert result.status == "error"
    assert "dockerd" in result.detail


@pytest.mark.docker
async def test_modules_reached_by_root_absolute_srcs_and_imports_are_parsed_and_dead_files_are_not(
        tmp_path, sandbox_image):
    site = _site(tmp_path, {
        "index.html": "<html><body>\n<!-- <script src=\"old.js\"></script> -->\n"
                      "<script type=\"module\" src=\"/js/main.js?v=3\"></script>\n</body></html>\n",
        "js/main.js": "import { ok } from '/js/lib/ok.js';\n// import './dead.js';\n"
                      "const later = () => import('./lazy/broken.js');\n",
        "js/lib/ok.js": "import '../main.js';\nexport const ok = 1;\n",  # a cycle back to main
        "js/lazy/broken.js": "export const a = 1;\n\nexport const b = ;\n",
        "js/dead.js": "this is not javascript (\n",
        "old.js": "nor is this {\n",
    })
    result = await check_syntax(site)
    assert result.status == "fail"
    assert result.data == {"checked": 3, "errors": 1}
    assert result.detail == "js/lazy/broken.js:3: SyntaxError: Unexpected token ';'"
    assert [e.label for e in result.evidence] == ["js/main.js [module]", "js/lib/ok.js [module]",
                                                  "js/lazy/broken.js [module]"]
