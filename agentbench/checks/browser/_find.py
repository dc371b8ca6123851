"""Finding and using controls the way a person does, for probes of form pages (to-do, converter).

Reading goes through ``_find.js``, ``_explore.js`` and ``_explore_state.js`` (read-only DOM queries
that name elements by a deep CSS path, open shadow roots included), loaded as one library;
every input is real: ``locator.click()`` (the mouse at the element), ``select_option`` on a
``<select>``, ``keyboard.type`` into a field focused by a click, select-all + Backspace to clear.
Nothing here sets ``.value`` or dispatches events from JavaScript.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from ...errors import CheckError
from .._model import CheckResult, Evidence
from ._page import REPLAY_LIMIT_S, PageBroken
from ._registry import ProbeContext

if TYPE_CHECKING:
    from ._page import PageSession

_log = structlog.get_logger()

__all__ = [
    "REPLAY_LIMIT_S",
    "Absent",
    "click",
    "dom",
    "hover",
    "mouse_away",
    "page_exceptions",
    "point_of",
    "press",
    "rendered",
    "run_check",
    "run_checks_side_by_side",
    "select_index",
    "settle",
    "shown_now",
    "tree_distance",
    "type_into",
    "value",
]

# _explore.js (shadow-piercing candidates) and _explore_state.js (row state) add the page explorer's readers
# to the same library.
_JS = "\n".join(Path(__file__).with_name(name).read_text(encoding="utf-8")
                for name in ("_find.js", "_explore.js", "_explore_state.js"))
_ACTION_TIMEOUT_MS = 2500
_ANIMATION_WAIT_S = 2.0  # virtual seconds at most per read
_ANIMATION_BUDGET_S = 8.0  # virtual seconds per page of reads whose animations outlast the wait: a page that
# never stops animating is then read as it is (animations that end in time cost nothing of it)
_FRAME_LIMIT_S = 20.0  # real seconds for the browser to render two frames: only a page that hangs it reaches this
_CHECK_LIMIT_S = 30.0  # per check; the harness gives all of a task's checks 240 s
_animation_budget: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


# The library is installed once per document in the harness's isolated world (see
# PageSession.read), where the page can neither see it nor replace what it reads with; each read
# also says how long the running CSS animations have left (they follow the virtual clock).
_LIBRARY = "find"
_SOURCE = ("(() => {\n" + _JS + "\nreturn Object.assign(AB, "
           "{ call: (a) => ({ r: AB[a.fn](a.arg), anim: AB.animating() }), point: (a) => AB.clickPoint(a) }); })()")


async def _call(session: PageSession, fn: str, arg: Any) -> dict[str, Any]:
    try:
        return await session.read(_LIBRARY, _SOURCE, "call", {"fn": fn, "arg": arg})
    except PageBroken:
        raise
    except Exception as exc:  # an app may navigate (a form submitting) mid-probe
        if "context was destroyed" not in str(exc) and "navigat" not in str(exc).lower():
            raise
        await session.advance(0.05)  # the harness waits for the new document and resyncs its clock
        return await session.read(_LIBRARY, _SOURCE, "call", {"fn": fn, "arg": arg})


async def rendered(session: PageSession) -> None:
    """Wait until the browser has rendered two frames from now (a condition, not a span of time: a
    busy machine only makes it later). Animation events (transitionend, animationend) are
    dispatched as a frame is rendered; a browser that renders none for ``_FRAME_LIMIT_S`` is stuck,
    and that is a CheckError (could not tell), not a finding."""
    deadline = time.monotonic() + _FRAME_LIMIT_S
    since = int((await _call(session, "painted", None))["r"])
    while (await _call(session, "painted", None))["r"] < since + 2:
        if time.monotonic() > deadline:
            raise CheckError(f"the browser rendered no frame within {_FRAME_LIMIT_S:g} s, so the page's "
                             "animation events could not be waited for")
        await asyncio.sleep(0.004)


async def dom(session: PageSession, fn: str, arg: Any = None) -> Any:
    """Call ``AB.<fn>(arg)`` from _find.js in the page (read-only) and return its JSON result.

    While CSS animations or transitions run (a task fading in starts at opacity 0, a row removed
    on ``transitionend`` lingers) the read waits for them on the virtual clock: the clock runs to
    their end, the browser renders a frame (their end events are dispatched then), and what those
    handlers started runs; bounded in virtual time per read and per page, so a page that keeps
    animating is read as it is. How busy the machine is changes nothing.
    """
    budget = _animation_budget.get(session, _ANIMATION_BUDGET_S)
    allowed = min(_ANIMATION_WAIT_S, budget)
    waited = 0.0
    while True:
        out = await _call(session, fn, arg)
        left_s = float(out.get("anim") or 0) / 1000.0
        if not left_s:
            return out["r"]
        if waited >= allowed:
            _animation_budget[session] = budget - waited
            return out["r"]
        step = min(left_s, allowed - waited) + 1 / 60  # a frame past their end
        await session.advance(step)
        await rendered(session)
        await session.advance(0.05)  # transitionend/animationend handlers may start timers
        waited += step + 0.05


async def shown_now(session: PageSession, path: str | None) -> bool:
    """Whether a person sees the element at ``path`` now (a menu's item: open it only when it is not,
    since a second click on what opens a menu closes it)."""
    return path is not None and bool((await dom(session, "shownPaths", {"paths": [path]}))[0])


def tree_distance(a: str, b: str) -> int:
    """Steps between two elements named by _find.js paths (":root > *:nth-child(i) > ...")."""
    pa, pb = a.split(" > "), b.split(" > ")
    common = next((i for i, (x, y) in enumerate(zip(pa, pb, strict=False)) if x != y), min(len(pa), len(pb)))
    return len(pa) + len(pb) - 2 * common


async def settle(session: PageSession, seconds: float = 0.3) -> None:
    """Let the page's (virtual) timers run, e.g. a debounced handler, before reading."""
    await session.advance(seconds)
    if session.broken:
        raise PageBroken(session.broken)


async def _act(session: PageSession, action: Awaitable[Any], what: str) -> None:
    """Run one real input under the harness's hard limit (a handler may loop forever).

    The limit is the session's step limit at least: an input cut on a starved machine is played again
    in a replay (``run_check``) with ``REPLAY_LIMIT_S``, which its inputs get too."""
    try:
        limit = max(_ACTION_TIMEOUT_MS / 1000 + 2, session.step_timeout_s)
        await session.run_limited(action, timeout_s=limit, what=what)
    except PageBroken:
        raise
    except Exception as exc:
        raise CheckError(f"could not {what}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc


async def point_of(session: PageSession, path: str, *, force: bool = False) -> tuple[float, float] | None:
    """Where the real mouse lands on the element at ``path`` (``_find.js`` ``clickPoint``: the centre
    of its box, in view, enabled, nothing animating, and unless ``force`` the element is what the
    point hits), read without moving the clock; None where Playwright must wait or scroll first.

    Playwright's own click waits for the box to hold still over two real rendering frames (about
    30 ms a click, issue 30); on the virtual clock nothing moves between frames, so where nothing
    animates and the box is in view that wait can only say what this read says.
    """
    if not path.startswith(":root"):
        return None
    try:
        # Not through "call": clickPoint reads the animations itself (any running one), the walk
        # "call" adds for reads would be a second one on every click.
        point = await session.read(_LIBRARY, _SOURCE, "point", {"path": path, "force": force})
    except PageBroken:
        raise
    except Exception:  # a document going away: Playwright's click waits for the next one
        return None
    return (float(point[0]), float(point[1])) if point else None


async def click(session: PageSession, path: str, what: str) -> None:
    """Click an element with the real mouse at its centre (scrolled into view first)."""
    point = await point_of(session, path)
    if point is not None:
        await _act(session, session.page.mouse.click(*point), f"click {what}")
    else:
        await _act(session, session.page.locator(path).click(timeout=_ACTION_TIMEOUT_MS), f"click {what}")


async def hover(session: PageSession, path: str, what: str) -> None:
    """Move the real mouse over an element (reveals controls shown on hover)."""
    point = await point_of(session, path)
    if point is not None:
        await _act(session, session.page.mouse.move(*point), f"hover over {what}")
    else:
        await _act(session, session.page.locator(path).hover(timeout=_ACTION_TIMEOUT_MS), f"hover over {what}")


async def mouse_away(session: PageSession) -> None:
    """Move the mouse to the page corner so hover styling does not read as state."""
    await _act(session, session.page.mouse.move(1, 1), "move the mouse away")


async def select_index(session: PageSession, path: str, index: int, what: str) -> None:
    """Choose option `index` of a <select>, as a person picking it from the list."""
    await _act(
        session,
        session.page.locator(path).select_option(index=index, timeout=_ACTION_TIMEOUT_MS),
        f"choose {what}",
    )


async def type_into(session: PageSession, path: str, text: str, what: str, *, clear: bool = True) -> None:
    """Click a field to focus it, clear it with select-all + Backspace, then type `text` key by key."""
    await click(session, path, what)
    keyboard = session.page.keyboard
    if clear:
        await _act(session, keyboard.press("Control+A"), "select the field's text")
        await _act(session, keyboard.press("Backspace"), "clear the field")
    else:
        await _act(session, keyboard.press("End"), "move to the end of the field")  # the click may land mid-text
    if text:
        await _act(session, keyboard.type(text), f"type {text!r}")


async def press(session: PageSession, key: str) -> None:
    """Press a key on whatever has focus."""
    await _act(session, session.page.keyboard.press(key), f"press {key}")


class Absent(CheckError):
    """What the check looked for is not on the page at all: a finding (``fail``), not a harness gap."""


# ---- running one check in its own page -------------------------------------------------------

CheckBody = Callable[["PageSession"], Awaitable[CheckResult]]


def page_exceptions(errors: list[str]) -> list[str]:
    """Uncaught exceptions among a session's errors (console.error lines are not exceptions)."""
    return [e for e in errors if not e.lower().startswith(("console", "[console"))]


def value(label: str, data: Any) -> Evidence:
    """An inline evidence value (a table as a list of dicts, a list of items...)."""
    return Evidence(kind="value", label=label, value=data)


async def run_check(ctx: ProbeContext, check_id: str, body: CheckBody) -> CheckResult:
    """Run one check on a pristine page (no storage left by another) and turn what happened into a result.

    An Absent from the body (the feature is not there) is ``fail``; a CheckError (a control we
    could not find or use) is ``error``; exceptions the page threw while
    being used make the check ``fail`` with them as evidence, whatever the body concluded, unless the
    check ran out of its own real-time limit (``_CHECK_LIMIT_S``): then it is ``error`` (a busy
    machine cut it midway, where a quiet one finishes), the exceptions named in its detail; a page
    that navigated away or hung under real input is the app's fault (``fail``); anything else is a
    harness gap (``error``). The page's errors are added to ``ctx.page_errors``.

    A check cut by the harness's real-time step limit (``session.hung``) is played again from a
    pristine page with ``REPLAY_LIMIT_S`` per step (issue 29): on the virtual clock it is the same
    frame for frame, so a page that hangs is cut again (its ``fail`` stands) and a page that was only
    starved by a busy machine gets the verdict a quiet machine gives.
    """
    started = time.monotonic()
    result, hung = await _attempt(ctx, check_id, body, None)
    if hung:
        first = result.detail
        _log.info("check cut by the step limit, played again", check=check_id, detail=first[:200])
        result, _ = await _attempt(ctx, check_id, body, REPLAY_LIMIT_S)
        result.data["replayed"] = (f"cut by the harness's time limit per step the first time ({first[:300]}); "
                                   f"played again with {REPLAY_LIMIT_S:g} s per step")
    result.duration_s = round(time.monotonic() - started, 3)
    return result


async def _attempt(ctx: ProbeContext, check_id: str, body: CheckBody, step_timeout_s: float | None
                   ) -> tuple[CheckResult, bool]:
    """One try of ``run_check``'s: the result and whether the step limit cut it."""
    session = None
    unfinished = False  # the check's own real-time limit ran out: nothing it saw decides it
    try:
        session = await ctx.harness.open(ctx.artefact_dir, ctx.entry, step_timeout_s=step_timeout_s)
        seen = len(session.errors)
        try:
            if session.broken:
                raise PageBroken(session.broken)
            result = await asyncio.wait_for(body(session), _CHECK_LIMIT_S)
        except TimeoutError:
            unfinished = True
            result = CheckResult(
                id=check_id, status="error", detail=f"the check did not finish within {_CHECK_LIMIT_S:g} s"
            )
        except PageBroken as exc:
            result = CheckResult(id=check_id, status="fail", detail=f"the page broke while being used: {exc}")
        except Absent as exc:
            result = CheckResult(id=check_id, status="fail", detail=str(exc))
        except CheckError as exc:
            result = CheckResult(id=check_id, status="error", detail=str(exc))
        except Exception as exc:  # noqa: BLE001 - a probe must end in a verdict, never raise
            text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if getattr(session, "hung", False):
                result = CheckResult(id=check_id, status="fail", detail=f"the page stopped responding ({text})")
            elif "context was destroyed" in text or "navigat" in text.lower():
                result = CheckResult(
                    id=check_id, status="fail", detail=f"the page navigated away while being used ({text})"
                )
            else:
                _log.warning("probe error", check=check_id, error=text)
                result = CheckResult(id=check_id, status="error", detail=f"probe failed: {text}")
        if not (unfinished or session.broken or getattr(session, "hung", False)):
            with contextlib.suppress(Exception):  # what has not arrived by then stays untold
                await session.heard()
        thrown = page_exceptions(session.errors[seen:])
        if thrown and unfinished:
            # A busy machine runs a check out of its limit midway, where a quiet one finishes (and may
            # throw nothing: a body tries other controls after an input timed out): could not tell.
            # The exceptions stay the runtime-errors check's finding.
            result.detail = (f"could not tell: {result.detail}; the page threw {len(thrown)} exception(s) "
                             f"meanwhile, first: {thrown[0]}")
        elif thrown:
            result.status = "fail"
            result.detail = f"the page threw {len(thrown)} exception(s) while being used, first: {thrown[0]}" + (
                f"; {result.detail}" if result.detail else ""
            )
            counts: dict[str, int] = {}
            for msg in thrown:
                counts[msg] = counts.get(msg, 0) + 1
            result.evidence.append(value("page exceptions", [{"error": m, "times": n} for m, n in counts.items()][:10]))
        if result.status == "fail":
            try:
                path, rel = ctx.evidence_path(f"{check_id}.png")
                path.write_bytes(await session.screenshot())
                result.evidence.append(Evidence(kind="file", label="page at the end of the check", path=rel))
            except Exception as exc:  # noqa: BLE001 - evidence is best effort
                _log.info("no screenshot", check=check_id, error=str(exc))
    except CheckError as exc:
        result = CheckResult(id=check_id, status="error", detail=f"could not open the page: {exc}")
    except Exception as exc:  # noqa: BLE001
        result = CheckResult(
            id=check_id, status="error", detail=f"could not open the page: {type(exc).__name__}: {exc}"
        )
    finally:
        if session is not None:
            ctx.page_errors.extend(e for e in session.errors if e not in ctx.page_errors)
            try:
                await session.close()
            except Exception as exc:  # noqa: BLE001 - closing is best effort
                _log.info("page close failed", check=check_id, error=str(exc))
    return result, bool(getattr(session, "hung", False))



async def run_checks_side_by_side(ctx: ProbeContext, checks: Iterable[tuple[str, CheckBody]],
                                  only: Iterable[str] | None = None) -> list[CheckResult]:
    """``run_check`` for each ``(check id, body)`` in ``only`` (all by default), side by side.

    Each check has its own pristine page and the harness caps how many are open at once; the
    results keep the order of ``checks``.
    """
    checks = list(checks)
    wanted = {check_id for check_id, _ in checks} if only is None else set(only)
    return list(await asyncio.gather(*(run_check(ctx, check_id, body) for check_id, body in checks
                                       if check_id in wanted)))
