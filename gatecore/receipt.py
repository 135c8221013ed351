"""The review receipt: its schema, strict parsing and canonical writing.

Field names are public (see docs/receipts.md). A receipt is the payload of an envelope
of type `application/vnd.gate.receipt.v1+json`; it is only ever read from the exact
payload bytes that the seal covers.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from . import ids, strictjson
from .errors import InputError
from .failure import Failure

DIFF_TREE_DELTA = "gate-tree-delta-v1"
DIFF_BYTES = "sha256-bytes"
MAX_REASONS = 32
MAX_REASON_CHARS = 2000
MAX_LIFETIME_SECONDS = 30 * 24 * 3600
_MAX_TIME = 2**40


def _check(pred: object, what: str) -> AfterValidator:
    def run(value: str) -> str:
        if not pred(value):  # type: ignore[operator]
            raise ValueError(f"not a valid {what}")
        return value

    return AfterValidator(run)


def _reason(value: str) -> str:
    if not value.strip():
        raise ValueError("reason is blank")
    if any((ord(ch) < 0x20 and ch not in "\n\t") or ord(ch) == 0x7F for ch in value):
        raise ValueError("reason holds control characters")
    return value


def _reasons(value: list[str]) -> list[str]:
    if not value:
        raise ValueError("at least one reason is required")
    return value


AttemptId = Annotated[str, _check(ids.is_attempt_id, "attempt id")]
Generation = Annotated[str, _check(ids.is_generation, "workspace generation")]
ModelId = Annotated[str, _check(ids.is_model_id, "model id")]
RepositoryId = Annotated[str, _check(ids.is_repository_id, "repository id")]
Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
ObjectId = Annotated[str, Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")]
Reason = Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS), AfterValidator(_reason)]
Time = Annotated[int, Field(ge=0, lt=_MAX_TIME)]
RefName = Annotated[str, Field(min_length=6, max_length=1024, pattern=r"^refs/[\x21-\x7e]+$")]


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
    except InputError as exc:
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
