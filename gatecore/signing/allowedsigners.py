"""Allowed-signers files, read as `ssh-keygen -Y verify` reads them (pure).

The file (`ssh-keygen(1)`, ALLOWED SIGNERS; git's `gpg.ssh.allowedSignersFile`) lists one
signer a line: `principals [options] keytype base64 [comment]`. Principals are a
comma-separated list of patterns (OpenSSH's `match_pattern_list`: `*`, `?`, `!` negation,
case-sensitive); options are `namespaces="..."`, `valid-after="..."`, `valid-before="..."`
and `cert-authority`; times are `YYYYMMDD[HHMM[SS]]`, UTC with a `Z` (or `UTC`) suffix and the
verifying machine's local time without one, as OpenSSH's `parse_absolute_time` reads them.

Stricter than `ssh-keygen`, which only notices a bad line when it reads that far: the whole
file must parse (`parse_allowed_signers` names the first bad line). Key types by their full
names only. Certificates are not supported: `cert-authority` lines, and lines holding a
certificate, FIDO, DSA or XMSS key, are well formed but skipped and listed in
`AllowedSigners.skipped`, which the adapters refuse as a configuration error (git would honour
them, so silently ignoring them would let such a signer escape a rule).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

from ..valueclass import valueclass
from .sshkeys import SUPPORTED_KEY_TYPES, Malformed, PublicKey, b64decode, is_key_type, parse_key


@valueclass(frozen=True, slots=True)
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

    def allows(self, principal: str, namespace: str, now: int) -> bool:
        """`ssh-keygen -Y verify -I principal -n namespace` accepts this line for the key: a
        pattern matches the principal, the namespace is allowed, and the line is valid at `now`."""
        return (match_list(principal, self.principals) == 1 and self.valid_at(now)
                and (self.namespaces is None or match_list(namespace, self.namespaces) == 1))


@valueclass(frozen=True, slots=True)
class AllowedSigners:
    signers: tuple[Signer, ...]
    #: (line number, why) for well-formed lines this gate cannot use: cert-authority lines,
    #: certificate, FIDO, DSA and XMSS keys. They never match a signature.
    skipped: tuple[tuple[int, str], ...] = ()

    def holding(self, key: PublicKey) -> list[Signer]:
        """The lines that list this key, in file order."""
        return [s for s in self.signers if s.key == key]


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


def match_list(string: str, patterns: str) -> int:
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


# --- times and options ----------------------------------------------------------------------


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


# --- lines ----------------------------------------------------------------------------------


def _principals(line: str) -> tuple[str, str]:
    """(the principals, the rest of the line): a quoted list, or one word up to a blank."""
    if line.startswith('"'):
        close = line.find('"', 1)
        if close < 0:
            raise ValueError("unterminated quote in principals")
        return line[1:close], line[close + 1:]
    m = re.match(r'[^ \t"]*', line)
    assert m is not None
    if line[m.end():].startswith('"'):
        raise ValueError("a quote inside principals")
    return m.group(), line[m.end():]


def _parse_line(line: str, number: int, utc_offset: int | LocalTime) -> Signer | str:
    """A Signer, or why a well-formed line is skipped; ValueError for a malformed one."""
    principals, rest = _principals(line)
    rest = rest.lstrip(" \t")
    if not rest:
        raise ValueError("missing key")
    if not principals or "" in principals.split(","):
        raise ValueError("an empty principal")
    ca, namespaces, after, before = False, None, None, None
    word = re.split(r"[ \t]", rest, maxsplit=1)[0]
    if not is_key_type(word):
        end = _options_end(rest)
        ca, namespaces, after, before = _parse_options(rest[:end], utc_offset)
        rest = rest[end:].lstrip(" \t")
        if not rest:
            raise ValueError("missing key")
    parts = re.split(r"[ \t]+", rest, maxsplit=2)
    kind = parts[0]
    if not is_key_type(kind):
        raise ValueError(f"unknown key type {kind!r}")
    if len(parts) < 2:
        raise ValueError("missing key data")
    if ca:
        return "cert-authority: certificates are not supported"
    if kind not in SUPPORTED_KEY_TYPES:
        return f"key type {kind} is not supported"
    try:
        key, _ = parse_key(b64decode(parts[1].encode("ascii", "replace")))
    except Malformed as exc:
        raise ValueError(f"invalid {kind} key: {exc}") from exc
    if key.algorithm != kind:
        raise ValueError(f"the key is {key.algorithm}, the line says {kind}")
    return Signer(number, principals, key, namespaces, after, before)


def parse_allowed_signers(text: str, *, utc_offset: int | LocalTime = 0) -> AllowedSigners:
    """The allowed-signers file of `ssh-keygen(1)`; ValueError naming the first malformed line.

    `utc_offset` is how times written without `Z` are read: seconds east of UTC (0: UTC), or
    a LocalTime; `ssh-keygen` reads them in the verifying machine's local time (the adapters
    pass that).
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
