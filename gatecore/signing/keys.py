"""Keys as plain values: what `seal` signs and verifies with (no pydantic here).

`gatecore.configuration.configschema` reads keyring and key files (TOML, validated with pydantic) into
these; the pre-receive hook gets them from the validated cache via `keyring_from_plain`,
which decodes and checks no bound again (the schema is the one definition; the allowed
algorithms and purposes are the `Literal` types below, which the schema uses).
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping

from ..valueclass import choices, valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Any, Literal
else:
    from ..valueclass import Literal  # (at run time each `Literal[...]` below is the tuple of its values)

MAX_KEYRING_BYTES = 1 << 20
MAX_KEYFILE_BYTES = 65536
Algorithm = Literal["ed25519", "hmac-sha256"]
Purpose = Literal["receipt", "attempt", "approval", "attestation"]
ALGORITHMS: tuple[str, ...] = choices(Algorithm)
PURPOSES: tuple[str, ...] = choices(Purpose)


@valueclass(frozen=True, slots=True)
class VerifyKey:
    """A keyring entry as plain values, ready for `seal.verify`."""

    id: str
    algorithm: str
    purpose: str
    material: bytes
    not_before: int | None
    not_after: int | None
    revoked: bool


@valueclass(frozen=True, slots=True)
class SigningKey:
    id: str
    algorithm: str
    purpose: str
    material: bytes


Keyring = dict[str, VerifyKey]


def _time(value: Any) -> int | None:
    return None if value is None else int(value)


def keyring_from_plain(entries: Any) -> Keyring:
    """From the validated plain form (`keyring_to_plain` of what `configschema.validate_keyring`
    read): decoded, not validated again. Raises ValueError/TypeError/KeyError on anything else."""
    ring: Keyring = {}
    for e in entries:
        if not isinstance(e, Mapping):
            raise TypeError("keyring entry")
        if e["algorithm"] not in ALGORITHMS or e["purpose"] not in PURPOSES:
            raise ValueError("keyring entry")
        # (base64.b64decode(validate=True) is this call; `base64` is not on a hook's start-up path)
        material = binascii.a2b_base64(e["material"], strict_mode=True)
        key = VerifyKey(str(e["id"]), e["algorithm"], e["purpose"], material, _time(e["not_before"]),
                        _time(e["not_after"]), e["revoked"] is not False)
        if key.id in ring:
            raise ValueError("duplicate key id")
        ring[key.id] = key
    return ring


def keyring_to_plain(ring: Keyring) -> list[dict[str, Any]]:
    import base64

    return [
        {"id": k.id, "algorithm": k.algorithm, "purpose": k.purpose,
         "material": base64.b64encode(k.material).decode("ascii"),
         "not_before": k.not_before, "not_after": k.not_after, "revoked": k.revoked}
        for k in ring.values()
    ]


def new_ed25519() -> tuple[bytes, bytes]:
    """A fresh Ed25519 key: (32-byte private seed, 32-byte public key). The package's one generator."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    priv = Ed25519PrivateKey.generate()
    seed = priv.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                              serialization.NoEncryption())
    return seed, priv.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def new_hmac_secret() -> bytes:
    import secrets

    return secrets.token_bytes(32)


def verify_key_of(key: SigningKey) -> VerifyKey:
    """What verifies `key`'s seals: its public key (Ed25519), or the secret itself (HMAC)."""
    material = key.material
    if key.algorithm == "ed25519":
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        material = Ed25519PrivateKey.from_private_bytes(key.material).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return VerifyKey(key.id, key.algorithm, key.purpose, material, None, None, False)


def ephemeral_pair(algorithm: str, key_id: str, purpose: str) -> tuple[SigningKey, VerifyKey]:
    """A throwaway key held in memory only (selftest, demo, tests)."""
    if algorithm == "ed25519":
        seed, pub = new_ed25519()
        return (SigningKey(key_id, algorithm, purpose, seed),
                VerifyKey(key_id, algorithm, purpose, pub, None, None, False))
    secret = new_hmac_secret()
    return (SigningKey(key_id, algorithm, purpose, secret),
            VerifyKey(key_id, algorithm, purpose, secret, None, None, False))
