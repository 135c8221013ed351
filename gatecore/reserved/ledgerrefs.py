"""The reserved stage, the ledger: attempt records and generation claims.

* `refs/gate/attempts/<id>`: sealed attempt records (`gatecore.records.ledger`). Never deleted
  (but by archiving); fast-forward only; every new record verified (purpose `attempt`), in
  sequence, for this attempt and repository.
* `refs/gate/generations/<sha256(generation)>`: the claim on a workspace generation,
  created by the push that opens its attempt and pointing at the attempt's first record;
  never moved or deleted (but by archiving). git's own ref transaction refuses a second
  creation of the same ref, so two attempts racing for one generation cannot both win; an
  attempt whose generation ref points elsewhere gets no further record and no review.
  O(1) per open.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import ids
from ..errors import GateError
from ..findings import Violation
from ..git.refs import ATTEMPTS_PREFIX, GENERATIONS_PREFIX, RefUpdate, generation_ref
from ..records.ledger import AttemptState, ChainEntry, fold, open_record, read_entries, read_state
from .archiverefs import deletion
from .context import ReservedContext, violation

_HEX64 = frozenset("0123456789abcdef")


def check_ledger(ctx: ReservedContext, updates: Sequence[RefUpdate]) -> list[Violation]:  # noqa: PLR0912 - one branch per ledger ref rule; the binding side is helper binding's
    """Every update of refs/gate/attempts/* and refs/gate/generations/* (trusted, not stale)."""
    out: list[Violation] = []
    opened: dict[str, AttemptState] = {}
    for u in updates:
        if u.ref.startswith(ATTEMPTS_PREFIX):
            attempt = u.ref[len(ATTEMPTS_PREFIX):]
            try:
                found, state = _ledger(ctx, u, attempt)
            except GateError as exc:
                found, state = [violation(exc.code, u, exc.detail, attempt)], None
            out += found
            if not found and state is not None and u.is_create:
                opened[attempt] = state
    claims = {u.ref: u for u in updates if u.ref.startswith(GENERATIONS_PREFIX)}
    taken: set[str] = set()
    for attempt, state in opened.items():
        claim = generation_ref(state.workspace_generation)
        u = ctx.push[ATTEMPTS_PREFIX + attempt]
        if ctx.server.get(claim) is not None or claim in taken or ctx.archive.generation(state.workspace_generation):
            out.append(violation("GATE-LEDGER-GENERATION-REUSED", u, f"generation {state.workspace_generation} is "
                                                                     f"already claimed ({claim})", attempt))
        elif ctx.archive.attempt(attempt):
            out.append(violation("GATE-LEDGER-SEQUENCE", u, "the attempt id was archived; an attempt is opened once",
                                 attempt))
        elif claim not in claims or claims[claim].new != state.root:
            out.append(violation("GATE-LEDGER-RECORD", u, f"the push that opens an attempt also creates {claim}, "
                                                          f"pointing at its first record {state.root[:12]}", attempt))
        taken.add(claim)
    for name, u in claims.items():
        digest = name[len(GENERATIONS_PREFIX):]
        if len(digest) != 64 or not set(digest) <= _HEX64:
            out.append(violation("GATE-LEDGER-RECORD", u, "generation refs are refs/gate/generations/<sha256>"))
        elif u.is_delete:
            out += deletion(ctx, u)
        elif not u.is_create:
            out.append(violation("GATE-LEDGER-REWRITE", u, "generation claims never move"))
        elif name not in taken:
            out.append(violation("GATE-LEDGER-RECORD", u, "a generation is claimed only by the push that opens "
                                                          "its attempt"))
    return out


def _ledger(ctx: ReservedContext, u: RefUpdate, attempt: str) -> tuple[list[Violation], AttemptState | None]:
    if not ids.is_attempt_id(attempt):
        return [violation("GATE-LEDGER-ATTEMPT", u, "the ref name is not refs/gate/attempts/<attempt-id>")], None
    if u.is_delete:
        return deletion(ctx, u), None
    if ctx.objects.type_of(u.new) != "commit":
        return [violation("GATE-LEDGER-RECORD", u, "ledger refs point at record commits", attempt)], None
    if not u.is_create and not ctx.objects.reader.is_ancestor(u.old, u.new):
        return [violation("GATE-LEDGER-REWRITE", u, "not a fast-forward of the existing chain", attempt)], None
    entries = read_entries(ctx.objects, u.new, None if u.is_create else u.old)
    if not entries:
        return [violation("GATE-LEDGER-REWRITE", u, "the update adds no record", attempt)], None
    start = None
    if not u.is_create:
        start = _start(ctx, u.old, attempt, entries)
        claim = ctx.server.get(generation_ref(start.workspace_generation))
        if claim != start.root:
            return [violation("GATE-LEDGER-GENERATION-REUSED", u, f"generation {start.workspace_generation} "
                                                                  "belongs to another attempt", attempt)], None
    state, failures = fold(entries, ctx.require_keyring(), ctx.now, attempt, start)
    if state is None:
        return [violation(f.code, u, f.detail, attempt, f.field) for f in failures], None
    if state.repository != ctx.repository_id:
        return [violation("GATE-LEDGER-ATTEMPT", u, f"records name repository {state.repository!r}", attempt)], None
    return [], state


def _start(ctx: ReservedContext, tip: str, attempt: str, new: Sequence[ChainEntry]) -> AttemptState:
    """The attempt's state on the server, before the new records. Its seals are judged against
    today's keyring - a record sealed by a key revoked or expired since gives nothing more to
    build on - except under a closing record alone: closing only takes away, so an attempt still
    open when its key was retired can be closed (and then archived)."""
    try:
        return read_state(ctx.objects, tip, ctx.require_keyring(), ctx.now, attempt)
    except GateError as exc:
        if not exc.code.startswith("GATE-SEAL-") or not _closing_only(new):
            raise
    return read_state(ctx.objects, tip, None, ctx.now, attempt)


def _closing_only(entries: Sequence[ChainEntry]) -> bool:
    if len(entries) != 1:
        return False
    rec, _ = open_record(entries[0].envelope, None, 0)
    return rec is not None and rec.kind == "closed"
