"""The reserved stage, review refs: `refs/heads/review/runner/<id>`.

Every update needs the receipt that comes with it in the same push (`receiptrefs.py`), judged
against the attempt as the server's ledger holds it (never against ledger records in the
same push: `GATE-REVIEW-SAME-PUSH`), the digest recomputed from the pushed objects, the
ref and its old value, and a base that covers everything the review brings onto its
target branch as the server has it. A receipt whose sealed payload was pushed for the
attempt before, in any encoding, is refused (`GATE-RECEIPT-REUSED`). Under `[review] independent`,
the model on record must be independent of the one the ledger says wrote the change and of
the agents the reviewed commits show (`gatecore.checks.authorship`); under `[review] model_run =
"runner"`, the receipt must say the runner called the model itself.

A receipt is recorded as used by its receipt ref, which git may refuse after the hook
accepted the push (without `--atomic`, or a ref locked by another process) while it applies
the review ref. So a review ref that already exists moves, or is deleted, only from where
the last receipt on record put it (`GATE-REVIEW-UNRECORDED` otherwise): a receipt whose use
was never recorded can never be used again, because the ref never returns to the value the
receipt was bound to. Once the attempt is archived its review ref may go whatever it holds.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ids
from ..checks.binding import Opened, Update, generation_claim, judge_review
from ..errors import GateError
from ..findings import Failure, Violation
from ..git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, RefUpdate, generation_ref
from ..records.ledger import AttemptState, read_state
from .context import ReservedContext, violation


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
        claim = generation_claim(state, ctx.server.get(generation_ref(state.workspace_generation)))
        if claim:
            return [violation(f.code, u, f.detail, attempt) for f in claim]
        if state.model_id is None:
            return [violation("GATE-LEDGER-NO-MODEL", u, "no model on record", attempt)]
        if state.closed:
            return [violation("GATE-LEDGER-CLOSED", u, "the attempt is closed", attempt)]
        if ctx.objects.type_of(u.new) != "commit":
            return [violation("GATE-REF-TARGET", u, "review refs point at commits", attempt)]
        failures = _judged(ctx, u, attempt, state)
    except GateError as exc:
        return [violation(exc.code, u, exc.detail, attempt)]
    return [violation(f.code, u, f.detail, attempt, f.field, u.new) for f in failures]


def _unrecorded(ctx: ReservedContext, u: RefUpdate, attempt: str) -> list[Violation]:
    """Is the review ref on the server where the last receipt on record put it?"""
    tip = ctx.server.get(RECEIPTS_PREFIX + attempt)
    receipt = None if tip is None else ctx.opened(tip).receipt
    put = None if receipt is None else (receipt.ref, receipt.new_commit)
    if put == (u.ref, u.old):
        return []
    return [violation("GATE-REVIEW-UNRECORDED", u, f"the review ref is at {u.old[:12]}, where no receipt on record "
                                                   f"put it (a push landed it without its receipt ref); close the "
                                                   "attempt, archive it, and review in a new attempt", attempt)]


def target_branch(ctx: ReservedContext, state: AttemptState) -> str | None:
    """The branch a review of this attempt goes onto: the ledger's, else the server's HEAD."""
    return state.target or ctx.head_branch()


def _covers(ctx: ReservedContext, new: str, state: AttemptState, base: str) -> list[Failure]:
    """The receipt's base (already an ancestor of the pushed commit) must also be an ancestor of
    the pushed commit's merge base with the target branch as the server has it: then the reviewed
    diff covers everything the review ref would bring onto the target."""
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


def _used_before(ctx: ReservedContext, attempt: str, digest: str) -> bool:
    """Was a receipt with this sealed payload pushed before: in the attempt's receipt history on
    the server, or in the archive?"""
    return ctx.archive.receipt(digest) or any(earlier.payload_digest == digest for earlier in ctx.history(attempt))


def _judged(ctx: ReservedContext, u: RefUpdate, attempt: str, state: AttemptState) -> list[Failure]:
    """The receipt this push brings, judged (`binding.judge_review`) against the ledger as the
    server holds it, at the push's `now`."""
    from ..checks.authorship import review_question  # of the ledger and the commits: asked whatever the receipt holds

    return judge_review(ctx.objects, ctx.receipt(attempt), state, Update(ctx.repository_id, u.ref, u.old, u.new),
                        keyring=ctx.require_keyring(), at=ctx.now,
                        used_before=lambda digest: _used_before(ctx, attempt, digest),
                        covers=lambda base: _covers(ctx, u.new, state, base),
                        independence=review_question(ctx.policy, state, ctx.objects, u.new),
                        model_run=ctx.policy.model_run)


def standing_review(ctx: ReservedContext, u: RefUpdate) -> list[Violation]:
    """A review ref as it stands at `u.new`, judged where no hook judged its pushes (a forge's
    required check, `gate check`: docs/forges.md, "The receipt flow on a forge"). Nothing about
    who moved which ref is known there, so only what seals prove counts:

    * the receipt ref is one line of well-formed receipts, each binding this review ref's move
      from where the one before it put it (the first: from nothing), no payload twice; the review
      ref stands where the last one put it (`GATE-REVIEW-UNRECORDED` otherwise);
    * the attempt is closed (`GATE-REVIEW-OPEN` otherwise): a ledger rewound to an earlier record
      (a failover taken back, so that a stale model is on record again) ends in no close;
    * the last receipt is judged as the hook judges one (`binding.judge_review`) against the
      ledger as it stood before its close, at the close's time: the receipt was sealed, and valid,
      before the attempt ended.
    """
    attempt = u.ref[len(REVIEW_PREFIX):]
    if not ids.is_attempt_id(attempt):
        return [violation("GATE-REF-NAME", u, "review refs are refs/heads/review/runner/<attempt-id>")]
    try:
        chain = list(ctx.history(attempt))  # newest first
        if not chain:
            return [violation("GATE-RECEIPT-MISSING", u, f"no {RECEIPTS_PREFIX}{attempt} here: fetch "
                                                         "'+refs/gate/*:refs/gate/*' from where the runner pushed",
                              attempt)]
        broken = _chain_problems(ctx, u, chain)
        if broken:
            return [violation("GATE-REVIEW-UNRECORDED", u, broken, attempt)]
        tip = ctx.server.get(ATTEMPTS_PREFIX + attempt)
        if tip is None:
            return [violation("GATE-LEDGER-MISSING", u, f"no {ATTEMPTS_PREFIX}{attempt} here", attempt)]
        final = read_state(ctx.objects, tip, ctx.require_keyring(), ctx.now, attempt)
        if not final.closed:
            return [violation("GATE-REVIEW-OPEN", u, "the attempt's last ledger record is not its close: a review is "
                                                     "judged here once gate attempt close has ended it", attempt)]
        parents = ctx.objects.commit(tip).parent_ids
        state = read_state(ctx.objects, parents[0], ctx.require_keyring(), ctx.now, attempt) if parents else final
        claim = generation_claim(state, ctx.server.get(generation_ref(state.workspace_generation)))
        if claim:
            return [violation(f.code, u, f.detail, attempt) for f in claim]
        if state.model_id is None:
            return [violation("GATE-LEDGER-NO-MODEL", u, "no model on record", attempt)]
        last = chain[0]
        assert last.receipt is not None  # `_chain_problems` refuses a chain of unreadable receipts
        earlier = {o.payload_digest for o in chain[1:]}
        failures = judge_review(ctx.objects, last, state, Update(ctx.repository_id, u.ref,
                                                                 last.receipt.old_commit or ctx.zero, u.new),
                                keyring=ctx.require_keyring(), at=final.updated,
                                used_before=lambda digest: digest in earlier or ctx.archive.receipt(digest),
                                covers=lambda base: _covers(ctx, u.new, state, base),
                                independence=_independence(ctx, state, u.new), model_run=ctx.policy.model_run)
    except GateError as exc:
        return [violation(exc.code, u, exc.detail, attempt)]
    return [violation(f.code, u, f.detail, attempt, f.field, u.new) for f in failures]


def _chain_problems(ctx: ReservedContext, u: RefUpdate, chain: list[Opened]) -> str:
    """Why the receipt chain does not put the review ref where it stands ('' when it does)."""
    expected_new = u.new
    for i, opened in enumerate(chain):  # newest first: each must start where the one before it (older) ended
        if opened.receipt is None:
            problem = "; ".join(f.detail for f in opened.problems) or "not a receipt"
            return f"receipt {i + 1} from the newest on the receipt ref cannot be read: {problem}"
        r = opened.receipt
        if r.ref != u.ref:
            return f"receipt {i + 1} from the newest binds {r.ref}, not {u.ref}"
        if r.new_commit != expected_new:
            where = "the review ref stands at" if i == 0 else "the next receipt starts from"
            return (f"{where} {expected_new[:12]}, where no receipt on record put it (receipt {i + 1} from the "
                    f"newest ends at {(r.new_commit or '')[:12]})")
        expected_new = r.old_commit or ""
    if expected_new != ctx.zero:
        return f"the oldest receipt moves the review ref from {expected_new[:12]}, where no receipt put it"
    return ""


def _independence(ctx: ReservedContext, state: AttemptState, new: str
                  ) -> Callable[[str | None], list[Failure]] | None:
    from ..checks.authorship import review_question

    return review_question(ctx.policy, state, ctx.objects, new)
