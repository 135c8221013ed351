"""DSSE-style envelopes: a payload type, the payload bytes and one signature.

The signature covers the pre-authentication encoding (PAE) of the payload type and the
payload bytes exactly as they travel; verification never re-serialises anything. The
envelope names a key id only: the algorithm always comes from the verifier's keyring.

Wire form (UTF-8 JSON, exactly these members, standard padded base64)::

    {"payloadType": "...", "payload": "<base64>", "signatures": [{"keyid": "...", "sig": "<base64>"}]}
"""

from __future__ import annotations

import base64
import binascii
import json

from .. import strictjson
from ..errors import GateError
from ..valueclass import valueclass

PAYLOAD_RECEIPT = "application/vnd.gate.receipt.v1+json"
PAYLOAD_ATTEMPT = "application/vnd.gate.attempt.v1+json"
PAYLOAD_APPROVAL = "application/vnd.gate.approval.v1+json"
#: in-toto Statements the export seals (`gate attest export`); the gate itself never accepts one.
PAYLOAD_INTOTO = "application/vnd.in-toto+json"

#: Which key purpose may seal which payload type. A key never serves another purpose.
PURPOSE_OF_PAYLOAD = {PAYLOAD_RECEIPT: "receipt", PAYLOAD_ATTEMPT: "attempt", PAYLOAD_APPROVAL: "approval",
                      PAYLOAD_INTOTO: "attestation"}

_ENVELOPE_KEYS = {"payloadType", "payload", "signatures"}
_SIGNATURE_KEYS = {"keyid", "sig"}


@valueclass(frozen=True, slots=True)
class Envelope:
    payload_type: str
    payload: bytes
    keyid: str
    sig: bytes


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSEv1 pre-authentication encoding."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def b64decode_strict(text: str, what: str) -> bytes:
    """Standard base64 with padding; ValueError for anything that would not re-encode identically.

    The one strict base64 of the package: envelopes, keyrings and key files use it.
    """
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ValueError(f"{what} is not strict base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"{what} is not canonical base64")
    return raw


def _b64(text: str, what: str) -> bytes:
    try:
        return b64decode_strict(text, what)
    except ValueError as exc:
        raise GateError("GATE-SEAL-MALFORMED", str(exc)) from None


def b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def parse(data: bytes) -> Envelope:
    """Parse an envelope strictly. Raises GateError with a GATE-SEAL-* or GATE-RECEIPT-* code."""
    doc = strictjson.loads(data, code="GATE-SEAL-MALFORMED")
    if not isinstance(doc, dict):
        raise GateError("GATE-SEAL-MALFORMED", "envelope is not a JSON object")
    if set(doc) != _ENVELOPE_KEYS:
        extra = sorted(set(doc) - _ENVELOPE_KEYS)
        missing = sorted(_ENVELOPE_KEYS - set(doc))
        raise GateError("GATE-SEAL-MALFORMED", f"envelope members: unknown {extra}, missing {missing}")
    ptype, payload, sigs = doc["payloadType"], doc["payload"], doc["signatures"]
    if not isinstance(ptype, str) or not isinstance(payload, str):
        raise GateError("GATE-SEAL-MALFORMED", "payloadType and payload must be strings")
    if not isinstance(sigs, list) or len(sigs) != 1:
        raise GateError("GATE-SEAL-MALFORMED", "envelope must carry exactly one signature")
    sig = sigs[0]
    if not isinstance(sig, dict) or set(sig) != _SIGNATURE_KEYS:
        raise GateError("GATE-SEAL-MALFORMED", "signature members must be exactly keyid and sig")
    keyid, sigtext = sig["keyid"], sig["sig"]
    if not isinstance(keyid, str) or not isinstance(sigtext, str) or not keyid:
        raise GateError("GATE-SEAL-MALFORMED", "keyid and sig must be non-empty strings")
    return Envelope(
        payload_type=ptype,
        payload=_b64(payload, "payload"),
        keyid=keyid,
        sig=_b64(sigtext, "sig"),
    )


def payload_digest(data: bytes) -> str | None:
    """The SHA-256 of an envelope's sealed payload (None: not an envelope). What receipt reuse
    is judged on: the same payload in another encoding is the same receipt."""
    import hashlib

    try:
        return hashlib.sha256(parse(data).payload).hexdigest()
    except GateError:
        return None


def encode(env: Envelope) -> bytes:
    doc = {
        "payloadType": env.payload_type,
        "payload": b64encode(env.payload),
        "signatures": [{"keyid": env.keyid, "sig": b64encode(env.sig)}],
    }
    return (json.dumps(doc, indent=2) + "\n").encode("ascii")
