"""The one rule for names that become paths: model, task, run, reviewer and agent names; and lanes.

A model name from models.toml becomes ``<run>/<task>/<model>/``; ``[models."../../../../tmp/x"]``
once wrote an attempt outside the run folder. Every user-given name that becomes a folder or
file name is checked here, with an error that names where it came from and the characters
allowed, before anything is written.

A *lane* is what results are grouped by and the attempt folder's name: the model alone for the
builtin agent, ``<model>@<agent>`` under an external one. A lane is never validated as a name of
its own (``@`` is not in the rule): it is composed from a valid model name and a valid agent name
(:func:`lane`), and a lane read back from a folder is split into them and each part checked
(:func:`split_lane`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator

from .errors import NameInvalid

__all__ = ["BUILTIN_AGENT", "LANE_SEPARATOR", "NAME_RULE", "is_valid_lane", "is_valid_name", "lane", "name_field",
           "split_lane", "validate_name"]

NAME_RULE = "1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit, no '..'"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
LANE_SEPARATOR = "@"  # never in a name, so a lane splits one way only
BUILTIN_AGENT = "builtin"  # its lanes are the bare model name (the layout before agents existed)


def is_valid_name(value: object) -> bool:
    """True when value is a string that follows :data:`NAME_RULE`."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None and ".." not in value


def validate_name(kind: str, value: object, *, where: str = "") -> str:
    """Return value when it is a valid name; raise NameInvalid naming ``kind``, ``where`` and the rule.

    ``kind`` says what the name is ("model name", "task id", "run id"); ``where`` says where it
    came from (a file and field, a command-line option).
    """
    if is_valid_name(value):
        return value  # type: ignore[return-value]
    origin = f"{where}: " if where else ""
    raise NameInvalid(f"{origin}{kind} {value!r} is not allowed: a {kind} becomes a folder name, so it must be "
                      f"{NAME_RULE} (regex [A-Za-z0-9][A-Za-z0-9._-]{{0,63}}).")


def name_field(kind: str) -> Any:
    """A pydantic type for a field holding a name: ``name: name_field("model name")``.

    The field's validation error carries the same rule and allowed characters.
    """

    def check(value: str) -> str:
        try:
            return validate_name(kind, value)
        except NameInvalid as exc:
            raise ValueError(str(exc)) from None

    return Annotated[str, AfterValidator(check)]


def lane(model: str, agent: str = BUILTIN_AGENT) -> str:
    """The lane of ``model`` under ``agent``: ``model``, or ``model@agent`` under an external agent.

    Both parts are checked against the name rule, so a lane is always a safe folder name.
    """
    validate_name("model name", model)
    validate_name("agent name", agent)
    return model if agent == BUILTIN_AGENT else f"{model}{LANE_SEPARATOR}{agent}"


def split_lane(value: object, *, where: str = "") -> tuple[str, str]:
    """``(model, agent)`` of a lane (``model`` or ``model@agent``), each part checked; NameInvalid if not.

    ``model@builtin`` is refused: the builtin agent's lane is the bare model name, and one
    attempt must have one folder.
    """
    if not isinstance(value, str):
        validate_name("lane", value, where=where)
    model, sep, agent = str(value).partition(LANE_SEPARATOR)
    validate_name("model name", model, where=where)
    if not sep:
        return model, BUILTIN_AGENT
    validate_name("agent name", agent, where=where)
    if agent == BUILTIN_AGENT:
        origin = f"{where}: " if where else ""
        raise NameInvalid(f"{origin}lane {value!r} is not allowed: the builtin agent's lane is the model name "
                          f"alone ({model!r}).")
    return model, agent


def is_valid_lane(value: object) -> bool:
    """True when value is a lane :func:`split_lane` accepts."""
    try:
        split_lane(value)
    except NameInvalid:
        return False
    return True
