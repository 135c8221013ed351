"""Approval records (pure): the binding id, strict parsing, and every reason one cannot serve."""

from __future__ import annotations

import json

import pytest

from gatecore.adapters.config import policy_from_bytes
from gatecore.errors import GateError
from gatecore.records import approvals
from gatecore.signing import envelope
from gatecore.signing.keys import SigningKey, VerifyKey, new_ed25519
from gatecore.signing.seal import sign

POLICY = policy_from_bytes(b'[[freeze]]\npaths = ["ci/**"]\npushers = ["agent-*"]\n'
                           b'[approvals]\napprovers = ["alice", "agent-*"]\nmax_hours = 24\n', "p")
A, B = "a" * 40, "b" * 40
NOW = 1_800_000_000


def _approval(**kw: object) -> approvals.Approval:
    fields: dict[str, object] = dict(repository_id="demo/repo", ref="refs/heads/main", old=A, new=B,
                                     paths=("ci/x.yml",), approver="alice", created_at=NOW, expires_at=NOW + 3600)
    fields.update(kw)
    return approvals.Approval(**fields)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def ring() -> tuple[SigningKey, dict[str, VerifyKey]]:
    seed, pub = new_ed25519()
    return (SigningKey("m1", "ed25519", "approval", seed),
            {"m1": VerifyKey("m1", "ed25519", "approval", pub, None, None, False)})


def _codes(a: approvals.Approval, ring: tuple[SigningKey, dict[str, VerifyKey]], now: int = NOW + 10) -> set[str]:
    env = sign(ring[0], envelope.PAYLOAD_APPROVAL, a.payload())
    got, failures = approvals.verify(env, POLICY, "demo/repo", now, ring[1], None)
    assert got == a
    return {f.code for f in failures}


def test_a_good_approval_serves(ring: tuple[SigningKey, dict[str, VerifyKey]]) -> None:
    assert _codes(_approval(), ring) == set()


def test_the_id_binds_every_field_of_the_update() -> None:
    ids = {approvals.approval_id(*t) for t in (("demo/repo", "refs/heads/main", A, B),
                                               ("demo/other", "refs/heads/main", A, B),
                                               ("demo/repo", "refs/heads/dev", A, B),
                                               ("demo/repo", "refs/heads/main", B, B),
                                               ("demo/repo", "refs/heads/main", A, A))}
    assert len(ids) == 5


@pytest.mark.parametrize(("change", "now", "code"), [
    ({}, NOW + 3600, "GATE-APPROVAL-EXPIRED"),  # used at its expiry
    ({"expires_at": NOW + 25 * 3600}, NOW + 10, "GATE-APPROVAL-MALFORMED"),  # over max_hours
    ({"created_at": NOW + 3600, "expires_at": NOW + 7200}, NOW, "GATE-APPROVAL-MALFORMED"),  # from the future
    ({"repository_id": "demo/other"}, NOW + 10, "GATE-APPROVAL-MALFORMED"),
    ({"approver": "bob"}, NOW + 10, "GATE-APPROVAL-APPROVER"),
    ({"approver": "agent-7"}, NOW + 10, "GATE-APPROVAL-APPROVER"),  # listed, but a rule restricts it
])
def test_what_cannot_serve(ring: tuple[SigningKey, dict[str, VerifyKey]], change: dict[str, object], now: int,
                           code: str) -> None:
    assert code in _codes(_approval(**change), ring, now)


def test_another_purpose_or_a_revoked_key_never_serves(ring: tuple[SigningKey, dict[str, VerifyKey]]) -> None:
    a = _approval()
    env = sign(ring[0], envelope.PAYLOAD_APPROVAL, a.payload())
    key = ring[1]["m1"]
    for other, code in ((VerifyKey("m1", "ed25519", "receipt", key.material, None, None, False),
                         "GATE-SEAL-KEY-PURPOSE"),
                        (VerifyKey("m1", "ed25519", "approval", key.material, None, None, True),
                         "GATE-SEAL-KEY-REVOKED")):
        _, failures = approvals.verify(env, POLICY, "demo/repo", NOW + 10, {"m1": other}, None)
        assert code in {f.code for f in failures}


@pytest.mark.parametrize("mutate", [
    lambda d: d.update(extra=1),
    lambda d: d.pop("reason"),
    lambda d: d.update(old="A" * 40),
    lambda d: d.update(paths=[]),
    lambda d: d.update(paths=["x", "x"]),
    lambda d: d.update(expires_at=True),
    lambda d: d.update(ref="main"),
])
def test_payloads_are_strict(mutate: object) -> None:
    doc = json.loads(_approval().payload())
    mutate(doc)  # type: ignore[operator]
    with pytest.raises(GateError) as exc:
        approvals.parse_payload(json.dumps(doc).encode())
    assert exc.value.code == "GATE-APPROVAL-MALFORMED"


def test_hmac_approval_keys_are_refused_in_a_keyring() -> None:
    from gatecore.adapters.config import keyring_from_bytes

    text = b'[[key]]\nid = "h"\nalgorithm = "hmac-sha256"\npurpose = "approval"\nsecret = "' + b"A" * 44 + b'"\n'
    with pytest.raises(GateError, match="approval key is ed25519"):
        keyring_from_bytes(text, "ring")


def test_sha256_ids_serve_and_never_the_other_width(ring: tuple[SigningKey, dict[str, VerifyKey]]) -> None:
    """An approval in a SHA-256 repository names 64-digit ids; ids of mixed widths (a SHA-1 id where a
    SHA-256 one belongs) or of any other width are malformed."""
    a64, b64 = "a" * 64, "b" * 64
    assert _codes(_approval(old=a64, new=b64), ring) == set()
    assert approvals.parse_payload(_approval(old=a64, new=b64).payload()).new == b64
    for old, new in ((A, b64), (a64, B), ("a" * 41, "b" * 41), ("A" * 64, b64)):
        with pytest.raises(GateError) as err:
            approvals.parse_payload(_approval(old=old, new=new).payload())
        assert err.value.code == "GATE-APPROVAL-MALFORMED", (old, new)
