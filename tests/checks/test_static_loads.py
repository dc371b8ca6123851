"""Static claims follow what the page loads: root-absolute srcs, ES modules and their imports.

Each fixture in fixtures_static/ is a small artefact; the claims read off it must come from the
files the page runs and from no other file in (or outside) the folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentbench.checks import CheckResult
from agentbench.checks._checklist import evaluate_checklist, load_checklist
from agentbench.checks.static._loads import import_specs, page_scripts, resolve_url, script_tags
from agentbench.checks.static._source import Source, blank_js
from agentbench.checks.static._static import run_detector
from agentbench.checks.static._syntax import _collect

FIXTURES = Path(__file__).parent / "fixtures_static"


def names(artefact: str | Path) -> list[str]:
    path = artefact if isinstance(artefact, Path) else FIXTURES / artefact
    return [f.name for f in Source.from_artefact(path).files]


def test_root_absolute_module_src_and_root_absolute_import_are_read() -> None:
    src = Source.from_artefact(FIXTURES / "root_absolute")
    assert [f.name for f in src.files] == ["index.html", "js/app.js", "js/lib/store.js"]
    found, evidence = run_detector("persists_to_local_storage", src)
    assert found, evidence
    assert "js/lib/store.js:6: localStorage.setItem" in evidence
    assert "js/lib/store.js:2:" in evidence


def test_a_module_entry_reaches_its_helpers_through_every_import_form() -> None:
    src = Source.from_artefact(FIXTURES / "module_helper")
    # Breadth first: main.js's imports in source order (static, side effect, import() with a
    # template literal), then the store's `export ... from`.
    assert [f.name for f in src.files] == ["index.html", "src/main.js", "src/store/index.js", "src/side.js",
                                           "src/lazy.js", "src/store/local.js"]
    assert run_detector("persists_to_local_storage", src)[0]
    assert run_detector("handles_resize", src)[1].startswith("src/side.js:1:")
    assert run_detector("scales_for_device_pixel_ratio", src)[1].startswith("src/lazy.js:1:")


def test_files_the_page_does_not_run_make_no_claim() -> None:
    # Dead files, a commented-out tag, scripts in <template> and <noscript>, a data block with a
    # src, a nomodule fallback, and imports that only appear in a comment or a string.
    src = Source.from_artefact(FIXTURES / "dead_file")
    assert [f.name for f in src.files] == ["index.html", "app.js"]
    assert run_detector("uses_local_storage_save", src) == (False, "no localStorage.setItem")
    assert not run_detector("handles_resize", src)[0]
    assert "old.js" not in src.files[0].skeleton  # neither the commented tag nor the string is code
    skipped = {s.label: s.why for s in src.skipped}
    assert skipped == {"index.html:6 script type='text/plain'": "not JavaScript",
                       "index.html:7 nomodule script": "nomodule"}


def test_an_import_cycle_ends_and_each_file_is_read_once() -> None:
    src = Source.from_artefact(FIXTURES / "cycle")
    assert [f.name for f in src.files] == ["index.html", "a.js", "b.js"]
    assert run_detector("persists_to_local_storage", src)[0]


def test_imports_and_srcs_out_of_the_folder_are_never_followed() -> None:
    src = Source.from_artefact(FIXTURES / "escape")
    assert [f.name for f in src.files] == ["index.html", "js/app.js"]
    assert not run_detector("uses_local_storage_save", src)[0]  # outside_escape.js is not read
    why = {s.ref: s.why for s in src.skipped}
    # `..` stops at the root as in the browser at http://localhost/: the file it names there is absent.
    assert why == {"https://cdn.example/storage.js": "remote", "../../outside_escape.js": "missing",
                   "https://cdn.example/lib.js": "remote"}


def test_a_link_to_a_script_is_never_followed(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "escape", site)
    (site / "js" / "app.js").write_text('import "./link.js";\nimport "/js/real.js";\n')
    os.symlink(FIXTURES / "outside_escape.js", site / "js" / "link.js")
    (site / "js" / "real.js").write_text("export const n = 1;\n")
    os.link(site / "js" / "real.js", site / "js" / "hard.js")  # a hard link is refused as well
    (site / "index.html").write_text('<script src="js/hard.js"></script><script type=module src="js/app.js">'
                                     "</script>")
    src = Source.from_artefact(site)
    assert names(site) == ["index.html", "js/app.js"]
    assert not run_detector("uses_local_storage_save", src)[0]
    reasons = {s.ref: s.reason for s in src.skipped}
    assert "symlink" in reasons["./link.js"] and "hard link" in reasons["js/hard.js"]


@pytest.mark.parametrize(("base", "ref", "rel"), [
    ("index.html", "/js/app.js", "js/app.js"),
    ("index.html", "./js/app.js?v=2#top", "js/app.js"),
    ("index.html", "js/my%20app.js", "js/my app.js"),
    ("js/app.js", "../lib/a.js", "lib/a.js"),
    ("js/app.js", "/lib/a.js", "lib/a.js"),
    ("js/app.js", "./b.mjs", "js/b.mjs"),
    ("js/app.js", "../../../etc/passwd", "etc/passwd"),  # clamped at the root, as URLs are
    ("pages/index.html", "app.js", "pages/app.js"),
    ("index.html", "https://cdn.example/x.js", None),
    ("index.html", "//cdn.example/x.js", None),
    ("index.html", "data:text/javascript,alert(1)", None),
    ("index.html", "", None),
    ("index.html", "/", None),
])
def test_urls_resolve_as_the_browser_resolves_them(base: str, ref: str, rel: str | None) -> None:
    assert resolve_url(base, ref) == rel


def test_import_specs_ignore_comments_strings_and_bare_names() -> None:
    js = (
        "import a, { b as c } from './a.js';\nimport * as ns from \"../ns.js\";\nimport './side.js';\n"
        "import {\n  x,\n  y,\n} from '/multi.js';\nexport * from './re.js';\nexport { z } from './z.js';\n"
        "const m = await import('./dyn.js');\nconst t = import(`./tpl.js`);\nimport.meta.url;\n"
        "// import './commented.js'\n/* import './block.js' */\nconst s = \"import './string.js'\";\n"
        "import React from 'react';\nconst u = import(`./${name}.js`);\nobj.import('./method.js');\n"
    )
    code, skeleton = blank_js(js)
    assert import_specs(code, skeleton, module=True) == [
        "./a.js", "../ns.js", "./side.js", "/multi.js", "./re.js", "./z.js", "./dyn.js", "./tpl.js"]
    # A classic script loads nothing by a static import (it is a syntax error there); import() works.
    assert import_specs(code, skeleton, module=False) == ["./dyn.js", "./tpl.js"]


def test_import_specs_take_linear_time_on_long_runs_of_blanks() -> None:
    # A blanked comment after `import` is a run of spaces; a backtracking pattern took 7 s on
    # 2,000 of them (cubic), so 400,000 would never end.
    import time

    for js in ("import" + " " * 400_000 + "x;", "import {" + "a, " * 100_000 + "} x;", "import " * 100_000,
               "export {" + " " * 3_000 + "} from './a.js';"):  # within the 4,000 looked at
        code, skeleton = blank_js(js)
        started = time.thread_time()  # CPU time: other processes on a busy machine do not count
        specs = import_specs(code, skeleton, module=True)
        assert time.thread_time() - started < 5
        assert specs == (["./a.js"] if js.startswith("export") else [])


def test_script_tags_keep_the_offsets_of_inline_bodies() -> None:
    html = '<p>x</p>\n<script>\nconst a = "</div>";\n</script>\n<script type="module">let b;</script>'
    tags = script_tags(html)
    assert [t.kind for t in tags] == ["classic", "module"]
    for t in tags:
        assert html[t.body_start:t.body_start + len(t.body)] == t.body
    assert tags[0].body == '\nconst a = "</div>";\n' and tags[1].line == 5


def test_the_checklist_shows_a_claim_from_an_imported_module_that_behaviour_contradicts() -> None:
    cl = load_checklist("todo")
    res = evaluate_checklist(cl, FIXTURES / "module_helper", [
        CheckResult(id="persistence", status="fail", detail="the list was empty after a reload")])
    it = next(i for i in res.items if i.id == "persistence")
    assert (it.status, it.static, it.behaviour) == ("fail", "pass", "fail")
    assert it.disagreement == ("source saves to localStorage and reads it back at start; "
                               "the persistence check failed: the list was empty after a reload")
    assert "src/store/local.js:" in it.evidence


def test_the_checklist_makes_no_claim_from_a_dead_file() -> None:
    cl = load_checklist("todo")
    res = evaluate_checklist(cl, FIXTURES / "dead_file", [
        CheckResult(id="persistence", status="fail", detail="the list was empty after a reload")])
    it = next(i for i in res.items if i.id == "persistence")
    assert (it.status, it.static, it.behaviour, it.disagreement) == ("fail", "fail", "fail", None)
    assert ("static persists_to_local_storage read: index.html, app.js; not read: plain.js (not JavaScript), "
            "legacy.js (nomodule)") in it.evidence


def test_the_syntax_check_parses_the_modules_the_page_reaches() -> None:
    scripts, skipped, failures = _collect(FIXTURES / "root_absolute", "index.html")
    assert [(s.origin, s.module) for s in scripts] == [("js/app.js", True), ("js/lib/store.js", True)]
    scripts, skipped, failures = _collect(FIXTURES / "module_helper", "index.html")
    assert [s.origin for s in scripts] == ["src/main.js", "src/store/index.js", "src/side.js", "src/lazy.js",
                                           "src/store/local.js"]
    assert all(s.module for s in scripts) and not failures
    scripts, skipped, failures = _collect(FIXTURES / "dead_file", "index.html")
    assert [(s.label, s.module) for s in scripts] == [("index.html:13 (inline)", True), ("app.js", False)]
    assert [s.line_offset for s in scripts] == [12, 0]
    scripts, skipped, failures = _collect(FIXTURES / "escape", "index.html")
    assert [s.origin for s in scripts] == ["js/app.js"] and not failures
    assert {e.label: e.value for e in skipped} == {
        "index.html:4 script src='https://cdn.example/storage.js'": "skipped: not a local file",
        "js/app.js imports '../../outside_escape.js'": "not found",
        "js/app.js imports 'https://cdn.example/lib.js'": "skipped: not a local file"}


def test_every_file_is_read_with_the_cap(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text('<script type="module" src="/big.js"></script>')
    (tmp_path / "big.js").write_text("import './small.js';\n" + "x" * 2000)
    (tmp_path / "small.js").write_text("export {};\n")
    page = page_scripts(tmp_path, max_bytes=1000)
    assert page.scripts == [] and [s.why for s in page.skipped] == ["too large"]


def test_a_page_cannot_make_us_read_without_end(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("".join(f'<script src="s{i}.js"></script>' for i in range(300)))
    for i in range(300):
        (tmp_path / f"s{i}.js").write_text("x" * 100)
    page = page_scripts(tmp_path, max_bytes=10_000)
    assert len(page.scripts) == 256 and {s.why for s in page.skipped} == {"too many"}
    page = page_scripts(tmp_path, max_bytes=10_000, max_total_bytes=1050)
    assert len(page.scripts) == 10 and page.skipped[0].why == "too large"
