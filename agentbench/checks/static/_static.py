"""Static detectors: what the source *says* it does, with the line that says it.

Each detector takes a :class:`Source` and returns ``(found, evidence)``, the evidence being
``file:line: code`` a person can go and read. A detector is a hint, never a verdict where a
behaviour check exists: checklists scored from the source alone were too strict five times and
too generous twice (a ``dt`` computed and half applied, a ``loadTasks`` never called). So the
rules are kept small, and where a probe exercises the same thing the probe decides and the
checklist reports any disagreement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ._deltas import IDENT, delta_reads, frame_deltas
from ._source import Hit, Source, SourceFile

__all__ = ["DETECTORS", "Detector", "match_patterns", "run_detector"]

Finding = tuple[bool, str]


@dataclass(frozen=True)
class Detector:
    """A named rule; ``found``/``missing`` phrase what it saw, for disagreement messages."""

    name: str
    fn: Callable[[Source], Finding]
    found: str
    missing: str


DETECTORS: dict[str, Detector] = {}


def detector(name: str, *, found: str, missing: str) -> Callable[[Callable[[Source], Finding]], Callable]:
    def register(fn: Callable[[Source], Finding]) -> Callable[[Source], Finding]:
        if name in DETECTORS:
            raise ValueError(f"static detector '{name}' registered twice")
        DETECTORS[name] = Detector(name, fn, found, missing)
        return fn

    return register


def run_detector(name: str, source: Source) -> Finding:
    """Run a registered detector by name (KeyError for an unknown name)."""
    return DETECTORS[name].fn(source)


def match_patterns(source: Source, patterns: list[str]) -> Finding:
    """An inline checklist pattern: every regex must match the source (markup and code, no comments)."""
    evidence = []
    for p in patterns:
        hit = source.first(p, view="text")
        if hit is None:
            return False, f"no match for /{p}/"
        evidence.append(hit.snippet)
    return True, " | ".join(evidence)


def _any(source: Source, patterns: list[str], view: str = "code", flags: int = 0) -> Hit | None:
    for p in patterns:
        hit = source.first(p, view=view, flags=flags)
        if hit is not None:
            return hit
    return None


def _called(source: Source, hit: Hit) -> tuple[bool, str]:
    """Does the code at ``hit`` run? Top level and anonymous callbacks count; a named function
    must be referenced somewhere outside its own body (one level: good enough for a hint)."""
    fn = source.enclosing_function(hit.file, hit.pos)
    if fn is None or fn[0] is None:
        return True, hit.snippet
    name, start, end = fn
    refs = source.references(name, outside=(start, end), file=hit.file)
    if refs:
        return True, f"{hit.snippet} (in {name}(), used at {refs[0].snippet})"
    return False, f"{hit.snippet} is inside {name}(), which is never called"


# -- time and animation (the frame-time analysis is _deltas) -----------------------------------


@detector("uses_elapsed_time", found="source uses delta time",
          missing="source shows no delta time (physics advances per drawn frame)")
def uses_elapsed_time(source: Source) -> Finding:
    """A frame's elapsed time (rAF timestamp or now() minus the last reading) reaches the update."""
    deltas = frame_deltas(source)
    if not deltas:
        return False, "no elapsed time computed from a requestAnimationFrame timestamp or performance.now()"
    for name, hit, scope in deltas:
        uses = delta_reads(source, name, hit, scope)
        if uses:
            return True, f"{hit.snippet} | used at {uses[0].snippet}"
    return False, f"{deltas[0][1].snippet} computes {deltas[0][0]} but never uses it"


@detector("clamps_frame_delta", found="source clamps long frame gaps",
          missing="source does not clamp long frame gaps")
def clamps_frame_delta(source: Source) -> Finding:
    """After a background tab, dt is capped so nothing teleports or tunnels through the floor."""
    for name, hit, scope in frame_deltas(source):
        if re.search(r"Math\.min\(", hit.file.skeleton[hit.pos:hit.match.end()] +
                     hit.file.skeleton[hit.match.end():hit.file.skeleton.find("\n", hit.match.end())]):
            return True, hit.snippet  # dt = Math.min((now - last) / 1000, 0.1)
        n = re.escape(name.split(".")[-1])
        text = hit.file.skeleton[scope[0]:scope[1]]
        for p in (rf"Math\.min\([^;\n]*\b{n}\b", rf"\bif\s*\(\s*{n}\s*>", rf"\b{n}\s*>\s*[\d.]+\s*\?"):
            m = re.search(p, text)
            if m:
                return True, hit.file.snippet(scope[0] + m.start())
    return False, "no Math.min / cap on the frame's elapsed time"


@detector("handles_resize", found="source handles window resize", missing="source ignores window resize")
def handles_resize(source: Source) -> Finding:
    hit = _any(source, [r"addEventListener\(\s*['\"]resize['\"]", r"\bonresize\s*=", r"\bResizeObserver\b"],
               view="text")
    return (True, hit.snippet) if hit else (False, "no resize listener or ResizeObserver")


@detector("scales_for_device_pixel_ratio", found="source scales the canvas by devicePixelRatio",
          missing="source ignores devicePixelRatio")
def scales_for_device_pixel_ratio(source: Source) -> Finding:
    hit = source.first(r"\bdevicePixelRatio\b")
    return (True, hit.snippet) if hit else (False, "no devicePixelRatio")


@detector("uses_random", found="source uses randomness", missing="source uses no randomness")
def uses_random(source: Source) -> Finding:
    hit = _any(source, [r"Math\.random\(", r"crypto\.getRandomValues\("])
    return (True, hit.snippet) if hit else (False, "no Math.random()")


# -- input -------------------------------------------------------------------------------------

_KEY_EVENTS = r"key(?:down|up|press)"
_POINTER_EVENTS = r"(?:click|mousedown|mouseup|pointerdown|pointerup|touchstart|touchend)"


@detector("listens_keyboard_and_pointer", found="source listens to keys and clicks/taps",
          missing="source lacks a key or a click/tap listener")
def listens_keyboard_and_pointer(source: Source) -> Finding:
    key = _any(source, [rf"addEventListener\(\s*['\"]{_KEY_EVENTS}['\"]", rf"\bon{_KEY_EVENTS}\s*="], view="text")
    ptr = _any(source, [rf"addEventListener\(\s*['\"]{_POINTER_EVENTS}['\"]", rf"\bon{_POINTER_EVENTS}\s*="],
               view="text")
    if key and ptr:
        return True, f"{key.snippet} | {ptr.snippet}"
    return False, "no key listener" if not key else "no click/tap listener"


def _handler_bodies(source: Source, events: str) -> list[tuple[SourceFile, int, int]]:
    """Bodies of the handlers registered for ``events`` (inline functions or named ones)."""
    bodies = []
    for h in source.find(rf"addEventListener\(\s*['\"]{events}['\"]\s*,\s*", view="code"):
        f, at = h.file, h.match.end()
        named = re.match(rf"({IDENT})\s*[,)]", f.skeleton[at:at + 80])
        if named:
            for d in source.find(rf"function\s+{re.escape(named.group(1))}\s*\([^()]*\)\s*\{{|"
                                 rf"\b{re.escape(named.group(1))}\s*=\s*[^;{{]*?=>\s*\{{", view="skeleton"):
                bodies.append((d.file, d.match.end() - 1, source.block_end(d.file, d.match.end() - 1)))
            continue
        brace = f.skeleton.find("{", at)
        if brace >= 0 and brace - at < 120:
            bodies.append((f, brace, source.block_end(f, brace)))
    return bodies


@detector("prevents_default_on_keys", found="source calls preventDefault in its key handler",
          missing="source never calls preventDefault on keys (Space scrolls the page)")
def prevents_default_on_keys(source: Source) -> Finding:
    for f, start, end in _handler_bodies(source, _KEY_EVENTS):
        m = re.search(r"\.preventDefault\s*\(", f.code[start:end])
        if m:
            return True, f.snippet(start + m.start())
    return False, "no preventDefault() inside a key handler"


@detector("listens_enter_or_submit", found="source adds on Enter or form submit",
          missing="source has no Enter or submit handling")
def listens_enter_or_submit(source: Source) -> Finding:
    hit = _any(source, [r"addEventListener\(\s*['\"]submit['\"]", r"\bonsubmit\s*=", r"['\"]Enter['\"]",
                        r"\bkeyCode\s*===?\s*13\b", r"\bwhich\s*===?\s*13\b"], view="text")
    return (True, hit.snippet) if hit else (False, "no submit listener and no 'Enter' key test")


@detector("listens_input_event", found="source updates on every keystroke (input event)",
          missing="source does not listen to input events")
def listens_input_event(source: Source) -> Finding:
    hit = _any(source, [r"addEventListener\(\s*['\"](?:input|keyup)['\"]", r"\bon(?:input|keyup)\s*="], view="text")
    return (True, hit.snippet) if hit else (False, "no input/keyup listener")


@detector("rejects_blank_input", found="source trims and rejects blank text",
          missing="source does not reject blank text")
def rejects_blank_input(source: Source) -> Finding:
    trim = source.first(r"\.trim\(\)")
    guard = _any(source, [r"\bif\s*\(\s*!\s*[\w$.]+(?:\.trim\(\))?\s*\)", r"===?\s*(?:''|\"\")",
                          r"\.length\s*(?:===?\s*0|<\s*1)\b", r"!\s*[\w$.]+\.trim\(\)"])
    if trim and guard:
        return True, f"{trim.snippet} | {guard.snippet}"
    return False, "no .trim()" if not trim else "no empty-text guard"


@detector("validates_number_input", found="source validates the typed number",
          missing="source never checks the typed number")
def validates_number_input(source: Source) -> Finding:
    hit = _any(source, [r"\b(?:Number\.)?isNaN\(", r"\b(?:Number\.)?isFinite\(", r"\.validity\.", r"checkValidity\("])
    return (True, hit.snippet) if hit else (False, "no isNaN / isFinite / validity test")


@detector("formats_numbers", found="source formats numbers for display",
          missing="source prints raw floating-point numbers")
def formats_numbers(source: Source) -> Finding:
    hit = _any(source, [r"\.toFixed\(", r"\.toPrecision\(", r"Intl\.NumberFormat", r"\.toLocaleString\(",
                        r"maximum(?:Fraction|Significant)Digits", r"Math\.round\([^;\n]*\*\s*1(?:0+|e\d+)\b"])
    return (True, hit.snippet) if hit else (False, "no toFixed / toPrecision / Intl.NumberFormat")


# -- storage and text --------------------------------------------------------------------------

_LS_API = r"(?!setItem|getItem|removeItem|clear|key|length)"  # localStorage.todos = ... is storage too
_LS_WRITE = [r"localStorage\.setItem\(", r"localStorage\[[^\]]+\]\s*=(?!=)", rf"localStorage\.{_LS_API}[\w$]+\s*=(?!=)"]
_LS_READ = [r"localStorage\.getItem\(", r"localStorage\[[^\]]+\](?!\s*=[^=])",
            rf"localStorage\.{_LS_API}[\w$]+\b(?!\s*=[^=])"]


@detector("uses_local_storage_save", found="source saves to localStorage", missing="source never saves to localStorage")
def uses_local_storage_save(source: Source) -> Finding:
    hit = _any(source, _LS_WRITE)
    return (True, hit.snippet) if hit else (False, "no localStorage.setItem")


@detector("uses_local_storage_load", found="source reads localStorage at start",
          missing="source never reads localStorage at start")
def uses_local_storage_load(source: Source) -> Finding:
    """getItem at top level, or in a function that is called (a loader defined but never called
    is the rushed bug: the list is saved and never read back)."""
    last = "no localStorage.getItem"
    for p in _LS_READ:
        for hit in source.find(p):
            ok, evidence = _called(source, hit)
            if ok:
                return True, evidence
            last = evidence
    return False, last


@detector("persists_to_local_storage", found="source saves to localStorage and reads it back at start",
          missing="source does not both save to and read back from localStorage")
def persists_to_local_storage(source: Source) -> Finding:
    saved, save_ev = uses_local_storage_save(source)
    loaded, load_ev = uses_local_storage_load(source)
    if saved and loaded:
        return True, f"saves at {save_ev} | reads at {load_ev}"
    return False, save_ev if not saved else load_ev


@detector("guards_json_parse", found="source parses saved data inside try/catch",
          missing="source parses saved data without try/catch (corrupt storage breaks the page)")
def guards_json_parse(source: Source) -> Finding:
    first = None
    for hit in source.find(r"JSON\.parse\("):
        first = first or hit
        s = hit.file.skeleton
        for t in re.finditer(r"\btry\s*\{", s[:hit.pos]):
            if source.block_end(hit.file, t.end() - 1) > hit.pos:
                return True, hit.snippet
    return (False, f"{first.snippet} has no try/catch around it") if first else (False, "no JSON.parse")


_USER_TEXT = re.compile(r"(?i)text|title|name|value|input|item|task|todo|label|content|desc|note|entry|query")
_SAFE = re.compile(r"(?i)escape|sanitiz|DOMPurify|encode")


@detector("uses_inner_html_with_user_text", found="source puts user text into innerHTML unescaped",
          missing="source keeps user text out of innerHTML")
def uses_inner_html_with_user_text(source: Source) -> Finding:
    """innerHTML/outerHTML/insertAdjacentHTML/document.write fed an expression naming user text
    without an escape function; literal strings and ``= ''`` clears are fine."""
    regex = (r"\.(?:innerHTML|outerHTML)\s*\+?=\s*|\.insertAdjacentHTML\s*\(\s*['\"][\w-]+['\"]\s*,\s*"
             r"|document\.write\(\s*")
    for hit in source.find(regex):
        f, at = hit.file, hit.match.end()
        rhs = _expression(f, at)
        code_part = re.sub(r"(['\"])(?:\\.|(?!\1).)*\1", "''", rhs)  # drop plain string literals
        exprs = re.findall(r"\$\{([^}]*)\}", rhs) if rhs.lstrip().startswith("`") else [code_part]
        dynamic = " ".join(e for e in exprs if re.search(r"[A-Za-z_$]", e))
        if dynamic and _USER_TEXT.search(dynamic) and not _SAFE.search(dynamic):
            return True, hit.snippet
    return False, "no innerHTML built from user text"


def _expression(f: SourceFile, at: int) -> str:
    """The right-hand side starting at ``at``: to the end of the statement (templates may span lines)."""
    s = f.skeleton
    depth, i = 0, at
    in_template = False
    while i < len(s):
        ch = s[i]
        if ch == "`":
            in_template = not in_template
        elif not in_template:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif ch == ";" or (ch == "\n" and depth == 0 and not s[at:i].strip().endswith(("+", "`"))
                               and s[at:i].strip()):
                break
        i += 1
    return f.code[at:i]


# -- markup and task content -------------------------------------------------------------------


@detector("has_viewport_meta", found="page declares a mobile viewport", missing="page has no viewport meta tag")
def has_viewport_meta(source: Source) -> Finding:
    hit = source.first(r"<meta[^>]+name\s*=\s*['\"]?viewport", view="text", flags=re.IGNORECASE)
    return (True, hit.snippet) if hit else (False, "no <meta name=viewport>")


@detector("labels_inputs", found="inputs have labels", missing="inputs have no labels (placeholder only)")
def labels_inputs(source: Source) -> Finding:
    hit = _any(source, [r"<label\b", r"\baria-label(?:ledby)?\s*="], view="text", flags=re.IGNORECASE)
    return (True, hit.snippet) if hit else (False, "no <label> or aria-label")


@detector("shows_game_over_text", found="source shows a Game Over message", missing="source has no Game Over text")
def shows_game_over_text(source: Source) -> Finding:
    # In a string or in the markup (blank in the skeleton), not a `gameOver` variable.
    for hit in source.find(r"game\s*over", view="text", flags=re.IGNORECASE):
        if hit.file.skeleton[hit.pos].isspace():
            return True, hit.snippet
    return False, "no 'Game Over' text"


@detector("has_reset_function", found="source resets the game state in code",
          missing="source has no reset/restart routine that is called")
def has_reset_function(source: Source) -> Finding:
    regex = rf"\bfunction\s+((?:re(?:set|start)|newGame|startGame|initGame|init)\w*)\s*\(|" \
            rf"\b((?:re(?:set|start)|newGame|startGame)\w*)\s*(?:=\s*(?:function|\(|{IDENT}\s*=>)|\([^()]*\)\s*\{{)"
    last = "no reset/restart function"
    for hit in source.find(regex, view="skeleton", flags=re.IGNORECASE):
        name = hit.match.group(1) or hit.match.group(2)
        refs = source.references(name)
        if refs:
            return True, f"{hit.snippet} | called at {refs[0].snippet}"
        last = f"{hit.snippet} is never called"
    return False, last


@detector("damps_bounces", found="source loses energy on each bounce", missing="source keeps all energy on bounce")
def damps_bounces(source: Source) -> Finding:
    hit = _any(source, [r"\*=\s*-\s*\(?\s*0?\.\d+", r"restitution|damping|elasticity|bounciness",
                        r"\*=\s*-\s*[A-Z_]*(?:BOUNCE|DAMP|LOSS|ELASTIC|FRICTION)\w*"], flags=re.IGNORECASE)
    return (True, hit.snippet) if hit else (False, "no restitution factor applied on bounce")


@detector("clamps_to_floor", found="source puts balls back inside the canvas on contact",
          missing="source never moves balls back inside the canvas")
def clamps_to_floor(source: Source) -> Finding:
    hit = source.first(r"\.y\s*=\s*[\w$.]*(?:height|H|bottom|floor)\w*\s*-\s*[\w$.]*(?:r|radius|size)\b|"
                       r"\.y\s*=\s*Math\.min\(", flags=re.IGNORECASE)
    return (True, hit.snippet) if hit else (False, "no `y = height - radius` style correction")
