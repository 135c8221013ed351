"""Maintainer approvals, decided in process: an approval lifts exactly the one ref update it names,
once; nothing else rides on it (another ref, another path, a rebase, a replay after a rewind,
another ref of the same push); only approvers push approvals, sealed with an approval key or
signed with their own SSH key; nobody rewrites, deletes or forges a record or a use.

The approvals are made by the maintainer's own code (`gatecore.trusted.approve.seal` and
`write`, what `gate approve` runs) from the command the gate printed, and pushed to the engine.
`tests/push/test_approvals.py` runs `gate approve` itself, the client's pre-push hook and the
listing through real pushes, with one real push of each family below.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.engine import Decided, EngineServer
from support.gitutil import AGENT, HUMAN, git
from support.keygen import needs_ssh_keygen, ssh_key
from support.lab import now
from support.server import APPROVALS_POLICY as POLICY
from support.verdicts import refused

from gatecore.adapters.config import load_keyfile
from gatecore.adapters.files import write_private
from gatecore.configuration.configschema import generate_key
from gatecore.signing.keys import SigningKey
from gatecore.trusted import approve

ALICE = {"REMOTE_USER": "alice"}
ADMIN = {"REMOTE_USER": "admin"}
AGENT_PUSH = {"REMOTE_USER": "agent-7"}


@dataclass
class Approvals:
    server: EngineServer
    keys: dict[str, SigningKey]
    keyring: str
    base: str

    def agent_commit(self, path: str = "ci/deploy.yml", text: str = "deploy: agent\n") -> str:
        self.server.work.write(path, text)
        return self.server.work.commit(f"agent writes {path}", identity=AGENT)

    def push(self, *refspecs: str, who: dict[str, str] = AGENT_PUSH) -> Decided:
        return self.server.push(*refspecs, pusher_env=who)

    def request(self, out: Decided, approver: str = "alice", lifetime: int = 3600) -> approve.Request:
        """The request the printed `gate approve` command makes."""
        line = next(ln for ln in out.lines if "can approve this write" in ln)
        args = shlex.split(line[line.index("gate approve"):])[2:]
        flags = {args[i]: args[i + 1] for i in range(0, len(args), 2) if args[i] != "--path"}
        paths = tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--path")
        return approve.Request(flags["--repository-id"], flags["--ref"], flags["--old"], flags["--new"], paths,
                               approver, lifetime)

    def approve(self, req: approve.Request, key: str = "approval", ssh: Path | None = None, at: int | None = None,
                who: dict[str, str] = ALICE) -> tuple[str, Decided]:
        """`gate approve`: the record sealed (or SSH-signed), written, and pushed by `who`."""
        at = now() if at is None else at
        approval, data = approve.seal(req, at, None if ssh else self.keys[key], ssh)
        ref = approve.write(self.server.work.path, req, data, approval.id, at)
        return ref, self.server.push(f"{ref}:{ref}", pusher_env=who)

    def rejected_write(self) -> Decided:
        out = self.push("main")
        assert refused(out, "GATE-FROZEN-PATH"), out.output
        return out


@pytest.fixture
def lab(tmp_path: Path) -> Approvals:
    keys, ring = {}, ""
    for kid, purpose in (("approval", "approval"), ("runner", "receipt")):
        made = generate_key("ed25519", kid, purpose)
        write_private(tmp_path / kid, made.keyfile_text)
        keys[kid] = load_keyfile(tmp_path / kid)
        ring += made.keyring_entry
    server = EngineServer(tmp_path, POLICY, ring)
    server.work.write("README", "hello\n")
    server.work.write("ci/deploy.yml", "deploy: true\n")
    base = server.work.commit("base", identity=HUMAN)
    assert server.push("main").ok
    return Approvals(server, keys, ring, base)


def test_reject_approve_accept_once(lab: Approvals) -> None:
    lab.agent_commit()
    _ref, pushed = lab.approve(lab.request(lab.rejected_write()))
    assert pushed.ok, pushed.output
    out = lab.push("main")
    assert out.ok, out.output
    [used] = out.audit()["approvals"]
    assert used["approver"] == "alice" and used["paths"] == ["ci/deploy.yml"] and used["ref"] == "refs/heads/main"
    assert lab.server.ref(f"refs/gate/approval-uses/{used['id']}") == lab.server.ref(f"refs/gate/approvals/{used['id']}")


def test_the_approval_does_not_carry_over(lab: Approvals) -> None:
    """Another ref, a further commit, a rebased commit, a replay after a rewind: each refused."""
    s, w = lab.server, lab.server.work
    head = lab.agent_commit()
    assert lab.approve(lab.request(lab.rejected_write()))[1].ok
    assert refused(lab.push("HEAD:refs/heads/other"), "GATE-FROZEN-PATH")
    lab.agent_commit("ci/other.yml", "x\n")
    out = lab.push("main")
    assert refused(out, "GATE-FROZEN-PATH") and "ci/other.yml" in out.output, out.output
    git(w.path, "reset", "-q", "--hard", head)
    git(w.path, "commit", "-q", "--amend", "-m", "agent writes ci/deploy.yml (rebased)", identity=AGENT)
    assert refused(lab.push("main"), "GATE-FROZEN-PATH")
    git(w.path, "reset", "-q", "--hard", head)
    assert lab.push("main").ok  # the approved update itself, once ...
    assert lab.push(f"+{lab.base}:main", who=ADMIN).ok  # ... and not again after an admin rewinds the ref
    out = lab.push("main")
    assert refused(out, "GATE-APPROVAL-USED") and refused(out, "GATE-FROZEN-PATH"), out.output
    assert s.ref("refs/heads/main") == lab.base


def test_an_approval_covers_only_its_paths(lab: Approvals) -> None:
    w = lab.server.work
    w.write("ci/a.yml", "a\n")
    w.write("ci/b.yml", "b\n")
    w.commit("agent writes two", identity=AGENT)
    req = lab.request(lab.rejected_write())
    assert set(req.paths) == {"ci/a.yml", "ci/b.yml"}
    assert lab.approve(approve.Request(req.repository_id, req.ref, req.old, req.new, ("ci/a.yml",), "alice",
                                       3600))[1].ok
    before = lab.server.refs()
    out = lab.push("main")
    assert refused(out, "GATE-FROZEN-PATH") and "path=ci/b.yml" in out.output and "path=ci/a.yml" not in out.output
    assert lab.server.refs() == before  # a rejected push spends nothing


@pytest.mark.parametrize("refspecs", [("main", "HEAD:refs/heads/other"), ("HEAD:refs/heads/other", "main")],
                         ids=["approved-first", "approved-second"])
def test_the_approval_does_not_ride_along_to_another_ref_of_the_same_push(lab: Approvals,
                                                                          refspecs: tuple[str, str]) -> None:
    lab.agent_commit()
    assert lab.approve(lab.request(lab.rejected_write()))[1].ok
    before = lab.server.refs()
    out = lab.push(*refspecs)
    assert refused(out, "GATE-FROZEN-PATH") and "ref=refs/heads/other" in out.output, out.output
    assert lab.server.refs() == before  # nothing landed and the approval is not spent
    assert lab.push("main").ok  # alone, the approved update passes


def test_a_ref_outside_the_rules_scope_rides_along_freely(lab: Approvals) -> None:
    lab.server.set_policy(POLICY.replace('pushers = ["agent-*"]\n', 'pushers = ["agent-*"]\nrefs = ["refs/heads/main"]\n'))
    head = lab.agent_commit()
    assert lab.approve(lab.request(lab.rejected_write()))[1].ok
    out = lab.push("main", f"{head}:refs/heads/scratch")
    assert out.ok, out.output
    assert lab.server.ref("refs/heads/scratch") == head


def test_a_key_of_another_purpose_never_serves(lab: Approvals) -> None:
    """Sealed with the runner's receipt key (where agents run), forced to the approval purpose."""
    from dataclasses import replace

    lab.agent_commit()
    req = lab.request(lab.rejected_write())
    lab.keys["forced"] = replace(lab.keys["runner"], purpose="approval")
    before = lab.server.refs()
    _ref, out = lab.approve(req, key="forced")
    assert refused(out, "GATE-SEAL-KEY-PURPOSE") and lab.server.refs() == before, out.output


def test_an_approval_whose_key_is_revoked_since_never_serves(lab: Approvals) -> None:
    lab.agent_commit()
    assert lab.approve(lab.request(lab.rejected_write()))[1].ok
    start = lab.keyring.index('id = "approval"')
    lab.server.set_keyring(lab.keyring[:start] + lab.keyring[start:].replace("revoked = false", "revoked = true", 1))
    out = lab.push("main")
    assert refused(out, "GATE-SEAL-KEY-REVOKED") and refused(out, "GATE-FROZEN-PATH"), out.output


@pytest.mark.parametrize("who", ["agent-7", "bob", "admin"])
def test_only_an_approver_pushes_an_approval(lab: Approvals, who: str) -> None:
    lab.agent_commit()
    before = lab.server.refs()
    ref, out = lab.approve(lab.request(lab.rejected_write()), who={"REMOTE_USER": who})
    assert refused(out, "GATE-APPROVAL-APPROVER") and lab.server.refs() == before, out.output
    assert lab.server.ref(ref) is None


def test_an_approval_ref_is_never_rewritten_and_the_uses_are_the_gates(lab: Approvals) -> None:
    lab.agent_commit()
    ref, out = lab.approve(lab.request(lab.rejected_write()), who={"REMOTE_USER": "release-bot"})
    assert out.ok, out.output  # release-* are approvers
    before = lab.server.refs()
    assert refused(lab.push(f"+{lab.base}:{ref}", who=ALICE), "GATE-APPROVAL-REF")
    assert refused(lab.push(f":{ref}", who=ALICE), "GATE-APPROVAL-REF")
    assert refused(lab.push(f"{ref}:{ref.replace('approvals/', 'approval-uses/')}", who=ADMIN), "GATE-APPROVAL-REF")
    assert lab.server.refs() == before


def test_an_expired_approval_is_refused_when_pushed_and_serves_nothing(lab: Approvals) -> None:
    lab.agent_commit()
    before = lab.server.refs()
    _ref, out = lab.approve(lab.request(lab.rejected_write(), lifetime=60), at=now() - 3600)
    assert refused(out, "GATE-APPROVAL-EXPIRED") and lab.server.refs() == before, out.output
    assert refused(lab.push("main"), "GATE-FROZEN-PATH")


def test_an_approval_that_expires_before_it_is_used_serves_nothing(lab: Approvals) -> None:
    """Expiry at the time of use: the agent's push judged at a clock after the approval's end."""
    lab.agent_commit()
    assert lab.approve(lab.request(lab.rejected_write(), lifetime=60))[1].ok
    from gatecore.git.refs import parse_pre_receive

    old = lab.server.ref("refs/heads/main")
    update = parse_pre_receive(f"{old} {lab.server.resolve('main')} refs/heads/main\n".encode())
    late = lab.server.decide(update, "agent-7", at=now() + 3600)
    assert not late.ok and "GATE-FROZEN-PATH" in late.codes, late.output
    assert lab.server.decide(update, "agent-7").ok  # the same push now


def test_a_spent_approval_cannot_be_revived(lab: Approvals) -> None:
    """Nobody deletes a use record; an approval deleted and made again for the same update is spent."""
    lab.agent_commit()
    req = lab.request(lab.rejected_write())
    ref, out = lab.approve(req)
    assert out.ok and lab.push("main").ok
    uses = ref.replace("/approvals/", "/approval-uses/")
    before = lab.server.refs()
    for who in (ADMIN, ALICE, AGENT_PUSH):
        assert refused(lab.push(f":{uses}", who=who), "GATE-APPROVAL-REF")
    assert lab.server.refs() == before
    assert lab.push(f":{ref}", who=ADMIN).ok
    git(lab.server.work.path, "update-ref", "-d", ref)
    assert lab.push(f"+{lab.base}:main", who=ADMIN).ok
    assert lab.approve(req)[1].ok
    assert refused(lab.push("main"), "GATE-APPROVAL-USED")


@needs_ssh_keygen
@pytest.mark.parametrize("signer,listed,serves", [("alice", "alice", True), ("bob", "bob", False)],
                         ids=["the-approvers-key", "someone-elses-key"])
def test_an_ssh_signed_approval_serves_only_from_the_approvers_key(lab: Approvals, tmp_path: Path, signer: str,
                                                                   listed: str, serves: bool) -> None:
    key = tmp_path / f"{signer}_ssh"
    signers = tmp_path / "allowed_signers"
    signers.write_text(f'{listed} namespaces="git,gate-approval" {ssh_key(key)}\n')
    lab.server.allowed_signers = signers
    lab.agent_commit()
    _ref, out = lab.approve(lab.request(lab.rejected_write()), ssh=key)  # approver alice, signed by `signer`
    if serves:
        assert out.ok, out.output
        assert lab.push("main").ok
    else:
        assert refused(out, "GATE-APPROVAL-APPROVER"), out.output
        assert refused(lab.push("main"), "GATE-FROZEN-PATH")
