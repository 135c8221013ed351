"""Envelope encoding and seals: golden vectors, strict parsing, keyrings and key files."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest
from support.cli import cli

from gatecore.adapters.config import load_keyfile, load_keyring
from gatecore.errors import GateError
from gatecore.signing import envelope
from gatecore.signing.keys import SigningKey, VerifyKey
from gatecore.signing.seal import sign, verify

PAYLOAD = b'{"hello":"world"}'
SEED = bytes(range(32))
PUB_B64 = "A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
ED_SIG = "OlX9mVWmw56EMQwf6k0wMQu3mja8p1kp0J9jT76vEnFxqqSFOIM+f8VGULdACOTXR0NQMtdw3tM+CbJsgn31Cg=="
HMAC_SIG = "NLK/aXbPNf3Kdzdc2PH7iJ7YMQPagac8DrswG75u8C0="


def test_pae_vector() -> None:
    assert envelope.pae(envelope.PAYLOAD_RECEIPT, PAYLOAD) == (
        b'DSSEv1 36 application/vnd.gate.receipt.v1+json 17 {"hello":"world"}')


def test_ed25519_vector() -> None:
    env = sign(SigningKey("vector-ed", "ed25519", "receipt", SEED), envelope.PAYLOAD_RECEIPT, PAYLOAD)
    assert base64.b64encode(env.sig).decode() == ED_SIG
    ring = {"vector-ed": VerifyKey("vector-ed", "ed25519", "receipt", base64.b64decode(PUB_B64), None, None, False)}
    assert verify(envelope.parse(envelope.encode(env)), ring, envelope.PAYLOAD_RECEIPT, 0) == []


def test_hmac_vector() -> None:
    env = sign(SigningKey("vector-hmac", "hmac-sha256", "receipt", b"\x07" * 32), envelope.PAYLOAD_RECEIPT, PAYLOAD)
    assert base64.b64encode(env.sig).decode() == HMAC_SIG


def test_sign_refuses_the_wrong_purpose() -> None:
    with pytest.raises(ValueError):
        sign(SigningKey("k", "ed25519", "attempt", SEED), envelope.PAYLOAD_RECEIPT, PAYLOAD)


def test_verification_uses_the_exact_payload_bytes() -> None:
    """Re-ordering keys in the payload (same JSON value) breaks the seal: no re-serialising."""
    env = sign(SigningKey("vector-ed", "ed25519", "receipt", SEED), envelope.PAYLOAD_RECEIPT, b'{"a":1,"b":2}')
    ring = {"vector-ed": VerifyKey("vector-ed", "ed25519", "receipt", base64.b64decode(PUB_B64), None, None, False)}
    moved = envelope.Envelope(env.payload_type, b'{"b":2,"a":1}', env.keyid, env.sig)
    assert [f.code for f in verify(moved, ring, envelope.PAYLOAD_RECEIPT, 0)] == ["GATE-SEAL-BAD-SIGNATURE"]


@pytest.mark.parametrize("raw", [
    b"[]", b'{"payloadType":"x","payload":"","signatures":[]}',
    b'{"payloadType":"x","payload":"eA==","signatures":[{"keyid":"k","sig":"eA=="}],"x":1}',
    b'{"payloadType":"x","payload":"eA","signatures":[{"keyid":"k","sig":"eA=="}]}',
    b'{"payloadType":"x","payload":"eB==","signatures":[{"keyid":"k","sig":"eA=="}]}',
    b'{"payloadType":"x","payload":"e A==","signatures":[{"keyid":"k","sig":"eA=="}]}',
    b'{"payloadType":"x","payload":"eA==","signatures":[{"keyid":"","sig":"eA=="}]}',
    b'{"payloadType":1,"payload":"eA==","signatures":[{"keyid":"k","sig":"eA=="}]}',
    b'{"payloadType":"x","payload":"eA==","signatures":[{"keyid":"k","sig":"eA==","alg":"none"}]}',
])
def test_malformed_envelopes(raw: bytes) -> None:
    with pytest.raises(GateError) as exc:
        envelope.parse(raw)
    assert exc.value.code == "GATE-SEAL-MALFORMED"


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "ring.toml"
    p.write_text(text)
    return p


def test_keyring_roundtrip_with_generate(tmp_path: Path) -> None:
    out = cli("keys", "generate", "--alg", "ed25519", "--id", "runner-1", "--purpose", "receipt",
               "--out", str(tmp_path / "k"))
    assert out.returncode == 0, out.stderr
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600
    ring = load_keyring(_write(tmp_path, out.stdout))
    assert ring["runner-1"].algorithm == "ed25519" and ring["runner-1"].purpose == "receipt"
    key = load_keyfile(tmp_path / "k")
    env = sign(key, envelope.PAYLOAD_RECEIPT, PAYLOAD)
    assert verify(env, ring, envelope.PAYLOAD_RECEIPT, 0) == []
    again = cli("keys", "generate", "--alg", "ed25519", "--id", "runner-1", "--purpose", "receipt",
                 "--out", str(tmp_path / "k"))
    assert again.returncode == 1 and "never overwritten" in again.stderr


def test_generate_hmac_and_check(tmp_path: Path) -> None:
    out = cli("keys", "generate", "--alg", "hmac-sha256", "--id", "h1", "--purpose", "attempt",
               "--out", str(tmp_path / "h"))
    assert out.returncode == 0
    ring = _write(tmp_path, out.stdout)
    check = cli("keys", "check", str(ring))
    assert check.returncode == 0 and "h1: hmac-sha256 attempt active" in check.stdout


@pytest.mark.parametrize("text,where", [
    ('[[key]]\nid="a"\nalgorithm="rsa"\npurpose="receipt"\npublic_key="x"\n', "key[0].algorithm"),
    ('[[key]]\nid="a"\nalgorithm="ed25519"\npurpose="both"\npublic_key="A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="\n',
     "key[0].purpose"),
    ('[[key]]\nid="a"\nalgorithm="ed25519"\npurpose="receipt"\npublic_key="AAAA"\n', "key[0]"),
    ('[[key]]\nid="a"\nalgorithm="hmac-sha256"\npurpose="receipt"\nsecret="AAAA"\n', "key[0]"),
    ('[[key]]\nid="a"\nalgorithm="ed25519"\npurpose="receipt"\nsecret="' + "A" * 44 + '"\n', "key[0]"),
    ('[[key]]\nid="../a"\nalgorithm="ed25519"\npurpose="receipt"\npublic_key="A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="\n',
     "key[0].id"),
    ('[[key]]\nid="a"\nalgorithm="ed25519"\npurpose="receipt"\npublic_key="A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="\n'
     'not_after=2026-01-01T00:00:00\n', "key[0].not_after"),
    ('[[key]]\nid="a"\nalgorithm="ed25519"\npurpose="receipt"\npublic_key="A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="\n'
     'revoked="no"\n', "key[0].revoked"),
    ('[[key]]\nid="a"\nalgorithm="ed25519"\npurpose="receipt"\npublic_key="A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="\n'
     'colour="red"\n', "key[0].colour"),
    ('[[key]]\nid="a"\nalgorithm="ed25519"\npurpose="receipt"\npublic_key="A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="\n' * 2,
     "duplicate key ids"),
    ("this is not toml", "not valid TOML"),
])
def test_bad_keyrings_name_the_location(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(GateError) as exc:
        load_keyring(_write(tmp_path, text))
    assert exc.value.code == "GATE-CONFIG-KEYRING"
    assert where in exc.value.detail
    out = cli("keys", "check", str(tmp_path / "ring.toml"))
    assert out.returncode == 2 and "GATE-CONFIG-KEYRING" in out.stderr


def test_missing_keyring(tmp_path: Path) -> None:
    with pytest.raises(GateError):
        load_keyring(tmp_path / "absent.toml")
