"""Configuration errors in the admin's words (pure): where, what, and the fix.

A validation error of a policy, keyring or key file becomes one problem per fault:

    policy.toml:7: freeze[0].refs[0]: 'main' is not a full ref name: did you mean refs/heads/main?
    policy.toml:3: freeze: one table where a list of tables belongs: write [[freeze]] (two brackets), once per entry
    policy.toml:9: freeze[1].author: unknown key: did you mean authors?

The location is written the way the file is read (`freeze[0].refs[0]`), the line is found in
the TOML text where it can be (`line_of`: table headers and keys; a value inside a multi-line
array is given the line of its key), and each pydantic error type is reworded: unknown keys
get the nearest known key, enumerations the nearest allowed value, a table where a list of
tables belongs the `[[...]]` form.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

Loc = tuple[str | int, ...]


def where(loc: Sequence[str | int]) -> str:
    """`freeze[0].refs[0]`: keys joined with dots, list indexes in brackets, a key TOML would
    quote in quotes (`review.models."azure/x"`)."""
    out = ""
    for part in loc:
        key = str(part) if re.fullmatch(r"[A-Za-z0-9_-]+", str(part)) else _quoted(str(part))
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + key
    return out or "(document)"


# --- where in the file ----------------------------------------------------------------------

_ARRAY_TABLE = re.compile(r"\s*\[\[\s*([^\[\]]+?)\s*\]\]\s*(?:#.*)?$")
_TABLE = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY = re.compile(r"\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*=")


def _dotted(text: str) -> list[str]:
    return [part.strip().strip("\"'") for part in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", text)]


def key_lines(text: str) -> dict[Loc, int]:
    """The line (1-based) of each table header and key in a TOML text, by location. A
    best effort: lines inside multi-line strings are not told apart from keys."""
    found: dict[Loc, int] = {}
    counts: dict[tuple[str, ...], int] = {}
    table: Loc = ()
    for number, line in enumerate(text.splitlines(), 1):
        if m := _ARRAY_TABLE.match(line):
            name = tuple(_dotted(m.group(1)))
            index = counts.get(name, -1) + 1
            counts[name] = index
            table = (*name, index)
        elif m := _TABLE.match(line):
            table = tuple(_dotted(m.group(1)))
        elif m := _KEY.match(line):
            found.setdefault((*table, *_dotted(m.group(1))), number)
            continue
        else:
            continue
        found.setdefault(table, number)
    return found


def line_of(lines: Mapping[Loc, int], loc: Sequence[str | int]) -> int | None:
    """The line of the longest leading part of `loc` that the file spells out."""
    for n in range(len(loc), 0, -1):
        if (line := lines.get(tuple(loc[:n]))) is not None:
            return line
    return None


# --- what, and the fix ----------------------------------------------------------------------

def _unwrap(annotation: Any) -> list[Any]:
    """The types an annotation may hold, Annotated, Optional, unions and lists taken apart."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin in (Union, types.UnionType, list):
        return [t for arg in get_args(annotation) for t in _unwrap(arg)]
    return [annotation]


def _model(annotation: Any) -> type[BaseModel] | None:
    for t in _unwrap(annotation):
        if isinstance(t, type) and issubclass(t, BaseModel):
            return t
    return None


def model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model of the table at `loc` (list indexes skipped), or None."""
    current: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int):
            continue
        if current is None or part not in current.model_fields:
            return None
        current = _model(current.model_fields[part].annotation)
    return current


def _is_list_of_tables(root: type[BaseModel], loc: Sequence[str | int]) -> bool:
    parent = model_at(root, loc[:-1])
    if parent is None or not loc or not isinstance(loc[-1], str) or loc[-1] not in parent.model_fields:
        return False
    annotation = parent.model_fields[loc[-1]].annotation
    return _model(annotation) is not None and any(get_origin(a) is list for a in _lists(annotation))


def _lists(annotation: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _lists(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [t for arg in get_args(annotation) for t in _lists(arg)]
    return [annotation]


def _toml_kind(value: Any) -> str:
    kinds = ((bool, "true/false"), (int, "an integer"), (float, "a number"), (str, "a string"),
             (list, "a list"), (dict, "a table"))
    for kind, name in kinds:
        if isinstance(value, kind):
            return name
    return "a date or time" if value is not None else "nothing"


_WANTS = {"string_type": "a string (in quotes)", "int_type": "an integer", "int_parsing": "an integer",
          "float_type": "a number", "bool_type": "true or false", "list_type": "a list", "model_type": "a table",
          "dict_type": "a table", "datetime_type": "a date-time such as 2026-01-01T00:00:00Z (no quotes)",
          "int_from_float": "an integer"}


def _closest(word: str, choices: Sequence[str]) -> str | None:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        lowered = {c.casefold(): c for c in choices}
        return lowered.get(word.casefold())
    return close[0]


def message(root: type[BaseModel], err: Mapping[str, Any]) -> str:  # noqa: PLR0912 - one branch per pydantic error kind; configerrors.py is helper models' (policy schema)
    """One pydantic error, reworded for the admin (the location is added by the caller)."""
    kind, loc, value = err["type"], tuple(err["loc"]), err.get("input")
    key = next((str(p) for p in reversed(loc) if isinstance(p, str)), "")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        parent = model_at(root, loc[:-1])
        known = [] if parent is None else list(parent.model_fields)
        guess = _closest(str(loc[-1]), known)
        return ("unknown key: " + (f"did you mean {guess}?" if guess else
                                   f"the keys here are {', '.join(known)}" if known else "remove it"))
    if kind == "list_type" and isinstance(value, dict) and _is_list_of_tables(root, loc):
        return f"one table where a list of tables belongs: write [[{where(loc)}]] (two brackets), once per entry"
    if kind == "list_type" and isinstance(value, str):
        return f"a string where a list belongs: write {key} = [{_quoted(value)}]"
    if kind == "missing":
        return f"{key} is required here"
    if kind in ("too_short", "string_too_short"):
        return "must not be empty" if isinstance(value, list | str) else str(err["msg"])
    if kind == "literal_error":
        allowed = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        guess = _closest(str(value), allowed) if isinstance(value, str) else None
        text = f"{value!r} is not one of {', '.join(repr(a) for a in allowed)}"
        return text + (f": did you mean {guess!r}?" if guess else "")
    if kind in ("value_error", "assertion_error"):
        return str(ctx.get("error", err["msg"]))
    if kind in _WANTS:
        return f"must be {_WANTS[kind]}, not {_toml_kind(value)}"
    if kind == "less_than_equal":
        return f"must be at most {ctx.get('le')}, not {value!r}"
    if kind == "greater_than_equal":
        return f"must be at least {ctx.get('ge')}, not {value!r}"
    if kind == "greater_than":
        return f"must be more than {ctx.get('gt')}, not {value!r}"
    if kind == "too_long":
        return f"is too long (at most {ctx.get('max_length')} entries or characters)"
    if kind == "string_pattern_mismatch":
        return f"{value!r} holds characters that are not allowed here (letters, digits, '.', '_', '-')"
    msg = str(err["msg"])
    return msg[:1].lower() + msg[1:]


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def problems(root: type[BaseModel], errors: Sequence[Mapping[str, Any]], text: str, origin: str) -> list[str]:
    """`origin:line: location: message`, one per error, in pydantic's order."""
    lines = key_lines(text)
    out = []
    for err in errors:
        loc = tuple(err["loc"])
        line = line_of(lines, loc)
        out.append(f"{origin}{'' if line is None else f':{line}'}: {where(loc)}: {message(root, err)}")
    return out


def located(origin: str, text: str, loc: Sequence[str | int], detail: str) -> str:
    """A problem found after the schema (a named set, a pattern), with its line where the file has one."""
    line = line_of(key_lines(text), loc)
    return f"{origin}{'' if line is None else f':{line}'}: {where(loc)}: {detail}"


def toml_problem(origin: str, what: str, exc: Exception) -> str:
    """tomllib's message with its line moved to the front: `policy.toml:3: not valid TOML: ...`."""
    text = str(exc)
    m = re.search(r"\(at line (\d+), column (\d+)\)", text)
    if m is None:
        return f"{what} {origin} is not valid TOML: {text}"
    reason = text[:m.start()].rstrip()
    return f"{origin}:{m.group(1)}: not valid TOML (column {m.group(2)}): {reason}"
