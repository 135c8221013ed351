"""The reserved stage, receipt refs: `refs/gate/receipts/<id>`, the receipt's transport.

A commit whose tree holds exactly `receipt.json` (the sealed envelope), parent the previous
receipt commit of the attempt. Pushed with the review ref; never on its own, never deleted
(but by archiving), only forward. The review ref's check (`review.py`) judges the receipt
itself.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import ids
from ..errors import GateError
from ..findings import Violation
from ..ledger import MAX_CHAIN, RECEIPT_FILE
from ..objects import single_file
from ..refs import RECEIPTS_PREFIX, REVIEW_PREFIX, RefUpdate
from .context import ReservedContext, violation


def receipt_history(ctx: ReservedContext, attempt: str) -> Iterator[bytes]:
    """The envelope bytes of every receipt in the attempt's receipt chain on the server, newest first."""
    current = ctx.server.get(RECEIPTS_PREFIX + attempt)
    seen = 0
    while current is not None:
        seen += 1
        if seen > MAX_CHAIN:
            raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt history longer than {MAX_CHAIN}")
        info = ctx.objects.commit(current)
        yield single_file(ctx.objects, info.tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF")
        current = info.parent_ids[0] if info.parent_ids else None


def receipt_ref(ctx: ReservedContext, u: RefUpdate, archived: set[str]) -> list[Violation]:
    """One update of a receipt ref (`archived`: the attempts this push archives)."""
    attempt = u.ref[len(RECEIPTS_PREFIX):]
    if not ids.is_attempt_id(attempt):
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "the ref name is not refs/gate/receipts/<attempt-id>")]
    if u.is_delete:
        if attempt in archived:
            return []
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "receipt refs are deleted only when their attempt is "
                                                        "archived", attempt)]
    review = ctx.push.get(REVIEW_PREFIX + attempt)
    if review is None or review.is_delete:
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "a receipt travels with its review ref, in one push", attempt)]
    if ctx.objects.type_of(u.new) != "commit":
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "receipt refs point at receipt commits", attempt)]
    if not u.is_create and not ctx.objects.reader.is_ancestor(u.old, u.new):
        return [violation("GATE-REVIEW-RECEIPT-REF", u, "receipt refs only move forward", attempt)]
    return []


def receipt_bytes(ctx: ReservedContext, attempt: str) -> bytes | None:
    """The receipt this push brings for the attempt (None: its receipt ref is not in the push)."""
    u = ctx.push.get(RECEIPTS_PREFIX + attempt)
    if u is None or u.is_delete or ctx.objects.type_of(u.new) != "commit":
        return None
    return single_file(ctx.objects, ctx.objects.commit(u.new).tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF")
