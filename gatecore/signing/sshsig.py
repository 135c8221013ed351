"""SSH signatures (OpenSSH's SSHSIG), checked the way `git verify-commit` does with `gpg.format=ssh` (pure).

An SSH signature (`-----BEGIN SSH SIGNATURE-----`, OpenSSH's PROTOCOL.sshsig) is base64 of the blob::

    byte[6] "SSHSIG"   uint32 version (1)   string publickey   string namespace
    string reserved    string hash_algorithm ("sha256" | "sha512")   string signature

and `signature` is the key's ordinary SSH signature over::

    "SSHSIG" string(namespace) string("") string(hash_algorithm) string(H(message))

(the reserved field is always signed empty, as `ssh-keygen` does whatever the blob carries).
Git signs with namespace "git" and trusts the keys of an allowed-signers file
(`gatecore.signing.allowedsigners`); where a commit keeps its signature, and what was signed, is
`gatecore.git.grammar.split_signature`; keys are `gatecore.signing.sshkeys`.

`verify` answers what git's `%G?` answers: `ok` (G), `unknown-key` (U: the signature is good
but no line lets its key sign at `now`) or `bad` (B: anything else). It follows git's two
steps exactly: `ssh-keygen -Y find-principals` takes the principals of the *first* line that
holds the key and is valid at `now` (namespaces are not looked at there), then each of them
is tried with `ssh-keygen -Y verify -I principal -n git`, which accepts it if any line holding
the key lists a pattern matching it, allows the namespace and is valid at `now`. The
principals returned are those that pass, as written on that first line: a pattern stays a
pattern (`*@example.com`), as `find-principals` prints it. Git takes `now` from the commit's
committer date (`-Overify-time`), not the clock; pass that to agree with it.

Signatures by a key type `gatecore.signing.sshkeys` does not verify (certificates, FIDO, DSA) are
"unsupported"; SHA-1 `ssh-rsa` signatures are bad. Stricter than `ssh-keygen` where it is
lenient: SSHSIG version 0, non-canonical base64 and ed25519 signatures whose S is not reduced
(OpenSSL's check) are bad. As `ssh-keygen`, text after the armor's first footer is ignored (so
of two signatures git concatenates, the first counts). Every length read from a blob is checked
before it is used, and armor over `MAX_ARMOR` bytes is bad unread.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from ..valueclass import valueclass
from .allowedsigners import AllowedSigners
from .sshkeys import Malformed, Verifier, WireReader, b64decode, key_type, parse_key, unsupported_reason, wire_string

Status = Literal["ok", "unknown-key", "bad", "unsupported"]

SSH_BEGIN = b"-----BEGIN SSH SIGNATURE-----"
SSH_END = b"-----END SSH SIGNATURE-----"
#: Larger than any signature a supported key makes (RSA-16384 armors to about 5 KiB).
MAX_ARMOR = 64 * 1024
_MAGIC = b"SSHSIG"
_HASHES: dict[bytes, Callable[[bytes], bytes]] = {
    b"sha256": lambda m: hashlib.sha256(m).digest(),
    b"sha512": lambda m: hashlib.sha512(m).digest(),
}
_ECDSA_HASHES: dict[str, hashes.HashAlgorithm] = {
    "ecdsa-sha2-nistp256": hashes.SHA256(), "ecdsa-sha2-nistp384": hashes.SHA384(),
    "ecdsa-sha2-nistp521": hashes.SHA512(),
}
_RSA_HASHES: dict[bytes, hashes.HashAlgorithm] = {b"rsa-sha2-256": hashes.SHA256(), b"rsa-sha2-512": hashes.SHA512()}


@valueclass(frozen=True, slots=True)
class Verified:
    status: Status
    principals: tuple[str, ...] = ()  # for "ok": the principals (or patterns) the key signs for
    fingerprint: str | None = None  # the signing key's, once the blob has parsed
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _check_signature(algorithm: str, key: Verifier, sig: bytes, data: bytes) -> None:
    """The key's SSH signature over data; InvalidSignature or Malformed when it is not."""
    r = WireReader(sig)
    sigtype = r.cstring()
    inner = r.string()
    r.end()
    if isinstance(key, ed25519.Ed25519PublicKey):
        if sigtype != b"ssh-ed25519" or len(inner) != 64:
            raise Malformed("not an ed25519 signature")
        key.verify(inner, data)
    elif isinstance(key, ec.EllipticCurvePublicKey):
        if sigtype != algorithm.encode():
            raise Malformed("the signature type does not match the key")
        ir = WireReader(inner)
        sig_r, sig_s = ir.mpint(), ir.mpint()
        ir.end()
        key.verify(encode_dss_signature(sig_r, sig_s), data, ec.ECDSA(_ECDSA_HASHES[algorithm]))
    else:
        if sigtype not in _RSA_HASHES:
            raise Malformed(f"RSA signature algorithm {sigtype.decode('latin-1')!r} refused")
        size = (key.key_size + 7) // 8
        if len(inner) > size:
            raise Malformed("an RSA signature longer than the key")
        key.verify(inner.rjust(size, b"\0"), data, padding.PKCS1v15(), _RSA_HASHES[sigtype])


def _dearmor(armored: bytes) -> bytes:
    """The blob inside the armor, read as OpenSSH's sshsig_dearmor (text after the footer ignored)."""
    if len(armored) > MAX_ARMOR:
        raise Malformed("the signature is too large")
    if not armored.startswith(SSH_BEGIN):
        raise Malformed("missing header")
    body = armored[len(SSH_BEGIN):]
    for eol in (b"\r\n", b"\n"):
        if body.startswith(eol):
            body = body[len(eol):]
            break
    else:
        raise Malformed("no end of line after the header")
    footer = body.find(b"\n" + SSH_END)
    if footer < 0:
        raise Malformed("missing footer")
    return b64decode(body[:footer])


def signature_fingerprint(armored: bytes) -> str:
    """The fingerprint of the key an armored SSH signature names (not verified: for labels)."""
    try:
        r = WireReader(_dearmor(armored))
        if r.take(len(_MAGIC)) != _MAGIC or r.u32() != 1:
            raise Malformed("not an SSHSIG blob")
        key, _ = parse_key(r.string())
    except Malformed as exc:
        raise ValueError(f"malformed SSH signature: {exc}") from None
    return key.fingerprint


def verify(payload: bytes, armored: bytes, signers: AllowedSigners, now: int, namespace: str = "git") -> Verified:
    """Whether `armored` is a good SSH signature of `payload` by a key `signers` allow (see the module)."""
    if not armored.startswith(SSH_BEGIN):
        return Verified("bad", reason="not an SSH signature")
    try:
        r = WireReader(_dearmor(armored))
        if r.take(len(_MAGIC)) != _MAGIC:
            raise Malformed("not an SSHSIG blob")
        version = r.u32()
        if version != 1:
            raise Malformed(f"SSHSIG version {version}")
        key_blob, got_namespace, _reserved = r.string(), r.cstring(), r.string()
        hash_alg, sig = r.cstring(), r.string()
        r.end()
        what = unsupported_reason(key_type(key_blob))
        if what is not None:
            return Verified("unsupported", reason=f"made with {what}, which this gate does not verify")
        key, verifier = parse_key(key_blob)
    except Malformed as exc:
        return Verified("bad", reason=f"malformed signature: {exc}")
    fingerprint = key.fingerprint
    if got_namespace != namespace.encode():
        return Verified("bad", fingerprint=fingerprint,
                        reason=f"signed for namespace {got_namespace.decode('utf-8', 'replace')!r}, not {namespace!r}")
    digest = _HASHES.get(hash_alg)
    if digest is None:
        return Verified("bad", fingerprint=fingerprint,
                        reason=f"hash algorithm {hash_alg.decode('latin-1')!r} refused")
    signed = (_MAGIC + wire_string(got_namespace) + wire_string(b"") + wire_string(hash_alg)
              + wire_string(digest(payload)))
    try:
        _check_signature(key.algorithm, verifier, sig, signed)
    except (InvalidSignature, Malformed) as exc:
        detail = f": {exc}" if str(exc) else ""
        return Verified("bad", fingerprint=fingerprint, reason=f"the signature does not verify{detail}")
    holding = signers.holding(key)
    first = next((s for s in holding if s.valid_at(now)), None)
    if first is None:  # find-principals finds nothing
        why = "not valid at that time" if holding else "not in the allowed signers"
        return Verified("unknown-key", fingerprint=fingerprint, reason=f"key {fingerprint} is {why}")
    candidates = dict.fromkeys(itertools.takewhile(bool, first.principals.split(",")))  # as find-principals prints
    accepted = tuple(c for c in candidates if any(s.allows(c, namespace, now) for s in holding))
    if not accepted:
        return Verified("bad", fingerprint=fingerprint,
                        reason=f"line {first.line} does not allow key {fingerprint} to sign for {namespace!r}")
    return Verified("ok", accepted, fingerprint)
