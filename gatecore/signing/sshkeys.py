"""SSH public keys and the SSH wire format, as signatures and allowed-signers files carry them (pure).

A key is its wire blob (RFC 4253: `string type` then the type's fields), written in files as
`type base64`. Blobs are parsed by `cryptography` (`load_ssh_public_key`), which checks each
field and refuses trailing data; this module keeps what OpenSSH and git decide that a
general-purpose loader does not:

* an allow-list of key types, taken from the blob before anything else reads it: ed25519,
  ecdsa nistp256/384/521 and RSA are verified; DSA, FIDO (`sk-*`), XMSS and certificates are
  known but not verified (`UNSUPPORTED`, their lines skipped and their signatures
  "unsupported"); anything else is malformed;
* RSA moduli of `RSA_MIN_BITS` to `RSA_MAX_BITS` bits (OpenSSH refuses smaller keys, and larger
  ones cost a verifier time an attacker chooses);
* base64 read as OpenSSH's `b64_pton` reads it (whitespace skipped, padding required) and
  refused when not canonical, so that one key has one spelling.

Keys compare by their canonical blob (`cryptography` writes it back: an ECDSA point
uncompressed, RSA integers minimal), so the same key spelled two ways is one key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from ..valueclass import valueclass

#: Key types this gate verifies signatures of.
SUPPORTED_KEY_TYPES = ("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa")
#: Key types `ssh-keygen` reads that this gate does not verify (plus every `*-cert-v01@openssh.com`).
UNSUPPORTED_KEY_TYPES = ("ssh-dss", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
                         "ssh-xmss@openssh.com")
CERT_SUFFIX = "-cert-v01@openssh.com"
RSA_MIN_BITS, RSA_MAX_BITS = 1024, 16384
#: OpenSSH's SSHBUF_MAX_BIGNUM, plus a leading zero byte.
MAX_MPINT_BYTES = RSA_MAX_BITS // 8 + 1
_B64 = re.compile(rb"[A-Za-z0-9+/]*={0,2}")
_B64_SKIPPED = b" \t\n\r\v\f"  # what OpenSSH's b64_pton skips

Verifier = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey


class Malformed(ValueError):
    """Wire data, base64 or a key that does not parse."""


def is_key_type(word: str) -> bool:
    """A key type `ssh-keygen` knows (supported here or not)."""
    return word in SUPPORTED_KEY_TYPES or word in UNSUPPORTED_KEY_TYPES or word.endswith(CERT_SUFFIX)


def unsupported_reason(kind: str) -> str | None:
    """Why a known key type is not verified here (None: it is supported, or unknown)."""
    if kind.endswith(CERT_SUFFIX):
        return "an SSH certificate"
    if kind in UNSUPPORTED_KEY_TYPES:
        return f"a {kind} key"
    return None


@valueclass(frozen=True, slots=True)
class PublicKey:
    """An SSH public key: its type and its canonical wire blob (keys are equal when blobs are)."""

    algorithm: str
    blob: bytes

    @property
    def fingerprint(self) -> str:
        """As `ssh-keygen -l` prints it: `SHA256:` and unpadded base64."""
        return "SHA256:" + base64.b64encode(hashlib.sha256(self.blob).digest()).decode().rstrip("=")


class WireReader:
    """SSH wire fields (RFC 4251) over a blob; every length is checked before it is used."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def take(self, n: int) -> bytes:
        if n > len(self._data) - self._pos:
            raise Malformed("truncated")
        out = self._data[self._pos:self._pos + n]
        self._pos += n
        return out

    def u32(self) -> int:
        return int.from_bytes(self.take(4), "big")

    def string(self) -> bytes:
        return self.take(self.u32())

    def cstring(self) -> bytes:
        value = self.string()
        if b"\0" in value:
            raise Malformed("a NUL inside a string")
        return value

    def mpint(self) -> int:
        value = self.string()
        if value and value[0] & 0x80:
            raise Malformed("a negative integer")
        if len(value) > MAX_MPINT_BYTES:
            raise Malformed("an integer too large")
        return int.from_bytes(value, "big")

    def end(self) -> None:
        if self._pos != len(self._data):
            raise Malformed("trailing data")


def wire_string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def b64decode(text: bytes) -> bytes:
    """Base64 as OpenSSH's b64_pton reads it: whitespace skipped, padding required, no stray bits."""
    compact = text.translate(None, _B64_SKIPPED)
    if not _B64.fullmatch(compact) or len(compact) % 4:
        raise Malformed("invalid base64")
    try:
        data = base64.b64decode(compact, validate=True)
    except binascii.Error as exc:
        raise Malformed("invalid base64") from exc
    if base64.b64encode(data) != compact:
        raise Malformed("non-canonical base64")
    return data


def key_type(blob: bytes) -> str:
    """The type a key blob names (its first field), unchecked otherwise."""
    return WireReader(blob).cstring().decode("latin-1")


def parse_key(blob: bytes) -> tuple[PublicKey, Verifier]:
    """A supported public key from its wire blob; Malformed for anything else (an unsupported
    or unknown type, a field `cryptography` refuses, an RSA modulus out of bounds)."""
    kind = key_type(blob)
    if kind not in SUPPORTED_KEY_TYPES:
        raise Malformed(f"unsupported key type {kind!r}")
    if kind == "ssh-rsa":  # bound the modulus before anyone computes with it
        r = WireReader(blob)
        r.string()
        r.mpint()
        bits = r.mpint().bit_length()
        if not RSA_MIN_BITS <= bits <= RSA_MAX_BITS:
            raise Malformed(f"an RSA key of {bits} bits")
    try:
        key = serialization.load_ssh_public_key(kind.encode() + b" " + base64.b64encode(blob))
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise Malformed(f"not a valid {kind} key") from exc
    if not isinstance(key, Verifier):
        raise Malformed(f"not a valid {kind} key")
    canonical = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    written, _, data = canonical.partition(b" ")
    if written.decode("latin-1") != kind:
        raise Malformed(f"the key is {written.decode('latin-1')}, the blob says {kind}")
    return PublicKey(kind, base64.b64decode(data)), key
