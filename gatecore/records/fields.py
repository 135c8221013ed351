"""The member checks receipts and ledger records share (`gatecore.records.schema`).

Identifier forms come from `gatecore.ids` (pure, on the hook's start-up path); here they
become checks. A reason is text a human can read: at least one visible
character, no control characters but newline and tab.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from .. import ids
from .schema import integer
from .schema import text as _text

MAX_REASON_CHARS = 2000
_MAX_TIME = 2**40
#: Unicode categories that show nothing: separators, controls, format, private use, surrogates.
INVISIBLE_CATEGORIES = ("Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cs")


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


def _form(valid: Callable[[str], bool], what: str) -> Callable[[str], str | None]:
    return lambda v: None if valid(v) else f"not a valid {what}"


ATTEMPT_ID = _text(128, 1, problem=_form(ids.is_attempt_id, "attempt id"))
GENERATION = _text(128, 1, problem=_form(ids.is_generation, "workspace generation"))
MODEL_ID = _text(200, 1, problem=_form(ids.is_model_id, "model id"))
REPOSITORY_ID = _text(256, 1, problem=_form(ids.is_repository_id, "repository id"))
SHA256_HEX = _text(64, 64, pattern=ids.SHA256_HEX_RE)
OBJECT_ID = _text(64, 40, pattern=ids.OID_RE)
REASON = _text(MAX_REASON_CHARS, 1, problem=reason_problem)
TIME = integer(0, _MAX_TIME - 1)
REF_NAME = _text(1024, 6, pattern=re.compile(r"refs/[\x21-\x7e]+"))
VENDOR = _text(64, 1, pattern=ids.VENDOR_ID_RE)


def _one_line(value: str) -> str | None:
    if any(unicodedata.category(ch) == "Cc" for ch in value) or not visible(value):
        return "must be one line of visible text"
    return None


#: Who started an attempt (an account, an email, a name): one line, shown and exported, never matched.
INITIATOR = _text(256, 1, problem=_one_line)
