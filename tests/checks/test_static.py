"""Static detectors and the source views they read, on the demo artefacts and small snippets."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentbench.checks.static._source import Source, blank_js
from agentbench.checks.static._static import DETECTORS, match_patterns, run_detector

DEMO = Path(__file__).resolve().parents[2] / "agentbench" / "models" / "demo_data"
FIXTURES = Path(__file__).parent / "fixtures_checklist"


def page(js: str, body: str = "") -> Source:
    return Source.from_text(f"<!DOCTYPE html>\n<html><body>{body}\n<script>\n{js}\n</script></body></html>\n")


def test_blank_js_keeps_offsets_and_drops_only_comments() -> None:
    js = (
        'const url = "http://x"; // performance.now() in a comment\n'
        "let r = /a'b\\/c/g; /* block\n  comment */ let t = `a ${ {x: 1}.x + f('}') } b // not a comment`;\n"
        "x = a / b / c;\n"
    )
    code, skeleton = blank_js(js)
    assert len(code) == len(skeleton) == len(js)
    assert code.count("\n") == js.count("\n")
    assert "performance" not in code and "block" not in code
    assert '"http://x"' in code and "// not a comment" in code  # strings and templates are code
    assert "http" not in skeleton and "not a comment" not in skeleton
    assert "{x: 1}.x + f(" in skeleton  # template expressions stay code
    assert "x = a / b / c;" in skeleton  # division is not a regex literal


def test_snippet_names_file_and_line_of_the_html() -> None:
    src = page("let a = 1;\nwindow.addEventListener('resize', fit);")
    found, evidence = run_detector("handles_resize", src)
    assert found
    assert evidence == "index.html:5: window.addEventListener('resize', fit);"


def test_local_script_files_are_read_and_remote_ones_are_not(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(
        '<script src="https://cdn.example/x.js"></script>\n<script src="game.js"></script>\n'
        '<script src="../outside.js"></script>\n'
    )
    (tmp_path / "game.js").write_text("const dpr = window.devicePixelRatio;\n")
    (tmp_path.parent / "outside.js").write_text("localStorage.setItem('x', 1);\n")
    src = Source.from_artefact(tmp_path)
    assert [f.name for f in src.files] == ["index.html", "game.js"]
    assert run_detector("scales_for_device_pixel_ratio", src) == (
        True, "game.js:1: const dpr = window.devicePixelRatio;")
    assert run_detector("uses_local_storage_save", src)[0] is False


# What each demo artefact's source shows: the careful builds do what a careful build does; the
# rushed ones skip it. These expectations were read off the files by hand.
DEMO_EXPECT = {
    ("careful", "flappy"): {"uses_elapsed_time": True, "clamps_frame_delta": True, "handles_resize": True,
                            "prevents_default_on_keys": True, "persists_to_local_storage": True,
                            "shows_game_over_text": True, "has_reset_function": True,
                            "listens_keyboard_and_pointer": True},
    ("rushed", "flappy"): {"uses_elapsed_time": False, "clamps_frame_delta": False, "handles_resize": False,
                           "prevents_default_on_keys": True, "persists_to_local_storage": False,
                           "shows_game_over_text": True, "has_reset_function": True,
                           "scales_for_device_pixel_ratio": False},
    ("careful", "ball"): {"uses_elapsed_time": True, "damps_bounces": True, "clamps_to_floor": True,
                          "scales_for_device_pixel_ratio": True},
    ("rushed", "ball"): {"uses_elapsed_time": False, "damps_bounces": True, "clamps_to_floor": True,
                         "handles_resize": True, "shows_game_over_text": False},
    ("careful", "todo"): {"persists_to_local_storage": True, "guards_json_parse": True, "labels_inputs": True,
                          "uses_inner_html_with_user_text": False, "rejects_blank_input": True},
    ("rushed", "todo"): {"uses_local_storage_save": True, "uses_local_storage_load": False,
                         "persists_to_local_storage": False, "guards_json_parse": False, "labels_inputs": False,
                         "uses_inner_html_with_user_text": False, "rejects_blank_input": True},
    ("careful", "converter"): {"validates_number_input": True, "formats_numbers": True,
                               "listens_input_event": True},
    ("rushed", "converter"): {"validates_number_input": True, "formats_numbers": True,
                              "listens_input_event": True, "uses_elapsed_time": False},
}


@pytest.mark.parametrize("kind,task", sorted(DEMO_EXPECT))
def test_detectors_on_demo_artefacts(kind: str, task: str) -> None:
    src = Source.from_artefact(DEMO / kind / task)
    got = {name: run_detector(name, src) for name in DEMO_EXPECT[kind, task]}
    wrong = {n: ev for n, (found, ev) in got.items() if found != DEMO_EXPECT[kind, task][n]}
    assert not wrong, wrong
    for _found, evidence in got.values():  # every finding says where
        assert evidence


def test_every_detector_runs_on_every_demo_artefact() -> None:
    for path in sorted(p for p in DEMO.glob("*/*") if p.is_dir()):
        src = Source.from_artefact(path)
        for name in DETECTORS:
            found, evidence = run_detector(name, src)
            assert isinstance(found, bool) and isinstance(evidence, str) and evidence, (path, name)


def test_loader_never_called_is_not_a_load() -> None:
    found, evidence = run_detector("uses_local_storage_load", Source.from_artefact(DEMO / "rushed" / "todo"))
    assert not found
    assert "loadTasks(), which is never called" in evidence and "index.html:156" in evidence


def test_loader_called_from_an_event_or_at_top_level_counts() -> None:
    listener = page("function load() { return localStorage.getItem('k'); }\n"
                    "window.addEventListener('DOMContentLoaded', load);")
    assert run_detector("uses_local_storage_load", listener)[0]
    top = page("const items = JSON.parse(localStorage.getItem('k') || '[]');")
    assert run_detector("uses_local_storage_load", top)[0]
    method = page("class Store { load() { return localStorage.getItem('k'); } }\nnew Store().load();")
    assert run_detector("uses_local_storage_load", method)[0]
    never = page("class Store { load() { return localStorage.getItem('k'); } }\nnew Store();")
    assert not run_detector("uses_local_storage_load", never)[0]


def test_delta_time_in_a_comment_or_unused_does_not_count() -> None:
    comment = page("// TODO: dt = (performance.now() - last)\nfunction loop() { x += 2; requestAnimationFrame(loop); }")
    assert not run_detector("uses_elapsed_time", comment)[0]
    unused = page("let last = 0;\nfunction loop(now) {\n  const dt = (now - last) / 1000;\n  last = now;\n"
                  "  if (dt > 0.5) console.log('slow');\n  x += 2;\n  requestAnimationFrame(loop);\n}")
    found, evidence = run_detector("uses_elapsed_time", unused)
    assert not found and "computes dt but never uses it" in evidence
    used = page("let last = performance.now();\nfunction loop() {\n  const t = performance.now();\n"
                "  const elapsed = t - last;\n  last = t;\n  x += speed * elapsed;\n  requestAnimationFrame(loop);\n}")
    assert run_detector("uses_elapsed_time", used)[0]


def test_delta_time_named_elsewhere_is_not_borrowed() -> None:
    # `dt` the parameter of update() is not a use of the loop's dt, which is never passed on.
    js = ("function update(dt) { y += v * dt; }\nlet last = 0;\nfunction loop(now) {\n"
          "  let dt = now - last;\n  last = now;\n  update(1 / 60);\n  requestAnimationFrame(loop);\n}")
    assert not run_detector("uses_elapsed_time", page(js))[0]


def test_inner_html_with_user_text() -> None:
    bad = page("li.innerHTML = `<span>${todo.text}</span>`;")
    assert run_detector("uses_inner_html_with_user_text", bad) == (
        True, "index.html:4: li.innerHTML = `<span>${todo.text}</span>`;")
    concat = page("li.innerHTML = '<b>' + item.title + '</b>';")
    assert run_detector("uses_inner_html_with_user_text", concat)[0]
    for fine in ("list.innerHTML = '';", "li.innerHTML = `<span>${escapeHtml(todo.text)}</span>`;",
                 "el.innerHTML = `<i>${count}</i>`;", "el.innerHTML = '<b>&times;</b>';"):
        assert not run_detector("uses_inner_html_with_user_text", page(fine))[0], fine


def test_game_over_text_means_a_message_not_a_variable() -> None:
    assert not run_detector("shows_game_over_text", page("let gameOver = false;"))[0]
    assert run_detector("shows_game_over_text", page("ctx.fillText('GAME OVER', 10, 10);"))[0]
    assert run_detector("shows_game_over_text", page("", body="<div id=over>Game over!</div>"))[0]


def test_prevent_default_must_be_in_the_key_handler() -> None:
    elsewhere = page("document.addEventListener('keydown', (e) => { flap(); });\n"
                     "canvas.addEventListener('touchstart', (e) => { e.preventDefault(); flap(); });")
    assert not run_detector("prevents_default_on_keys", elsewhere)[0]
    named = page("function onKey(e) { if (e.code === 'Space') { e.preventDefault(); flap(); } }\n"
                 "document.addEventListener('keydown', onKey);")
    assert run_detector("prevents_default_on_keys", named)[0]


def test_match_patterns_needs_every_pattern() -> None:
    src = Source.from_artefact(DEMO / "careful" / "converter")
    found, evidence = match_patterns(src, [r"273\.15", r"(?i)kelvin"])
    assert found and "273.15" in evidence
    found, evidence = match_patterns(src, [r"273\.15", r"(?i)rankine"])
    assert not found and evidence == "no match for /(?i)rankine/"


def test_fixture_floored_dt_looks_time_based_to_the_source() -> None:
    # The point of this fixture: a detector is fooled, only the probe can tell.
    found, evidence = run_detector("uses_elapsed_time", Source.from_artefact(FIXTURES / "flappy_floored_dt"))
    assert found and "now - lastTime" in evidence
