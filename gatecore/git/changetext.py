"""A change as the model reads it, shown by the gate's rules alone (pure): `gate review run`'s request.

`git diff` decides how a change looks from the repository it runs in, and the reviewed tree
is part of that repository: a `.gitattributes` at any depth with `*.py -diff`, `binary` or
`diff=NAME` (whose driver says `binary = true`), `$GIT_DIR/info/attributes`,
`core.attributesFile`, `diff.*` or `core.bigFileThreshold` in the clone's config, `GIT_DIFF_OPTS`
in the environment: each can make git print `Binary files /dev/null and b/src/evil.py differ`
for a text file, and a model that read that line approved a file it never saw. So nothing of
git's presentation is used here: the change is read from git's objects and shown by these
rules, whatever the tree, the clone or the machine say (`FORMAT`):

* **the files**: every record of the tree delta the receipt's digest binds (`treediff`: every
  path whose mode or id differs, no rename detection), in path order, none left out;
* **text**: a blob without a NUL byte, as a unified diff (3 lines of context; the common head
  and tail of the two sides set aside first, the middle aligned by `difflib`, or, when the
  middle is too large to align (`ALIGN_BUDGET`), shown whole: every old line removed, every new
  one added); every byte is shown, bytes that are not UTF-8 and characters that move or hide
  text (controls, line and paragraph separators, bidirectional overrides) as escapes (`\\x1b`,
  `\\u202e`);
* **binary**: a blob holding a NUL byte is not shown as text: a line of its own says so, with
  each side's size and SHA-256, and that the reviewer has not seen it; the text's first lines
  count such files too;
* **the rest**: a symlink's target as its text, a submodule as `Subproject commit ID`, a mode
  change as `old mode` / `new mode`, a change of kind (file, symlink, submodule) as the old one
  deleted and the new one added; a path that is not plain printable UTF-8 in double quotes, with
  escapes.

A content line always starts with its prefix (` `, `+`, `-`), so a file cannot print a line
the text reads as the gate's own. The text is a function of the objects alone: anyone holding
them rebuilds it byte for byte. A change whose text is larger than the caller's `limit` is
refused, `GATE-REVIEW-CHANGE-TOO-LARGE`, never cut.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Sequence

from ..errors import GateError
from ..valueclass import valueclass
from .digest import canonical_changes
from .gitmodel import MODE_GITLINK, canon_mode, kind_of
from .objects import Objects

FORMAT = "gate-change-text-v1"
CONTEXT = 3
#: The largest middle (old lines times new lines, after the common head and tail) `difflib`
#: aligns; a larger one is shown whole. Measured: 20,000 by 20,000 lines with 50 scattered
#: edits align in 0.4 s.
ALIGN_BUDGET = 400_000_000
TOO_LARGE = "GATE-REVIEW-CHANGE-TOO-LARGE"

#: Characters shown as escapes: C0 controls but tab, DEL, C1 controls, the line and paragraph
#: separators, and the bidirectional formatting characters (they reorder what a reader sees).
#: Bytes that are not UTF-8 (read as surrogates, `surrogateescape`) as `\xNN`.
_ESCAPED = {**{c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}")
               for c in (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029,
                         *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)},
            **{0xDC00 + b: f"\\x{b:02x}" for b in range(0x80, 0x100)}}
_QUOTED = {**_ESCAPED, ord('"'): '\\"', ord("\\"): "\\\\"}


@valueclass(frozen=True, slots=True)
class FileChange:
    """One record of the delta with its contents (None: the side is absent, or a submodule)."""

    path: bytes
    old_mode: int
    new_mode: int
    old_id: str
    new_id: str
    old: bytes | None
    new: bytes | None


@valueclass(frozen=True, slots=True)
class ChangeText:
    """The change as shown: the text, how many files it shows, how many of them are binary."""

    text: str
    files: int
    binary: int


def show(text: bytes) -> str:
    """Content as shown: UTF-8, every other byte and every escaped character as an escape."""
    return text.decode("utf-8", "surrogateescape").translate(_ESCAPED)


def path_text(path: bytes) -> str:
    """A path as shown: as is when it is plain printable UTF-8 without quotes or backslashes, else
    in double quotes with escapes (as git quotes a path)."""
    plain = path.decode("utf-8", "surrogateescape")
    quoted = plain.translate(_QUOTED)
    return plain if quoted == plain else f'"{quoted}"'


def change_text(objects: Objects, base: str | None, new: str, limit: int | None = None,
                paths: Sequence[bytes] | None = None) -> ChangeText:
    """The change from commit `base` (None: the empty tree, for a root commit) to commit `new`, read
    from the objects and shown (module doc); with `paths`, only the records at or below them."""
    def under(path: bytes) -> bool:
        return paths is None or any(path == p or path.startswith(p + b"/") for p in paths)

    changes = canonical_changes(objects, None if base is None else objects.commit(base).tree_id,
                                objects.commit(new).tree_id, None if paths is None else under)
    wanted = list(dict.fromkeys(oid for c in changes for mode, oid in ((c.old_mode, c.old_id), (c.new_mode, c.new_id))
                                if mode not in (0, MODE_GITLINK)))
    blobs = {oid: data for oid, _kind, data in objects.reader.read_many(wanted)} if wanted else {}

    def content(mode: int, oid: str) -> bytes | None:
        return None if mode in (0, MODE_GITLINK) else blobs[oid]

    files = [FileChange(c.path, c.old_mode, c.new_mode, c.old_id, c.new_id, content(c.old_mode, c.old_id),
                        content(c.new_mode, c.new_id)) for c in changes]
    return render(files, base, new, limit)


def render(files: Sequence[FileChange], base: str | None, new: str, limit: int | None = None) -> ChangeText:
    """The text of these records (in path order), or GATE-REVIEW-CHANGE-TOO-LARGE past `limit` bytes."""
    ordered = sorted(files, key=lambda f: f.path)
    sections: list[str] = []
    size = 0
    binary: set[bytes] = set()
    for n, f in enumerate(ordered):
        for part, is_binary in _sections(f):
            if is_binary:
                binary.add(f.path)
            size += len(part.encode("utf-8"))
            if limit is not None and size > limit:
                raise GateError(TOO_LARGE, f"the change shown as text is more than {limit} bytes at file {n + 1} of "
                                           f"{len(ordered)} ({path_text(f.path)}): too large for one review request, "
                                           "and never cut; review it in smaller changes")
            sections.append(part)
    head = [f"{len(ordered)} file(s) changed from {base or 'the empty tree'} to {new}, every one below, nothing cut "
            f"({FORMAT}: shown by the gate from git's objects, whatever the repository's attributes or "
            "configuration say)."]
    if binary:
        head.append(f"{len(binary)} of them hold binary content (NUL bytes), not shown as text: their size and "
                    "SHA-256 are. You have not seen what they hold.")
    return ChangeText("\n".join(head) + "\n\n" + "".join(sections), len(ordered), len(binary))


def _sections(f: FileChange) -> list[tuple[str, bool]]:
    """One section, or two where the kind changes (the old one deleted, the new one added)."""
    old_kind = kind_of(f.old_mode) if f.old_mode else None
    new_kind = kind_of(f.new_mode) if f.new_mode else None
    if old_kind is not None and new_kind is not None and old_kind != new_kind:
        zero = "0" * len(f.old_id)
        return [_section(FileChange(f.path, f.old_mode, 0, f.old_id, zero, f.old, None)),
                _section(FileChange(f.path, 0, f.new_mode, zero, f.new_id, None, f.new))]
    return [_section(f)]


def _section(f: FileChange) -> tuple[str, bool]:
    """The record's text, and whether its content is binary (not shown)."""
    name = path_text(f.path)
    a, b = (f"a/{name}", f"b/{name}") if not name.startswith('"') else (f'"a/{name[1:]}', f'"b/{name[1:]}')
    lines = [f"diff --git {a} {b}"]
    if not f.old_mode:
        lines.append(f"new file mode {f.new_mode:06o}")
    elif not f.new_mode:
        lines.append(f"deleted file mode {f.old_mode:06o}")
    elif f.old_mode != f.new_mode:
        lines += [f"old mode {f.old_mode:06o}", f"new mode {f.new_mode:06o}"]
    lines.append(f"index {f.old_id}..{f.new_id}")
    if f.old_id == f.new_id:  # the mode alone changed
        return "\n".join(lines) + "\n", False
    old, new = _content(f.old_mode, f.old_id, f.old), _content(f.new_mode, f.new_id, f.new)
    if b"\0" in old or b"\0" in new:
        said = "; ".join(f"{side} {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"
                         for side, data, mode in (("old", old, f.old_mode), ("new", new, f.new_mode)) if mode)
        lines.append(f"!!! binary content (it holds NUL bytes), not shown as text: {said}. You have not seen what "
                     "this file holds.")
        return "\n".join(lines) + "\n", True
    lines += ["--- /dev/null" if not f.old_mode else f"--- {a}", "+++ /dev/null" if not f.new_mode else f"+++ {b}"]
    if not old and not new:
        lines.append("(empty)")
    return "\n".join(lines) + "\n" + "".join(_unified(_split(old), _split(new))), False


def _content(mode: int, oid: str, data: bytes | None) -> bytes:
    if not mode:
        return b""
    if canon_mode(mode) == MODE_GITLINK:
        return f"Subproject commit {oid}\n".encode("ascii")
    return data or b""


def _split(data: bytes) -> list[bytes]:
    """Lines as git splits them: at each newline only, the last one possibly without its own."""
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


Opcode = tuple[str, int, int, int, int]


def _opcodes(a: list[bytes], b: list[bytes]) -> list[Opcode]:
    """How `a` becomes `b`: the common head and tail set aside, the middle aligned (or replaced whole)."""
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head:len(a) - tail], b[head:len(b) - tail]
    if len(mid_a) * len(mid_b) <= ALIGN_BUDGET:
        middle = difflib.SequenceMatcher(None, mid_a, mid_b).get_opcodes()
    else:
        middle = [("replace", 0, len(mid_a), 0, len(mid_b))]
    out: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    out += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle
            if i1 != i2 or j1 != j2]
    if tail:
        out.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return out


def _groups(codes: list[Opcode], n: int) -> list[list[Opcode]]:
    """The opcodes in hunks, each change with up to `n` lines of context (difflib's grouping)."""
    if not any(tag != "equal" for tag, *_ in codes):
        return []
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        start_a, start_b = i1, j1
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            start_a, start_b = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, start_a, i2, start_b, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _range(start: int, stop: int) -> str:
    length = stop - start
    return f"{start + 1}" if length == 1 else f"{start if not length else start + 1},{length}"


def _unified(a: list[bytes], b: list[bytes]) -> list[str]:
    out: list[str] = []
    for group in _groups(_opcodes(a, b), CONTEXT):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [_line(" ", line) for line in a[i1:i2]]
                continue
            out += [_line("-", line) for line in a[i1:i2]]
            out += [_line("+", line) for line in b[j1:j2]]
    return out


def _line(prefix: str, line: bytes) -> str:
    if line.endswith(b"\n"):
        return prefix + show(line[:-1]) + "\n"
    return prefix + show(line) + "\n\\ No newline at end of file\n"
