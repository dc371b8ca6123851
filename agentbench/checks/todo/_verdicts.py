"""The to-do checks judged from the page's exploration: add, complete, filter.

Each reads what the exploration saw (``TodoMap``) and shows its effect table as evidence: what was
tried, how it was found, what it did. A feature no tried control had is ``fail`` naming what was
tried; ``error`` only where the exploration stopped before its candidates ran out.
"""

from __future__ import annotations

from typing import Any

from .._model import CheckResult
from ..browser._find import value
from ._app import TodoMap

__all__ = ["judge_add", "judge_complete", "judge_delete", "judge_filter", "judge_persistence"]


def _table(todo: TodoMap, *phases: str) -> list:
    rows = [r for p in phases for r in todo.tables.get(p, [])]
    return [value("what was tried and what it did", rows)] if rows else []


def judge_add(todo: TodoMap) -> CheckResult:
    """Enter or an Add button adds exactly one task; a way that adds twice or throws is a defect."""
    tries = todo.add_tries
    good = [k for k, n in tries.items() if n == 1]
    bad = [f"{k} showed the task {n} times" for k, n in tries.items() if n >= 2] + todo.add_threw[:2]
    evidence = _table(todo, "add")
    if bad:
        return CheckResult(id="add", status="fail", detail="; ".join(bad), evidence=evidence)
    if not good:
        tried = len(todo.add_controls)
        return CheckResult(id="add", status="fail", evidence=evidence,
                           detail=todo.problem or f"typed a task and pressed Enter, and clicked {tried} control(s) "
                           "after typing: none showed the task")
    ways = " and ".join(good)
    extra = "" if "Enter" in good else " (Enter adds nothing; the prompt asks for Enter or an Add button)"
    return CheckResult(id="add", status="pass", detail=f"{ways} adds exactly one task{extra}", evidence=evidence)


def judge_complete(todo: TodoMap) -> CheckResult:
    """An action on a row marks it done and a second marks it not done again; nothing else changes."""
    evidence = _table(todo, "rows")
    facts = todo.toggle_facts
    if facts.get("steps"):
        evidence.insert(0, value("marking a task done", facts["steps"]))
    recipe = todo.toggle or todo.one_way
    if recipe is None:
        tried = todo.row_tried
        if todo.phase_errors.get("rows"):
            return CheckResult(id="complete", status="error", evidence=evidence,
                               detail=f"the task rows could not be explored to the end: {todo.phase_errors['rows']}")
        if todo.row_capped:
            return CheckResult(id="complete", status="error", evidence=evidence,
                               detail=f"stopped after {tried} actions on a task's row (the cap) without finding one "
                               "that marks it done")
        return CheckResult(id="complete", status="fail", evidence=evidence,
                           detail=f"found no way to mark a task done: tried {tried} action(s) on a task's row "
                           "(its controls, its text, clicked and double-clicked); none changed how it looks")
    problems = []
    if todo.toggle is None:
        problems.append(f"{recipe.what} marks a task done ({', '.join(facts.get('first', [])[:2])}) but using it "
                        "again does not mark it not done")
    first = facts.get("first", [])
    if any(w in {"unticked", "no longer struck through"} for w in first):
        problems.append(f"the first use of {recipe.what} on a new task {', '.join(first[:2])}: new tasks are "
                        "shown done")
    for step in facts.get("steps", []):
        if step.get("others changed"):
            problems.append(f"'{step['step']}' also changed {step['others changed']}")
    problems += facts.get("problems", [])  # under a filter, and with two tasks of the same text
    if todo.toggle is not None and facts.get("again") is False:
        problems.append(f"using {recipe.what} a third time did not mark the task done again")
    # The filters must see what was marked: a control named for a filter that hides tasks but not
    # by their done state means marking done changed the look only (no filter found by effect).
    ff = todo.filter_facts
    for key in ("done", "active"):
        named = ff.get("named", {}).get(key)
        want = ff.get(key)
        if named and want is not None and key not in todo.filters and named["shown"] != want and len(
                named["shown"]) < len(ff.get("done", [])) + len(ff.get("active", [])):
            problems.append(f"after marking tasks done, '{named['name']}' showed {named['shown']}, expected {want}")
    if ff.get("forgot"):
        problems.append(f"marking done is not kept: {ff['forgot']}")
    if facts.get("threw"):
        problems.append(f"marking done threw: {facts['threw'][0]}")
    if problems:
        return CheckResult(id="complete", status="fail", detail="; ".join(problems), evidence=evidence)
    return CheckResult(id="complete", status="pass", evidence=evidence,
                       detail=f"{recipe.what} marks a task done ({', '.join(first[:2])}) and back, nothing else "
                       "changes")


def judge_filter(todo: TodoMap) -> CheckResult:
    """Controls that show only done, only not-done, and all tasks (All / Active / Done)."""
    ff = todo.filter_facts
    evidence = _table(todo, "filters")
    if ff.get("skipped"):
        unsure = todo.row_capped or "rows" in todo.phase_errors
        status = "fail" if todo.marks_done is None and not unsure else "error"
        return CheckResult(id="filter", status=status, evidence=evidence,  # type: ignore[arg-type]
                           detail=f"filters not tried: {ff['skipped']}" if status == "error" else
                           "no task can be marked done (see the complete check), so no filter can show done tasks")
    if todo.phase_errors.get("filters") and not all(k in todo.filters for k in ("done", "active", "all")):
        return CheckResult(id="filter", status="error", evidence=evidence,
                           detail=f"the filters could not be explored to the end: {todo.phase_errors['filters']}")
    if ff.get("forgot"):
        return CheckResult(id="filter", status="fail", evidence=evidence,
                           detail=f"the filters do not keep what was marked done: {ff['forgot']}")
    if ff.get("lost"):
        return CheckResult(id="filter", status="error", detail=ff["lost"], evidence=evidence)
    missing = [k for k in ("done", "active", "all") if k not in todo.filters]
    tried = ff.get("tried", 0)
    words = {"done": "only the done tasks", "active": "only the not-done tasks",
             "all": "every task again after filtering"}
    if missing:
        left = ff.get("candidates", 0) - tried
        if ff.get("capped") and left > 0:
            return CheckResult(id="filter", status="error", evidence=evidence,
                               detail=f"stopped at the cap after {tried} actions with {left} controls untried; none "
                               f"so far showed {words[missing[0]]}")
        found = [k for k in ("done", "active", "all") if k in todo.filters]
        if not ff.get("candidates"):
            return CheckResult(id="filter", status="fail", evidence=evidence,
                               detail="no filter: the page has no control besides the task field, the way to add "
                               "and the tasks' rows")
        return CheckResult(id="filter", status="fail", evidence=evidence,
                           detail=f"tried {tried} action(s) on the page's controls; none showed "
                           + " or ".join(words[k] for k in missing)
                           + (f" (found {', '.join(found)})" if found else " (no filter found)"))
    if ff.get("misnamed"):
        return CheckResult(id="filter", status="fail", evidence=evidence,
                           detail="a filter shows what another's name says: " + "; ".join(ff["misnamed"]))
    if ff.get("threw"):
        return CheckResult(id="filter", status="fail", evidence=evidence,
                           detail=f"filtering threw: {ff['threw'][0]}")
    names = ", ".join(_name(todo, k) for k in ("all", "active", "done"))
    return CheckResult(id="filter", status="pass", evidence=evidence,
                       detail=f"filters show every task, only the not-done and only the done ones ({names})")


def _name(todo: TodoMap, key: str) -> str:
    control, action = todo.filters[key]
    if action.startswith("select:"):
        return f"'{control.options[int(action[7:])]}'"
    return f"'{control.name}'" if control.name else control.describe()


def judge_delete(todo: TodoMap) -> CheckResult:
    """An action removes exactly that task, under a filter too, and it stays gone after a reload."""
    facts, pf = todo.delete_facts, todo.persist_facts
    evidence = [value("steps", facts["steps"])] if facts.get("steps") else []
    evidence += _table(todo, "rows")
    recipe = todo.delete
    if recipe is None:
        if todo.phase_errors.get("rows"):
            return CheckResult(id="delete", status="error", evidence=evidence,
                               detail=f"the task rows could not be explored to the end: {todo.phase_errors['rows']}")
        if facts.get("asked"):
            return CheckResult(id="delete", status="error", evidence=evidence,
                               detail=f"deleting asks for confirmation ({facts['asked']}); it was answered Cancel, "
                               "so the deletion cannot be judged")
        if facts.get("wrong"):
            return CheckResult(id="delete", status="fail", evidence=evidence,
                               detail="deleting removes other tasks than the chosen one: "
                               + "; ".join(facts["wrong"][:2]))
        if todo.row_capped:
            return CheckResult(id="delete", status="error", evidence=evidence,
                               detail=f"stopped after {todo.row_tried} actions on a task's row (the cap) without "
                               "finding one that deletes it")
        return CheckResult(id="delete", status="fail", evidence=evidence,
                           detail=f"found no way to delete a task: tried {todo.row_tried} action(s) on a task's row "
                           "(its controls, shown on hover too, its text clicked and double-clicked, the row swiped "
                           "sideways); none removed it")
    problems = list(facts.get("problems", []))
    answered = f" (answering '{recipe.confirm}' in the box it opens)" if recipe.confirm else ""
    note = f" ({facts['note']})" if facts.get("note") else ""
    if todo.phase_errors.get("delete"):
        note += f" (delete under a filter not judged: {todo.phase_errors['delete']})"
    if pf.get("back"):
        kept = [r["task"] for r in pf.get("before", []) if r["times shown"]]
        lost = [r["task"] for r in pf.get("after", []) if r["task"] in kept and not r["times shown"]]
        also = f" and {lost} were gone" if lost else ""
        problems.append(f"after a reload the deleted {pf['back']} came back{also}")
    elif pf.get("after") is not None and not any(r["times shown"] for r in pf["after"]):
        note += " (tasks are not kept across a reload, so deletion after one was not judged)"
    elif pf.get("after") is not None and any(r["times shown"] != 1 for r in pf["after"]):
        note += " (a reload did not give back every task shown before, so a deletion alone was not judged)"
    if pf.get("after") is not None:
        evidence.append(value("after a reload", [{"deleted": pf.get("deleted"), "came back": pf.get("back")}]))
    alone = [c for c in pf.get("changes", []) if c["change"].startswith("deleted")]
    if alone:
        evidence.append(value("deleting alone, then a reload", alone))
    if problems:
        return CheckResult(id="delete", status="fail", detail="; ".join(problems), evidence=evidence)
    return CheckResult(id="delete", status="pass", evidence=evidence,
                       detail=f"{recipe.what}{answered} removes exactly the chosen task, also after a reload{note}")


def _reordered(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """Tasks that came back in another order: the list a person made is not the list kept (one
    restored reversed, or shuffled by its storage's keys). Compared among the tasks of one done
    state, shown once before and after: an app may show the done ones apart, or sort them last."""
    out = []
    for state in (False, True):
        pairs = [(p, q) for p, q in zip(before, after, strict=True)
                 if p["done"] is state and q["done"] is state and p.get("place") and q.get("place")]
        was = [p["task"] for p, _ in sorted(pairs, key=lambda pq: pq[0]["place"])]
        now = [q["task"] for _, q in sorted(pairs, key=lambda pq: pq[1]["place"])]
        if was != now:
            out.append(f"{'done' if state else 'not done'} tasks top to bottom were {was} before and {now} after")
    return "; ".join(out)


def judge_persistence(todo: TodoMap) -> CheckResult:
    """After a reload the same tasks show with the same done states, and each change (an add, marking
    done, marking not done) is kept by itself: the page is reloaded right after each."""
    pf = todo.persist_facts
    if "after" not in pf:
        return CheckResult(id="persistence", status="error",
                           detail=todo.phase_errors.get("reload") or todo.problem or "the page was not reloaded")
    before, after = pf["before"], pf["after"]
    evidence = [value("before reload", before), value("after reload", after)]
    if pf.get("changes"):
        evidence.append(value("each change alone, then a reload", pf["changes"]))
    lost = [r["task"] for r, q in zip(before, after, strict=True) if q["times shown"] == 0]
    if lost and len(lost) <= len(pf.get("back", [])):
        lost = []  # as many deleted tasks came back: storage deleted the wrong ones (the delete check's finding)
    flipped = [f"'{r['task']}' was {'done' if r['done'] else 'not done'} before and "
               f"{'done' if q['done'] else 'not done'} after" for r, q in zip(before, after, strict=True)
               if q["times shown"] and r["done"] != q["done"]]
    # More rows than before (a task shown twice before, two tasks of the same text, is no finding).
    twice = [q["task"] for p, q in zip(before, after, strict=True) if q["times shown"] > max(1, p["times shown"])]
    if lost:
        detail = f"after reload {len(lost)} of {len(before)} tasks were gone"
        if pf.get("added") in lost and len(lost) < len(before):
            detail += f" (the one added last, '{pf['added']}', among them)"
    elif flipped:
        detail = "after reload the done states differ: " + "; ".join(flipped)
    elif twice:
        detail = f"after reload {twice} were shown more than once"
    elif reordered := _reordered(before, after):
        detail = f"after reload the tasks came back in another order: {reordered}"
    elif pf.get("problems"):
        detail = "; ".join(pf["problems"])
    else:
        marks = [c for c in pf.get("changes", []) if "marked" in c["change"]]
        what = ("with the same done states; marking done and back were each kept by themselves" if len(marks) == 2
                else "with the same done states" if todo.marks_done is not None
                else "(no way to mark one done was found)")
        if pf.get("note"):
            what += f" ({pf['note']})"
        return CheckResult(id="persistence", status="pass", evidence=evidence,
                           detail=f"the same {len(before)} tasks are there after a reload {what}")
    return CheckResult(id="persistence", status="fail", detail=detail, evidence=evidence)
