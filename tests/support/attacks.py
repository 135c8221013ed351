"""Attacks on a receipt's seal and validity, as data: each builds the bytes a hostile runner (or
anyone holding a stolen or stale key) would push as receipt.json, and names the codes the gate
answers. Both tiers run them: every one in process (`tests/engine/test_receipt_attacks.py`), one
through a real push (`tests/push/test_review_refs.py`)."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

from gatecore import strictjson
from gatecore.signing import envelope
from gatecore.signing.keys import SigningKey
from gatecore.signing.seal import sign

from .lab import Lab, envelope_doc, raw_json


def _substituted(lab: Lab, doc: dict[str, Any]) -> bytes:
    env = envelope_doc(lab.seal(doc))
    env["payload"] = base64.b64encode(strictjson.dumps({**doc, "model_id": "model-z"})).decode()
    return raw_json(env)


def _sig(lab: Lab, doc: dict[str, Any], key: str, fn: Callable[[bytes], bytes]) -> bytes:
    env = envelope_doc(lab.seal(doc, key))
    env["signatures"][0]["sig"] = base64.b64encode(fn(base64.b64decode(env["signatures"][0]["sig"]))).decode()
    return raw_json(env)


def _stranger(lab: Lab, doc: dict[str, Any], key_id: str) -> bytes:
    from gatecore.signing.keys import ephemeral_pair

    priv, _pub = ephemeral_pair("ed25519", key_id, "receipt")
    return envelope.encode(sign(priv, envelope.PAYLOAD_RECEIPT, strictjson.dumps(doc)))


def _alg_confusion(lab: Lab, doc: dict[str, Any]) -> bytes:
    """HMAC-SHA256 keyed with runner-1's Ed25519 public key (read from the server keyring)."""
    import tomllib

    ring = tomllib.loads(lab.keyring_text)
    pub = next(k for k in ring["key"] if k["id"] == "runner-1")["public_key"]
    key = SigningKey("runner-1", "hmac-sha256", "receipt", base64.b64decode(pub))
    return envelope.encode(sign(key, envelope.PAYLOAD_RECEIPT, strictjson.dumps(doc)))


def _with(lab: Lab, doc: dict[str, Any], where: str, **extra: Any) -> bytes:
    env = envelope_doc(lab.seal(doc))
    (env if where == "top" else env["signatures"][0]).update(extra)
    return raw_json(env)


#: name -> (the receipt bytes from the lab and the receipt the runner would seal, the codes)
SEAL_ATTACKS: dict[str, tuple[Callable[[Lab, dict[str, Any]], bytes], tuple[str, ...]]] = {
    "substitution": (_substituted, ("GATE-SEAL-BAD-SIGNATURE",)),
    "empty-sig": (lambda lab, d: _sig(lab, d, "runner-1", lambda s: b""), ("GATE-SEAL-BAD-SIGNATURE",)),
    "truncated-hmac-tag": (lambda lab, d: _sig(lab, d, "runner-hmac", lambda s: s[:16]),
                           ("GATE-SEAL-BAD-SIGNATURE",)),
    "unsealed-bare-payload": (lambda lab, d: strictjson.dumps(d), ("GATE-SEAL-MALFORMED",)),
    "wrong-key-trusted-id": (lambda lab, d: _stranger(lab, d, "runner-1"), ("GATE-SEAL-BAD-SIGNATURE",)),
    "unknown-key-id": (lambda lab, d: _stranger(lab, d, "runner-9"), ("GATE-SEAL-UNKNOWN-KEY",)),
    "alg-confusion": (_alg_confusion, ("GATE-SEAL-BAD-SIGNATURE",)),
    "smuggled-alg-in-signature": (lambda lab, d: _with(lab, d, "sig", alg="none"), ("GATE-SEAL-MALFORMED",)),
    "expired-key": (lambda lab, d: lab.seal(d, "runner-expired"), ("GATE-SEAL-KEY-EXPIRED",)),
    "not-yet-valid-key": (lambda lab, d: lab.seal(d, "runner-future"), ("GATE-SEAL-KEY-EXPIRED",)),
    "revoked-key": (lambda lab, d: lab.seal(d, "runner-revoked"), ("GATE-SEAL-KEY-REVOKED",)),
    "attempt-key-seals-receipt": (lambda lab, d: lab.seal(d, "orch-1"), ("GATE-SEAL-KEY-PURPOSE",)),
    "receipt-as-attempt-type": (lambda lab, d: lab.seal(d, "orch-1", envelope.PAYLOAD_ATTEMPT),
                                ("GATE-SEAL-PAYLOAD-TYPE",)),
    "expired-receipt": (lambda lab, d: lab.seal({**d, "issued_at": int(time.time()) - 7200,
                                                "expires_at": int(time.time()) - 3600}),
                        ("GATE-RECEIPT-EXPIRED",)),
    "receipt-from-the-future": (lambda lab, d: lab.seal({**d, "issued_at": int(time.time()) + 3600,
                                                        "expires_at": int(time.time()) + 7200}),
                                ("GATE-RECEIPT-NOT-YET-VALID",)),
    "padded-past-the-cap": (lambda lab, d: lab.seal(d) + b" " * 70000, ("GATE-RECEIPT-TOO-LARGE",)),
}
