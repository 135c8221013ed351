"""The reserved stage, first: who may write the reserved namespaces, and stale claims.

* Every reserved ref (`refs/gate/*`, `refs/heads/review/runner/*`) is written by trusted
  pushers only, and every update must state the ref's value on the server as its old value
  (`GATE-REF-STALE` otherwise). Each ref the checks consult is read from the server once
  (`ServerRefs`), never taken from what the push says about it.
* `refs/gate/` holds `attempts/`, `generations/`, `receipts/`, `archive`, and the approvals'
  namespaces (whose rights depend on the record: `approvalrefs.py`); anything else is refused
  (the doctor's probe refs are `pushcheck`'s).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..findings import Violation
from ..git.refs import ATTEMPTS_PREFIX, GATE_PREFIX, GENERATIONS_PREFIX, RECEIPTS_PREFIX, RefUpdate
from ..records.archive import ARCHIVE_REF
from .context import ReservedContext, violation


def namespace_violations(ctx: ReservedContext, updates: Sequence[RefUpdate]) -> list[Violation]:
    """Unknown reserved namespaces, untrusted pushers, and stale stated old values."""
    out: list[Violation] = []
    trusted = ctx.policy.pusher_trusted(ctx.pusher)
    for u in updates:
        if (u.ref.startswith(GATE_PREFIX) and u.ref != ARCHIVE_REF
                and not u.ref.startswith((ATTEMPTS_PREFIX, RECEIPTS_PREFIX, GENERATIONS_PREFIX))):
            out.append(violation("GATE-REF-RESERVED", u, "refs/gate/ holds attempts/, generations/, receipts/ and "
                                                         "archive only"))
            continue
        if not trusted:
            ledger = u.ref.startswith((ATTEMPTS_PREFIX, GENERATIONS_PREFIX)) or u.ref == ARCHIVE_REF
            out.append(violation("GATE-LEDGER-PUSHER" if ledger else "GATE-REVIEW-PUSHER", u,
                                 f"pusher {ctx.pusher!r} is not a trusted runner account"))
            continue
        current = ctx.server.get(u.ref) or ctx.zero
        if u.old != current:
            out.append(violation("GATE-REF-STALE", u, f"the push says the ref is at {u.old[:12]}, the server has "
                                                      f"{current[:12]}"))
    return out
