"""The reserved stage: every check of the namespaces the trusted side writes, one entry.

`check(ctx, updates)` runs, in this order:

1. **namespace rights** (`rights.py`): trusted pushers only, stated old values equal to the
   server's, no unknown namespace under `refs/gate/`. A push that fails them is judged no
   further (an untrusted pusher or a stale claim: nothing is judged on it);
2. **the archive** (`archiverefs.py`): `refs/gate/archive` only grows, and holds every attempt
   whose refs the push deletes;
3. **the ledger** (`ledgerrefs.py`): attempt records and generation claims;
4. **receipt refs** (`receiptrefs.py`): the receipt's transport;
5. **review refs** (`reviewrefs.py`): the receipt judged against the ledger as the server has it;
6. **approvals** (`approvalrefs.py`): approval refs pushed, and approvals applied to the push
   rules' `GATE-FROZEN-PATH` violations (`ReservedContext.rule_violations`).

Everything the checks share - the objects, the server's refs, the policy, the keyring, the
clock - comes in one `ReservedContext` (`context.py`), built by the pre-receive hook
(`server/prereceive.py`) and by the client's receipt hook (`hooks/receipt_push.py`), or by a
test from plain values. Pure: nothing here reads the machine. It may import `gatecore`'s shared
modules, the engine's packages below it (`git`, `signing`, `configuration`, `records`, `checks`)
and itself. Each check is named for the refs it judges (`ledgerrefs.py`: the ledger's refs); the
records those refs carry are read by `gatecore.records`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..findings import Violation
from ..git.refs import DOCTOR_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, RefUpdate, ServerRefs, is_reserved
from ..valueclass import field, valueclass
from .approvalrefs import Used, apply, check_pushes, is_approval_ref
from .context import ReservedContext
from .rights import namespace_violations

__all__ = ["ReservedContext", "ReservedReport", "ServerRefs", "check"]


@valueclass
class ReservedReport:
    #: The push's violations after this stage: the push rules' (less those approvals lift), then
    #: the approval refs', then the reserved namespaces'.
    violations: list[Violation]
    attempt_ids: list[str]  # attempts whose review ref this push moves (accepted reviews)
    approvals_used: list[Used] = field(default_factory=list)  # recorded as used once the push is accepted
    approve_commands: list[str] = field(default_factory=list)  # `gate approve` for the writes left unapproved


def check(ctx: ReservedContext, updates: Sequence[RefUpdate], *, namespaces: bool = True,
          approvals: bool = True, standing: bool = False) -> ReservedReport:
    """The reserved stage over `updates` (the push's updates; those outside the reserved
    namespaces matter only to approvals). `namespaces`: judge the reserved refs pushed (stages
    1-5, and approval refs); `approvals`: apply approvals to the push rules' violations (stage 6;
    the client's pre-push check of frozen files asks for this one alone). `standing`: the updates
    are a forge's proposed change, not a push (`pipeline.Range`): a review ref is judged as it
    stands (`reviewrefs.standing_review`), and no other reserved ref is a change a check judges."""
    live = [u for u in updates if not u.is_noop]
    if standing and namespaces:
        return _standing(ctx, live, approvals)
    reserved = [u for u in live if is_reserved(u.ref) and not u.ref.startswith(DOCTOR_PREFIX)]
    approval_refs = [u for u in reserved if is_approval_ref(u.ref)] if namespaces else []
    special = [u for u in reserved if not is_approval_ref(u.ref)]
    found, accepted = _namespaces(ctx, special) if namespaces else ([], [])
    remaining: list[Violation] = list(ctx.rule_violations)
    used: list[Used] = []
    commands: list[str] = []
    apply_them = approvals and ctx.policy.approvals_enabled
    if apply_them or approval_refs:
        actx = ctx.approvals()
        if apply_them:
            remaining, used, commands = apply(actx, live, remaining)
        remaining += check_pushes(actx, ctx.pusher, approval_refs)
    return ReservedReport(remaining + found, accepted, used, commands)


def _namespaces(ctx: ReservedContext, special: Sequence[RefUpdate]) -> tuple[list[Violation], list[str]]:
    """Stages 1-5 over the ledger, claim, archive, receipt and review refs of the push:
    (violations, attempts whose review this push accepts)."""
    out = namespace_violations(ctx, special)
    if out or not special:
        return out, []
    from .archiverefs import check_archive
    from .ledgerrefs import check_ledger
    from .receiptrefs import receipt_ref
    from .reviewrefs import review_ref

    ctx.require_keyring()  # first: no keyring is a configuration error, whatever the push brings
    out += check_archive(ctx, special)
    out += check_ledger(ctx, special)
    accepted: list[str] = []
    for u in special:
        if u.ref.startswith(RECEIPTS_PREFIX):
            out += receipt_ref(ctx, u)
        elif u.ref.startswith(REVIEW_PREFIX):
            found = review_ref(ctx, u)
            out += found
            if not found and not u.is_delete:
                accepted.append(u.ref[len(REVIEW_PREFIX):])
    return out, accepted


def _standing(ctx: ReservedContext, live: Sequence[RefUpdate], approvals: bool) -> ReservedReport:
    """A forge's proposed change: its review ref judged as it stands, then approvals as for a push."""
    from .reviewrefs import standing_review

    found: list[Violation] = []
    accepted: list[str] = []
    for u in live:
        if u.ref.startswith(REVIEW_PREFIX):
            ctx.require_keyring()
            got = standing_review(ctx, u)
            found += got
            if not got:
                accepted.append(u.ref[len(REVIEW_PREFIX):])
        elif is_reserved(u.ref):
            from .context import violation

            found.append(violation("GATE-REF-NAME", u, "a forge's check judges a change landing on a branch or a "
                                                       "review ref, not the trusted side's refs/gate/ namespace"))
    remaining: list[Violation] = list(ctx.rule_violations)
    used: list[Used] = []
    commands: list[str] = []
    if approvals and ctx.policy.approvals_enabled:
        remaining, used, commands = apply(ctx.approvals(), live, remaining)
    return ReservedReport(remaining + found, accepted, used, commands)
