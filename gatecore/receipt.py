"""The review receipt: its schema, strict parsing and canonical writing.

Field names are public (see docs/receipts.md). A receipt is the payload of an envelope
of type `application/vnd.gate.receipt.v1+json`; it is only ever read from the exact
payload bytes that the seal covers.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from . import envelope, strictjson
from .errors import GateError
from .fields import (
    AttemptId,
    Generation,
    ModelId,
    ObjectId,
    Reason,
    RefName,
    RepositoryId,
    Sha256Hex,
    Time,
    format_validation_error,
)
from .findings import Failure
from .keys import SigningKey
from .seal import sign

DIFF_TREE_DELTA = "gate-tree-delta-v1"
DIFF_BYTES = "sha256-bytes"
MAX_REASONS = 32
MAX_LIFETIME_SECONDS = 30 * 24 * 3600

#: The bound fields: each must equal what the gate recomputed or looked up, and its mismatch
#: has its own code. The one list (binding.Expectations has exactly these fields, in this
#: order, which is the order failures are reported in).
BOUND: dict[str, str] = {
    "attempt_id": "GATE-BIND-ATTEMPT",
    "model_id": "GATE-BIND-MODEL",
    "workspace_generation": "GATE-BIND-GENERATION",
    "prompt_sha256": "GATE-BIND-PROMPT",
    "diff_sha256": "GATE-BIND-DIFF",
    "diff_algorithm": "GATE-BIND-DIFF-ALGORITHM",
    "repository": "GATE-BIND-REPOSITORY",
    "ref": "GATE-BIND-REF",
    "old_commit": "GATE-BIND-OLD-COMMIT",
    "base_commit": "GATE-BIND-BASE-COMMIT",
    "new_commit": "GATE-BIND-NEW-COMMIT",
    "new_tree": "GATE-BIND-NEW-TREE",
    "object_format": "GATE-BIND-OBJECT-FORMAT",
    "ledger_record": "GATE-BIND-LEDGER",
}


def _reasons(value: list[str]) -> list[str]:
    if not value:
        raise ValueError("at least one reason is required")
    return value


class Receipt(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    version: Annotated[int, Field(ge=1, le=1)]  # Literal[1] would accept True
    attempt_id: AttemptId
    diff_algorithm: Literal["gate-tree-delta-v1", "sha256-bytes"]
    diff_sha256: Sha256Hex
    prompt_sha256: Sha256Hex
    model_id: ModelId
    workspace_generation: Generation
    verdict: Literal["pass", "fail"]
    reasons: Annotated[list[Reason], Field(max_length=MAX_REASONS), AfterValidator(_reasons)]
    issued_at: Time
    expires_at: Time
    # Git state, present when the receipt is bound to a repository.
    repository: RepositoryId | None = None
    ref: RefName | None = None
    old_commit: ObjectId | None = None
    base_commit: ObjectId | None = None
    new_commit: ObjectId | None = None
    new_tree: ObjectId | None = None
    object_format: Literal["sha1", "sha256"] | None = None
    # The ledger record (sha256 of its envelope) that put model_id on record.
    ledger_record: Sha256Hex | None = None


#: Codes for fields whose own code is more specific than GATE-RECEIPT-FIELD.
_FIELD_CODES = {"verdict": "GATE-RECEIPT-VERDICT", "reasons": "GATE-RECEIPT-REASONS"}


def parse_payload(payload: bytes) -> tuple[Receipt | None, list[Failure]]:
    """Parse payload bytes strictly; on failure return every field error as a Failure."""
    try:
        doc = strictjson.loads(payload)
    except GateError as exc:
        return None, [Failure(exc.code, "receipt", exc.detail)]
    if not isinstance(doc, dict):
        return None, [Failure("GATE-RECEIPT-MALFORMED", "receipt", "payload is not a JSON object")]
    try:
        return Receipt.model_validate(doc), []
    except ValidationError as exc:
        failures = []
        for err in exc.errors(include_url=False):
            field = str(err["loc"][0]) if err["loc"] else "receipt"
            failures.append(Failure(_FIELD_CODES.get(field, "GATE-RECEIPT-FIELD"), field, str(err["msg"])))
        return None, failures


def canonical_payload(receipt: Receipt) -> bytes:
    return strictjson.dumps(receipt.model_dump(exclude_none=True))


def seal_document(doc: dict[str, object], key: SigningKey) -> bytes:
    """Validate a receipt document with the schema the gate uses, and seal it (envelope bytes)."""
    if key.purpose != "receipt":
        raise GateError("GATE-CONFIG-KEYFILE", f"key {key.id} is for {key.purpose}, not receipts")
    try:
        receipt = Receipt.model_validate(doc)
    except ValidationError as exc:
        raise GateError("GATE-INPUT-ARGUMENT", f"receipt: {format_validation_error(exc)}") from None
    data = envelope.encode(sign(key, envelope.PAYLOAD_RECEIPT, canonical_payload(receipt)))
    if len(data) > strictjson.MAX_DOCUMENT_BYTES:
        raise GateError("GATE-RECEIPT-TOO-LARGE", f"receipt would be {len(data)} bytes")
    return data
