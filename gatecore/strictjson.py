"""Strict JSON reading for everything the gate parses from untrusted bytes.

Rejects what `json.loads` lets through: duplicate keys (the last one would win),
NaN and Infinity, any float (no gate document has one), integers beyond 2**53,
invalid UTF-8, lone surrogates, a byte-order mark, nesting deeper than 32 and
documents larger than `MAX_DOCUMENT_BYTES`.
"""

from __future__ import annotations

import json

from .errors import GateError

TYPE_CHECKING = False  # (not typing's: an agent's check imports this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Any

MAX_DOCUMENT_BYTES = 65536
MAX_DEPTH = 32
_MAX_INT = 2**53


class _Refused(Exception):
    """Raised by the decoder hooks; `loads` gives it the caller's code."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads`' `object_pairs_hook` that refuses a key given twice (where `json` keeps the last):
    every reader of JSON the gate did not write takes it, the lenient ones too (an agent's payload, an
    agent's settings file), ValueError naming the key."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    try:
        return unique_keys(pairs)
    except ValueError as exc:
        raise _Refused(str(exc)) from None


def _no_constant(name: str) -> Any:
    raise _Refused(f"non-finite number {name} is not allowed")


def _no_float(text: str) -> Any:
    raise _Refused(f"number {text[:20]!r} is not an integer")


def _int(text: str) -> int:
    if len(text) > 17:
        raise _Refused("integer too large")
    value = int(text)
    if abs(value) > _MAX_INT:
        raise _Refused("integer too large")
    return value


def _check(value: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Refused("document nested too deeply")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _Refused("string holds a lone surrogate") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(key, depth + 1)
            _check(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check(item, depth + 1)


def loads(data: bytes, *, code: str = "GATE-RECEIPT-MALFORMED", too_large: str | None = None) -> Any:
    """Parse `data` strictly; GateError(code) when it is not a strict JSON document, and above
    the cap GateError(too_large) when the caller's area has such a code, else GateError(code):
    the code names the caller's area (a ledger record, an approval, model output)."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise GateError(too_large or code, f"document is {len(data)} bytes, the cap is {MAX_DOCUMENT_BYTES}")
    try:
        return _loads(data)
    except _Refused as exc:
        raise GateError(code, str(exc)) from None


def _loads(data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Refused(f"not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        raise _Refused("byte-order mark is not allowed")
    # Nesting is bounded before parsing so that the recursive decoder cannot overflow.
    depth = 0
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused("document nested too deeply")
        elif ch in "]}":
            depth -= 1
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant, parse_float=_no_float,
                           parse_int=_int)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise _Refused(f"invalid JSON: {exc}") from None
    _check(value, 0)
    return value


def dumps(value: Any) -> bytes:
    """Deterministic compact UTF-8 JSON (the gate's own writer; never used to verify)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")
