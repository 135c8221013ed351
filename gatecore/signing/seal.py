"""Sealing and verifying envelopes with Ed25519 or HMAC-SHA256.

The algorithm is taken from the keyring entry the envelope's key id names, never from
the envelope. Tags are length-checked before any comparison (`compare_digest` of two
empty strings is true) and HMAC tags are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac

from ..findings import Failure
from .envelope import PURPOSE_OF_PAYLOAD, Envelope, pae
from .keys import Keyring, SigningKey, VerifyKey

ED25519_SIG_BYTES = 64
HMAC_TAG_BYTES = 32


def sign(key: SigningKey, payload_type: str, payload: bytes) -> Envelope:
    if PURPOSE_OF_PAYLOAD.get(payload_type) != key.purpose:
        raise ValueError(f"a {key.purpose} key cannot seal {payload_type}")
    message = pae(payload_type, payload)
    if key.algorithm == "ed25519":
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        sig = Ed25519PrivateKey.from_private_bytes(key.material).sign(message)
    elif key.algorithm == "hmac-sha256":
        sig = hmac.new(key.material, message, hashlib.sha256).digest()
    else:
        raise ValueError(f"unknown algorithm {key.algorithm}")
    return Envelope(payload_type=payload_type, payload=payload, keyid=key.id, sig=sig)


def _signature_ok(key: VerifyKey, message: bytes, sig: bytes) -> bool:
    if key.algorithm == "ed25519":
        if len(sig) != ED25519_SIG_BYTES or len(key.material) != 32:
            return False
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            Ed25519PublicKey.from_public_bytes(key.material).verify(sig, message)
        except InvalidSignature:
            return False
        return True
    if key.algorithm == "hmac-sha256":
        if len(sig) != HMAC_TAG_BYTES or len(key.material) < 32:
            return False
        expected = hmac.new(key.material, message, hashlib.sha256).digest()
        return hmac.compare_digest(expected, sig)
    return False


def verify(env: Envelope, keyring: Keyring, payload_type: str, now: int) -> list[Failure]:
    """Every reason the envelope is not a valid seal of `payload_type` now; empty means valid."""
    failures: list[Failure] = []
    if env.payload_type != payload_type:
        failures.append(Failure("GATE-SEAL-PAYLOAD-TYPE", "payloadType",
                                f"expected {payload_type}, got {env.payload_type[:80]!r}"))
    key = keyring.get(env.keyid)
    if key is None:
        failures.append(Failure("GATE-SEAL-UNKNOWN-KEY", "keyid", f"no key {env.keyid[:64]!r} in the keyring"))
        return failures
    want_purpose = PURPOSE_OF_PAYLOAD.get(payload_type)
    if key.purpose != want_purpose:
        failures.append(Failure("GATE-SEAL-KEY-PURPOSE", "keyid",
                                f"key {key.id} is for {key.purpose}, not {want_purpose}"))
    if key.revoked:
        failures.append(Failure("GATE-SEAL-KEY-REVOKED", "keyid", f"key {key.id} is revoked"))
    if (key.not_before is not None and now < key.not_before) or (
        key.not_after is not None and now >= key.not_after
    ):
        failures.append(Failure("GATE-SEAL-KEY-EXPIRED", "keyid", f"key {key.id} is not valid now"))
    if not _signature_ok(key, pae(env.payload_type, env.payload), env.sig):
        failures.append(Failure("GATE-SEAL-BAD-SIGNATURE", "sig", f"signature does not verify with {key.id}"))
    return failures


def sealed_by(data: bytes, key: SigningKey, payload_type: str) -> bool:
    """Is `data` an envelope of `payload_type` that `key` sealed (the signer's own check of what it
    is about to hand on: a file someone else could have written)?"""
    from ..errors import GateError
    from .envelope import parse
    from .keys import verify_key_of

    try:
        env = parse(data)
    except GateError:
        return False
    return not verify(env, {key.id: verify_key_of(key)}, payload_type, 0)  # (another key id: unknown here)
