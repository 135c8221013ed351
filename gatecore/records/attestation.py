"""What the gate accepted, as in-toto attestations (pure): statements, their predicate, their seal.

`gate attest export` (`gatecore.trusted.attest`) re-verifies each accepted update of a
review ref (its receipt, with the ledger records it binds) and each used approval, and
hands them here as plain values (`Accepted`). Each becomes one in-toto Statement v1:

* subject: the commit the ref moved to (`gitCommit`, and `gitTree` where known), named
  by the ref, with `annotations.sourceRefs = [ref]` (SLSA's source-track convention);
* predicate: SLSA's Verification Summary (`https://slsa.dev/verification_summary/v1`):
  the gate is the verifier, the review-ref or approval rules are the policy, and the
  sealed records the gate checked (the receipt and its ledger records, or the approval)
  are the `inputAttestations`, each a ResourceDescriptor whose `annotations` carry the
  record's bound fields under their own names (docs/attestations.md has the mapping);

sealed into a DSSE envelope (payload type `application/vnd.in-toto+json`) by an Ed25519
key of purpose `attestation`, one envelope per line: an in-toto bundle (`.intoto.jsonl`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .. import strictjson
from ..configuration.policy import Policy
from ..errors import GateError
from ..signing import envelope
from ..signing.keys import SigningKey
from ..signing.seal import sign
from ..valueclass import field, valueclass
from .approvals import Approval
from .ledger import AttemptState
from .receipt import MODEL_RUN_FILE, Receipt

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
VSA_TYPE = "https://slsa.dev/verification_summary/v1"
PAYLOAD_TYPE = envelope.PAYLOAD_INTOTO
#: The project's names for itself: identifiers, not locations (RFC 2606 reserves `.invalid`, so
#: nobody else can mint them). Each carries a version that changes with its meaning.
URI_BASE = "https://push-gate.invalid/attestation/"
VERIFIER_ID = URI_BASE + "verifier/v1"
KINDS = ("review", "approval")
POLICY_URI = {"review": URI_BASE + "policy/review-receipt/v1", "approval": URI_BASE + "policy/approval/v1"}
#: `verifiedLevels`: custom values (the VSA allows them; they must not start with SLSA_).
LEVEL = {"review": "PUSH_GATE_REVIEW_RECEIPT_V1", "approval": "PUSH_GATE_APPROVAL_V1"}
RESOURCE_SCHEME = "push-gate:"  # resourceUri when the export is given none: push-gate:<repository id>


@valueclass(frozen=True, slots=True)
class Record:
    """A sealed record the gate checked: one input attestation of the statement."""

    name: str  # receipt, ledger-opened, ledger-model, approval
    media_type: str  # the record's DSSE payload type
    data_sha256: str  # SHA-256 of the envelope bytes as the repository holds them
    commit: str  # the commit whose tree holds the record
    file: str  # the record's file in that tree
    annotations: Mapping[str, Any]


@valueclass(frozen=True, slots=True)
class Accepted:
    """One ref update the gate accepted, re-verified: what a statement attests."""

    kind: str  # review or approval
    ref: str
    commit: str
    tree: str | None
    time: int  # when its record says it was made (receipt issued_at, approval created_at)
    records: tuple[Record, ...] = field(default=())
    #: the policy settings the record was verified again under (the predicate's policy annotations)
    policy: Mapping[str, Any] = field(default_factory=dict)


def reasons_sha256(reasons: Sequence[str]) -> str:
    """SHA-256 of the reasons as a compact JSON array (UTF-8, no spaces, non-ASCII as is)."""
    return hashlib.sha256(strictjson.dumps(list(reasons))).hexdigest()


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def receipt_annotations(receipt: Receipt, keyid: str, payload_sha256: str) -> dict[str, Any]:
    """The receipt's members under their own names, `reasons` replaced by their digest, and how the
    runner got the answer (`model_run`: "runner", it called the model itself; "file", it sealed an
    output file, as every runner did before `gate review run`)."""
    doc = receipt.as_doc()
    doc.pop("reasons")
    return {**doc, "model_run": receipt.model_run or MODEL_RUN_FILE, "reasons_sha256": reasons_sha256(receipt.reasons),
            "reasons_count": len(receipt.reasons), "keyid": keyid, "payload_sha256": payload_sha256}


#: What a review statement says of the policy when the export was given none (`--policy`, or the
#: server's installation): nothing was checked again under a setting.
NOT_CHECKED = "not-checked"


def review_policy(policy: Policy | None) -> dict[str, Any]:
    """The settings a review was verified again under: `[review] independent` (the reviewer against
    the ledger's author and the reviewed commits' agents) and `[review] model_run`."""
    if policy is None:
        return {"independent": NOT_CHECKED, "model_run": NOT_CHECKED}
    return {"independent": policy.independent, "model_run": policy.model_run}


def opened_annotations(state: AttemptState, keyid: str) -> dict[str, Any]:
    """What the attempt's opened record put on record: who wrote the change (`author_model`,
    `author_vendor`) and who started the attempt (`initiator`) too, where it says."""
    doc: dict[str, Any] = {"attempt_id": state.attempt_id, "repository": state.repository,
                           "workspace": state.workspace, "workspace_generation": state.workspace_generation,
                           "prompt_sha256": state.prompt_sha256, "keyid": keyid}
    for name in ("target", "author_model", "author_vendor", "initiator"):  # as recorded, where recorded
        if getattr(state, name) is not None:
            doc[name] = getattr(state, name)
    return doc


def model_annotations(state: AttemptState, kind: str, keyid: str) -> dict[str, Any]:
    """The record that put the reviewing model on record, and every model on record up to it."""
    return {"kind": kind, "model_id": state.model_id, "models": list(state.models), "seq": state.seq,
            "time": state.updated, "keyid": keyid}


def approval_annotations(approval: Approval, keyid: str) -> dict[str, Any]:
    """The approval's members under their own names, `reason` replaced by its digest."""
    return {"approval_id": approval.id, "repository_id": approval.repository_id, "ref": approval.ref,
            "old": approval.old, "new": approval.new, "paths": list(approval.paths), "approver": approval.approver,
            "created_at": approval.created_at, "expires_at": approval.expires_at,
            "reason_sha256": text_sha256(approval.reason), "keyid": keyid, "used": True}


def rfc3339(seconds: int) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_since(text: str) -> int:
    """`2026-01-31` (midnight UTC) or an ISO 8601 time with an offset (`2026-01-31T12:00:00Z`)."""
    value = text.strip()
    try:
        when = dt.datetime.fromisoformat(value + "T00:00:00+00:00" if _DATE.fullmatch(value) else value)
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise GateError("GATE-INPUT-ARGUMENT", f"--since {text!r} is not a date (2026-01-31) or a time with an "
                                               "offset (2026-01-31T12:00:00Z)")
    return int(when.timestamp())


def resource_uri(repository: str, given: str | None) -> str:
    return given if given else RESOURCE_SCHEME + repository


def _descriptor(r: Record, resource: str) -> dict[str, Any]:
    return {"name": r.name, "uri": f"{resource}@{r.commit}#{r.file}", "digest": {"sha256": r.data_sha256},
            "mediaType": r.media_type, "annotations": dict(r.annotations)}


def statement(acc: Accepted, resource: str, verified_at: int, version: str) -> dict[str, Any]:
    """The in-toto Statement v1 (predicate: SLSA Verification Summary v1) for one accepted update."""
    if acc.kind not in KINDS:
        raise ValueError(f"unknown kind {acc.kind}")
    digest = {"gitCommit": acc.commit} if acc.tree is None else {"gitCommit": acc.commit, "gitTree": acc.tree}
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": acc.ref, "digest": digest, "annotations": {"sourceRefs": [acc.ref]}}],
        "predicateType": VSA_TYPE,
        "predicate": {
            "verifier": {"id": VERIFIER_ID, "version": {"push-gate": version}},
            "timeVerified": rfc3339(verified_at),
            "resourceUri": resource,
            "policy": {"uri": POLICY_URI[acc.kind], **({"annotations": dict(acc.policy)} if acc.policy else {})},
            "inputAttestations": [_descriptor(r, resource) for r in acc.records],
            "verificationResult": "PASSED",
            "verifiedLevels": [LEVEL[acc.kind]],
        },
    }


def check_key(key: SigningKey) -> None:
    if key.purpose != "attestation" or key.algorithm != "ed25519":
        raise GateError("GATE-CONFIG-KEYFILE", f"key {key.id} is an {key.algorithm} key for {key.purpose}; "
                                               "attestations are sealed with an ed25519 key of purpose attestation "
                                               "(gate keys generate --alg ed25519 --purpose attestation)")


def seal_line(key: SigningKey, doc: Mapping[str, Any]) -> bytes:
    """One line of the bundle: the DSSE envelope of the statement, compact JSON, newline-terminated."""
    check_key(key)
    env = sign(key, PAYLOAD_TYPE, strictjson.dumps(doc))
    wire = {"payloadType": env.payload_type, "payload": envelope.b64encode(env.payload),
            "signatures": [{"keyid": env.keyid, "sig": envelope.b64encode(env.sig)}]}
    return (json.dumps(wire, separators=(",", ":")) + "\n").encode("ascii")


def public_pem(key: SigningKey) -> str:
    """The public half of an attestation key as PEM (SubjectPublicKeyInfo), as DSSE verifiers take it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    check_key(key)
    public = Ed25519PrivateKey.from_private_bytes(key.material).public_key()
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
