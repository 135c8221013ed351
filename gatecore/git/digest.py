"""Canonical diff digests.

`gate-tree-delta-v1` binds a change by git objects, not by `git diff` text (which
depends on rename detection, diff algorithm and the tool). It is the SHA-256 of::

    b"gate-tree-delta-v1\\n" || fmt || b"\\n" || u64be(n) || record_1 || ... || record_n

where fmt is b"sha1" or b"sha256", records are sorted by path bytes, and each record is
seven length-prefixed fields (u32be length, then the bytes):

    path, old mode, new mode, old id, new id, old sha256, new sha256

Modes are six ASCII octal digits (b"100644", b"000000" for an absent side); ids are
lower-case hex (all zeros for an absent side); the sha256 fields are the lower-case hex
SHA-256 of the blob's bytes, or empty for an absent side and for submodules (gitlinks,
mode 160000, whose commit is not in the repository). Records come from a recursive
tree-to-tree comparison with no rename detection in which identical subtrees are
skipped; they correspond one to one with `git diff-tree -r -z --no-renames --raw` lines
(a type change is one record). See docs/digest.md for test vectors.

`sha256-bytes` is the plain form of the seed's flow: the SHA-256 of a patch file's bytes.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterable

from ..errors import GateError
from ..valueclass import valueclass
from .gitmodel import MODE_GITLINK
from .objects import Objects
from .treediff import Change, TreeDiff

TREE_DELTA_MAGIC = b"gate-tree-delta-v1\n"


@valueclass(frozen=True, slots=True)
class DeltaRecord:
    path: bytes
    old_mode: int
    new_mode: int
    old_id: str
    new_id: str
    old_sha256: str
    new_sha256: str

    def fields(self) -> tuple[bytes, ...]:
        return (
            self.path,
            b"%06o" % self.old_mode,
            b"%06o" % self.new_mode,
            self.old_id.encode("ascii"),
            self.new_id.encode("ascii"),
            self.old_sha256.encode("ascii"),
            self.new_sha256.encode("ascii"),
        )


def encode_records(object_format: str, records: Iterable[DeltaRecord]) -> bytes:
    ordered = sorted(records, key=lambda r: r.path)
    paths = [r.path for r in ordered]
    if len(set(paths)) != len(paths):
        raise ValueError("duplicate path in tree delta")
    parts = [TREE_DELTA_MAGIC, object_format.encode("ascii"), b"\n", struct.pack(">Q", len(ordered))]
    for rec in ordered:
        for field in rec.fields():
            parts.append(struct.pack(">I", len(field)))
            parts.append(field)
    return b"".join(parts)


def digest_records(object_format: str, records: Iterable[DeltaRecord]) -> str:
    return hashlib.sha256(encode_records(object_format, records)).hexdigest()


def delta_records(objects: Objects, old_tree: str | None, new_tree: str | None) -> list[DeltaRecord]:
    """The records of old_tree -> new_tree (None is the empty tree); each blob read once.

    A record with a mode that is not one of git's five canonical modes raises
    GATE-GIT-MODE: git would show such an entry under another mode than the tree holds.
    """
    changes = canonical_changes(objects, old_tree, new_tree)
    # Every blob's digest in one request (a reader may stream them all).
    digests = objects.reader.blob_digests(
        oid for c in changes for mode, oid in ((c.old_mode, c.old_id), (c.new_mode, c.new_id))
        if mode not in (0, MODE_GITLINK))

    def content(mode: int, oid: str) -> str:
        return "" if mode in (0, MODE_GITLINK) else digests[oid]

    return [DeltaRecord(c.path, c.old_mode, c.new_mode, c.old_id, c.new_id,
                        content(c.old_mode, c.old_id), content(c.new_mode, c.new_id)) for c in changes]


def canonical_changes(objects: Objects, old_tree: str | None, new_tree: str | None,
                      keep: Callable[[bytes], bool] | None = None) -> list[Change]:
    """The records of old_tree -> new_tree (`treediff`; `keep`: only the paths it keeps), or
    GATE-GIT-MODE for one whose mode is not one of git's five canonical modes (git would show it
    under another mode than the tree holds). The one reading of a change the digest and the
    change's text (`changetext`) share."""
    modes: list[tuple[bytes, int]] = []
    changes = TreeDiff(objects).changes(old_tree, new_tree, modes=modes)
    if keep is not None:
        changes = [c for c in changes if keep(c.path)]
        modes = [m for m in modes if keep(m[0])]
    if modes:
        path, mode = modes[0]
        raise GateError("GATE-GIT-MODE", f"{path!r} has mode {mode:o}, not one of git's canonical modes")
    return changes


def tree_delta_digest(objects: Objects, base_commit: str, new_commit: str) -> str:
    base = objects.commit(base_commit).tree_id
    new = objects.commit(new_commit).tree_id
    return digest_records(objects.reader.object_format, delta_records(objects, base, new))


def bytes_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
