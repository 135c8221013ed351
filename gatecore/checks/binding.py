"""The receipt's binding: what a receipt must say, and the judgement of one (pure).

A receipt is accepted only when every check passed: the envelope parsed, its seal
verified with an active key of purpose `receipt`, the payload parsed under the strict
schema, it is within its validity window, every bound field (`receipt.BOUND`) equals the
value the gate recomputed or looked up, the verdict is `pass` and reasons are present.
Anything else - including a missing receipt - is a rejection listing every failed check.

The binding is assembled in one place. A review receipt (the push path) has three readers,
and all three take its expectations from `review_expectations`, where every field of
`BOUND` is a required keyword and none may be left unset:

* the runner (`gatecore.trusted.runner`) seals `review_expectations(...).receipt_document(...)`;
* the gate's hook (`gatecore.reserved.reviewrefs`) and `gate attest export`
  (`gatecore.trusted.attest`) judge a receipt with `judge_review`, which builds them the same
  way from what the repository holds.

Only the seed's file flow (`file_expectations`, no repository) binds fewer fields, and
`Expectations.unbound` names them. Each receipt blob is opened once (`Opened`); the seal and
the times are judged at a given time (`Opened.verify`): the hook's `now`, or for the export
the time the receipt was issued.

Names: `judge_receipt` is the file flow's whole judgement; `judge_review` a review
receipt's on the push path; `gatecore.checks.verdict.verdict_on` what a push's violations come to.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ..errors import GateError
from ..findings import Failure, unique_in_order
from ..records.receipt import (
    BOUND,
    DIFF_TREE_DELTA,
    MAX_LIFETIME_SECONDS,
    MODEL_RUN_FILE,
    MODEL_RUN_RUNNER,
    Receipt,
    parse_payload,
)
from ..signing import envelope as env_mod
from ..signing.keys import Keyring
from ..signing.seal import verify as verify_seal
from ..strictjson import MAX_DOCUMENT_BYTES
from ..valueclass import asdict, fields, valueclass

if TYPE_CHECKING:
    from ..git.objects import Objects
    from ..records.ledger import AttemptState

#: Clock skew tolerated on issued_at, seconds.
CLOCK_SKEW_SECONDS = 300

#: The fields only a receipt bound to a repository carries (the file flow may leave them out).
GIT_FIELDS = ("repository", "ref", "old_commit", "base_commit", "new_commit", "new_tree", "object_format",
              "ledger_record")


@valueclass(frozen=True, slots=True)
class Expectations:
    """What the gate recomputed or looked up for this attempt, one value per bound field.

    Its fields are `receipt.BOUND`, in order (checked at import), and none has a default: a
    field added to `BOUND` must be given by every constructor. None: not bound in this flow,
    which only the file flow's `file_expectations` leaves (`unbound`); `review_expectations`
    refuses to.
    """

    attempt_id: str
    model_id: str
    workspace_generation: str
    prompt_sha256: str
    diff_sha256: str
    diff_algorithm: str
    repository: str | None
    ref: str | None
    old_commit: str | None
    base_commit: str | None
    new_commit: str | None
    new_tree: str | None
    object_format: str | None
    ledger_record: str | None

    @property
    def unbound(self) -> tuple[str, ...]:
        """The bound fields this flow does not bind (empty on the push path)."""
        return tuple(name for name in BOUND if getattr(self, name) is None)

    def receipt_document(self, verdict: object, reasons: object, issued_at: int, expires_at: int,
                         **extra: object) -> dict[str, object]:
        """The receipt the trusted side seals for exactly these values (unbound fields left out;
        `extra`: members that are not bound, such as how the model was run)."""
        bound = {k: v for k, v in asdict(self).items() if v is not None}
        return {"version": 1, **bound, "verdict": verdict, "reasons": reasons, "issued_at": issued_at,
                "expires_at": expires_at, **{k: v for k, v in extra.items() if v is not None}}


if tuple(f.name for f in fields(Expectations)) != tuple(BOUND):  # pragma: no cover - guards the one list
    raise RuntimeError("binding.Expectations and receipt.BOUND disagree")


def review_expectations(state: AttemptState, *, repository_id: str, ref: str, old: str, base: str, new: str,
                        new_tree: str, object_format: str, diff_sha256: str) -> Expectations:
    """Everything a review receipt of this attempt must say, every field of `BOUND` set: the
    attempt, model, generation, prompt and ledger record from the ledger (`state`: the runner's
    view, the server's, or the ledger as it stood when the receipt's model was put on record),
    the git state from the caller (recomputed from the objects; `base`: the runner's choice, which
    the gate checks by rule, `base_failures`, not by value). The one assembly of a review binding:
    the runner seals it, the hook and the export judge by it."""
    if state.model_id is None or state.model_record is None:
        raise GateError("GATE-LEDGER-NO-MODEL", f"attempt {state.attempt_id} has no model on record")
    expected = Expectations(
        attempt_id=state.attempt_id, model_id=state.model_id, workspace_generation=state.workspace_generation,
        prompt_sha256=state.prompt_sha256, diff_sha256=diff_sha256, diff_algorithm=DIFF_TREE_DELTA,
        repository=repository_id, ref=ref, old_commit=old, base_commit=base, new_commit=new, new_tree=new_tree,
        object_format=object_format, ledger_record=state.model_record,
    )
    if expected.unbound:  # pragma: no cover - every keyword is required and typed str; the boundary rejects
        raise RuntimeError(f"review expectations leave {', '.join(expected.unbound)} unbound")
    return expected


def file_expectations(attempt: str, model: str, generation: str, prompt_sha256: str, diff_sha256: str,
                      diff_algorithm: str, *, base: str | None = None, new: str | None = None,
                      new_tree: str | None = None, object_format: str | None = None) -> Expectations:
    """The seed's file flow (`gate receipt write | verify`): the four bound values from the command
    line and the diff; no repository, ref, old value or ledger (and, for a patch file, no git state)."""
    return Expectations(attempt, model, generation, prompt_sha256, diff_sha256, diff_algorithm, repository=None,
                        ref=None, old_commit=None, base_commit=base, new_commit=new, new_tree=new_tree,
                        object_format=object_format, ledger_record=None)


@valueclass(frozen=True, slots=True)
class Decision:
    accepted: bool
    failures: tuple[Failure, ...]
    receipt: Receipt | None

    @property
    def fields(self) -> list[str]:
        return unique_in_order(f.field for f in self.failures)

    @property
    def codes(self) -> list[str]:
        return unique_in_order(f.code for f in self.failures)

    def as_dict(self) -> dict[str, object]:
        return {
            "decision": "accept" if self.accepted else "reject",
            "failures": [f.as_dict() for f in self.failures],
            "attempt_id": None if self.receipt is None else self.receipt.attempt_id,
        }


@valueclass(frozen=True, slots=True)
class Opened:
    """One receipt's bytes, opened once: the envelope and its payload as parsed (not yet trusted:
    the seal and the times depend on the keyring and on when they are judged, `verify`)."""

    data: bytes | None  # None: no receipt
    envelope: env_mod.Envelope | None
    receipt: Receipt | None
    problems: tuple[Failure, ...]  # why it is missing, too large, not an envelope, or not a receipt

    @property
    def payload_digest(self) -> str | None:
        """SHA-256 of the sealed payload: what reuse is judged on (the same payload in another
        encoding is the same receipt)."""
        return None if self.envelope is None else hashlib.sha256(self.envelope.payload).hexdigest()

    def verify(self, keyring: Keyring, at: int) -> tuple[list[Failure], bool]:
        """(every problem judged at `at`, whether the seal verified). The payload's problems are
        reported even when the seal fails, but such a receipt is never accepted."""
        if self.envelope is None:
            return list(self.problems), False
        failures = verify_seal(self.envelope, keyring, env_mod.PAYLOAD_RECEIPT, at)
        sealed = not failures
        failures += self.problems
        if self.receipt is not None:
            failures += check_times(self.receipt, at)
        return failures, sealed


def open_bytes(data: bytes | None) -> Opened:
    """A receipt's envelope bytes, parsed once (nothing verified yet)."""
    if data is None:
        return Opened(None, None, None, (Failure("GATE-RECEIPT-MISSING", "receipt", "no receipt"),))
    if len(data) > MAX_DOCUMENT_BYTES:
        return Opened(data, None, None, (Failure("GATE-RECEIPT-TOO-LARGE", "receipt",
                                                 f"{len(data)} bytes; the cap is {MAX_DOCUMENT_BYTES}"),))
    try:
        envelope = env_mod.parse(data)
    except GateError as exc:
        return Opened(data, None, None, (Failure(exc.code, "envelope", exc.detail),))
    receipt, problems = parse_payload(envelope.payload)
    return Opened(data, envelope, receipt, tuple(problems))


def open_commit(objects: Objects, commit: str) -> Opened:
    """The receipt a receipt commit holds (its tree: exactly `receipt.json`), opened."""
    from ..git.objects import single_file
    from ..records.ledger import RECEIPT_FILE

    return open_bytes(single_file(objects, objects.commit(commit).tree_id, RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF",
                                  "GATE-RECEIPT-TOO-LARGE"))


def receipt_chain(objects: Objects, tip: str | None) -> Iterator[str]:
    """The receipt commits of an attempt's receipt ref, newest first: one line of commits (a
    merge is refused, never walked by its first parent: that would drop earlier receipts out of
    the reuse check and the archive), at most `ledger.MAX_CHAIN` (`ledger.line_of_commits`). The
    one walk of a receipt chain (the hook, the archive, `gate ledger archive`, `gate attest export`)."""
    from ..records.ledger import line_of_commits

    for commit, _info in line_of_commits(objects, tip, None, "GATE-REVIEW-RECEIPT-REF", "receipt"):
        yield commit


def open_receipt(data: bytes | None, keyring: Keyring, now: int) -> tuple[Receipt | None, list[Failure], bool]:
    """Parse and unseal a receipt envelope: (receipt or None, failures, sealed), `sealed` True only
    when the seal verified."""
    opened = open_bytes(data)
    failures, sealed = opened.verify(keyring, now)
    return opened.receipt, failures, sealed


def check_times(receipt: Receipt, now: int) -> list[Failure]:
    out = []
    if receipt.issued_at > now + CLOCK_SKEW_SECONDS:
        out.append(Failure("GATE-RECEIPT-NOT-YET-VALID", "issued_at", "issued in the future"))
    if receipt.expires_at <= now:
        out.append(Failure("GATE-RECEIPT-EXPIRED", "expires_at", "expired"))
    if receipt.expires_at <= receipt.issued_at or receipt.expires_at - receipt.issued_at > MAX_LIFETIME_SECONDS:
        out.append(Failure("GATE-RECEIPT-LIFETIME", "expires_at", "validity window is empty or over 30 days"))
    return out


def compare(receipt: Receipt, expected: Expectations) -> list[Failure]:
    """Every bound field that differs from (or is missing against) the expectation; a field the
    flow leaves unbound (`Expectations.unbound`: the file flow only) is not compared."""
    out = []
    for name, code in BOUND.items():
        want = getattr(expected, name)
        if want is None:
            continue
        got = getattr(receipt, name)
        if got is None:
            out.append(Failure(code, name, "missing from the receipt"))
        elif got != want:
            out.append(Failure(code, name, f"receipt has {got!r}, expected {want!r}"))
    if receipt.verdict != "pass":
        out.append(Failure("GATE-VERDICT-FAIL", "verdict", "the reviewer's verdict is fail"))
    return out


def judge_receipt(data: bytes | None, expected: Expectations, keyring: Keyring, now: int,
                  independence: Callable[[str], list[Failure]] | None = None) -> Decision:
    """The file flow's judgement (`gate receipt verify`, `gate selftest`): the receipt against the
    expectations; with `independence`, also whether the expected (on-record) model is independent
    of the attempt's author (`gatecore.checks.independence`)."""
    receipt, failures, sealed = open_receipt(data, keyring, now)
    if independence is not None:
        failures += independence(expected.model_id)
    if receipt is not None:
        failures += compare(receipt, expected)
    accepted = sealed and receipt is not None and not failures
    return Decision(accepted=accepted, failures=tuple(failures), receipt=receipt)


# --- a review receipt on the push path ----------------------------------------------------

def base_failures(objects: Objects, receipt: Receipt, new: str) -> list[Failure]:
    """The receipt's base is a commit of this repository and an ancestor of the reviewed commit `new`."""
    base = receipt.base_commit
    if base is None:
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit", "missing from the receipt")]
    if not objects.reader.exists(base) or objects.type_of(base) != "commit":
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit", "not a commit in this repository")]
    if not objects.reader.is_ancestor(base, new):
        return [Failure("GATE-BIND-BASE-COMMIT", "base_commit", "not an ancestor of the reviewed commit")]
    return []


def generation_claim(state: AttemptState, claimed: str | None) -> list[Failure]:
    """The attempt's generation claim (`refs/gate/generations/<G>`, here `claimed`: its value) points
    at the attempt's first record: the generation is this attempt's, not another's or a reused one."""
    if claimed == state.root:
        return []
    return [Failure("GATE-LEDGER-GENERATION-REUSED", "workspace_generation",
                    f"generation {state.workspace_generation} is not claimed by this attempt")]


def reuse(payload_digest: str | None, used_before: Callable[[str], bool]) -> list[Failure]:
    """A receipt is used once: its sealed payload, in any encoding, must not have been pushed for
    the attempt before (`used_before`: the hook asks the server's receipt history and the archive;
    the export, the history below the receipt)."""
    if payload_digest is not None and used_before(payload_digest):
        return [Failure("GATE-RECEIPT-REUSED", "receipt", "this receipt was already pushed for this attempt; "
                                                          "a receipt is used once")]
    return []


def model_run_failures(required: str, receipt: Receipt) -> list[Failure]:
    """`[review] model_run = "runner"`: the receipt says the runner ran the model itself and names
    the challenge its answer carried (`gate review run`), not that it sealed a file."""
    if required != MODEL_RUN_RUNNER or (receipt.model_run == MODEL_RUN_RUNNER and receipt.challenge is not None):
        return []
    how = {MODEL_RUN_FILE: "sealed a model's output file"}.get(receipt.model_run or "", "does not say how it got "
                                                                                       "the answer")
    return [Failure("GATE-REVIEW-MODEL-RUN", "model_run", f"the runner {how}; this server takes only answers from "
                                                          "the runner's own call of the model")]


def _no_more(base: str) -> list[Failure]:
    return []


@valueclass(frozen=True, slots=True)
class Update:
    """The review ref update a receipt is judged for: repository, ref, old and new value."""

    repository_id: str
    ref: str
    old: str
    new: str


def judge_review(objects: Objects, opened: Opened, state: AttemptState, update: Update, *, keyring: Keyring,
                 at: int, used_before: Callable[[str], bool],
                 covers: Callable[[str], list[Failure]] = _no_more,
                 independence: Callable[[str | None], list[Failure]] | None = None,
                 model_run: str = "any") -> list[Failure]:
    """One review receipt judged for one update of its review ref: the hook's judgement and the
    export's (`at`: the hook's `now`, or when the receipt was issued). In order: the seal and the
    times; `independence` (given the validated base of a sealed receipt, else None); the base (an
    ancestor of the reviewed commit, and whatever more `covers` asks: the hook, that it covers the
    target branch as the server has it); every bound field against `review_expectations`, the
    diff recomputed from the base; how the model was run (`model_run`: the policy's `[review]
    model_run`); then, if nothing else failed, reuse. Empty: accepted."""
    failures, sealed = opened.verify(keyring, at)
    receipt = opened.receipt
    bad_base: list[Failure] = []
    base: str | None = None
    if receipt is not None:
        bad_base = base_failures(objects, receipt, update.new)
        if not bad_base:
            assert receipt.base_commit is not None  # base_failures refuses a receipt without one
            bad_base = covers(receipt.base_commit)
        base = None if bad_base else receipt.base_commit
    if independence is not None:  # the commits are read from a base only a verified seal vouches for
        failures += independence(base if sealed else None)
    if receipt is None:
        return failures
    failures += bad_base
    expected = review_expectations(
        state, repository_id=update.repository_id, ref=update.ref, old=update.old,
        base=(receipt.base_commit or "") if base is None else base, new=update.new,
        new_tree=objects.commit(update.new).tree_id, object_format=objects.reader.object_format,
        diff_sha256=receipt.diff_sha256 if base is None else _tree_delta(objects, base, update.new))
    failures += [f for f in compare(receipt, expected) if f not in bad_base]
    failures += model_run_failures(model_run, receipt)
    if not sealed and not failures:  # pragma: no cover - Opened.verify reports seal failures
        failures.append(Failure("GATE-SEAL-BAD-SIGNATURE", "sig", "unsealed"))
    if not failures:
        failures += reuse(opened.payload_digest, used_before)
    return failures


def _tree_delta(objects: Objects, base: str, new: str) -> str:
    from ..git.digest import tree_delta_digest

    return tree_delta_digest(objects, base, new)
