"""Checklists: loading errors that name file/item/field, evaluation from checks + source, scores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentbench.checks import CheckResult, Evidence
from agentbench.checks._checklist import (
    Checklist,
    ChecklistItem,
    evaluate_checklist,
    load_checklist,
)
from agentbench.errors import TaskError
from agentbench.store import AttemptResult
from agentbench.tasks import list_tasks, load_task

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "agentbench" / "models" / "demo_data"
FIXTURES = Path(__file__).parent / "fixtures_checklist"

GOOD_ITEM = """
[[items]]
id = "flap"
text = "Space and a click make the bird flap"
kind = "feature"
required = true
weight = 3
check = "flap-input"
"""


def write(root: Path, text: str, task: str = "flappy") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{task}.toml"
    path.write_text(text)
    return path


def checks(**statuses: str) -> list[CheckResult]:
    return [CheckResult(id=cid.replace("_", "-"), status=s, detail=f"{cid} {s}")  # type: ignore[arg-type]
            for cid, s in statuses.items()]


def item(res, item_id: str):
    return next(i for i in res.items if i.id == item_id)


# -- loading -----------------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", list_tasks())
def test_shipped_checklists_load_and_use_every_check(task_id: str) -> None:
    task = load_task(task_id)
    cl = load_checklist(task_id)
    assert cl.task == task_id and cl.path == ROOT / "checklists" / f"{task_id}.toml"
    used = {i.check for i in cl.items if i.check}
    assert used == set(task.checks), "every check the probes produce should decide some item"
    kinds = {i.kind for i in cl.items}
    assert kinds == {"feature", "finish"}
    assert any(i.reviewer for i in cl.items)


def test_malformed_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_ITEM + "\n[[items]\nid = 'x'\n")
    with pytest.raises(TaskError) as err:
        load_checklist("flappy", tmp_path)
    assert str(path) in str(err.value) and "not valid TOML" in str(err.value)


def test_missing_field_names_file_item_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_ITEM + '\n[[items]]\nid = "best"\ntext = "t"\nkind = "finish"\nrequired = false\n'
                                       'static = "persists_to_local_storage"\n')
    with pytest.raises(TaskError) as err:
        load_checklist("flappy", tmp_path)
    msg = str(err.value)
    assert str(path) in msg and "item 'best' (items[1])" in msg and "field 'weight'" in msg
    assert "Field required" in msg


def test_unknown_check_id_is_a_load_error(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_ITEM.replace('"flap-input"', '"flap-inputs"'))
    with pytest.raises(TaskError) as err:
        load_checklist("flappy", tmp_path)
    msg = str(err.value)
    assert str(path) in msg and "item 'flap' (items[0])" in msg and "field 'check'" in msg
    assert "unknown check id 'flap-inputs'" in msg and "flap-input" in msg.split("produces:")[1]


@pytest.mark.parametrize("extra,field,words", [
    ('static = "uses_telepathy"', "static", "unknown static detector 'uses_telepathy'"),
    ("pattern = '(unclosed'", "pattern", "not a valid regex"),
    ('required = "yes"', "required", "valid boolean"),
    ('colour = "red"', "colour", "Extra inputs are not permitted"),
    ('kind = "polish"', "kind", "'feature' or 'finish'"),
])
def test_bad_field_names_item_and_field(tmp_path: Path, extra: str, field: str, words: str) -> None:
    text = GOOD_ITEM.replace("check = ", f"{extra}\ncheck = ") if field != "kind" else GOOD_ITEM.replace(
        'kind = "feature"', extra)
    if field == "required":
        text = GOOD_ITEM.replace("required = true", extra)
    write(tmp_path, text)
    with pytest.raises(TaskError) as err:
        load_checklist("flappy", tmp_path)
    msg = str(err.value)
    assert "item 'flap' (items[0])" in msg and f"field '{field}'" in msg and words in msg, msg


def test_item_needs_something_to_decide_it(tmp_path: Path) -> None:
    write(tmp_path, GOOD_ITEM.replace('check = "flap-input"', ""))
    with pytest.raises(TaskError, match=r"item 'flap' \(items\[0\]\): nothing decides this item"):
        load_checklist("flappy", tmp_path)


def test_duplicate_ids_and_wrong_task_are_load_errors(tmp_path: Path) -> None:
    write(tmp_path, GOOD_ITEM + GOOD_ITEM)
    with pytest.raises(TaskError, match="item id 'flap' appears twice"):
        load_checklist("flappy", tmp_path)
    write(tmp_path, 'task = "todo"\n' + GOOD_ITEM)
    with pytest.raises(TaskError, match="field 'task' is 'todo'"):
        load_checklist("flappy", tmp_path)
    with pytest.raises(TaskError, match="no checklist for task 'ball'"):
        load_checklist("ball", tmp_path)


async def test_run_checks_rejects_a_bad_checklist_before_any_check(tmp_path: Path, monkeypatch) -> None:
    """Load time means before the probes: no browser, no sandbox, no evidence written."""
    from agentbench.checks._run import run_checks

    shutil.copytree(ROOT / "tasks", tmp_path / "tasks")
    write(tmp_path / "checklists", GOOD_ITEM.replace('"flap-input"', '"flap"'))
    monkeypatch.setenv("AGENTBENCH_ROOT", str(tmp_path))
    art = tmp_path / "artefact"
    shutil.copytree(DEMO / "rushed" / "flappy", art)
    with pytest.raises(TaskError, match="unknown check id 'flap'"):
        await run_checks(load_task("flappy"), art, tmp_path / "attempt", sandbox=object())
    assert not (tmp_path / "attempt").exists()


# -- evaluation: the check decides, the source is shown beside it ------------------------------


def test_delta_time_in_source_but_4x_faster_at_240hz() -> None:
    cl = load_checklist("flappy")
    refresh = CheckResult(id="refresh-rate", status="fail", detail="motion depends on the frame rate",
                          data={"factor": 4.0},
                          evidence=[Evidence(kind="file", label="filmstrip", path="evidence/refresh-240.png")])
    res = evaluate_checklist(cl, FIXTURES / "flappy_floored_dt", [refresh])
    it = item(res, "same-on-any-monitor")
    assert (it.status, it.decided_by, it.static, it.behaviour) == ("fail", "check:refresh-rate", "pass", "fail")
    assert it.disagreement == "source uses delta time; at 240 Hz it moved 4.0x faster"
    assert res.disagreements == ["same-on-any-monitor: source uses delta time; at 240 Hz it moved 4.0x faster"]
    assert it.links == ["evidence/refresh-240.png"]
    assert "check refresh-rate fail: motion depends on the frame rate" in it.evidence
    assert "static uses_elapsed_time found: index.html:243: const dt = " in it.evidence
    assert "same-on-any-monitor" in res.required_failed


def test_refresh_rate_without_factor_still_says_what_failed() -> None:
    cl = load_checklist("flappy")
    refresh = CheckResult(id="refresh-rate", status="fail", detail="bird fell 7.4x as far", data={"factor": "?"})
    it = item(evaluate_checklist(cl, FIXTURES / "flappy_floored_dt", [refresh]), "same-on-any-monitor")
    assert it.disagreement == "source uses delta time; the refresh-rate check failed: bird fell 7.4x as far"


def test_harness_error_leaves_the_item_unknown_not_static() -> None:
    cl = load_checklist("flappy")
    refresh = CheckResult(id="refresh-rate", status="error", detail="page.evaluate timed out")
    res = evaluate_checklist(cl, FIXTURES / "flappy_floored_dt", [refresh])
    it = item(res, "same-on-any-monitor")
    assert (it.status, it.static, it.behaviour, it.disagreement) == ("unknown", "pass", None, None)
    assert "harness error: page.evaluate timed out" in it.evidence
    assert "same-on-any-monitor" in res.unknown and not res.disagreements
    missing = item(res, "flap")  # no CheckResult at all for flap-input
    assert missing.status == "unknown" and "check flap-input: did not run" in missing.evidence


def test_source_saves_and_loads_but_persistence_failed() -> None:
    cl = load_checklist("todo")
    res = evaluate_checklist(cl, FIXTURES / "todo_wrong_key", checks(
        persistence="fail", escaping="pass", empty_input="pass", add="pass"))
    it = item(res, "persistence")
    assert (it.status, it.static, it.behaviour) == ("fail", "pass", "fail")
    assert it.disagreement == ("source saves to localStorage and reads it back at start; "
                               "the persistence check failed: persistence fail")
    assert not item(res, "escapes-user-text").disagreement


def test_rushed_todo_saves_but_never_loads_both_agree() -> None:
    cl = load_checklist("todo")
    res = evaluate_checklist(cl, DEMO / "rushed" / "todo", checks(persistence="fail"))
    it = item(res, "persistence")
    assert (it.status, it.static, it.behaviour, it.disagreement) == ("fail", "fail", "fail", None)
    assert "inside loadTasks(), which is never called" in it.evidence


def test_too_strict_source_rule_is_overruled_by_the_probe() -> None:
    """An escape helper the detector does not recognise: the escaping probe passed, so the item passes."""
    cl = load_checklist("todo")
    res = evaluate_checklist(cl, FIXTURES / "todo_custom_escape", checks(escaping="pass"))
    it = item(res, "escapes-user-text")
    assert (it.status, it.static, it.behaviour) == ("pass", "fail", "pass")
    assert it.disagreement == ("source puts user text into innerHTML unescaped; "
                               "yet the escaping check passed: escaping pass")


def test_static_only_and_reviewer_items() -> None:
    cl = load_checklist("todo")
    res = evaluate_checklist(cl, DEMO / "rushed" / "todo", [])
    corrupt = item(res, "survives-corrupt-storage")
    assert (corrupt.status, corrupt.decided_by) == ("fail", "static")
    assert "JSON.parse(saved); has no try/catch" in corrupt.evidence
    empty = item(res, "empty-state")
    assert (empty.status, empty.decided_by, empty.evidence) == ("unknown", "reviewer", "reviewer: awaiting review")
    reviewed = evaluate_checklist(cl, DEMO / "rushed" / "todo", [], reviewer={"empty-state": False})
    assert item(reviewed, "empty-state").status == "fail"


def test_reviewer_item_with_a_static_hint_waits_for_the_review() -> None:
    cl = load_checklist("flappy")
    res = evaluate_checklist(cl, DEMO / "rushed" / "flappy", [], reviewer={"pipes-vary": True})
    it = item(res, "pipes-vary")
    assert (it.status, it.decided_by, it.static) == ("pass", "reviewer", "pass")
    assert it.evidence.startswith("reviewer: pass\nstatic uses_random found: index.html:103:")


def test_no_source_means_no_static_verdict(tmp_path: Path) -> None:
    cl = load_checklist("flappy")
    res = evaluate_checklist(cl, tmp_path, checks(flap_input="fail", refresh_rate="fail"))
    it = item(res, "same-on-any-monitor")
    assert (it.status, it.static, it.disagreement) == ("fail", None, None)
    assert "no source to read" in it.evidence
    assert item(res, "fits-window").status == "unknown"


# -- scores ------------------------------------------------------------------------------------


def make(*items: dict) -> Checklist:
    return Checklist(task="flappy", items=[ChecklistItem(**d) for d in items])


def spec(item_id: str, kind: str, weight: float, **decided_by) -> dict:
    required = item_id in ("a", "b")
    return {"id": item_id, "text": item_id, "kind": kind, "required": required, "weight": weight, **decided_by}


def test_scores_are_weighted_and_ignore_undecided_items() -> None:
    cl = make(
        spec("a", "feature", 3, check="flap-input"),  # required
        spec("b", "feature", 1, check="game-over"),  # required
        spec("c", "feature", 5, check="restart"),  # error: left out
        spec("d", "finish", 2, static="handles_resize"),
        spec("e", "finish", 0.5, static="uses_random"),
        spec("f", "finish", 4, reviewer=True),  # not reviewed
    )
    res = evaluate_checklist(cl, DEMO / "rushed" / "flappy",
                             checks(flap_input="pass", game_over="fail", restart="error"))
    assert res.feature_score == 0.75  # 3 / (3 + 1)
    assert res.finish_score == 0.2  # 0.5 / (2 + 0.5): no resize handler, Math.random present
    assert res.required_failed == ["b"] and res.unknown == ["c", "f"]
    reviewed = evaluate_checklist(cl, DEMO / "rushed" / "flappy",
                                  checks(flap_input="pass", game_over="fail", restart="error"), reviewer={"f": True})
    assert reviewed.finish_score == round(4.5 / 6.5, 4)


def test_nothing_decided_gives_no_score() -> None:
    cl = make(spec("a", "feature", 1, check="flap-input"))
    res = evaluate_checklist(cl, DEMO / "rushed" / "flappy", checks(flap_input="skip"))
    assert res.feature_score is None and res.finish_score is None and res.unknown == ["a"]


def test_careful_artefacts_with_passing_checks_have_no_disagreement() -> None:
    for task_id in list_tasks():
        task = load_task(task_id)
        passing = [CheckResult(id=c, status="pass", data={"factor": 1.0}) for c in task.checks]
        res = evaluate_checklist(load_checklist(task_id), DEMO / "careful" / task_id, passing)
        assert res.disagreements == [], task_id
        assert res.feature_score == 1.0 and res.finish_score == 1.0, (task_id, res.summary())


# -- what gets stored and shown ----------------------------------------------------------------


def test_report_json_and_result_json_carry_the_checklist(tmp_path: Path) -> None:
    from rich.console import Console

    from agentbench._summary import print_checks
    from agentbench.checks._run import CheckReport

    cl = load_checklist("flappy")
    results = [CheckResult(id="refresh-rate", status="fail", detail="time warp", data={"factor": 4.0})]
    report = CheckReport("flappy", results, 1.0, evaluate_checklist(cl, FIXTURES / "flappy_floored_dt", results))
    out = json.loads(json.dumps(report.to_json()))
    assert isinstance(out["checklist"], list) and out["checklist"][0]["id"] == "scripts-parse"
    assert set(out["checklist"][0]) >= {"id", "text", "kind", "required", "weight", "status", "decided_by",
                                        "static", "behaviour", "evidence", "disagreement"}
    assert out["checklist_summary"]["disagreements"] == [
        "same-on-any-monitor: source uses delta time; at 240 Hz it moved 4.0x faster"]

    stored = AttemptResult(run_id="r", task="flappy", model="m", repeat=1, outcome="scored")
    stored.checklist, stored.checklist_summary = report.checklist_json()
    again = AttemptResult.model_validate_json(stored.model_dump_json())
    assert again.checklist_summary == out["checklist_summary"] and again.checklist == out["checklist"]
    old = AttemptResult.model_validate({"run_id": "r", "task": "t", "model": "m", "repeat": 1, "outcome": "scored"})
    assert old.checklist == [] and old.checklist_summary is None  # result.json files from before stay readable

    console = Console(record=True, width=200)
    print_checks(console, report, tmp_path)
    text = console.export_text()
    assert "same-on-any-monitor" in text and "check:refresh-rate" in text
    assert "source and behaviour disagree same-on-any-monitor: source uses delta time; at 240 Hz it moved 4.0x" in text
