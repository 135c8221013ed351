"""The reserved stage, the archive: folding closed attempts into `refs/gate/archive`.

A push that archives attempts updates `refs/gate/archive` (trusted, fast-forward, entries
only added, never changed) and deletes each archived attempt's refs: its ledger, its
generation claim, its receipt ref and its review ref. Such deletions are refused anywhere
else (`GATE-LEDGER-DELETE`, `GATE-REVIEW-RECEIPT-REF`). For every attempt whose ledger the
push deletes, the attempt must be closed on the server, and the new archive must hold its
id, its generation and the sealed payload of every receipt in its receipt history
(`GATE-LEDGER-ARCHIVE` otherwise): archiving never reopens a generation or a receipt.
The archive's layout is `gatecore.archive`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..archive import ARCHIVE_REF, Archive
from ..envelope import payload_digest
from ..errors import GateError
from ..findings import Violation
from ..gitmodel import MODE_BLOB
from ..refs import ATTEMPTS_PREFIX, RefUpdate
from ..treediff import TreeDiff
from .context import ReservedContext, violation
from .receipts import receipt_history

_ENTRY = re.compile(rb"(attempts|generations|receipts)/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}")
MAX_ENTRY_BYTES = 256


@dataclass
class ArchiveCheck:
    violations: list[Violation]
    archived: set[str]  # attempts this push archives (their refs may be deleted in it)


def check_archive(ctx: ReservedContext, updates: Sequence[RefUpdate]) -> ArchiveCheck:
    update = next((u for u in updates if u.ref == ARCHIVE_REF), None)
    leaving = [u.ref[len(ATTEMPTS_PREFIX):] for u in updates if u.ref.startswith(ATTEMPTS_PREFIX) and u.is_delete]
    if update is None:
        return ArchiveCheck([], set())
    try:
        problems = _archive_update(ctx, update)
        if problems:
            return ArchiveCheck(problems, set())
        new = Archive(ctx.objects, update.new)
        out: list[Violation] = []
        for attempt in leaving:
            out += _archived_attempt(ctx, new, update, attempt)
    except GateError as exc:
        return ArchiveCheck([violation(exc.code, update, exc.detail)], set())
    return ArchiveCheck(out, set(leaving) if not out else set())


def _archive_update(ctx: ReservedContext, u: RefUpdate) -> list[Violation]:
    if u.is_delete:
        return [violation("GATE-LEDGER-DELETE", u, "the archive is never deleted")]
    if ctx.objects.type_of(u.new) != "commit":
        return [violation("GATE-LEDGER-ARCHIVE", u, "the archive ref points at a commit")]
    if not u.is_create and not ctx.objects.reader.is_ancestor(u.old, u.new):
        return [violation("GATE-LEDGER-REWRITE", u, "the archive only moves forward")]
    old_tree = None if u.is_create else ctx.objects.commit(u.old).tree_id
    out = []
    for c in TreeDiff(ctx.objects).changes(old_tree, ctx.objects.commit(u.new).tree_id):
        if c.old_mode != 0:
            out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{c.path.decode(errors='replace')}: archive entries are "
                                                           "only added, never changed or removed"))
        elif c.new_mode != MODE_BLOB or not _ENTRY.fullmatch(c.path):
            out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{c.path.decode(errors='replace')} is not an archive "
                                                           "entry (kind/aa/bb/sha256-rest, a regular file)"))
        elif ctx.objects.reader.header(c.new_id)[1] > MAX_ENTRY_BYTES:
            out.append(violation("GATE-LEDGER-ARCHIVE", u, f"{c.path.decode()} is over {MAX_ENTRY_BYTES} bytes"))
        if len(out) >= 10:
            break
    return out


def _archived_attempt(ctx: ReservedContext, new: Archive, u: RefUpdate, attempt: str) -> list[Violation]:
    state = ctx.state(attempt)
    if state is None:
        return [violation("GATE-LEDGER-MISSING", u, f"no refs/gate/attempts/{attempt} on the server", attempt)]
    if not state.closed:
        return [violation("GATE-LEDGER-ARCHIVE", u, "only closed attempts are archived", attempt)]
    missing = []
    if not new.attempt(attempt):
        missing.append("its id")
    if not new.generation(state.workspace_generation):
        missing.append("its generation")
    receipts = [payload_digest(data) for data in receipt_history(ctx, attempt)]
    if not all(d is not None and new.receipt(d) for d in receipts):
        missing.append("every receipt of its history")
    if missing:
        return [violation("GATE-LEDGER-ARCHIVE", u, f"the archive must hold {', '.join(missing)}", attempt)]
    return []
