"""The rendered report, read as HTML (the browser tests use it for real)."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from agentbench.cli import app
from agentbench.errors import StoreError
from agentbench.report import write_report
from agentbench.report._artefact import build_srcdoc
from agentbench.report._views import value_view
from tests.report._runs import build_run, plant_verdicts


class _Tags(HTMLParser):
    """Every start tag of the report itself (srcdoc contents stay inside their attribute)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(text: str) -> list[tuple[str, dict[str, str | None]]]:
    p = _Tags()
    p.feed(text)
    return p.tags


def _srcdocs(tags) -> dict[str, str]:
    return {a["title"]: a.get("srcdoc") or a.get("data-srcdoc") for t, a in tags if t == "iframe"}


def test_report_is_self_contained_and_sandboxed(run_dir: Path) -> None:
    path = write_report([run_dir])
    assert path == run_dir / "report.html"
    text = path.read_text()
    tags = _tags(text)
    frames = [a for t, a in tags if t == "iframe"]
    # one iframe per attempt with an artefact: flappy alpha r1+r2, beta; todo alpha; converter alpha
    assert sorted(a["title"] for a in frames) == [
        "run-a/converter/alpha/r1", "run-a/flappy/alpha/r1", "run-a/flappy/alpha/r2", "run-a/flappy/beta/r1",
        "run-a/todo/alpha/r1"]
    assert all(a["sandbox"] == "allow-scripts" for a in frames)
    assert "allow-same-origin" not in text
    assert sum(1 for a in frames if "srcdoc" in a) == 4  # the r2 repeat waits hidden, unloaded
    for tag, attrs in tags:  # nothing the report itself loads comes from a network
        for key in ("src", "href"):
            value = attrs.get(key) or ""
            assert not value.startswith(("http:", "https:", "//")), (tag, value)
    assert "<img src=x onerror" not in text  # page error text is escaped, never markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in text


def test_srcdoc_keeps_doctype_first_and_inlines_local_files(run_dir: Path) -> None:
    docs = _srcdocs(_tags(write_report([run_dir]).read_text()))
    probe = docs["run-a/flappy/alpha/r1"]
    assert probe.startswith("<!DOCTYPE html><script>window.__ABR_CFG={")
    assert '"id":"run-a/flappy/alpha/r1"' in probe and "__abrClock" in probe
    split = docs["run-a/todo/alpha/r1"]
    assert 'textContent = "inlined script ran"' in split and "<style>h1 { color: rgb(1, 2, 3); }" in split
    assert 'src="app.js"' not in split
    assert build_srcdoc("<p>x</p>", {"fps": 60}, "/*c*/") == \
        '<script>window.__ABR_CFG={"fps":60};/*abr-cfg*/</script><script>/*c*/</script><p>x</p>'
    assert build_srcdoc("<!-- hi -->\n<!doctype html><p>", {"s": "</script>"}, "").startswith(
        '<!-- hi -->\n<!doctype html><script>window.__ABR_CFG={"s":"\\u003c/script>"}')


def test_evidence_checklist_and_review_shown(run_dir: Path) -> None:
    text = write_report([run_dir]).read_text()
    assert text.count('src="data:image/png;base64,') == 2  # both filmstrips embedded
    assert "file missing: ../../../../run.json" in text  # a path out of the attempt is refused
    assert "× 4.00</b> as fast as 60 Hz" in text and "× 1.02</b> as fast as 60 Hz (frame-rate independent)" in text
    assert "TypeError: bird is undefined" in text
    assert "<th>before</th><th>after</th>" in text and "<td>milk</td>" in text
    assert '<tr class="bad"><td>1 mi</td><td>1609.34 m</td><td>NaN</td></tr>' in text
    assert "1 static-vs-behaviour disagreement" in text
    assert '<tr class="bad" data-item="frame-rate">' in text and '<tr data-item="loads">' in text
    assert "source uses delta time; at 240 Hz it moved 4.0x faster" in text
    assert 'href="flappy/beta/r1/evidence/strip-240.png"' in text
    assert 'href="../../../../run.json"' not in text and "run.json</a>" not in text
    assert "reviewer gpt" in text and "the bird flies" in text
    assert "infra error (model-endpoint): 502 after 5 retries" in text
    assert 'href="todo/alpha/r1/transcript.jsonl"' in text


def test_links_resolve_from_another_folder(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "deep" / "r.html"
    write_report([run_dir], out)
    hrefs = [a["href"] for t, a in _tags(out.read_text()) if t == "a" and a.get("href")]
    files = [h for h in hrefs if not h.startswith("#")]
    assert any(h.endswith("transcript.jsonl") for h in files)
    for h in files:
        assert (out.parent / unquote(h)).resolve().is_file(), h


def test_human_verdicts_and_ledger_in_static_report(run_dir: Path) -> None:
    plant_verdicts(run_dir)
    text = write_report([run_dir]).read_text()
    assert "3 attempts judged by a person" in text
    assert 'data-current="fail"' in text and "plays fine on my 60 Hz screen" in text
    row = text[text.index('<tr data-scorer="verdict">'):]
    row = row[:row.index("</tr>")]
    assert '<td class="n-agree">1</td>' in row
    assert 'class="n-strict bad">1 <a href="#a-run-a-flappy-beta-r1"' in row
    assert 'class="n-generous bad">1 <a href="#a-run-a-flappy-alpha-r1"' in row
    assert 'id="a-run-a-flappy-beta-r1"' in text
    assert "disabled" in text  # no server: buttons off, the shell command shown instead
    assert "agentbench verdict run-a flappy beta 1 pass|fail" in text


def test_several_runs_share_one_matrix(tmp_path: Path) -> None:
    a, b = build_run(tmp_path, "run-a"), build_run(tmp_path, "run-b")
    path = write_report([a, b])
    assert path == tmp_path / "report.html"
    text = path.read_text()
    for label in ("alpha (run-a)", "beta (run-a)", "alpha (run-b)", "beta (run-b)"):
        assert f"<th>{label}</th>" in text
    assert len([1 for t, a_ in _tags(text) if t == "iframe"]) == 10
    copy = tmp_path / "copy"
    shutil.copytree(a, copy / "run-a")
    with pytest.raises(StoreError, match="both run 'run-a'"):
        write_report([a, copy / "run-a"])


def test_damaged_and_pending_attempts_do_not_stop_the_report(run_dir: Path) -> None:
    (run_dir / "todo" / "alpha" / "r1" / "result.json").write_text("{broken")
    shutil.rmtree(run_dir / "converter" / "beta")
    text = write_report([run_dir]).read_text()
    assert "unreadable result" in text and "Delete it to rerun that cell" in text
    assert "pending" in text


def test_value_shapes() -> None:
    assert value_view([{"a": 1}, {"b": "x"}]).headers == ["a", "b"]
    assert value_view({"before": ["a"], "after": []}).kind == "columns"
    assert value_view({"n": 2, "ids": ["x", "y"]}).rows == [["n", "2"], ["ids", "x, y"]]
    assert value_view(["e1", "e2"]).kind == "list"
    assert value_view({"deep": {"x": [1, {"y": 2}]}}).kind == "json"
    assert value_view(3.5).text == "3.5"
    assert value_view([{"expected": 1, "actual": 2}]).bad == [True]


def test_cli_report(run_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["report", "run-a", "--runs", str(run_dir.parent), "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r.html").is_file() and "wrote" in res.output
    res = runner.invoke(app, ["report", "nope", "--runs", str(run_dir.parent)])
    assert res.exit_code == 2 and "No run 'nope'" in res.output
