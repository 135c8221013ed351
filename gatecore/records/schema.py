"""Strict reading of a JSON document's members into a record (pure; no pydantic).

Receipts and ledger records are read on the pre-receive hook's path, where importing
pydantic and building its models cost a review push about 70 ms. Their schemas are small
and flat, so each is a tuple of `Member`s here: a name, whether it may be absent (or
null), and a check that returns the problem with a value or None. `read` applies them the
way a strict schema does: no member outside the list, no type coercion (`true` is not an
integer, `1.0` is not `1`, a string is not a list), every problem reported with its member.
The configuration files (policy, keyring, key files) keep their pydantic schemas
(`gatecore/configuration/configschema.py`, which says the same from its side): they are validated at install
time and cached, never on the hook's path. Records stay here because the hook reads them on
every push that touches the reserved namespaces, and the hook must not import pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..valueclass import valueclass

#: A check: the problem with a value, or None when the value is good.
Check = Callable[[Any], "str | None"]


@valueclass(frozen=True, slots=True)
class Member:
    name: str
    check: Check
    optional: bool = False  # may be absent or null


def integer(lo: int, hi: int) -> Check:
    """An integer in [lo, hi] (a JSON boolean is not one)."""
    def check(v: Any) -> str | None:
        if type(v) is not int:
            return "must be an integer"
        return None if lo <= v <= hi else f"must be between {lo} and {hi}"
    return check


def text(max_len: int, min_len: int = 0, pattern: re.Pattern[str] | None = None,
         problem: Callable[[str], str | None] | None = None) -> Check:
    """A string of `min_len`..`max_len` characters that matches `pattern` whole and has no `problem`."""
    def check(v: Any) -> str | None:
        if type(v) is not str:
            return "must be a string"
        if not min_len <= len(v) <= max_len:
            return f"must be {min_len} to {max_len} characters long"
        if pattern is not None and pattern.fullmatch(v) is None:
            return f"must match {pattern.pattern}"
        return None if problem is None else problem(v)
    return check


def choice(*values: str) -> Check:
    def check(v: Any) -> str | None:
        return None if type(v) is str and v in values else "must be one of " + ", ".join(map(repr, values))
    return check


def text_list(item: Check, min_items: int, max_items: int) -> Check:
    """A list of `min_items`..`max_items` values, each good for `item`."""
    def check(v: Any) -> str | None:
        if type(v) is not list:
            return "must be a list"
        if not min_items <= len(v) <= max_items:
            return f"must hold {min_items} to {max_items} items"
        for i, x in enumerate(v):
            bad = item(x)
            if bad is not None:
                return f"item {i}: {bad}"
        return None
    return check


def read(doc: Any, members: Sequence[Member]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The value of every member (None where an optional one is absent), and (member, problem)
    for every problem, members in schema order and then unknown ones."""
    if not isinstance(doc, dict):
        return {}, [("(document)", "must be a JSON object")]
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for m in members:
        v = doc.get(m.name)
        if v is None:
            if not m.optional:
                problems.append((m.name, "is required" if m.name not in doc else "must not be null"))
            values[m.name] = None
            continue
        bad = m.check(v)
        if bad is not None:
            problems.append((m.name, bad))
        values[m.name] = v
    known = {m.name for m in members}
    problems.extend((str(k), "is not a known member") for k in doc if k not in known)
    return values, problems


def describe(problems: Sequence[tuple[str, str]]) -> str:
    """`member: problem; ...`: the one-line reason a GateError carries."""
    return "; ".join(f"{name}: {problem}" for name, problem in problems)
