"""Ref updates as plain values, the namespaces the gate reserves, and strict parsers for the
hooks' stdin formats (pure; imported on the hook's start-up path).

Ref names stay bytes (git allows any byte but a few); they are decoded with
`surrogateescape` only for matching, and escaped for display, never lossily.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from ..errors import GateError
from ..valueclass import valueclass

GATE_PREFIX = "refs/gate/"  # written by the trusted side only
ATTEMPTS_PREFIX = "refs/gate/attempts/"  # the attempt ledger, one ref per attempt
RECEIPTS_PREFIX = "refs/gate/receipts/"  # receipts, pushed with their review ref
GENERATIONS_PREFIX = "refs/gate/generations/"  # one per workspace generation, at its attempt's first record
DOCTOR_PREFIX = "refs/gate/doctor/"  # gate server doctor's probe (always refused)
REVIEW_PREFIX = "refs/heads/review/runner/"  # reviewed changes, one ref per attempt
#: A trusted clone's own memory of each attempt's ledger, the newest record it sealed or synced: outside
#: refs/gate/, which a fetch of the reserved refs (`+refs/gate/*:refs/gate/*`) overwrites; never pushed.
HELD_PREFIX = "refs/gate-held/attempts/"
REPLACE_PREFIX = "refs/replace/"  # git's replacement objects (policy refs.replace)
#: Refs that would shadow a reserved namespace (git cannot hold both a ref and refs below it).
RESERVED_PARENTS = ("refs/gate", "refs/heads/review", "refs/heads/review/runner")
#: Where a ref would shadow a review ref's short name: git resolves `review/runner/<id>` through
#: `refs/<name>` and `refs/tags/<name>` before `refs/heads/<name>` (`git help revisions`), so a
#: ref there is what `git checkout`, `merge` or `log review/runner/<id>` reads instead of the review.
REVIEW_SHADOWS = ("refs/review/runner/", "refs/tags/review/runner/")

#: How many refs git reads to resolve one name (refs.c, SYMREF_MAXDEPTH): a symbolic ref, through
#: at most three more, to the ref it names.
SYMREF_MAXDEPTH = 5

MAX_INPUT_BYTES = 16 << 20
_HEX = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
_HEX2 = re.compile(r"[0-9a-f]{2}")
_BAD_REF_BYTES = re.compile(rb"[\x00-\x20\x7f~^:?*\[\\]")


@valueclass(frozen=True, slots=True)
class RefUpdate:
    old: str
    new: str
    raw_ref: bytes

    @property
    def ref(self) -> str:
        return self.raw_ref.decode("utf-8", "surrogateescape")

    @property
    def zero(self) -> str:
        """The all-zero id of this update's width (40 or 64 hex digits: the repository's format)."""
        return "0" * len(self.old)

    @property
    def is_create(self) -> bool:
        return self.old == self.zero

    @property
    def is_delete(self) -> bool:
        return self.new == self.zero

    @property
    def is_noop(self) -> bool:
        """Both ids zero: the deletion of a ref that does not exist. Nothing changes."""
        return self.is_create and self.is_delete


def generation_ref(generation: str) -> str:
    """The ref that claims a workspace generation: refs/gate/generations/<sha256 of it>
    (a generation may hold ':', which no ref name may)."""
    import hashlib

    return GENERATIONS_PREFIX + hashlib.sha256(generation.encode("utf-8")).hexdigest()


def is_reserved(ref: str) -> bool:
    """Under the trusted side's namespaces (the ledger, receipts, review refs)."""
    return ref.startswith((GATE_PREFIX, REVIEW_PREFIX))


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


def resolve_symbolic(name: str, targets: Mapping[str, str]) -> str | None:
    """The ref `name` resolves to, as git resolves it, through the symbolic refs `targets` maps
    (symbolic ref -> the ref it names): `name` itself when it is not symbolic; None where git
    gives up (a loop, or more than SYMREF_MAXDEPTH refs to read)."""
    current = name
    for _ in range(SYMREF_MAXDEPTH):
        following = targets.get(current)
        if following is None:
            return current
        current = following
    return None


def through_symbolic(updates: Sequence[RefUpdate], targets: Mapping[str, str]
                     ) -> tuple[list[RefUpdate], list[tuple[RefUpdate, str, str]]]:
    """The updates as git applies them, and those the gate refuses, as (update, code, reason).

    `targets`: the server's symbolic refs among the updated names and the refs they name (one
    level each; `resolve_symbolic` follows them). receive-pack writes an update of a symbolic
    ref through to the ref it resolves to (`check_aliased_updates`), so such an update is
    judged as that ref's, under that ref's name: its rules, its frozen scope. When the push
    updates the target as well, the two are one update if they agree (git skips the symbolic
    one) and are refused if they do not (git refuses both: "inconsistent aliased update"); two
    symbolic refs to one target likewise. Refused as well: a symbolic ref git cannot resolve
    ("broken symref"), one that resolves outside refs/ (GATE-REF-NAME), and one in or into the
    reserved namespaces (GATE-REF-RESERVED), whose stage judges refs by the names pushed.
    """
    refused: list[tuple[RefUpdate, str, str]] = []
    applied: dict[int, RefUpdate] = {}  # index of a symbolic ref's update -> the update git applies
    for i, u in enumerate(updates):
        if u.ref not in targets:
            continue
        target = resolve_symbolic(u.ref, targets)
        if target is None:
            refused.append((u, "GATE-REF-NAME", f"a symbolic ref on the server (to {display(targets[u.ref])}) that "
                                                f"git cannot resolve (a loop, or more than {SYMREF_MAXDEPTH} refs "
                                                "deep); git refuses it too (broken symref)"))
            continue
        raw = target.encode("utf-8", "surrogateescape")
        if any(is_reserved(r) or r in RESERVED_PARENTS for r in (u.ref, target)):
            refused.append((u, "GATE-REF-RESERVED", f"a symbolic ref on the server (to {display(raw)}): the reserved "
                                                    "namespaces are written under their own names only"))
            continue
        problem = ref_name_problem(raw)
        if problem is not None:
            refused.append((u, "GATE-REF-NAME", f"a symbolic ref on the server to {display(raw)}, which {problem}"))
            continue
        applied[i] = RefUpdate(u.old, u.new, raw)
    # every write of one ref: the pushed updates of it and those through symbolic refs
    writes: dict[bytes, set[tuple[str, str]]] = {}
    for i, u in enumerate(updates):
        if u.ref not in targets or i in applied:
            w = applied.get(i, u)
            writes.setdefault(w.raw_ref, set()).add((w.old, w.new))
    out: list[RefUpdate] = []
    seen: set[bytes] = {u.raw_ref for u in updates if u.ref not in targets}
    for i, u in enumerate(updates):
        if u.ref not in targets:
            out.append(u)
        elif i in applied:
            w = applied[i]
            if len(writes[w.raw_ref]) > 1:
                refused.append((u, "GATE-REF-NAME", f"a symbolic ref on the server (to {display(w.raw_ref)}), which "
                                                    "this push also updates to another value; git refuses both "
                                                    "(inconsistent aliased update)"))
            elif w.raw_ref not in seen:  # one write under the target's name (git skips the others)
                seen.add(w.raw_ref)
                out.append(w)
    return out, refused


def parse_pre_receive(data: bytes) -> list[RefUpdate]:
    """`<old> SP <new> SP <ref> LF` per line; ids of one hash length; refs unique and well formed.

    A line with both ids zero (deleting a ref that does not exist) is a no-op and kept as
    such (`RefUpdate.is_noop`): callers record it and check nothing for it.
    """
    if len(data) > MAX_INPUT_BYTES:
        raise GateError("GATE-INPUT-TOO-LARGE", f"{len(data)} bytes of input; the cap is {MAX_INPUT_BYTES}")
    if data and not data.endswith(b"\n"):
        raise GateError("GATE-INPUT-MALFORMED", "input does not end with a newline")
    updates: list[RefUpdate] = []
    seen: set[bytes] = set()
    width: int | None = None
    for n, line in enumerate(data.split(b"\n")[:-1], start=1):
        parts = line.split(b" ")
        if len(parts) != 3:
            raise GateError("GATE-INPUT-MALFORMED", f"line {n}: expected three space-separated fields")
        old, new, ref = parts
        if not _HEX.fullmatch(old) or not _HEX.fullmatch(new) or len(old) != len(new):
            raise GateError("GATE-INPUT-MALFORMED", f"line {n}: object ids are not lower-case hex of one length")
        if width is None:
            width = len(old)
        elif len(old) != width:
            raise GateError("GATE-INPUT-MALFORMED", f"line {n}: object ids of mixed lengths")
        problem = ref_name_problem(ref)
        if problem is not None:
            raise GateError("GATE-REF-NAME", f"line {n}: ref {display(ref)} {problem}")
        if ref in seen:
            raise GateError("GATE-INPUT-MALFORMED", f"line {n}: ref {display(ref)} appears twice")
        seen.add(ref)
        updates.append(RefUpdate(old.decode("ascii"), new.decode("ascii"), ref))
    return updates


def object_format_problem(updates: Sequence[RefUpdate], object_format: str) -> str | None:
    """Why these updates cannot be checked in a repository of `object_format`, or None
    (for GATE-GIT-OBJECT-FORMAT).

    The ids git hands the hook must have the width of the repository's format (40 hex digits
    for sha1, 64 for sha256; the zero id of that width). Both formats serve every namespace:
    the trusted side writes the ledger, receipts and approvals through git's plumbing.
    """
    from .gitmodel import FORMATS  # (not post-receive's: it parses the input and judges nothing)

    fmt = FORMATS.get(object_format)
    if fmt is None:
        return f"the repository's object format {object_format!r} is not one git knows"
    for u in updates:
        if len(u.old) != fmt.hexsz:
            return (f"ref {display(u.raw_ref)}: object ids of {len(u.old)} hex digits in a {fmt.name} repository "
                    f"(its ids have {fmt.hexsz})")
    return None


def parse_pre_push(data: bytes) -> list[RefUpdate]:
    """git's pre-push input as updates of the remote's refs (old: the remote's id, new: the pushed one).

    `<local ref> SP <local id> SP <remote ref> SP <remote id> LF` per line, checked by the
    pre-receive parser once reordered (ids, ref names, duplicates).
    """
    if not data.strip():
        return []  # nothing to push (or a wrapper's lone newline)
    if not data.endswith(b"\n"):
        raise GateError("GATE-INPUT-MALFORMED", "pre-push input does not end with a newline")
    lines = []
    for n, line in enumerate(data.split(b"\n")[:-1], start=1):
        parts = line.rsplit(b" ", 3)
        if len(parts) != 4 or not parts[0]:
            raise GateError("GATE-INPUT-MALFORMED", f"line {n}: expected '<local ref> <id> <remote ref> <id>'")
        _local, local_id, remote_ref, remote_id = parts
        lines.append(b"%s %s %s\n" % (remote_id, local_id, remote_ref))
    return parse_pre_receive(b"".join(lines))


def undisplay(text: str) -> bytes:
    """The bytes `display` shows as `text` (its inverse: `\\\\` is a backslash, `\\xNN` a byte;
    anything else stands for itself)."""
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and text[i + 1:i + 2] == "\\":
            out.append(0x5C)
            i += 2
        elif ch == "\\" and text[i + 1:i + 2] == "x" and _HEX2.fullmatch(text[i + 2:i + 4]):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
    return bytes(out)


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


class ServerRefs:
    """The server's value of each ref a check consults, read once and then fixed
    (`ServerRefs(refs.get)` for a dict of refs; the client: the remote's, as it knows them)."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        self._seen: dict[str, str | None] = {}

    def get(self, name: str) -> str | None:
        if name not in self._seen:
            self._seen[name] = self._read(name)
        return self._seen[name]


def shell_word(text: str) -> str:
    """`text` as one word of a shell command, in printable ASCII: `shlex.quote` when it is ASCII;
    else its bytes (as the ref or path holds them) in bash's and zsh's `$'...'` with `\\xNN` escapes,
    so that the command runs as printed where the hint's line shows other bytes escaped (a name
    printed raw could also carry a terminal's C1 controls)."""
    import shlex

    if text.isascii():
        return shlex.quote(text)
    raw = text.encode("utf-8", "surrogateescape")  # (as RefUpdate.ref read them)
    return "$'" + "".join(chr(b) if 0x20 <= b < 0x7F and b not in b"\\'" else f"\\x{b:02x}" for b in raw) + "'"
