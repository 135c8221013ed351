"""The review receipt: its schema, strict parsing and canonical writing.

Field names are public (see docs/receipts.md). A receipt is the payload of an envelope
of type `application/vnd.gate.receipt.v1+json`; it is only ever read from the exact
payload bytes that the seal covers.
"""

from __future__ import annotations

from typing import Any

from .. import strictjson
from ..errors import GateError
from ..findings import Failure
from ..signing import envelope
from ..signing.keys import SigningKey
from ..signing.seal import sign
from ..valueclass import asdict, valueclass
from .fields import ATTEMPT_ID, GENERATION, MODEL_ID, OBJECT_ID, REASON, REF_NAME, REPOSITORY_ID, SHA256_HEX, TIME
from .schema import Member, choice, describe, integer, read, text_list

DIFF_TREE_DELTA = "gate-tree-delta-v1"
DIFF_BYTES = "sha256-bytes"
MAX_REASONS = 32
MAX_LIFETIME_SECONDS = 30 * 24 * 3600
#: How the runner obtained the verdict: it ran the model's command itself, or read a file.
MODEL_RUN_RUNNER, MODEL_RUN_FILE = "runner", "file"
MODEL_RUNS = (MODEL_RUN_RUNNER, MODEL_RUN_FILE)

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


@valueclass(frozen=True, slots=True)
class Receipt:
    """A receipt's members (docs/receipts.md); `parse_payload` is the only way in from bytes."""

    version: int
    attempt_id: str
    diff_algorithm: str
    diff_sha256: str
    prompt_sha256: str
    model_id: str
    workspace_generation: str
    verdict: str
    reasons: tuple[str, ...]
    issued_at: int
    expires_at: int
    # Git state, present when the receipt is bound to a repository.
    repository: str | None = None
    ref: str | None = None
    old_commit: str | None = None
    base_commit: str | None = None
    new_commit: str | None = None
    new_tree: str | None = None
    object_format: str | None = None
    # The ledger record (sha256 of its envelope) that put model_id on record.
    ledger_record: str | None = None
    # How the verdict was obtained (not bound: the runner's word, under its seal; docs/receipts.md):
    # "runner" (it ran the model's command itself, `gate review run`) or "file" (it read an output
    # file, `gate review record --model-output`); the model the model's tool said served the
    # answer; the challenge the answer carried; the SHA-256 of the request the model was shown
    # (its prompt, the bound values, the challenge and the change's text: rebuilt from them and the
    # objects by `gate review run`'s rules, `gatecore.trusted.runner.request_of`).
    model_run: str | None = None
    served_model: str | None = None
    challenge: str | None = None
    request_sha256: str | None = None

    def as_doc(self) -> dict[str, Any]:
        """The members that are set, as a JSON document."""
        doc = asdict(self)
        doc["reasons"] = list(self.reasons)
        return {k: v for k, v in doc.items() if v is not None}


#: The schema, in the order of `Receipt`'s fields (problems are reported in this order).
MEMBERS = (
    Member("version", integer(1, 1)),
    Member("attempt_id", ATTEMPT_ID),
    Member("diff_algorithm", choice(DIFF_TREE_DELTA, DIFF_BYTES)),
    Member("diff_sha256", SHA256_HEX),
    Member("prompt_sha256", SHA256_HEX),
    Member("model_id", MODEL_ID),
    Member("workspace_generation", GENERATION),
    Member("verdict", choice("pass", "fail")),
    Member("reasons", text_list(REASON, 1, MAX_REASONS)),
    Member("issued_at", TIME),
    Member("expires_at", TIME),
    Member("repository", REPOSITORY_ID, optional=True),
    Member("ref", REF_NAME, optional=True),
    Member("old_commit", OBJECT_ID, optional=True),
    Member("base_commit", OBJECT_ID, optional=True),
    Member("new_commit", OBJECT_ID, optional=True),
    Member("new_tree", OBJECT_ID, optional=True),
    Member("object_format", choice("sha1", "sha256"), optional=True),
    Member("ledger_record", SHA256_HEX, optional=True),
    Member("model_run", choice(*MODEL_RUNS), optional=True),
    Member("served_model", MODEL_ID, optional=True),
    Member("challenge", SHA256_HEX, optional=True),
    Member("request_sha256", SHA256_HEX, optional=True),
)


def from_doc(doc: Any) -> tuple[Receipt | None, list[tuple[str, str]]]:
    """A receipt from a parsed JSON document, or (member, problem) for each problem."""
    values, problems = read(doc, MEMBERS)
    if problems:
        return None, problems
    return Receipt(**{**values, "reasons": tuple(values["reasons"])}), []


#: Codes for fields whose own code is more specific than GATE-RECEIPT-FIELD.
_FIELD_CODES = {"verdict": "GATE-RECEIPT-VERDICT", "reasons": "GATE-RECEIPT-REASONS"}


def parse_payload(payload: bytes) -> tuple[Receipt | None, list[Failure]]:
    """Parse payload bytes strictly; on failure return every field error as a Failure."""
    try:
        doc = strictjson.loads(payload, too_large="GATE-RECEIPT-TOO-LARGE")
    except GateError as exc:
        return None, [Failure(exc.code, "receipt", exc.detail)]
    if not isinstance(doc, dict):
        return None, [Failure("GATE-RECEIPT-MALFORMED", "receipt", "payload is not a JSON object")]
    receipt, problems = from_doc(doc)
    return receipt, [Failure(_FIELD_CODES.get(field, "GATE-RECEIPT-FIELD"), field, problem)
                     for field, problem in problems]


def canonical_payload(receipt: Receipt) -> bytes:
    return strictjson.dumps(receipt.as_doc())


def seal_document(doc: dict[str, object], key: SigningKey) -> bytes:
    """Validate a receipt document with the schema the gate uses, and seal it (envelope bytes)."""
    if key.purpose != "receipt":
        raise GateError("GATE-CONFIG-KEYFILE", f"key {key.id} is for {key.purpose}, not receipts")
    receipt, problems = from_doc(doc)
    if receipt is None:
        raise GateError("GATE-INPUT-ARGUMENT", f"receipt: {describe(problems)}")
    data = envelope.encode(sign(key, envelope.PAYLOAD_RECEIPT, canonical_payload(receipt)))
    if len(data) > strictjson.MAX_DOCUMENT_BYTES:
        raise GateError("GATE-RECEIPT-TOO-LARGE", f"receipt would be {len(data)} bytes")
    return data
