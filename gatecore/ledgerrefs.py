"""The reserved namespaces, first stage: who may write them, stale claims, and the ledger.

* Every reserved ref (`refs/gate/*`, `refs/heads/review/runner/*`) is written by trusted
  pushers only, and every update must state the ref's value on the server as its old
  value (`GATE-REF-STALE` otherwise). Each ref the checks consult is read from the server
  once (`ServerRefs`), never taken from what the push says about it.
* `refs/gate/attempts/<id>`: sealed attempt records (`ledger.py`). Never deleted;
  fast-forward only; every new record verified (purpose `attempt`), in sequence, for
  this attempt and repository.
* `refs/gate/generations/<sha256(generation)>`: the claim on a workspace generation,
  created by the push that opens its attempt and pointing at the attempt's first record;
  never moved or deleted. git's own ref transaction refuses a second creation of the same
  ref, so two attempts racing for one generation cannot both win; an attempt whose
  generation ref points elsewhere gets no further record and no review. O(1) per open.
* anything else under `refs/gate/` is refused (the doctor's probe refs are `pushcheck`'s).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from . import ids
from .archive import ARCHIVE_REF, Archive
from .errors import GateError
from .findings import Violation
from .keys import Keyring
from .ledger import MAX_CHAIN, RECEIPT_FILE, AttemptState, fold, read_entries, read_state
from .objects import Objects, single_file
from .policy import Policy
from .refs import (
    ATTEMPTS_PREFIX,
    DOCTOR_PREFIX,
    GATE_PREFIX,
    GENERATIONS_PREFIX,
    RECEIPTS_PREFIX,
    RefUpdate,
    display,
    generation_ref,
)

_HEX64 = frozenset("0123456789abcdef")


def violation(code: str, u: RefUpdate, detail: str, attempt: str | None = None, field: str | None = None,
              commit: str | None = None) -> Violation:
    return Violation(code, display(u.raw_ref), detail, commit=commit, attempt_id=attempt, field=field)


class ServerRefs:
    """The server's value of each reserved ref a check consults, read once and then fixed."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        self._seen: dict[str, str | None] = {}

    def get(self, name: str) -> str | None:
        if name not in self._seen:
            self._seen[name] = self._read(name)
        return self._seen[name]


@dataclass
class ReservedContext:
    """What the reserved-ref checks share: the store, the policy, the pusher, the server's refs."""

    objects: Objects
    policy: Policy
    pusher: str
    repository_id: str
    now: int
    push: Mapping[str, RefUpdate]  # every update of the push, by ref name
    server: ServerRefs
    load_keyring: Callable[[], Keyring]
    head_branch: Callable[[], str | None]  # the branch the server's HEAD names (the default target)
    _keyring: Keyring | None = field(default=None, init=False)
    _archive: Archive | None = field(default=None, init=False)

    @property
    def keyring(self) -> Keyring:
        if self._keyring is None:
            self._keyring = self.load_keyring()
        return self._keyring

    @property
    def zero(self) -> str:
        return self.objects.zero_id

    @property
    def archive(self) -> Archive:
        """The archive as the server holds it (closed attempts folded away, still consulted)."""
        if self._archive is None:
            self._archive = Archive(self.objects, self.server.get(ARCHIVE_REF))
        return self._archive

    def state(self, attempt: str) -> AttemptState | None:
        """The attempt's state as the server's ledger holds it now (None: no ledger ref)."""
        tip = self.server.get(ATTEMPTS_PREFIX + attempt)
        return None if tip is None else read_state(self.objects, tip, self.keyring, self.now, attempt)


def namespace_violations(ctx: ReservedContext, updates: Sequence[RefUpdate]) -> list[Violation]:
    """Unknown reserved namespaces, untrusted pushers, and stale stated old values."""
    out: list[Violation] = []
    trusted = ctx.policy.pusher_trusted(ctx.pusher)
    for u in updates:
        if u.ref.startswith(DOCTOR_PREFIX):
            continue
        if (u.ref.startswith(GATE_PREFIX) and u.ref != ARCHIVE_REF
                and not u.ref.startswith((ATTEMPTS_PREFIX, RECEIPTS_PREFIX, GENERATIONS_PREFIX))):
            out.append(violation("GATE-REF-RESERVED", u, "refs/gate/ holds attempts/, generations/, receipts/ and "
                                                         "archive only"))
            continue
        if not trusted:
            ledger = u.ref.startswith((ATTEMPTS_PREFIX, GENERATIONS_PREFIX))
            out.append(violation("GATE-LEDGER-PUSHER" if ledger else "GATE-REVIEW-PUSHER", u,
                                 f"pusher {ctx.pusher!r} is not a trusted runner account"))
            continue
        current = ctx.server.get(u.ref) or ctx.zero
        if u.old != current:
            out.append(violation("GATE-REF-STALE", u, f"the push says the ref is at {u.old[:12]}, the server has "
                                                      f"{current[:12]}"))
    return out


def receipt_history(ctx: ReservedContext, attempt: str) -> Iterator[bytes]:
    """The envelope bytes of every receipt in the attempt's receipt chain on the server, newest first."""
    current = ctx.server.get(RECEIPTS_PREFIX + attempt)
    seen = 0
    while current is not None:
        seen += 1
        if seen > MAX_CHAIN:
            raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt history longer than {MAX_CHAIN}")
        info = ctx.objects.commit(current)
        yield single_file(ctx.objects, info.tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF", "GATE-RECEIPT-TOO-LARGE")
        current = info.parent_ids[0] if info.parent_ids else None


def check_ledger(ctx: ReservedContext, updates: Sequence[RefUpdate], archived: set[str]) -> list[Violation]:
    """Every update of refs/gate/attempts/* and refs/gate/generations/* (trusted, not stale). The
    refs of `archived` attempts (folded into the archive by this push) may be deleted."""
    out: list[Violation] = []
    opened: dict[str, AttemptState] = {}
    released: set[str] = set()  # generation claims of archived attempts
    for u in updates:
        if u.ref.startswith(ATTEMPTS_PREFIX):
            attempt = u.ref[len(ATTEMPTS_PREFIX):]
            if u.is_delete and attempt in archived:
                state = ctx.state(attempt)
                if state is not None:
                    released.add(generation_ref(state.workspace_generation))
                continue
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
            if name not in released:
                out.append(violation("GATE-LEDGER-DELETE", u, "generation claims are deleted only when their "
                                                              "attempt is archived"))
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
        return [violation("GATE-LEDGER-DELETE", u, "the ledger is append-only; closed attempts are archived "
                                                   "(gate ledger archive)", attempt)], None
    if ctx.objects.type_of(u.new) != "commit":
        return [violation("GATE-LEDGER-RECORD", u, "ledger refs point at record commits", attempt)], None
    start = None
    if not u.is_create:
        if not ctx.objects.reader.is_ancestor(u.old, u.new):
            return [violation("GATE-LEDGER-REWRITE", u, "not a fast-forward of the existing chain", attempt)], None
        start = read_state(ctx.objects, u.old, ctx.keyring, ctx.now, attempt)
        claim = ctx.server.get(generation_ref(start.workspace_generation))
        if claim != start.root:
            return [violation("GATE-LEDGER-GENERATION-REUSED", u, f"generation {start.workspace_generation} "
                                                                  "belongs to another attempt", attempt)], None
    entries = read_entries(ctx.objects, u.new, None if u.is_create else u.old)
    if not entries:
        return [violation("GATE-LEDGER-REWRITE", u, "the update adds no record", attempt)], None
    state, failures = fold(entries, ctx.keyring, ctx.now, attempt, start)
    if state is None:
        return [violation(f.code, u, f.detail, attempt, f.field) for f in failures], None
    if state.repository != ctx.repository_id:
        return [violation("GATE-LEDGER-ATTEMPT", u, f"records name repository {state.repository!r}", attempt)], None
    return [], state
