"""The reserved namespaces: the attempt ledger, receipt refs and review refs.

* `refs/gate/attempts/<id>`: sealed attempt records (see `ledger.py`). Trusted pushers
  only; never deleted; fast-forward only; every new record verified (purpose `attempt`),
  in sequence, for this attempt and repository; a generation is never used twice.
* `refs/gate/receipts/<id>`: the receipt's transport. A commit whose tree holds exactly
  `receipt.json` (the sealed envelope), parent the previous receipt commit of the attempt.
  Pushed atomically with the review ref; never on its own, never deleted.
* `refs/heads/review/runner/<id>`: every update needs the receipt that comes with it in
  the same push, verified against the ledger's current record for the attempt, the digest
  recomputed from the pushed objects, the ref and its old value.
* anything else under `refs/gate/` is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from . import ids
from .errors import GateError
from .failure import Failure, Violation
from .gitrepo import GitRepo
from .keys import Keyring
from .ledger import MAX_CHAIN, AttemptState, fold, read_entries, read_state, single_file
from .namespaces import ATTEMPTS_PREFIX, GATE_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from .policy import Policy
from .refupdates import RefUpdate, display

if TYPE_CHECKING:
    from .pushcheck import PushReport

RECEIPT_FILE = "receipt.json"


def _v(code: str, u: RefUpdate, detail: str, attempt: str | None = None, field: str | None = None,
       commit: str | None = None) -> Violation:
    return Violation(code, display(u.raw_ref), detail, commit=commit, attempt_id=attempt, field=field)


class ReservedChecker:
    def __init__(self, repo: GitRepo, policy: Policy, pusher: str, keyring: Callable[[], Keyring],
                 repository_id: str, now: int, push: Sequence[RefUpdate],
                 reserve_generation: Callable[[str, str], str | None] | None = None) -> None:
        """`reserve_generation(generation, attempt)` (the server's) records a generation for
        an attempt under a lock and returns another attempt that already holds it: it closes
        the race between two concurrent pushes opening attempts with one generation."""
        self.repo = repo
        self.policy = policy
        self.pusher = pusher
        self._keyring_loader = keyring
        self._keyring: Keyring | None = None
        self.repository_id = repository_id
        self.now = now
        self.push = {u.ref: u for u in push}
        self.states: dict[str, AttemptState] = {}
        self.reserve_generation = reserve_generation
        self.bad_ledgers: set[str] = set()

    @property
    def keyring(self) -> Keyring:
        if self._keyring is None:
            self._keyring = self._keyring_loader()
        return self._keyring

    def check(self, updates: Sequence[RefUpdate], report: PushReport) -> list[Violation]:
        out: list[Violation] = []
        trusted = self.policy.pusher_trusted(self.pusher)
        ledger = [u for u in updates if u.ref.startswith(ATTEMPTS_PREFIX)]
        receipts = [u for u in updates if u.ref.startswith(RECEIPTS_PREFIX)]
        reviews = [u for u in updates if u.ref.startswith(REVIEW_PREFIX)]
        for u in updates:
            if u.ref.startswith(GATE_PREFIX) and u not in ledger and u not in receipts:
                out.append(_v("GATE-REF-RESERVED", u, "refs/gate/ holds attempts/ and receipts/ only"))
        for u in ledger + receipts + reviews:
            if not trusted:
                code = "GATE-LEDGER-PUSHER" if u in ledger else "GATE-REVIEW-PUSHER"
                out.append(_v(code, u, f"pusher {self.pusher!r} is not a trusted runner account"))
        if not trusted:
            return out
        for u in ledger:
            out += self._ledger(u)
        for u in receipts:
            out += self._receipt_ref(u)
        for u in reviews:
            violations = self._review(u)
            out += violations
            if not violations and not u.is_delete:
                report.attempt_ids.append(u.ref[len(REVIEW_PREFIX):])
        return out

    # --- the ledger --------------------------------------------------------------------
    def _ledger(self, u: RefUpdate) -> list[Violation]:
        attempt = u.ref[len(ATTEMPTS_PREFIX):]
        if not ids.is_attempt_id(attempt):
            self.bad_ledgers.add(attempt)
            return [_v("GATE-LEDGER-ATTEMPT", u, "the ref name is not refs/gate/attempts/<attempt-id>")]
        if u.is_delete:
            return [_v("GATE-LEDGER-DELETE", u, "the ledger is append-only", attempt)]
        bad = self._ledger_problems(u, attempt)
        if bad:
            self.bad_ledgers.add(attempt)
        return bad

    def _ledger_problems(self, u: RefUpdate, attempt: str) -> list[Violation]:
        if self.repo.object_type(u.new) != "commit":
            return [_v("GATE-LEDGER-RECORD", u, "ledger refs point at record commits", attempt)]
        start = None
        if not u.is_create:
            if not self.repo.is_ancestor(u.old, u.new):
                return [_v("GATE-LEDGER-REWRITE", u, "not a fast-forward of the existing chain", attempt)]
            start = read_state(self.repo, u.old, self.keyring, self.now, attempt)
        try:
            entries = read_entries(self.repo, u.new, None if u.is_create else u.old)
        except GateError as exc:
            return [_v(exc.code, u, exc.detail, attempt)]
        if not entries:
            return [_v("GATE-LEDGER-REWRITE", u, "the update adds no record", attempt)]
        state, failures = fold(entries, self.keyring, self.now, attempt, start)
        if state is None:
            return [_v(f.code, u, f.detail, attempt, f.field) for f in failures]
        if state.repository != self.repository_id:
            return [_v("GATE-LEDGER-ATTEMPT", u, f"records name repository {state.repository!r}", attempt)]
        if u.is_create:
            other = self._generation_user(state.workspace_generation, attempt)
            if other is None and self.reserve_generation is not None:
                other = self.reserve_generation(state.workspace_generation, attempt)
            if other is not None:
                return [_v("GATE-LEDGER-GENERATION-REUSED", u,
                           f"generation {state.workspace_generation} was used by attempt {other}", attempt)]
        self.states[attempt] = state
        return []

    def _generation_user(self, generation: str, attempt: str) -> str | None:
        """Another attempt (existing, or opened in this push) that used this generation."""
        for name, tip in self.repo.ref_targets(lambda n: n.startswith(ATTEMPTS_PREFIX.encode())).items():
            other = name.decode("utf-8", "surrogateescape")[len(ATTEMPTS_PREFIX):]
            if other == attempt:
                continue
            pending = self.push.get(ATTEMPTS_PREFIX + other)
            if pending is not None and pending.is_delete:
                continue
            first = read_entries(self.repo, tip, None)[:1]
            state, _ = fold(first, None, self.now, other)
            if state is not None and state.workspace_generation == generation:
                return other
        for other, state in self.states.items():
            if other != attempt and state.workspace_generation == generation:
                return other
        return None

    def _state(self, attempt: str) -> AttemptState | None:
        if attempt in self.states:
            return self.states[attempt]
        tip = self.repo.ref_target(ATTEMPTS_PREFIX + attempt)
        if tip is None:
            return None
        return read_state(self.repo, tip, self.keyring, self.now, attempt)

    # --- receipts ----------------------------------------------------------------------
    def _receipt_ref(self, u: RefUpdate) -> list[Violation]:
        attempt = u.ref[len(RECEIPTS_PREFIX):]
        if not ids.is_attempt_id(attempt):
            return [_v("GATE-REVIEW-RECEIPT-REF", u, "the ref name is not refs/gate/receipts/<attempt-id>")]
        if u.is_delete:
            return [_v("GATE-REVIEW-RECEIPT-REF", u, "receipt refs are never deleted", attempt)]
        review = self.push.get(REVIEW_PREFIX + attempt)
        if review is None or review.is_delete:
            return [_v("GATE-REVIEW-RECEIPT-REF", u, "a receipt travels with its review ref, in one push", attempt)]
        if self.repo.object_type(u.new) != "commit":
            return [_v("GATE-REVIEW-RECEIPT-REF", u, "receipt refs point at receipt commits", attempt)]
        if not u.is_create and not self.repo.is_ancestor(u.old, u.new):
            return [_v("GATE-REVIEW-RECEIPT-REF", u, "receipt refs only move forward", attempt)]
        return []

    def _receipt_bytes(self, attempt: str) -> bytes | None:
        u = self.push.get(RECEIPTS_PREFIX + attempt)
        if u is None or u.is_delete or self.repo.object_type(u.new) != "commit":
            return None
        return single_file(self.repo, self.repo.commit(u.new).tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF")

    def _used_before(self, attempt: str, data: bytes) -> bool:
        """Is this receipt already in the attempt's receipt history (before this push)?"""
        u = self.push.get(RECEIPTS_PREFIX + attempt)
        current = None if u is None or u.is_create else u.old
        seen = 0
        while current is not None:
            seen += 1
            if seen > MAX_CHAIN:
                raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt history longer than {MAX_CHAIN}")
            info = self.repo.commit(current)
            if single_file(self.repo, info.tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF") == data:
                return True
            current = info.parent_ids[0] if info.parent_ids else None
        return False

    # --- review refs -------------------------------------------------------------------
    def _review(self, u: RefUpdate) -> list[Violation]:
        attempt = u.ref[len(REVIEW_PREFIX):]
        if not ids.is_attempt_id(attempt):
            return [_v("GATE-REF-NAME", u, "review refs are refs/heads/review/runner/<attempt-id>")]
        if u.is_delete:
            return []  # the trusted runner cleans up after a merge
        if attempt in self.bad_ledgers:
            return [_v("GATE-LEDGER-UNREADABLE", u, "the ledger update in this push is invalid", attempt)]
        state = self._state(attempt)
        if state is None:
            return [_v("GATE-LEDGER-MISSING", u, f"no refs/gate/attempts/{attempt}", attempt)]
        if state.model_id is None:
            return [_v("GATE-LEDGER-NO-MODEL", u, "no model on record", attempt)]
        if state.closed:
            return [_v("GATE-LEDGER-CLOSED", u, "the attempt is closed", attempt)]
        if self.repo.object_type(u.new) != "commit":
            return [_v("GATE-REF-TARGET", u, "review refs point at commits", attempt)]
        try:
            data = self._receipt_bytes(attempt)
        except GateError as exc:
            return [_v(exc.code, u, exc.detail, attempt)]
        failures = self._decide(u, attempt, state, data)
        if not failures and data is not None and self._used_before(attempt, data):
            failures.append(Failure("GATE-RECEIPT-REUSED", "receipt",
                                    "this receipt was already pushed for this attempt; a receipt is used once"))
        return [_v(f.code, u, f.detail, attempt, f.field, u.new) for f in failures]

    def _decide(self, u: RefUpdate, attempt: str, state: AttemptState, data: bytes | None) -> list[Failure]:
        from .decision import Expectations, compare, open_receipt
        from .digest import tree_delta_digest
        from .receipt import DIFF_TREE_DELTA

        receipt, failures, sealed = open_receipt(data, self.keyring, self.now)
        if receipt is None:
            return failures
        base = receipt.base_commit
        digest = receipt.diff_sha256  # replaced below; a bad base already fails the receipt
        if base is None:
            failures.append(Failure("GATE-BIND-BASE-COMMIT", "base_commit", "missing from the receipt"))
        elif not self.repo.exists(base) or self.repo.object_type(base) != "commit":
            failures.append(Failure("GATE-BIND-BASE-COMMIT", "base_commit", "not a commit in this repository"))
        elif not self.repo.is_ancestor(base, u.new):
            failures.append(Failure("GATE-BIND-BASE-COMMIT", "base_commit", "not an ancestor of the pushed commit"))
        else:
            digest = tree_delta_digest(self.repo, base, u.new)
        expected = Expectations(
            attempt_id=attempt, model_id=state.model_id or "", workspace_generation=state.workspace_generation,
            prompt_sha256=state.prompt_sha256, diff_sha256=digest, diff_algorithm=DIFF_TREE_DELTA,
            repository=self.repository_id, ref=u.ref, old_commit=u.old, new_commit=u.new,
            new_tree=self.repo.commit(u.new).tree_id, object_format=self.repo.object_format,
            ledger_record=state.model_record,
        )
        failures += compare(receipt, expected)
        if not sealed and not failures:  # pragma: no cover - open_receipt reports seal failures
            failures.append(Failure("GATE-SEAL-BAD-SIGNATURE", "sig", "unsealed"))
        return failures
