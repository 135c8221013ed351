"""The reserved stage, review refs: `refs/heads/review/runner/<id>`.

Every update needs the receipt that comes with it in the same push (`receipts.py`), judged
against the attempt as the server's ledger holds it (never against ledger records in the
same push: `GATE-REVIEW-SAME-PUSH`), the digest recomputed from the pushed objects, the
ref and its old value, and a base that covers everything the review brings onto its
target branch as the server has it. A receipt whose sealed payload was pushed for the
attempt before, in any encoding, is refused (`GATE-RECEIPT-REUSED`). Under `[review] independent`,
the model on record must be independent of the one the ledger says wrote the change
(`gatecore.independence`).

A receipt is recorded as used by its receipt ref, which git may refuse after the hook
accepted the push (without `--atomic`, or a ref locked by another process) while it applies
the review ref. So a review ref that already exists moves, or is deleted, only from where
the last receipt on record put it (`GATE-REVIEW-UNRECORDED` otherwise): a receipt whose use
was never recorded can never be used again, because the ref never returns to the value the
receipt was bound to. Once the attempt is archived its review ref may go whatever it holds.
"""

from __future__ import annotations

from .. import envelope, ids
from ..binding import Expectations, compare, open_receipt
from ..digest import tree_delta_digest
from ..envelope import payload_digest
from ..errors import GateError
from ..findings import Failure, Violation
from ..ledger import AttemptState
from ..objects import Objects
from ..receipt import DIFF_TREE_DELTA, Receipt, parse_payload
from ..refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, RefUpdate, generation_ref
from .context import ReservedContext, violation
from .receipts import receipt_bytes


def review_ref(ctx: ReservedContext, u: RefUpdate) -> list[Violation]:
    attempt = u.ref[len(REVIEW_PREFIX):]
    if not ids.is_attempt_id(attempt):
        return [violation("GATE-REF-NAME", u, "review refs are refs/heads/review/runner/<attempt-id>")]
    try:
        if u.is_delete and ctx.archive.attempt(attempt):
            return []  # archiving removes it, whatever it holds
        unrecorded = [] if u.is_create else _unrecorded(ctx, u, attempt)
    except GateError as exc:
        return [violation(exc.code, u, exc.detail, attempt)]
    if u.is_delete or unrecorded:  # the runner cleans up after a merge: from where its receipt put it
        return unrecorded
    if ATTEMPTS_PREFIX + attempt in ctx.push:
        return [violation("GATE-REVIEW-SAME-PUSH", u, "the push also updates the attempt's ledger", attempt)]
    try:
        state = ctx.state(attempt)
        if state is None:
            return [violation("GATE-LEDGER-MISSING", u, f"no refs/gate/attempts/{attempt} on the server", attempt)]
        if ctx.server.get(generation_ref(state.workspace_generation)) != state.root:
            return [violation("GATE-LEDGER-GENERATION-REUSED", u, f"generation {state.workspace_generation} is "
                                                                  "not claimed by this attempt", attempt)]
        if state.model_id is None:
            return [violation("GATE-LEDGER-NO-MODEL", u, "no model on record", attempt)]
        if state.closed:
            return [violation("GATE-LEDGER-CLOSED", u, "the attempt is closed", attempt)]
        if ctx.objects.type_of(u.new) != "commit":
            return [violation("GATE-REF-TARGET", u, "review refs point at commits", attempt)]
        failures = _decide(ctx, u, attempt, state, receipt_bytes(ctx, attempt))
    except GateError as exc:
        return [violation(exc.code, u, exc.detail, attempt)]
    return [violation(f.code, u, f.detail, attempt, f.field, u.new) for f in failures]


def _unrecorded(ctx: ReservedContext, u: RefUpdate, attempt: str) -> list[Violation]:
    """Is the review ref on the server where the last receipt on record put it?"""
    tip = ctx.server.get(RECEIPTS_PREFIX + attempt)
    put = None
    if tip is not None:
        receipt, _ = parse_payload(envelope.parse(ctx.receipt_at(tip)).payload)
        put = None if receipt is None else (receipt.ref, receipt.new_commit)
    if put == (u.ref, u.old):
        return []
    return [violation("GATE-REVIEW-UNRECORDED", u, f"the review ref is at {u.old[:12]}, where no receipt on record "
                                                   f"put it (a push landed it without its receipt ref); close the "
                                                   "attempt, archive it, and review in a new attempt", attempt)]


def _used_before(ctx: ReservedContext, attempt: str, digest: str) -> bool:
    """Was a receipt with this sealed payload pushed before: in the attempt's receipt history on
    the server, or in the archive?"""
    return ctx.archive.receipt(digest) or any(payload_digest(earlier) == digest
                                              for earlier in ctx.receipt_history(attempt))


def target_branch(ctx: ReservedContext, state: AttemptState) -> str | None:
    """The branch a review of this attempt goes onto: the ledger's, else the server's HEAD."""
    return state.target or ctx.head_branch()


def base_failures(objects: Objects, receipt: Receipt, new: str) -> list[Failure]:
    """The receipt's base is a commit of this repository and an ancestor of the reviewed commit
    `new` (the push's check, below, and `gate attest export`'s)."""
    base = receipt.base_commit
    if base is None:
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit", "missing from the receipt")]
    if not objects.reader.exists(base) or objects.type_of(base) != "commit":
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit", "not a commit in this repository")]
    if not objects.reader.is_ancestor(base, new):
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit", "not an ancestor of the reviewed commit")]
    return []


def _base_failures(ctx: ReservedContext, receipt: Receipt, new: str, state: AttemptState) -> list[Failure]:
    """The receipt's base must be an ancestor of the pushed commit and of its merge base with
    the target branch as the server has it: then the reviewed diff covers everything the
    review ref would bring onto the target."""
    found = base_failures(ctx.objects, receipt, new)
    if found:
        return found
    base = receipt.base_commit
    assert base is not None  # base_failures refuses a receipt without one
    reader = ctx.objects.reader
    target = target_branch(ctx, state)
    tip = None if target is None else ctx.server.get(target)
    if target is None or tip is None:
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit",
                        f"the target branch {target or '(HEAD)'} is not on the server")]
    target_commit = ctx.objects.peel_to_commit(tip)
    fork = None if target_commit is None else reader.merge_base(target_commit, new)
    if fork is None:
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit", f"the pushed commit shares no history with {target}")]
    if not reader.is_ancestor(base, fork):
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit",
                        f"the diff from {base[:12]} leaves out changes the review brings onto {target}: take it "
                        f"from the merge base {fork[:12]} or earlier")]
    return []


def _decide(ctx: ReservedContext, u: RefUpdate, attempt: str, state: AttemptState,
            data: bytes | None) -> list[Failure]:
    receipt, failures, sealed = open_receipt(data, ctx.require_keyring(), ctx.now)
    if ctx.policy.independent != "off":  # of the ledger, not the receipt: asked whatever the receipt holds
        from ..independence import Author, Independence

        question = Independence(ctx.policy.independent, Author(state.author_model, state.author_vendor),
                                ctx.policy.review_vendors, ctx.policy.model_reader())
        failures += question.failures(state.model_id or "")
    if receipt is None or data is None:
        return failures
    base_failures = _base_failures(ctx, receipt, u.new, state)
    failures += base_failures
    digest = receipt.diff_sha256  # a bad base already fails the receipt
    if not base_failures and receipt.base_commit is not None:
        digest = tree_delta_digest(ctx.objects, receipt.base_commit, u.new)
    expected = Expectations(
        attempt_id=attempt, model_id=state.model_id or "", workspace_generation=state.workspace_generation,
        prompt_sha256=state.prompt_sha256, diff_sha256=digest, diff_algorithm=DIFF_TREE_DELTA,
        repository=ctx.repository_id, ref=u.ref, old_commit=u.old, new_commit=u.new,
        new_tree=ctx.objects.commit(u.new).tree_id, object_format=ctx.objects.reader.object_format,
        ledger_record=state.model_record,
    )
    failures += compare(receipt, expected)
    if not sealed and not failures:  # pragma: no cover - open_receipt reports seal failures
        failures.append(Failure("GATE-SEAL-BAD-SIGNATURE", "sig", "unsealed"))
    payload = payload_digest(data)
    if not failures and payload is not None and _used_before(ctx, attempt, payload):
        failures.append(Failure("GATE-RECEIPT-REUSED", "receipt",
                                "this receipt was already pushed for this attempt; a receipt is used once"))
    return failures
