"""Rubrics, prompt rendering (snapshots), vision message format and answer parsing."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from agentbench.checks import load_checklist
from agentbench.errors import TaskError
from agentbench.review import (
    AnswerInvalid,
    PairwiseAnswer,
    ReviewAnswer,
    build_messages,
    load_rubric,
    parse_answer,
)
from agentbench.review._prompt import (
    Criterion,
    ImageRef,
    collect_images,
    collect_sources,
    probe_lines,
    render,
)
from agentbench.store import load_result
from tests.review._runs import FLAPPY_IDS, answer, png

SNAPSHOTS = Path(__file__).parent / "snapshots"
TASKS = ["flappy", "ball", "todo", "converter"]


def _snapshot(name: str, text: str) -> None:
    """Compare with snapshots/<name>; AGENTBENCH_UPDATE_SNAPSHOTS=1 rewrites it (then review the diff)."""
    path = SNAPSHOTS / name
    if os.environ.get("AGENTBENCH_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with AGENTBENCH_UPDATE_SNAPSHOTS=1 once"
    assert text == path.read_text(encoding="utf-8")


# -- rubrics -----------------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_every_rubric_covers_its_checklists_reviewer_items(task: str) -> None:
    checklist = load_checklist(task)
    rubric = load_rubric(task, checklist=checklist)
    reviewer_items = {i.id for i in checklist.items if i.reviewer}
    assert reviewer_items and reviewer_items <= set(rubric.ids)
    assert any(c.required for c in rubric.criteria)


def _write(root: Path, body: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "flappy.toml").write_text(body)
    return root


def test_rubric_errors_name_the_file_and_the_fix(tmp_path: Path) -> None:
    checklist = load_checklist("flappy")
    with pytest.raises(TaskError, match="no reviewer rubric for task 'flappy'"):
        load_rubric("flappy", tmp_path / "none")
    root = _write(tmp_path / "a", '[[criteria]]\nid = "x"\ntext = "t"\nweight = 0\nrequired = true\n')
    with pytest.raises(TaskError, match=r"flappy\.toml: criteria\.0\.weight"):
        load_rubric("flappy", root)
    root = _write(tmp_path / "b", '[[criteria]]\nid = "x"\ntext = "t"\n')
    with pytest.raises(TaskError, match="no criterion has `required = true`"):
        load_rubric("flappy", root)
    root = _write(tmp_path / "c", '[[criteria]]\nid = "score"\ntext = "t"\nrequired = true\n')
    with pytest.raises(TaskError, match=r"\['pipes-vary', 'restart-not-skipped'\] are decided by the reviewer"):
        load_rubric("flappy", root, checklist=checklist)
    ok = "".join(f'[[criteria]]\nid = "{i}"\ntext = "t"\nrequired = true\n'
                 for i in ("pipes-vary", "restart-not-skipped", "flap"))
    with pytest.raises(TaskError, match=r"\['flap'\] share an id with checklist items decided by a check"):
        load_rubric("flappy", _write(tmp_path / "d", ok), checklist=checklist)


# -- inputs and rendering ----------------------------------------------------------------------


def test_fence_outgrows_backticks_in_the_source(tmp_path: Path) -> None:
    art = tmp_path / "artefact"
    art.mkdir()
    (art / "index.html").write_text("<script>const md = `````x````` + '```';</script>\n")
    (art / "app.js").write_text("console.log(1)\n")
    (art / "notes.bin").write_bytes(b"\x00\x01")
    files = collect_sources(art, "index.html", 10_000)
    assert [f.name for f in files] == ["index.html", "app.js"]  # entry first, binaries left out
    assert files[0].fence == "``````" and files[1].fence == "```"
    cut = collect_sources(art, "index.html", 20)
    assert cut[0].truncated and cut[0].shown == 20 and len(cut) == 1


def test_images_refresh_rate_first_and_never_outside_the_attempt(run_dir: Path) -> None:
    adir = run_dir / "flappy" / "alpha" / "r1"
    result = load_result(adir / "result.json")
    images = collect_images(adir, result, 6)
    assert [i.path.name for i in images] == ["refresh-rate-60hz.png", "refresh-rate-240hz.png", "load.png"]
    assert [i.path.name for i in collect_images(adir, result, 2)] == ["refresh-rate-60hz.png", "refresh-rate-240hz.png"]


def _context(**over):
    crit = [Criterion(id="plays", text="It plays", weight=2, required=True),
            Criterion(id="pretty", text="It looks {{ nice }}")]
    art_text = "<p>{{ not_a_variable }} {% raw %}</p>\n<script>let s = ```nested```;</script>\n"
    from agentbench.review._prompt import SourceFile, _fence_for

    ctx = {"task_id": "demo", "task_title": "Demo", "task_prompt": "Build a demo page.\n\n- It plays.",
           "criteria": crit,
           "files": [SourceFile(name="index.html", text=art_text, total=len(art_text) + 100, lang="html",
                                fence=_fence_for(art_text))],
           "images": [ImageRef(caption="refresh-rate: 60 Hz run (refresh-rate-60hz.png)", path=Path("x.png"))],
           "checks": [], "sides": []}
    ctx.update(over)
    return ctx


def test_review_prompt_snapshot_informed_and_blind(run_dir: Path) -> None:
    result = load_result(run_dir / "flappy" / "alpha" / "r1" / "result.json")
    informed = render("review.md.j2", _context(checks=probe_lines(result)))
    _snapshot("review_informed.md", informed)
    assert "{{ not_a_variable }} {% raw %}" in informed  # source inserted verbatim, not re-rendered
    assert "````html\n<p>" in informed  # a fence longer than the source's own backticks
    assert "`refresh-rate`: fail: speed factor" in informed
    blind = render("review.md.j2", _context(checks=[], images=[]))
    _snapshot("review_blind.md", blind)
    assert "Probe results" not in blind and "refresh-rate" not in blind


def test_pairwise_prompt_snapshot(run_dir: Path) -> None:
    result = load_result(run_dir / "flappy" / "alpha" / "r1" / "result.json")
    base = _context()
    checks = probe_lines(result)[-2:]
    sides = [{"label": "A", "files": base["files"], "checks": checks}, {"label": "B", "files": [], "checks": checks}]
    _snapshot("pairwise.md", render("pairwise.md.j2", _context(sides=sides)))
    blind = [{**side, "checks": []} for side in sides]
    assert "Probe results" not in render("pairwise.md.j2", _context(sides=blind, images=[]))


def test_template_missing_variable_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "t.j2").write_text("{{ nope }}")
    with pytest.raises(TaskError, match="UndefinedError"):
        render("t.j2", {}, tmp_path)


def test_vision_message_has_text_and_data_url_parts(tmp_path: Path) -> None:
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    a.write_bytes(png((1, 2, 3)))
    b.write_bytes(png((4, 5, 6)))
    images = [ImageRef("first", a), ImageRef("second", b)]
    (msg,) = build_messages("PROMPT", images, vision=True)
    parts = msg["content"]
    assert msg["role"] == "user" and parts[0] == {"type": "text", "text": "PROMPT"}
    assert [p["type"] for p in parts] == ["text", "text", "image_url", "text", "image_url"]
    assert parts[1]["text"] == "Image 1: first"
    url = parts[2]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == a.read_bytes()
    assert build_messages("PROMPT", images, vision=False) == [{"role": "user", "content": "PROMPT"}]


# -- answers -----------------------------------------------------------------------------------

CTX = {"criteria": FLAPPY_IDS}


def test_parse_bare_fenced_and_think_wrapped_answers() -> None:
    bare = parse_answer(answer(), ReviewAnswer, CTX)
    assert bare.score == 6 and [c.id for c in bare.criteria] == FLAPPY_IDS
    fenced = parse_answer(answer({"score-per-pipe": False}, fenced=True), ReviewAnswer, CTX)
    assert {c.id: c.met for c in fenced.criteria}["score-per-pipe"] is False
    thought = parse_answer("<think>maybe {\"score\": 1}</think>\n" + answer(score=9), ReviewAnswer, CTX)
    assert thought.score == 9


@pytest.mark.parametrize(("text", "error"), [
    ("", "the answer was empty"),
    ("I liked it, 8/10.", "no JSON object found"),
    ("[1, 2]", "expected a JSON object"),
    (answer(ids=FLAPPY_IDS[:-1]), r"missing criteria \['fair-to-play'\]"),
    (answer(ids=[*FLAPPY_IDS, "extra"]), r"unknown criteria \['extra'\]"),
    (answer(score=11), "score: Input should be less than or equal to 10"),
    ('{"criteria": [], "score": 5}', "verdict: Field required"),
])
def test_invalid_answers_say_what_to_fix(text: str, error: str) -> None:
    with pytest.raises(AnswerInvalid, match=error):
        parse_answer(text, ReviewAnswer, CTX)


def test_pairwise_answer_normalises_winner() -> None:
    assert parse_answer('{"winner": " b ", "reason": "r"}', PairwiseAnswer).winner == "B"
    assert parse_answer('{"winner": "TIE", "reason": "r"}', PairwiseAnswer).winner == "tie"
    with pytest.raises(AnswerInvalid, match="winner"):
        parse_answer('{"winner": "C", "reason": "r"}', PairwiseAnswer)
