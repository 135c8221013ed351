"""Maintainer approvals: a human vouches for a restricted write of frozen paths (pure).

An approval names one ref update exactly - the repository, the ref, its old and new
value - and the frozen paths it permits there; who approved, when, and until when. Its
id is the SHA-256 of that binding, so the hook finds the one approval that can serve a
ref update by name (`refs/gate/approvals/<id>`) without listing any: a rebased commit,
another ref or another old value is another id, and finds nothing.

The record travels as a DSSE envelope (`gatecore.signing.envelope`, payload type
`PAYLOAD_APPROVAL`) with one signature, either

* a seal by a keyring key of purpose `approval` (ed25519 only; `gatecore.signing.seal` judges
  purpose, revocation and validity), or
* an SSH signature (keyid `ssh:<fingerprint>`, namespace `gate-approval`) over the same
  pre-authentication encoding, by a key the server's allowed-signers file lists with the
  approver among its principals.

Either way the approver must be one the policy names (`[approvals] approvers`), and the
approval must not have expired nor live longer than `[approvals] max_hours`.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from .. import strictjson
from ..configuration.policy import Policy
from ..errors import GateError
from ..findings import Failure
from ..ids import OID_RE
from ..signing.envelope import PAYLOAD_APPROVAL, Envelope, pae
from ..signing.keys import Keyring
from ..valueclass import valueclass
from .schema import Member, describe, integer, read, text, text_list

if TYPE_CHECKING:
    from ..signing.allowedsigners import AllowedSigners

SSH_KEYID_PREFIX = "ssh:"
SSH_NAMESPACE = "gate-approval"
RECORD_FILE = "approval.json"
CLOCK_SKEW = 300  # seconds a record's creation may lie in the future
MAX_PATHS = 1000
#: `old` and `new` are commit ids of either object format (`ids.OID_RE`: 40 or 64 hex digits), both
#: of one width. An approval serves only the update whose ids it names (its id binds them), so one
#: of the other width never serves a repository: ids are compared whole, never shortened.


def approval_id(repository_id: str, ref: str, old: str, new: str) -> str:
    """The id of the one approval that can serve this ref update."""
    binding = "\0".join(("gate-approval-v1", repository_id, ref, old, new)).encode("utf-8", "surrogateescape")
    return hashlib.sha256(binding).hexdigest()


@valueclass(frozen=True, slots=True)
class Approval:
    repository_id: str
    ref: str
    old: str
    new: str
    paths: tuple[str, ...]
    approver: str
    created_at: int
    expires_at: int
    reason: str = ""

    @property
    def id(self) -> str:
        return approval_id(self.repository_id, self.ref, self.old, self.new)

    def payload(self) -> bytes:
        return strictjson.dumps({
            "repository_id": self.repository_id, "ref": self.ref, "old": self.old, "new": self.new,
            "paths": list(self.paths), "approver": self.approver, "created_at": self.created_at,
            "expires_at": self.expires_at, "reason": self.reason,
        })


def _malformed(detail: str) -> GateError:
    return GateError("GATE-APPROVAL-MALFORMED", detail)


MEMBERS = (
    Member("repository_id", text(256)),
    Member("ref", text(1024, 6, pattern=re.compile(r"refs/.+", re.S))),
    Member("old", text(64, 40, pattern=OID_RE)),
    Member("new", text(64, 40, pattern=OID_RE)),
    Member("paths", text_list(text(4096, 1), 1, MAX_PATHS)),
    Member("approver", text(256, 1)),
    Member("created_at", integer(0, 2**63 - 1)),
    Member("expires_at", integer(0, 2**63 - 1)),
    Member("reason", text(2000)),
)


def parse_payload(payload: bytes) -> Approval:
    """An approval from its payload bytes, strictly (GATE-APPROVAL-MALFORMED otherwise)."""
    values, problems = read(strictjson.loads(payload, code="GATE-APPROVAL-MALFORMED"), MEMBERS)
    if not problems and len(set(values["paths"])) != len(values["paths"]):
        problems.append(("paths", "must be distinct"))
    if not problems and len(values["old"]) != len(values["new"]):
        problems.append(("new", "must have as many hex digits as old (one object format)"))
    if problems:
        raise _malformed(f"approval: {describe(problems)}")
    return Approval(**{**values, "paths": tuple(values["paths"])})


def verify(env: Envelope, policy: Policy, repository_id: str, now: int,
           keyring: Keyring | None, signers: AllowedSigners | None) -> tuple[Approval | None, list[Failure]]:
    """The approval an envelope carries and every reason it cannot serve now (empty: it serves)."""
    from ..signing import seal

    if env.payload_type != PAYLOAD_APPROVAL:
        return None, [Failure("GATE-SEAL-PAYLOAD-TYPE", "payloadType", f"expected {PAYLOAD_APPROVAL}")]
    try:
        approval = parse_payload(env.payload)
    except GateError as exc:
        return None, [Failure(exc.code, "payload", exc.detail)]
    failures: list[Failure] = []
    if env.keyid.startswith(SSH_KEYID_PREFIX):
        failures += _ssh_failures(env, approval, signers, now)
    elif keyring is None:
        failures.append(Failure("GATE-SEAL-UNKNOWN-KEY", "keyid", "no keyring is installed to verify the seal"))
    else:
        failures += seal.verify(env, keyring, PAYLOAD_APPROVAL, now)
    if not policy.is_approver(approval.approver):
        failures.append(Failure("GATE-APPROVAL-APPROVER", "approver",
                                f"{approval.approver[:64]!r} is not an approver ([approvals] approvers)"))
    if approval.repository_id != repository_id:
        failures.append(Failure("GATE-APPROVAL-MALFORMED", "repository_id",
                                f"names repository {approval.repository_id[:64]!r}, not {repository_id!r}"))
    if approval.created_at > now + CLOCK_SKEW or approval.expires_at <= approval.created_at:
        failures.append(Failure("GATE-APPROVAL-MALFORMED", "created_at", "created in the future or expiring "
                                                                           "before it was created"))
    elif approval.expires_at - approval.created_at > policy.approval_max_seconds:
        failures.append(Failure("GATE-APPROVAL-MALFORMED", "expires_at", "lives longer than [approvals] max_hours "
                                                                           f"({policy.approval_max_seconds // 3600})"))
    if now >= approval.expires_at:
        failures.append(Failure("GATE-APPROVAL-EXPIRED", "expires_at", "the approval has expired"))
    return approval, failures


def _ssh_failures(env: Envelope, approval: Approval, signers: AllowedSigners | None, now: int) -> list[Failure]:
    from ..signing import sshsig

    if signers is None:
        return [Failure("GATE-APPROVAL-SIGNATURE", "keyid", "no allowed-signers file is installed to verify "
                                                            "an SSH-signed approval")]
    verified = sshsig.verify(pae(env.payload_type, env.payload), env.sig, signers, now, SSH_NAMESPACE)
    if not verified.ok:
        return [Failure("GATE-APPROVAL-SIGNATURE", "sig", verified.reason)]
    if env.keyid != SSH_KEYID_PREFIX + (verified.fingerprint or ""):
        return [Failure("GATE-APPROVAL-SIGNATURE", "keyid", "the keyid does not name the signing key")]
    if approval.approver not in verified.principals:
        return [Failure("GATE-APPROVAL-APPROVER", "approver",
                        f"the key {verified.fingerprint} does not sign for {approval.approver[:64]!r}")]
    return []
