"""The reserved stage, receipt refs: `refs/gate/receipts/<id>`, the receipt's transport.

Each update adds exactly one receipt commit: its only parent is the ref's value on the
server (none when the ref is created), its tree holds exactly one regular file,
`receipt.json`, a well-formed envelope. The receipt ref travels with its review ref in one
push; it is never deleted but by archiving (`archiverefs.py`) and only moves forward. The review
ref's check (`reviewrefs.py`) judges the receipt itself.

Because every receipt commit is checked as it arrives, the chain on the server is one line
of well-formed receipts: the reuse check and the archive read all of it
(`ReservedContext.history`).
"""

from __future__ import annotations

from .. import ids
from ..errors import GateError
from ..findings import Violation
from ..git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX, RefUpdate
from .archiverefs import deletion
from .context import ReservedContext, violation


def receipt_ref(ctx: ReservedContext, u: RefUpdate) -> list[Violation]:
    """One update of a receipt ref."""
    attempt = u.ref[len(RECEIPTS_PREFIX):]
    if not ids.is_attempt_id(attempt):
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "the ref name is not refs/gate/receipts/<attempt-id>")]
    if u.is_delete:
        return deletion(ctx, u)
    review = ctx.push.get(REVIEW_PREFIX + attempt)
    if review is None or review.is_delete:
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "a receipt travels with its review ref, in one push", attempt)]
    if ctx.objects.type_of(u.new) != "commit":
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "receipt refs point at receipt commits", attempt)]
    commit = ctx.objects.commit(u.new)
    if list(commit.parent_ids) != ([] if u.is_create else [u.old]):
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "a push adds one receipt commit, whose only parent is the "
                                                        "receipt ref on the server (none when it is created)", attempt)]
    try:
        opened = ctx.opened(u.new)
    except GateError as exc:
        return [violation(exc.code, u, f"receipt commit {u.new[:12]}: {exc.detail}", attempt)]
    if opened.envelope is None:
        return [violation(f.code, u, f"receipt commit {u.new[:12]}: {f.detail}", attempt) for f in opened.problems]
    return []

