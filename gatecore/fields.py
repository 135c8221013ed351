"""The pydantic field types receipts and ledger records share, and validation messages.

Identifier forms come from `gatecore.ids` (pure, on the hook's start-up path); here they
become annotated types. A reason is text a human can read: at least one visible
character, no control characters but newline and tab.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationError

from . import ids

MAX_REASON_CHARS = 2000
_MAX_TIME = 2**40
#: Unicode categories that show nothing: separators, controls, format, private use, surrogates.
INVISIBLE_CATEGORIES = ("Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cs")


def _check(pred: Callable[[str], bool], what: str) -> AfterValidator:
    def run(value: str) -> str:
        if not pred(value):
            raise ValueError(f"not a valid {what}")
        return value

    return AfterValidator(run)


def visible(text: str) -> bool:
    """At least one character that shows: not whitespace, a format or control character."""
    return any(unicodedata.category(ch) not in INVISIBLE_CATEGORIES for ch in text)


def reason_problem(value: str) -> str | None:
    """Why `value` is not a reason a human can read, or None."""
    if any(unicodedata.category(ch) == "Cc" and ch not in "\n\t" for ch in value):
        return "reason holds control characters"
    if not visible(value):
        return "reason is blank (no visible character)"
    return None


def _reason(value: str) -> str:
    problem = reason_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


AttemptId = Annotated[str, _check(ids.is_attempt_id, "attempt id")]
Generation = Annotated[str, _check(ids.is_generation, "workspace generation")]
ModelId = Annotated[str, _check(ids.is_model_id, "model id")]
RepositoryId = Annotated[str, _check(ids.is_repository_id, "repository id")]
Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
ObjectId = Annotated[str, Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")]
Reason = Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS), AfterValidator(_reason)]
Time = Annotated[int, Field(ge=0, lt=_MAX_TIME)]
RefName = Annotated[str, Field(min_length=6, max_length=1024, pattern=r"^refs/[\x21-\x7e]+$")]


def error_locations(exc: ValidationError) -> list[tuple[str, str]]:
    """(dotted location, message) per error, in pydantic's order."""
    out = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(document)"
        out.append((loc, str(err["msg"])))
    return out


def format_validation_error(exc: ValidationError) -> str:
    return "; ".join(f"{loc}: {msg}" for loc, msg in error_locations(exc))
