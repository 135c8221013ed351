"""The receipt decision: a pure function of (envelope bytes, expectations, keyring, now).

A receipt is accepted only when every check passed: the envelope parsed, its seal
verified with an active key of purpose `receipt`, the payload parsed under the strict
schema, it is within its validity window, every expected field equals the value the
gate recomputed or looked up, the verdict is `pass` and reasons are present. Anything
else - including a missing receipt - is a rejection listing every failed check.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING

from . import envelope as env_mod
from .errors import GateError
from .findings import Failure, unique_in_order
from .keys import Keyring
from .receipt import BOUND, MAX_LIFETIME_SECONDS, Receipt, parse_payload
from .seal import verify as verify_seal
from .strictjson import MAX_DOCUMENT_BYTES

if TYPE_CHECKING:
    from .independence import Independence

#: Clock skew tolerated on issued_at, seconds.
CLOCK_SKEW_SECONDS = 300


@dataclass(frozen=True, slots=True)
class Expectations:
    """What the gate recomputed or looked up for this attempt. None: not checked here.

    Its fields are `receipt.BOUND`, in order (checked at import).
    """

    attempt_id: str
    model_id: str
    workspace_generation: str
    prompt_sha256: str
    diff_sha256: str
    diff_algorithm: str
    repository: str | None = None
    ref: str | None = None
    old_commit: str | None = None
    base_commit: str | None = None
    new_commit: str | None = None
    new_tree: str | None = None
    object_format: str | None = None
    ledger_record: str | None = None

    def receipt_document(self, verdict: object, reasons: object, issued_at: int, expires_at: int) -> dict[str, object]:
        """The receipt the trusted side seals for exactly these values (unset fields left out)."""
        bound = {k: v for k, v in asdict(self).items() if v is not None}
        return {"version": 1, **bound, "verdict": verdict, "reasons": reasons, "issued_at": issued_at,
                "expires_at": expires_at}


if tuple(f.name for f in fields(Expectations)) != tuple(BOUND):  # pragma: no cover - guards the one list
    raise RuntimeError("binding.Expectations and receipt.BOUND disagree")


@dataclass(frozen=True, slots=True)
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


def open_receipt(data: bytes | None, keyring: Keyring, now: int) -> tuple[Receipt | None, list[Failure], bool]:
    """Parse and unseal a receipt envelope.

    Returns (receipt or None, failures, sealed) where `sealed` is True only when the seal
    verified. The payload is still parsed when the seal fails, so that every problem is
    reported, but such a receipt can never be accepted.
    """
    if data is None:
        return None, [Failure("GATE-RECEIPT-MISSING", "receipt", "no receipt")], False
    if len(data) > MAX_DOCUMENT_BYTES:
        return None, [Failure("GATE-RECEIPT-TOO-LARGE", "receipt",
                              f"{len(data)} bytes; the cap is {MAX_DOCUMENT_BYTES}")], False
    try:
        envelope = env_mod.parse(data)
    except GateError as exc:
        return None, [Failure(exc.code, "envelope", exc.detail)], False
    failures = verify_seal(envelope, keyring, env_mod.PAYLOAD_RECEIPT, now)
    sealed = not failures
    receipt, parse_failures = parse_payload(envelope.payload)
    failures += parse_failures
    if receipt is not None:
        failures += check_times(receipt, now)
    return receipt, failures, sealed


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
    """Every bound field that differs from (or is missing against) the expectation."""
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


def decide(data: bytes | None, expected: Expectations, keyring: Keyring, now: int,
           independence: Independence | None = None) -> Decision:
    """The receipt against the expectations; with `independence`, also whether the expected
    (on-record) model is independent of the attempt's author (`gatecore.independence`)."""
    receipt, failures, sealed = open_receipt(data, keyring, now)
    if independence is not None:
        failures += independence.failures(expected.model_id)
    if receipt is not None:
        failures += compare(receipt, expected)
    accepted = sealed and receipt is not None and not failures
    return Decision(accepted=accepted, failures=tuple(failures), receipt=receipt)
