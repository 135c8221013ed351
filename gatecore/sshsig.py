"""SSH signatures on git commits, checked the way `git verify-commit` does with `gpg.format=ssh` (pure).

A signed commit carries its signature in a `gpgsig` header: the armored text, its continuation
lines indented by one space. What was signed is the commit without that header
(`split_signed_commit`, git's `parse_signed_commit`). An SSH signature (`-----BEGIN SSH
SIGNATURE-----`, OpenSSH's PROTOCOL.sshsig) is base64 of the blob::

    byte[6] "SSHSIG"   uint32 version (1)   string publickey   string namespace
    string reserved    string hash_algorithm ("sha256" | "sha512")   string signature

and `signature` is the key's ordinary SSH signature over::

    "SSHSIG" string(namespace) string("") string(hash_algorithm) string(H(message))

(the reserved field is always signed empty, as `ssh-keygen` does whatever the blob carries).
Git signs with namespace "git" and trusts keys listed in an allowed-signers file
(`ssh-keygen(1)`, ALLOWED SIGNERS): `principals [options] keytype base64 [comment]`, principals
a comma-separated list of patterns (`*`, `?`, `!` negation), options `namespaces="..."`,
`valid-after="..."`, `valid-before="..."` and `cert-authority`.

`verify` answers what git's `%G?` answers: `ok` (G), `unknown-key` (U: the signature is good
but no line lets its key sign at `now`) or `bad` (B: anything else). It follows git's two
steps exactly: `ssh-keygen -Y find-principals` takes the principals of the *first* line that
holds the key and is valid at `now` (namespaces are not looked at there), then each of them
is tried with `ssh-keygen -Y verify -I principal -n git`, which accepts it if any line holding
the key lists a pattern matching it, allows the namespace and is valid at `now`. The
principals returned are those that pass, as written on that first line: a pattern stays a
pattern (`*@example.com`), as `find-principals` prints it. Git takes `now` from the commit's
committer date (`-Overify-time`), not the clock; pass that to agree with it.

Supported keys: ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa (1024 to 16384 bits, with
rsa-sha2-256 or rsa-sha2-512 signatures only; SHA-1 `ssh-rsa` signatures are bad). Refused:
certificates (a `cert-authority` line, or a line whose key is a certificate, is skipped and
listed in `AllowedSigners.skipped`, which the adapters refuse as a configuration error; a
signature made with a certificate is "unsupported"), FIDO (`sk-*`) and DSA keys (lines
skipped likewise; signatures "unsupported"), revocation lists (not consulted).
Stricter than `ssh-keygen` where it is lenient: SSHSIG version 0, non-canonical base64 and
ed25519 signatures whose S is not reduced (OpenSSL's check) are bad; an allowed-signers file
with any malformed line is refused whole (`parse_allowed_signers`). As `ssh-keygen`, text after
the armor's footer is ignored. Every length read from a blob is checked before it is used,
and armor over `MAX_ARMOR` bytes is bad unread.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

Status = Literal["ok", "unknown-key", "bad", "unsupported"]

SSH_BEGIN = b"-----BEGIN SSH SIGNATURE-----"
SSH_END = b"-----END SSH SIGNATURE-----"
#: git's `get_format_by_sig`: which armor names which signature format.
_KINDS = ((SSH_BEGIN, "ssh"), (b"-----BEGIN PGP SIGNATURE-----", "openpgp"),
          (b"-----BEGIN PGP MESSAGE-----", "openpgp"), (b"-----BEGIN SIGNED MESSAGE-----", "x509"))
#: Larger than any signature a supported key makes (RSA-16384 armors to about 5 KiB).
MAX_ARMOR = 64 * 1024
_MAGIC = b"SSHSIG"
_HASHES: dict[bytes, Callable[[bytes], bytes]] = {
    b"sha256": lambda m: hashlib.sha256(m).digest(),
    b"sha512": lambda m: hashlib.sha512(m).digest(),
}
_CURVES: dict[str, tuple[bytes, ec.EllipticCurve, hashes.HashAlgorithm]] = {
    "ecdsa-sha2-nistp256": (b"nistp256", ec.SECP256R1(), hashes.SHA256()),
    "ecdsa-sha2-nistp384": (b"nistp384", ec.SECP384R1(), hashes.SHA384()),
    "ecdsa-sha2-nistp521": (b"nistp521", ec.SECP521R1(), hashes.SHA512()),
}
_RSA_HASHES: dict[bytes, hashes.HashAlgorithm] = {b"rsa-sha2-256": hashes.SHA256(), b"rsa-sha2-512": hashes.SHA512()}
SUPPORTED_KEY_TYPES = ("ssh-ed25519", *_CURVES, "ssh-rsa")
#: Key types `ssh-keygen` reads that this module does not verify (their lines are skipped).
_UNSUPPORTED_KEY_TYPES = ("ssh-dss", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
                          "ssh-xmss@openssh.com")
_RSA_MIN_BITS, _RSA_MAX_BITS = 1024, 16384
_MAX_MPINT = _RSA_MAX_BITS // 8 + 1  # OpenSSH's SSHBUF_MAX_BIGNUM, plus a leading zero
_B64 = re.compile(rb"[A-Za-z0-9+/]*={0,2}")
_WS = b" \t\n\r\v\f"  # what OpenSSH's b64_pton skips


class _Malformed(ValueError):
    """A blob that does not parse: the signature is bad."""


_Verifier = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An SSH public key: its type and its canonical wire blob (keys are equal when blobs are)."""

    algorithm: str
    blob: bytes

    @property
    def fingerprint(self) -> str:
        """As `ssh-keygen -l` prints it: `SHA256:` and unpadded base64."""
        return "SHA256:" + base64.b64encode(hashlib.sha256(self.blob).digest()).decode().rstrip("=")


@dataclass(frozen=True, slots=True)
class Signer:
    """One usable line of an allowed-signers file."""

    line: int
    principals: str  # the field as written: comma-separated patterns
    key: PublicKey
    namespaces: str | None = None  # a pattern list; None: any namespace
    valid_after: int | None = None  # unix seconds, inclusive
    valid_before: int | None = None  # unix seconds, inclusive

    def valid_at(self, now: int) -> bool:
        return not ((self.valid_after is not None and now < self.valid_after)
                    or (self.valid_before is not None and now > self.valid_before))


@dataclass(frozen=True, slots=True)
class AllowedSigners:
    signers: tuple[Signer, ...]
    #: (line number, why) for well-formed lines this module cannot use: cert-authority lines,
    #: certificate, FIDO and DSA keys. They never match a signature.
    skipped: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Verified:
    status: Status
    principals: tuple[str, ...] = ()  # for "ok": the principals (or patterns) the key signs for
    fingerprint: str | None = None  # the signing key's, once the blob has parsed
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# --- the commit -----------------------------------------------------------------------------


#: The header git signs commits under, by the repository's object format (git's gpg_sig_headers).
SIGNATURE_HEADERS = {"sha1": b"gpgsig", "sha256": b"gpgsig-sha256"}


def split_signed_commit(raw: bytes, header: bytes = b"gpgsig") -> tuple[bytes, bytes] | None:
    """(payload, armored signature) of a raw commit, or None when it carries no `header`.

    `header` is the repository's format's (`SIGNATURE_HEADERS`): `gpgsig` in a sha1 repository,
    `gpgsig-sha256` in a sha256 one. As git's `parse_buffer_signed_by_header`: the header line
    and the lines after it that start with a space are taken out of the payload; the signature
    is their text without the header name and the one leading space, each line keeping its
    newline. Headers end at the first empty line; the message is never searched. Stricter than
    git: two such headers raise ValueError (git would concatenate them), and a commit with any
    other header starting with `gpgsig` (the other format's signature, which git would drop
    from the payload) is not signed for us: None.
    """
    start = header + b" "
    payload = bytearray()
    signature = bytearray()
    headers = 0
    other = False
    in_signature = False
    pos, end = 0, len(raw)
    while pos < end:
        newline = raw.find(b"\n", pos)
        nxt = end if newline < 0 else newline + 1
        line = raw[pos:nxt]
        if in_signature and line.startswith(b" "):
            signature += line[1:]
        elif line.startswith(start):
            headers += 1
            signature += line[len(start):]
            in_signature = True
        else:
            in_signature = False
            if line.startswith(b"gpgsig"):
                other = True
            elif line.startswith(b"\n"):
                payload += raw[pos:]
                break
            payload += line
        pos = nxt
    if headers > 1:
        raise ValueError(f"the commit has {headers} {header.decode()} headers")
    if headers == 0 or other:
        return None
    return bytes(payload), bytes(signature)


def signature_kind(armored: bytes) -> str:
    """"ssh", "openpgp", "x509" or "unknown", from the armor's first line, as git tells formats apart."""
    for prefix, kind in _KINDS:
        if armored.startswith(prefix):
            return kind
    return "unknown"


# --- wire forms -----------------------------------------------------------------------------


class _Reader:
    """SSH wire fields (RFC 4251) over a blob; every length is checked before it is used."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def take(self, n: int) -> bytes:
        if n > len(self._data) - self._pos:
            raise _Malformed("truncated")
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
            raise _Malformed("a NUL inside a string")
        return value

    def mpint(self) -> int:
        value = self.string()
        if value and value[0] & 0x80:
            raise _Malformed("a negative integer")
        if len(value) > _MAX_MPINT:
            raise _Malformed("an integer too large")
        return int.from_bytes(value, "big")

    def end(self) -> None:
        if self._pos != len(self._data):
            raise _Malformed("trailing data")


def _string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def _mpint(value: int) -> bytes:
    """A non-negative mpint: minimal bytes, with a leading zero when the top bit is set."""
    return _string(value.to_bytes(value.bit_length() // 8 + 1, "big") if value else b"")


def _b64decode(text: bytes) -> bytes:
    """Base64 as OpenSSH's b64_pton reads it: whitespace skipped, padding required, no stray bits."""
    compact = text.translate(None, _WS)
    if not _B64.fullmatch(compact) or len(compact) % 4:
        raise _Malformed("invalid base64")
    try:
        data = base64.b64decode(compact, validate=True)
    except binascii.Error as exc:
        raise _Malformed("invalid base64") from exc
    if base64.b64encode(data) != compact:
        raise _Malformed("non-canonical base64")
    return data


def _parse_key(blob: bytes) -> tuple[PublicKey, _Verifier]:
    """A supported public key from its wire blob; _Malformed for anything else."""
    r = _Reader(blob)
    kind = r.cstring().decode("latin-1")
    if kind == "ssh-ed25519":
        raw = r.string()
        r.end()
        if len(raw) != 32:
            raise _Malformed("an ed25519 key is 32 bytes")
        return PublicKey(kind, _string(b"ssh-ed25519") + _string(raw)), ed25519.Ed25519PublicKey.from_public_bytes(raw)
    if kind in _CURVES:
        name, curve, _ = _CURVES[kind]
        if r.cstring() != name:
            raise _Malformed("the curve does not match the key type")
        point = r.string()
        r.end()
        try:
            key = ec.EllipticCurvePublicKey.from_encoded_point(curve, point)
        except ValueError as exc:
            raise _Malformed("not a point on the curve") from exc
        canon = key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return PublicKey(kind, _string(kind.encode()) + _string(name) + _string(canon)), key
    if kind == "ssh-rsa":
        e, n = r.mpint(), r.mpint()
        r.end()
        if not _RSA_MIN_BITS <= n.bit_length() <= _RSA_MAX_BITS:
            raise _Malformed(f"an RSA key of {n.bit_length()} bits")
        try:
            rsa_key = rsa.RSAPublicNumbers(e, n).public_key()
        except ValueError as exc:
            raise _Malformed("not an RSA public key") from exc
        return PublicKey(kind, _string(b"ssh-rsa") + _mpint(e) + _mpint(n)), rsa_key
    raise _Malformed(f"unsupported key type {kind!r}")


def _check_signature(algorithm: str, key: _Verifier, sig: bytes, data: bytes) -> None:
    """The key's SSH signature over data; InvalidSignature or _Malformed when it is not."""
    r = _Reader(sig)
    sigtype = r.cstring()
    inner = r.string()
    r.end()
    if isinstance(key, ed25519.Ed25519PublicKey):
        if sigtype != b"ssh-ed25519" or len(inner) != 64:
            raise _Malformed("not an ed25519 signature")
        key.verify(inner, data)
    elif isinstance(key, ec.EllipticCurvePublicKey):
        if sigtype != algorithm.encode():
            raise _Malformed("the signature type does not match the key")
        ir = _Reader(inner)
        sig_r, sig_s = ir.mpint(), ir.mpint()
        ir.end()
        key.verify(encode_dss_signature(sig_r, sig_s), data, ec.ECDSA(_CURVES[algorithm][2]))
    else:
        if sigtype not in _RSA_HASHES:
            raise _Malformed(f"RSA signature algorithm {sigtype.decode('latin-1')!r} refused")
        size = (key.key_size + 7) // 8
        if len(inner) > size:
            raise _Malformed("an RSA signature longer than the key")
        key.verify(inner.rjust(size, b"\0"), data, padding.PKCS1v15(), _RSA_HASHES[sigtype])


# --- patterns (OpenSSH match.c) -------------------------------------------------------------


def _match(s: bytes, pattern: bytes) -> bool:
    """OpenSSH's match_pattern: `*` any run, `?` one byte, everything else itself."""
    si = pi = 0
    star, mark = -1, 0
    while si < len(s):
        if pi < len(pattern) and pattern[pi] == ord("*"):
            star, mark = pi, si
            pi += 1
        elif pi < len(pattern) and pattern[pi] in (s[si], ord("?")):
            si += 1
            pi += 1
        elif star >= 0:
            pi = star + 1
            mark += 1
            si = mark
        else:
            return False
    return all(c == ord("*") for c in pattern[pi:])


def _match_list(string: str, patterns: str) -> int:
    """OpenSSH's match_pattern_list (case-sensitive): 1 on a match, -1 on a negated match, 0 else."""
    s = string.encode()
    positive = 0
    entries = patterns.encode().split(b",")
    if not patterns or patterns.endswith(","):
        entries.pop()  # OpenSSH's loop never reads an empty last subpattern
    for entry in entries:
        negated = entry.startswith(b"!")
        sub = entry[1:] if negated else entry
        if len(sub) >= 1023:
            return 0  # OpenSSH's subpattern buffer: too long is no match
        if _match(s, sub):
            if negated:
                return -1
            positive = 1
    return positive


# --- allowed signers ------------------------------------------------------------------------


#: Seconds since 1970 of a time written without `Z` (year, month, day, hour, minute, second):
#: the verifying machine's local time, as `ssh-keygen` reads it (adapters pass one; tests too).
LocalTime = Callable[[tuple[int, int, int, int, int, int]], int]


def _parse_time(value: str, utc_offset: int | LocalTime) -> int:
    """OpenSSH's parse_absolute_time: YYYYMMDD[HHMM[SS]], then `Z` or `UTC` for UTC, else local
    (`utc_offset` seconds east of UTC, or a LocalTime)."""
    utc = False
    if len(value) > 1 and value[-1] in "zZ":
        utc, value = True, value[:-1]
    elif len(value) > 3 and value[-3:].upper() == "UTC":
        utc, value = True, value[:-3]
    if len(value) not in (8, 12, 14) or not (value.isascii() and value.isdigit()):
        raise ValueError("a time is YYYYMMDD[HHMM[SS]][Z]")
    digits = value.ljust(14, "0")
    year, month, day, hour, minute, second = (int(digits[i:i + n]) for i, n in
                                              ((0, 4), (4, 2), (6, 2), (8, 2), (10, 2), (12, 2)))
    try:
        stamp = int(datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp())
    except ValueError as exc:
        raise ValueError(f"no such time {value!r}") from exc
    if not utc:
        stamp = (utc_offset((year, month, day, hour, minute, second)) if callable(utc_offset)
                 else stamp - utc_offset)
    if stamp <= 0:
        raise ValueError(f"time {value!r} is not after 1970")
    return stamp


def _dequote(opts: str, i: int) -> tuple[str, int]:
    """OpenSSH's opt_dequote: a double-quoted value at i (`\\"` for a quote); value, index after it."""
    if i >= len(opts) or opts[i] != '"':
        raise ValueError("missing start quote")
    i += 1
    out = []
    while i < len(opts) and opts[i] != '"':
        if opts[i] == "\\" and opts[i + 1:i + 2] == '"':
            i += 1
        out.append(opts[i])
        i += 1
    if i >= len(opts):
        raise ValueError("missing end quote")
    return "".join(out), i + 1


def _parse_options(opts: str, utc_offset: int | LocalTime) -> tuple[bool, str | None, int | None, int | None]:
    """OpenSSH's sshsigopt_parse: (cert-authority, namespaces, valid-after, valid-before)."""
    ca = False
    values: dict[str, str] = {}
    i = 0
    while i < len(opts):
        low = opts[i:].lower()
        if low.startswith("cert-authority"):
            ca = True
            i += len("cert-authority")
        else:
            for name in ("namespaces", "valid-after", "valid-before"):
                if low.startswith(name + "="):
                    if name in values:
                        raise ValueError(f'multiple "{name}" clauses')
                    values[name], i = _dequote(opts, i + len(name) + 1)
                    break
        if i >= len(opts):
            break
        if opts[i] != ",":
            raise ValueError("unknown key option")
        i += 1
        if i >= len(opts):
            raise ValueError("unexpected end-of-options")
    after = _parse_time(values["valid-after"], utc_offset) if "valid-after" in values else None
    before = _parse_time(values["valid-before"], utc_offset) if "valid-before" in values else None
    if after is not None and before is not None and before <= after:
        raise ValueError('"valid-before" time is before "valid-after"')
    return ca, values.get("namespaces"), after, before


def _options_end(rest: str) -> int:
    """OpenSSH's sshkey_advance_past_options: the first blank outside double quotes."""
    quoted = False
    i = 0
    while i < len(rest) and (quoted or rest[i] not in " \t"):
        if rest[i] == "\\" and rest[i + 1:i + 2] == '"':
            i += 1
        elif rest[i] == '"':
            quoted = not quoted
        i += 1
    if quoted:
        raise ValueError("invalid options (unterminated quote)")
    return i


def _is_key_type(word: str) -> bool:
    return word in SUPPORTED_KEY_TYPES or word in _UNSUPPORTED_KEY_TYPES or word.endswith("-cert-v01@openssh.com")


def _parse_line(line: str, number: int, utc_offset: int | LocalTime) -> Signer | str:
    """A Signer, or why a well-formed line is skipped; ValueError for a malformed one."""
    if line.startswith('"'):
        close = line.find('"', 1)
        if close < 0:
            raise ValueError("unterminated quote in principals")
        principals, rest = line[1:close], line[close + 1:]
    else:
        m = re.match(r'[^ \t"]*', line)
        assert m is not None
        principals, rest = m.group(), line[m.end():]
        if rest.startswith('"'):
            raise ValueError("a quote inside principals")
    rest = rest.lstrip(" \t")
    if not rest:
        raise ValueError("missing key")
    if not principals or "" in principals.split(","):
        raise ValueError("an empty principal")
    ca, namespaces, after, before = False, None, None, None
    word = re.split(r"[ \t]", rest, maxsplit=1)[0]
    if not _is_key_type(word):
        end = _options_end(rest)
        ca, namespaces, after, before = _parse_options(rest[:end], utc_offset)
        rest = rest[end:].lstrip(" \t")
        if not rest:
            raise ValueError("missing key")
    parts = re.split(r"[ \t]+", rest, maxsplit=2)
    kind = parts[0]
    if not _is_key_type(kind):
        raise ValueError(f"unknown key type {kind!r}")
    if len(parts) < 2:
        raise ValueError("missing key data")
    if ca:
        return "cert-authority: certificates are not supported"
    if kind not in SUPPORTED_KEY_TYPES:
        return f"key type {kind} is not supported"
    try:
        key, _ = _parse_key(_b64decode(parts[1].encode("ascii", "replace")))
    except _Malformed as exc:
        raise ValueError(f"invalid {kind} key: {exc}") from exc
    if key.algorithm != kind:
        raise ValueError(f"the key is {key.algorithm}, the line says {kind}")
    return Signer(number, principals, key, namespaces, after, before)


def parse_allowed_signers(text: str, *, utc_offset: int | LocalTime = 0) -> AllowedSigners:
    """The allowed-signers file of `ssh-keygen(1)`; ValueError naming the first malformed line.

    Stricter than `ssh-keygen`, which only notices a bad line when it reads that far: the whole
    file must parse. Key types by their full names only. `utc_offset` is how times written
    without `Z` are read: seconds east of UTC (0: UTC), or a LocalTime; `ssh-keygen` reads them
    in the verifying machine's local time (the adapters pass that).
    Certificates are not supported: `cert-authority` lines, and lines holding a certificate,
    FIDO or DSA key, are well-formed but skipped (`AllowedSigners.skipped`).
    """
    signers: list[Signer] = []
    skipped: list[tuple[int, str]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(" \t\r")
        if not line or line.startswith("#"):
            continue
        try:
            if "\0" in line:
                raise ValueError("a NUL character")
            parsed = _parse_line(line, number, utc_offset)
        except ValueError as exc:
            raise ValueError(f"allowed signers line {number}: {exc}") from None
        if isinstance(parsed, Signer):
            signers.append(parsed)
        else:
            skipped.append((number, parsed))
    return AllowedSigners(tuple(signers), tuple(skipped))


# --- verification ---------------------------------------------------------------------------


def _dearmor(armored: bytes) -> bytes:
    """The blob inside the armor, read as OpenSSH's sshsig_dearmor (text after the footer ignored)."""
    if len(armored) > MAX_ARMOR:
        raise _Malformed("the signature is too large")
    if not armored.startswith(SSH_BEGIN):
        raise _Malformed("missing header")
    body = armored[len(SSH_BEGIN):]
    for eol in (b"\r\n", b"\n"):
        if body.startswith(eol):
            body = body[len(eol):]
            break
    else:
        raise _Malformed("no end of line after the header")
    footer = body.find(b"\n" + SSH_END)
    if footer < 0:
        raise _Malformed("missing footer")
    return _b64decode(body[:footer])


def signature_fingerprint(armored: bytes) -> str:
    """The fingerprint of the key an armored SSH signature names (not verified: for labels)."""
    try:
        r = _Reader(_dearmor(armored))
        if r.take(len(_MAGIC)) != _MAGIC or r.u32() != 1:
            raise _Malformed("not an SSHSIG blob")
        key, _ = _parse_key(r.string())
    except _Malformed as exc:
        raise ValueError(f"malformed SSH signature: {exc}") from None
    return key.fingerprint


def verify(payload: bytes, armored: bytes, signers: AllowedSigners, now: int, namespace: str = "git") -> Verified:
    """Whether `armored` is a good SSH signature of `payload` by a key `signers` allow (see the module)."""
    kind = signature_kind(armored)
    if kind != "ssh":
        return Verified("bad", reason=f"not an SSH signature ({kind})")
    try:
        r = _Reader(_dearmor(armored))
        if r.take(len(_MAGIC)) != _MAGIC:
            raise _Malformed("not an SSHSIG blob")
        version = r.u32()
        if version != 1:
            raise _Malformed(f"SSHSIG version {version}")
        key_blob, got_namespace, _reserved = r.string(), r.cstring(), r.string()
        hash_alg, sig = r.cstring(), r.string()
        r.end()
        kind = _Reader(key_blob).cstring().decode("latin-1")
        if kind.endswith("-cert-v01@openssh.com") or kind in _UNSUPPORTED_KEY_TYPES:
            what = "an SSH certificate" if kind.endswith("-cert-v01@openssh.com") else f"a {kind} key"
            return Verified("unsupported", reason=f"made with {what}, which this gate does not verify")
        key, verifier = _parse_key(key_blob)
    except _Malformed as exc:
        return Verified("bad", reason=f"malformed signature: {exc}")
    fingerprint = key.fingerprint
    if got_namespace != namespace.encode():
        return Verified("bad", fingerprint=fingerprint,
                        reason=f"signed for namespace {got_namespace.decode('utf-8', 'replace')!r}, not {namespace!r}")
    digest = _HASHES.get(hash_alg)
    if digest is None:
        return Verified("bad", fingerprint=fingerprint,
                        reason=f"hash algorithm {hash_alg.decode('latin-1')!r} refused")
    signed = _MAGIC + _string(got_namespace) + _string(b"") + _string(hash_alg) + _string(digest(payload))
    try:
        _check_signature(key.algorithm, verifier, sig, signed)
    except (InvalidSignature, _Malformed) as exc:
        detail = f": {exc}" if str(exc) else ""
        return Verified("bad", fingerprint=fingerprint, reason=f"the signature does not verify{detail}")
    holding = [s for s in signers.signers if s.key == key]
    first = next((s for s in holding if s.valid_at(now)), None)
    if first is None:  # find-principals finds nothing
        why = "not valid at that time" if holding else "not in the allowed signers"
        return Verified("unknown-key", fingerprint=fingerprint, reason=f"key {fingerprint} is {why}")
    candidates = dict.fromkeys(itertools.takewhile(bool, first.principals.split(",")))  # as find-principals prints
    accepted = tuple(c for c in candidates if any(
        _match_list(c, s.principals) == 1 and s.valid_at(now)
        and (s.namespaces is None or _match_list(namespace, s.namespaces) == 1) for s in holding))
    if not accepted:
        return Verified("bad", fingerprint=fingerprint,
                        reason=f"line {first.line} does not allow key {fingerprint} to sign for {namespace!r}")
    return Verified("ok", accepted, fingerprint)
