"""Commit signatures as the policy reads them: who signed a commit, and whether it must be signed (pure).

Emails, names and trailers are what a commit says about itself; a signature by a key the
server lists is the one signal git has that the writer cannot choose. The server keeps an
allowed-signers file (`GIT_DIR/gate/allowed_signers`, the format of `ssh-keygen -Y verify`
and git's `gpg.ssh.allowedSignersFile`) mapping principals to SSH keys. Two uses:

* a rule's `signers` globs restrict a commit whose signature verifies for a matching
  principal (an agent's key), like `authors` do for emails;
* `[signatures] require = [REFS...]` makes every new commit reaching those refs carry a
  valid signature by a listed key: unsigned (`GATE-SIG-MISSING`), signed by a key not
  listed for git at the commit's date (`GATE-SIG-UNKNOWN-KEY`), not verifying
  (`GATE-SIG-BAD`), or signed in a form the server cannot verify (X.509, or OpenPGP
  without `gpgv`: `GATE-SIG-UNSUPPORTED`): each rejected.

SSH signatures are verified in-process (`gatecore.signing.sshsig`) against the commit's date, as
`git verify-commit` does. OpenPGP signatures are verified by `gpgv` against the server's
OpenPGP keyring (`GIT_DIR/gate/openpgp_keys.gpg`, `gatecore.adapters.gpg`), through the
`OpenPGP` port. A commit is verified at most once per push, and only when a rule or the
requirement needs it.
"""

from __future__ import annotations

import re

from ..errors import malformed
from ..git.grammar import split_signature
from ..git.objects import Objects
from ..valueclass import valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Protocol

    from .allowedsigners import AllowedSigners
else:
    from ..valueclass import Protocol

_DATE = re.compile(rb" *([0-9]+)")
#: git's `get_format_by_sig`: which armor names which signature format.
_KINDS = ((b"-----BEGIN SSH SIGNATURE-----", "ssh"), (b"-----BEGIN PGP SIGNATURE-----", "openpgp"),
          (b"-----BEGIN PGP MESSAGE-----", "openpgp"), (b"-----BEGIN SIGNED MESSAGE-----", "x509"))

#: status -> the code a signature-requiring scope rejects it with (None: accepted)
REQUIRED_CODES: dict[str, str | None] = {
    "ok": None, "unsigned": "GATE-SIG-MISSING", "unknown-key": "GATE-SIG-UNKNOWN-KEY", "bad": "GATE-SIG-BAD",
    "unsupported": "GATE-SIG-UNSUPPORTED",
}


class OpenPGP(Protocol):
    def verify(self, payload: bytes, armored: bytes) -> tuple[str, tuple[str, ...], str]:
        """(status, principals, reason) of one detached OpenPGP signature over `payload`."""
        ...


@valueclass(frozen=True, slots=True)
class TrustedKeys:
    """The keys a server (or a client, for early warning) verifies commit signatures with."""

    ssh: AllowedSigners | None = None  # None: no SSH allowed signers installed
    openpgp: OpenPGP | None = None  # None: OpenPGP signatures are not verified here


@valueclass(frozen=True, slots=True)
class SignatureState:
    status: str                    # ok | unsigned | unknown-key | bad | unsupported
    principals: tuple[str, ...]    # when ok: the principals the key is allowed for
    reason: str


def signature_kind(armored: bytes) -> str:
    """"ssh", "openpgp", "x509" or "unknown", from the armor's first line, as git tells formats apart."""
    for prefix, kind in _KINDS:
        if armored.startswith(prefix):
            return kind
    return "unknown"


def _committer_time(raw: bytes) -> int:
    """The committer date of a raw commit (the time a signature is judged at, as git does)."""
    header = raw.split(b"\n\n", 1)[0]
    for line in header.split(b"\n"):
        if line.startswith(b"committer "):
            # git reads the digits after the last '>' (strspn): "1_700..." is 1, "+5" no date
            m = _DATE.match(line.rsplit(b">", 1)[-1])
            if m is None:
                break
            return int(m.group(1))
    raise malformed("a commit without a readable committer date")


class SignatureChecker:
    """Verifies commits' signatures against the allowed signers, once per commit."""

    def __init__(self, objects: Objects, signers: TrustedKeys | None) -> None:
        """`signers` None: nothing can verify here (the client's commit-time hook, before the
        commit and its signature exist): every commit reads as unsigned."""
        self.objects = objects
        self.signers = signers
        self._seen: dict[str, SignatureState] = {}

    def state(self, oid: str) -> SignatureState:
        if self.signers is None:
            return SignatureState("unsigned", (), "no allowed signers to verify with")
        got = self._seen.get(oid)
        if got is None:
            kind, raw = self.objects.reader.read(oid)
            if kind != "commit":
                raise malformed(f"object {oid} is a {kind}, not a commit")
            got = self._seen[oid] = self._judge(raw)
        return got

    def prefetch(self, oids: list[str]) -> None:
        """Verify many commits from one pipelined read."""
        wanted = [o for o in dict.fromkeys(oids) if o not in self._seen]
        if len(wanted) > 1 and self.signers is not None:
            for oid, kind, raw in self.objects.reader.read_many(wanted):
                if kind != "commit":
                    raise malformed(f"object {oid} is a {kind}, not a commit")
                self._seen[oid] = self._judge(raw)

    def _judge(self, raw: bytes) -> SignatureState:
        from . import sshsig

        assert self.signers is not None
        split = split_signature(raw, self.objects.reader.object_format)
        if split is None:
            return SignatureState("unsigned", (), "no signature")
        payload, armored = split
        kind = signature_kind(armored)
        if kind == "openpgp":
            if self.signers.openpgp is None:
                return SignatureState("unsupported", (), "an OpenPGP signature, which is not verified here")
            status, principals, reason = self.signers.openpgp.verify(payload, armored)
            return SignatureState(status, principals if status == "ok" else (), reason)
        if kind != "ssh":
            return SignatureState("unsupported", (), f"a {kind} signature")
        if self.signers.ssh is None:
            return SignatureState("unknown-key", (), "an SSH signature, and no SSH allowed signers are installed")
        v = sshsig.verify(payload, armored, self.signers.ssh, _committer_time(raw))
        return SignatureState(v.status, tuple(v.principals) if v.ok else (), v.reason)
