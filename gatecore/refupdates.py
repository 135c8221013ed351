"""Ref updates as plain values, and strict parsers for the hooks' stdin formats (pure).

Ref names stay bytes (git allows any byte but a few); they are decoded with
`surrogateescape` only for matching, and escaped for display, never lossily.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InputError

MAX_INPUT_BYTES = 16 << 20
_HEX = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
_BAD_REF_BYTES = re.compile(rb"[\x00-\x20\x7f~^:?*\[\\]")


@dataclass(frozen=True, slots=True)
class RefUpdate:
    old: str
    new: str
    raw_ref: bytes

    @property
    def ref(self) -> str:
        return self.raw_ref.decode("utf-8", "surrogateescape")

    @property
    def zero(self) -> str:
        return "0" * len(self.old)

    @property
    def is_create(self) -> bool:
        return self.old == self.zero

    @property
    def is_delete(self) -> bool:
        return self.new == self.zero


def ref_name_problem(name: bytes) -> str | None:
    """Why `name` is not a well-formed full ref name (git check-ref-format rules), or None."""
    if not name.startswith(b"refs/") or len(name) > 1024:
        return "must start with refs/ and be at most 1024 bytes"
    if _BAD_REF_BYTES.search(name):
        return "holds a control character, space or one of ~^:?*[\\"
    if b".." in name or b"@{" in name or name.endswith((b"/", b".")) or name == b"@":
        return "holds '..' or '@{', or ends with '/' or '.'"
    for comp in name.split(b"/"):
        if not comp or comp.startswith(b".") or comp.endswith(b".lock"):
            return "has an empty component, one starting with '.', or one ending with '.lock'"
    return None


def parse_pre_receive(data: bytes) -> list[RefUpdate]:
    """`<old> SP <new> SP <ref> LF` per line; ids of one hash length; refs unique and well formed."""
    if len(data) > MAX_INPUT_BYTES:
        raise InputError("GATE-INPUT-TOO-LARGE", f"{len(data)} bytes of input; the cap is {MAX_INPUT_BYTES}")
    if data and not data.endswith(b"\n"):
        raise InputError("GATE-INPUT-MALFORMED", "input does not end with a newline")
    updates: list[RefUpdate] = []
    seen: set[bytes] = set()
    width: int | None = None
    for n, line in enumerate(data.split(b"\n")[:-1], start=1):
        parts = line.split(b" ")
        if len(parts) != 3:
            raise InputError("GATE-INPUT-MALFORMED", f"line {n}: expected three space-separated fields")
        old, new, ref = parts
        if not _HEX.fullmatch(old) or not _HEX.fullmatch(new) or len(old) != len(new):
            raise InputError("GATE-INPUT-MALFORMED", f"line {n}: object ids are not lower-case hex of one length")
        if width is None:
            width = len(old)
        elif len(old) != width:
            raise InputError("GATE-INPUT-MALFORMED", f"line {n}: object ids of mixed lengths")
        problem = ref_name_problem(ref)
        if problem is not None:
            raise InputError("GATE-REF-NAME", f"line {n}: ref {display(ref)} {problem}")
        if ref in seen:
            raise InputError("GATE-INPUT-MALFORMED", f"line {n}: ref {display(ref)} appears twice")
        seen.add(ref)
        zero = b"0" * len(old)
        if old == zero and new == zero:
            raise InputError("GATE-INPUT-MALFORMED", f"line {n}: both ids are zero")
        updates.append(RefUpdate(old.decode("ascii"), new.decode("ascii"), ref))
    return updates


def display(raw: bytes | str) -> str:
    """Plain printable ASCII for any ref or path: other bytes as \\xNN, backslash doubled."""
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogateescape")
    out = []
    for b in data:
        if b == 0x5C:
            out.append("\\\\")
        elif 0x21 <= b <= 0x7E:
            out.append(chr(b))
        else:
            out.append(f"\\x{b:02x}")
    return "".join(out)
