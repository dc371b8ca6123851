"""The one rule for names that become paths: model, task, run, reviewer and agent names.

A model name from models.toml becomes ``<run>/<task>/<model>/``; ``[models."../../../../tmp/x"]``
once wrote an attempt outside the run folder. Every user-given name that becomes a folder or
file name is checked here, with an error that names where it came from and the characters
allowed, before anything is written.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator

from .errors import NameInvalid

__all__ = ["NAME_RULE", "is_valid_name", "name_field", "validate_name"]

NAME_RULE = "1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit, no '..'"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


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
