"""The maintainer's commands: `gate approve` and `gate approvals list`.

`gate approve` is run on the command a rejection prints. `prepare` checks the request
the way the server will and shows the restricted writes of the approved paths (each commit
of OLD..NEW that touches them, with its changes there, shown by the gate's own rules:
`review_text`); the command line asks; `complete` seals the approval
(`gatecore.records.approvals`), writes it as a root commit on `refs/gate/approvals/<id>` in the
local repository and pushes that ref. The server verifies it when it is pushed and again
when the agent's push relies on it. The commits must be in the local repository: fetch
them from wherever the agent's work is (its fork, its workspace) first.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from ..adapters import gitcmd
from ..adapters.gitrepo import GitRepo
from ..configuration import durations
from ..errors import GateError
from ..findings import Failure
from ..git.objects import Objects
from ..git.refs import undisplay
from ..records import approvals
from ..reserved.approvalrefs import APPROVALS_PREFIX, USES_PREFIX, read_record
from ..signing import envelope
from ..signing.keys import SigningKey
from ..valueclass import valueclass

APPROVAL_NAME, APPROVAL_EMAIL = "gate approval", "approvals@gate.invalid"


@valueclass(frozen=True, slots=True)
class Request:
    repository_id: str
    ref: str
    old: str
    new: str
    paths: tuple[str, ...]
    approver: str
    lifetime: int  # seconds
    reason: str = ""


@valueclass(frozen=True, slots=True)
class Prepared:
    """A request checked as the server will check it, and what the maintainer is asked to approve."""

    request: Request
    key: SigningKey | None  # a key of purpose approval, read from its file
    ssh_key: Path | None  # or an SSH key the server's allowed signers list for the approver
    expires: str  # as given (24h)
    changes: str  # review_text: the commits and the net change at the paths


#: What `gate approve` needs once per clone (the printed command cannot name it: report.APPROVE_SETUP).
SETUP = {"approver": "git config gate.approver NAME (your name as [approvals] approvers names you), or --approver",
         "key": "git config gate.approvalSshKey ~/.ssh/KEY (an SSH key the server's allowed signers list for you) "
                "or git config gate.approvalKey KEYFILE (gate keys generate --purpose approval), or --ssh-key or "
                "--key"}


def prepare(repo_path: Path, repository_id: str, ref: str, old: str, new: str, paths: list[str],
            approver: str | None, key: Path | None, ssh_key: Path | None, expires: str, reason: str) -> Prepared:
    """Everything `gate approve` does before it asks: who approves and with which key (the flags,
    else git config gate.approver, gate.approvalKey, gate.approvalSshKey), checked first, before
    anything is shown; the record's own checks (those the server makes); the commits present here.
    Nothing is written."""
    approver = approver or git_config(repo_path, "gate.approver")
    if key is None and ssh_key is None:
        key_text = git_config(repo_path, "gate.approvalKey")
        ssh_text = git_config(repo_path, "gate.approvalSshKey")
        key, ssh_key = (Path(key_text) if key_text else None), (Path(ssh_text) if ssh_text else None)
    missing = [need for need, given in (("approver", approver), ("key", key or ssh_key)) if not given]
    if missing:
        raise GateError("GATE-INPUT-ARGUMENT", "gate approve needs " + " and ".join(
            f"your {'name' if m == 'approver' else 'key'}" for m in missing) + ", set once per clone: "
            + "; ".join(SETUP[m] for m in missing) + " (docs/approvals.md)")
    assert approver is not None
    signing = None if key is None else approval_key(key)
    if key is None and ssh_key is not None and not (ssh_key.is_file() and os.access(ssh_key, os.R_OK)):
        raise GateError("GATE-INPUT-ARGUMENT", f"cannot read the SSH key {ssh_key} (--ssh-key, or git config "
                                               "gate.approvalSshKey)")
    lifetime = durations.parse(expires, "--expires")
    if lifetime <= 0:
        raise GateError("GATE-INPUT-ARGUMENT", "--expires must be more than 0")
    req = Request(repository_id, ref, old, new, tuple(dict.fromkeys(paths)), approver, lifetime, reason)
    probe = approvals.Approval(repository_id, ref, old, new, req.paths, approver, 0, 1, reason)
    approvals.parse_payload(probe.payload())  # the same checks the server makes, before anything
    check_objects(GitRepo.at(repo_path), req)
    return Prepared(req, signing, None if signing is not None else ssh_key, expires, review_text(repo_path, req))


def approval_key(path: Path) -> SigningKey:
    """The key file `gate approve` seals with, refused now, before anything is shown, unless it is
    an ed25519 key of purpose approval (the server takes no other)."""
    from ..adapters.config import load_keyfile

    key = load_keyfile(path)
    if key.purpose != "approval":
        raise GateError("GATE-SEAL-KEY-PURPOSE", f"{path} is a {key.purpose} key: an approval is sealed with a key of "
                                                 "purpose approval (gate keys generate --purpose approval)")
    if key.algorithm != "ed25519":
        raise GateError("GATE-SEAL-KEY-PURPOSE", f"{path} is an {key.algorithm} key: approval keys are ed25519 "
                                                 "(docs/approvals.md)")
    return key


def complete(repo_path: Path, prepared: Prepared, remote: str | None, now: int) -> tuple[list[str], bool, str]:
    """Seal, write and (unless `remote` is None) push the approval; (lines to print, pushed or kept,
    git's output of the push). A push the server refuses leaves nothing that looks approved."""
    req = prepared.request
    approval, data = seal(req, now, prepared.key, prepared.ssh_key)
    written = write(repo_path, req, data, approval.id, now)
    lines = [f"approval {approval.id} written to {written} (expires in {prepared.expires})"]
    if remote is None:
        return lines, True, ""
    result = gitcmd.push(repo_path, remote, f"{written}:{written}")
    if not result.ok:  # the server refused it: keep nothing that looks approved
        gitcmd.run_git(["update-ref", "-d", written], cwd=repo_path, ok=None)
        return [*lines, f"approval {approval.id} refused by {remote}; the local copy was removed"], False, result.output
    return [*lines, f"approval {approval.id} accepted by {remote} on {written}"], True, result.output


def git_config(repo_path: Path, key: str) -> str | None:
    got = gitcmd.run_git(["config", "--path", key], cwd=repo_path, ok=(0, 1))
    return got.stdout.decode("utf-8", "replace").strip() or None


def review_text(repo_path: Path, req: Request) -> str:
    """What the maintainer approves: each commit of the range that touches the paths (as `git log
    --full-history -- PATHS` selects them), with its changes at those paths, then the net change
    of the ref at those paths.

    The changes are shown by the gate's own rules from git's objects (`gatecore.git.changetext`),
    never by `git log -p` or `git diff`, whose output the repository decides: a `.gitattributes`
    with `ci/** -diff` that an agent landed earlier made them print `Binary files ... differ` for
    the frozen file the maintainer is asked to approve. Each commit's header and message, the
    agent's own words, are shown with every control character as an escape (`changetext.show`)
    and the message indented, as its changes are: an `ESC[8m` in a message concealed everything
    printed after it. A merge shows its changes against each parent. The paths are the gate's
    display form (`refs.display`: other bytes than printable ASCII as `\\xNN`), turned back into
    git's bytes and given as literal pathspecs (a path with `*` in it is that path, not a
    pattern)."""
    from ..git.changetext import change_text, show

    zero = "0" * len(req.old)
    span = req.new if req.old == zero else f"{req.old}..{req.new}"
    paths = [undisplay(p) for p in req.paths]
    out = gitcmd.run_git(["--literal-pathspecs", "log", "--no-color", "--no-patch", "-z",
                          "--format=commit %H%nAuthor: %an <%ae>%nCommitter: %cn <%ce>%n%n%B", "--full-history",
                          span, "--", *(os.fsdecode(p) for p in paths)], cwd=repo_path, code="GATE-GIT-UNREADABLE")
    objects = Objects(GitRepo.at(repo_path))
    text = ""
    for entry in out.stdout.split(b"\0"):
        if not entry.startswith(b"commit "):
            continue
        commit = entry[len(b"commit "):].split(b"\n", 1)[0].decode("ascii", "replace")
        # The header and the message are the agent's words: every control character shown as an
        # escape (a raw ESC[8m concealed the change printed after it), the message indented.
        head, _, message = entry.rstrip(b"\n").partition(b"\n\n")
        text += "".join(f"{show(line)}\n" for line in head.split(b"\n")) + "\n"
        text += "".join(f"    {show(line)}\n" for line in message.split(b"\n")) + "\n"
        for parent in objects.commit(commit).parent_ids or (None,):
            text += change_text(objects, parent, commit, paths=paths).text + "\n"
    if req.old != zero:
        # What the ref ends up with at those paths, whatever the commits did on the way: a merge
        # that keeps one side's stale file (merge -s ours) writes it, yet no commit's change shows it.
        net = change_text(objects, req.old, req.new, paths=paths)
        text += f"\n=== the net change of {req.ref} at these paths ({req.old[:12]}..{req.new[:12]}) ===\n"
        text += net.text if net.files else "(none: the paths end as they were)\n"
    return text


def check_objects(repo: GitRepo, req: Request) -> None:
    zero = "0" * len(req.old)
    for oid in (req.new, req.old):
        if oid != zero and not repo.exists(oid):
            raise GateError("GATE-GIT-UNREADABLE", f"commit {oid} is not in this repository: fetch the agent's work "
                                                   "first (git fetch AGENT_REMOTE BRANCH)")


def ssh_sign(message: bytes, key: Path) -> bytes:
    """An SSHSIG of `message` in the approvals' namespace, by `ssh-keygen -Y sign` (agent keys work too)."""
    try:
        proc = subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-n", approvals.SSH_NAMESPACE, "-f", str(key)],
                              input=message, capture_output=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GateError("GATE-INPUT-ARGUMENT", f"cannot run ssh-keygen: {exc}") from None
    if proc.returncode != 0 or not proc.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        raise GateError("GATE-INPUT-ARGUMENT", "ssh-keygen -Y sign failed: "
                        + proc.stderr.decode("utf-8", "replace").strip()[-300:])
    return proc.stdout


def seal(req: Request, now: int, key: SigningKey | None, ssh_key: Path | None) -> tuple[approvals.Approval, bytes]:
    """The approval and its envelope bytes, sealed by a keyring key or signed with an SSH key."""
    from ..signing import seal as sealing
    from ..signing.sshsig import signature_fingerprint

    approval = approvals.Approval(req.repository_id, req.ref, req.old, req.new, req.paths, req.approver, now,
                                  now + req.lifetime, req.reason)
    payload = approval.payload()
    if key is not None:
        try:
            env = sealing.sign(key, envelope.PAYLOAD_APPROVAL, payload)
        except ValueError as exc:
            raise GateError("GATE-SEAL-KEY-PURPOSE", str(exc)) from None
    elif ssh_key is not None:
        sig = ssh_sign(envelope.pae(envelope.PAYLOAD_APPROVAL, payload), ssh_key)
        try:
            fingerprint = signature_fingerprint(sig)
        except ValueError as exc:
            raise GateError("GATE-INPUT-ARGUMENT", str(exc)) from None
        env = envelope.Envelope(envelope.PAYLOAD_APPROVAL, payload, approvals.SSH_KEYID_PREFIX + fingerprint, sig)
    else:
        raise GateError("GATE-INPUT-ARGUMENT", "pass --key KEYFILE (purpose approval) or --ssh-key PATH")
    return approval, envelope.encode(env)


def write(repo_path: Path, req: Request, data: bytes, approval_id: str, now: int) -> str:
    """The approval commit on refs/gate/approvals/<id> in the local repository."""
    repo = GitRepo.at(repo_path)
    ref = APPROVALS_PREFIX + approval_id
    if repo.ref_target(ref) is not None:
        raise GateError("GATE-APPROVAL-REF", f"{ref} exists here already: an update is approved once")
    tree = repo.write_tree({approvals.RECORD_FILE: data})
    commit = repo.write_commit(tree, [], f"gate approval {approval_id[:16]}: {req.ref} by {req.approver}\n",
                               APPROVAL_NAME, APPROVAL_EMAIL, now)
    repo.set_ref(ref, commit, None)
    return ref


@valueclass(frozen=True, slots=True)
class Listed:
    id: str
    approval: approvals.Approval | None
    used: bool
    problem: str = ""
    verified: bool = False  # the seal or signature was checked against the server's keys


#: Verifies one approval commit as the hook would: (the approval, or None, and the failures).
Verifier = Callable[[str], tuple[approvals.Approval | None, list[Failure]]]


def listing(repo_path: Path, verify: Verifier | None = None) -> list[Listed]:
    """Every approval this repository holds (fetch refs/gate/* for the server's), whether it was
    used, and, with `verify` (on the server's repository), whether it is valid."""
    repo = GitRepo.at(repo_path)
    refs = repo.ref_targets(lambda name: name.startswith(b"refs/gate/approval"))
    objects = Objects(repo)
    out = []
    for name, oid in sorted(refs.items()):
        ref = name.decode("utf-8", "surrogateescape")
        if not ref.startswith(APPROVALS_PREFIX):
            continue
        aid = ref[len(APPROVALS_PREFIX):]
        used = (USES_PREFIX + aid).encode() in refs
        try:
            approval = approvals.parse_payload(read_record(objects, oid).payload)
        except GateError as exc:
            out.append(Listed(aid, None, used, f"{exc.code}: {exc.detail}"))
            continue
        if verify is None:
            out.append(Listed(aid, approval, used))
            continue
        _, failures = verify(oid)
        if approval.id != aid:  # the hook looks records up by id: this one can never serve
            failures = [*failures, Failure("GATE-APPROVAL-MALFORMED", "id", "the ref name is not the approval's id")]
        # expiry is shown by the listing itself; every other failure makes the record invalid
        bad = [f for f in failures if f.code != "GATE-APPROVAL-EXPIRED"]
        out.append(Listed(aid, approval, used, "; ".join(f"{f.code}: {f.detail}" for f in bad), verified=True))
    return out


def listing_lines(repo_path: Path, verify: Verifier | None, now: int) -> list[str]:
    """`gate approvals list`: one line per approval (id, state, approver, ref update, paths, expiry)."""
    import time

    out = []
    if verify is None:
        out.append("note: not a gate-installed server repository: seals and signatures are not verified here "
                   "(run this on the server's repository to verify them)")
    for item in listing(repo_path, verify):
        a = item.approval
        if a is None:
            out.append(f"{item.id[:16]} malformed: {item.problem}")
            continue
        state = "used" if item.used else "expired" if now >= a.expires_at else "unused"
        if item.problem:
            state = f"INVALID ({item.problem})"
        elif not item.verified:
            state += " (unverified)"
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a.expires_at))
        out.append(f"{item.id[:16]} {state} by {a.approver} {a.ref} {a.old[:12]}..{a.new[:12]} "
                   f"paths={','.join(a.paths)} expires={when}")
    return out
