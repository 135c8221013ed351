"""The pure part of the attestation export: statements, their seal, the key purpose, `--since`.

The seal is checked with securesystemslib's DSSE implementation, not with the gate's."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey

from gatecore.adapters.config import keyring_from_bytes
from gatecore.configuration.configschema import generate_key, parse_keyfile
from gatecore.errors import GateError
from gatecore.records import attestation
from gatecore.signing.keys import SigningKey, ephemeral_pair

COMMIT, TREE, RECORD = "a" * 40, "b" * 40, "c" * 40


def _accepted(kind: str = "review") -> attestation.Accepted:
    record = attestation.Record("receipt", "application/vnd.gate.receipt.v1+json", "d" * 64, RECORD,
                                "receipt.json", {"attempt_id": "a1", "model_id": "m"})
    return attestation.Accepted(kind, "refs/heads/review/runner/a1", COMMIT, TREE, 1_700_000_000, (record,))


def test_a_statement_is_an_in_toto_v1_statement_with_a_verification_summary() -> None:
    doc = attestation.statement(_accepted(), "push-gate:org/project", 1_767_225_600, "0.1.0")
    assert doc == {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "refs/heads/review/runner/a1", "digest": {"gitCommit": COMMIT, "gitTree": TREE},
                     "annotations": {"sourceRefs": ["refs/heads/review/runner/a1"]}}],
        "predicateType": "https://slsa.dev/verification_summary/v1",
        "predicate": {
            "verifier": {"id": "https://push-gate.invalid/attestation/verifier/v1",
                         "version": {"push-gate": "0.1.0"}},
            "timeVerified": "2026-01-01T00:00:00Z",
            "resourceUri": "push-gate:org/project",
            "policy": {"uri": "https://push-gate.invalid/attestation/policy/review-receipt/v1"},
            "inputAttestations": [{
                "name": "receipt", "uri": f"push-gate:org/project@{RECORD}#receipt.json",
                "digest": {"sha256": "d" * 64}, "mediaType": "application/vnd.gate.receipt.v1+json",
                "annotations": {"attempt_id": "a1", "model_id": "m"}}],
            "verificationResult": "PASSED",
            "verifiedLevels": ["PUSH_GATE_REVIEW_RECEIPT_V1"],
        },
    }
    approval = attestation.statement(_accepted("approval"), "git+https://x/y", 0, "0.1.0")["predicate"]
    assert approval["verifiedLevels"] == ["PUSH_GATE_APPROVAL_V1"]
    assert approval["policy"]["uri"].endswith("/policy/approval/v1")
    with pytest.raises(ValueError):
        attestation.statement(_accepted("other"), "x:y", 0, "0.1.0")


def test_a_sealed_line_verifies_with_securesystemslib() -> None:
    key, pub = ephemeral_pair("ed25519", "attest-1", "attestation")
    doc = attestation.statement(_accepted(), "push-gate:org/project", 0, "0.1.0")
    line = attestation.seal_line(key, doc)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    env = Envelope.from_dict(json.loads(line))
    verifier = SSlibKey("attest-1", "ed25519", "ed25519", {"public": pub.material.hex()})
    assert list(env.verify([verifier], 1)) == ["attest-1"]
    assert env.payload_type == "application/vnd.in-toto+json" and json.loads(env.payload) == doc


@pytest.mark.parametrize("key", [
    SigningKey("r", "ed25519", "receipt", bytes(32)),
    SigningKey("h", "hmac-sha256", "attestation", bytes(32)),
])
def test_only_an_ed25519_attestation_key_seals(key: SigningKey) -> None:
    with pytest.raises(GateError) as exc:
        attestation.seal_line(key, {})
    assert exc.value.code == "GATE-CONFIG-KEYFILE"


def test_the_attestation_purpose_is_ed25519_only() -> None:
    made = generate_key("ed25519", "attest-1", "attestation")
    assert parse_keyfile(made.keyfile_text.encode(), "k").purpose == "attestation"
    assert keyring_from_bytes(made.keyring_entry.encode(), "ring")["attest-1"].purpose == "attestation"
    with pytest.raises(GateError, match="an attestation key is ed25519"):
        generate_key("hmac-sha256", "attest-2", "attestation")
    text = b'[[key]]\nid = "h"\nalgorithm = "hmac-sha256"\npurpose = "attestation"\nsecret = "' + b"A" * 44 + b'"\n'
    with pytest.raises(GateError, match="an attestation key is ed25519"):
        keyring_from_bytes(text, "ring")
    pem = attestation.public_pem(parse_keyfile(made.keyfile_text.encode(), "k"))
    der = base64.b64decode("".join(pem.strip().splitlines()[1:-1]))
    public = made.keyring_entry.split('public_key = "')[1].split('"')[0]
    assert der[-32:] == base64.b64decode(public)  # SubjectPublicKeyInfo ends with the raw key


def test_the_reasons_digest_is_of_their_compact_json_array() -> None:
    reasons = ["covers the café path", "tests \"pass\""]
    compact = json.dumps(reasons, separators=(",", ":"), ensure_ascii=False).encode()
    assert attestation.reasons_sha256(reasons) == hashlib.sha256(compact).hexdigest()


@pytest.mark.parametrize(("text", "seconds"), [
    ("2026-01-01", 1_767_225_600),
    ("2026-01-01T01:00:00Z", 1_767_229_200),
    ("2026-01-01T01:00:00+01:00", 1_767_225_600),
])
def test_since_takes_a_date_or_a_time_with_an_offset(text: str, seconds: int) -> None:
    assert attestation.parse_since(text) == seconds


@pytest.mark.parametrize("text", ["yesterday", "2026-01-01T01:00:00", "2026-13-01", ""])
def test_since_refuses_anything_else(text: str) -> None:
    with pytest.raises(GateError) as exc:
        attestation.parse_since(text)
    assert exc.value.code == "GATE-INPUT-ARGUMENT"
