"""The ledger archive: closed attempts folded into one append-only tree (pure; read through the port).

Every attempt leaves refs behind (`refs/gate/attempts/<id>`, its generation claim, its
receipt ref, its review ref). `gate ledger archive` folds closed attempts into
`refs/gate/archive` and deletes their refs in the same push; the hook still consults the
archive, so archiving never reopens a generation, an attempt id or a receipt:

    refs/gate/archive -> commit -> tree
        attempts/<aa>/<bb>/<sha256(attempt id)[4:]>     blob: the attempt id
        generations/<aa>/<bb>/<sha256(generation)[4:]>  blob: the attempt id
        receipts/<aa>/<bb>/<sha256(sealed payload)[4:]> blob: the attempt id

A lookup reads three small trees below the root (the entries are spread over 65,536
leaf directories), whatever the number of archived attempts. The archive only grows: an
update must add entries and change none (`gatecore.reserved.archiverefs` checks it), and an entry can only
refuse more, never accept.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from ..git.gitmodel import MODE_BLOB, MODE_TREE, canon_mode
from ..git.objects import Objects
from ..git.refs import GENERATIONS_PREFIX

ARCHIVE_REF = "refs/gate/archive"
KINDS = ("attempts", "generations", "receipts")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_path(kind: str, hexdigest: str) -> str:
    """Where an entry lives: kind/aa/bb/rest."""
    return f"{kind}/{hexdigest[:2]}/{hexdigest[2:4]}/{hexdigest[4:]}"


def claim_digest(generation_ref: str) -> str:
    """The sha256 in a generation claim's ref name."""
    return generation_ref[len(GENERATIONS_PREFIX):]


def entries_for(attempt: str, generation: str, receipt_payloads: Iterable[str]) -> dict[str, bytes]:
    """The archive entries that keep an attempt's id, generation and receipts refused forever."""
    value = attempt.encode("ascii")
    out = {entry_path("attempts", digest(attempt)): value, entry_path("generations", digest(generation)): value}
    out.update({entry_path("receipts", d): value for d in receipt_payloads})
    return out


class Archive:
    """Lookups in the archive tree at one commit (None: no archive yet)."""

    def __init__(self, objects: Objects, tip: str | None) -> None:
        self.objects = objects
        self.tree = None if tip is None else objects.commit(tip).tree_id

    def holds(self, kind: str, hexdigest: str) -> bool:
        tree = self.tree
        if tree is None:
            return False
        parts = entry_path(kind, hexdigest).split("/")
        for name in parts[:-1]:
            entry = self.objects.tree(tree).get(name.encode())
            if entry is None or canon_mode(entry[0]) != MODE_TREE:
                return False
            tree = entry[1]
        entry = self.objects.tree(tree).get(parts[-1].encode())
        return entry is not None and entry[0] == MODE_BLOB

    def attempt(self, attempt: str) -> bool:
        return self.holds("attempts", digest(attempt))

    def generation(self, generation: str) -> bool:
        return self.holds("generations", digest(generation))

    def receipt(self, payload_digest: str) -> bool:
        return self.holds("receipts", payload_digest)
