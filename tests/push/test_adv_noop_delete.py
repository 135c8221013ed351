"""A deletion that states no old value: `<zero> <zero> <ref>` for a ref the server holds.

git's `receive-pack` deletes a ref whose stated old value it cannot read as an object (the
zero id among them) without comparing it with the ref's value ("warning: allowing deletion of
corrupt ref"): the ref is gone whatever it held. The gate must not take such a line for the
no-op it is when the ref does not exist (both ids zero: `RefUpdate.is_noop`), or a restricted
pusher deletes any ref unjudged: protected branches (`refs.delete`), the ledger, generation
claims, approval uses and review refs (trusted pushers only), and a deleted branch is then
created again at an older commit, which no rewind check sees (`GATE-FROZEN-REF` judges
non-fast-forward updates only). A hostile client speaks the protocol to the real
`git receive-pack` with the hook installed (`support.rawpush`)."""

from __future__ import annotations

from pathlib import Path

from support.gitutil import HUMAN, git
from support.lab import AGENT_PUSH, Lab
from support.rawpush import RawResult, raw_push
from support.server import seeded

from gatecore.git.refs import ATTEMPTS_PREFIX, generation_ref

ZERO = "0" * 40


def _noop_delete(work: Path, bare: Path, ref: str, env: dict[str, str]) -> RawResult:
    return raw_push(work, bare, [(ZERO, ZERO, ref)], env)


def test_a_restricted_pusher_cannot_delete_a_branch_by_stating_no_old_value(tmp_path: Path) -> None:
    server = seeded(tmp_path)
    assert server.push("main:refs/heads/release").returncode == 0
    # the ordinary deletion is refused (refs.delete = deny-restricted)
    assert server.push(":refs/heads/release", pusher_env={"REMOTE_USER": "agent-1"}).returncode != 0
    out = _noop_delete(server.work.path, server.bare, "refs/heads/release", {"REMOTE_USER": "agent-1"})
    assert not out.ok("refs/heads/release"), out.status
    assert server.ref("refs/heads/release") is not None
    assert server.audit()[-1]["decision"] == "reject"
    assert server.audit()[-1]["codes"] == ["GATE-REF-STALE"]
    # beside an update the gate accepts, in one push
    out = raw_push(server.work.path, server.bare, [(ZERO, server.work.head(), "refs/heads/topic"),
                                                   (ZERO, ZERO, "refs/heads/release")], {"REMOTE_USER": "agent-1"})
    assert not out.ok("refs/heads/release") and not out.ok("refs/heads/topic"), out.status
    assert server.ref("refs/heads/release") is not None
    # through a symbolic ref on the server, git deletes its target
    git(server.bare, "symbolic-ref", "refs/heads/alias", "refs/heads/release")
    out = _noop_delete(server.work.path, server.bare, "refs/heads/alias", {"REMOTE_USER": "agent-1"})
    assert not out.ok("refs/heads/alias"), out.status
    assert server.ref("refs/heads/release") is not None
    # a ref that does not exist: still the no-op it is
    assert _noop_delete(server.work.path, server.bare, "refs/heads/nope", {"REMOTE_USER": "agent-1"}).ok(
        "refs/heads/nope")


def test_an_agent_cannot_delete_the_ledger_or_a_generation_claim_by_stating_no_old_value(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "lab")
    attempt = lab.open(lab.fresh())
    state = lab.state(attempt)
    assert state is not None
    claim = generation_ref(state.workspace_generation)
    for ref in (ATTEMPTS_PREFIX + attempt, claim):
        assert lab.server.ref(ref) is not None
        out = _noop_delete(lab.work.path, lab.server.bare, ref, AGENT_PUSH)
        assert not out.ok(ref), (ref, out.status)
        assert lab.server.ref(ref) is not None, f"{ref} deleted by an agent"


def test_an_agent_cannot_rewind_a_branch_past_a_frozen_change_by_deleting_it_first(tmp_path: Path) -> None:
    server = seeded(tmp_path)
    w = server.work
    base = w.head()
    assert server.push(f"{base}:refs/tags/v1").returncode == 0  # a release, by a human
    w.write("ci/deploy.yml", "human hardening\n")
    w.commit("human hardens ci", identity=HUMAN)
    assert server.push("main").returncode == 0
    hardened = w.head()
    agent = {"REMOTE_USER": "agent-1"}
    # the rewind itself is refused (GATE-FROZEN-REF)
    assert server.push(f"+{base}:refs/heads/main", pusher_env=agent).returncode != 0
    # ... and must be in two steps too: delete main stating no old value, then create it at the old content
    _noop_delete(w.path, server.bare, "refs/heads/main", agent)
    if server.ref("refs/heads/main") is None:
        server.push(f"{base}:refs/heads/main", pusher_env=agent)
    assert server.ref("refs/heads/main") == hardened


def test_a_push_into_a_git_namespace_is_refused_whole(tmp_path: Path) -> None:
    """Under GIT_NAMESPACE receive-pack hands the hook the names the client sent and writes
    `refs/namespaces/<ns>/<name>`; the gate reads the repository's refs outside any namespace, so a
    namespaced ref's deletion stating no old value looked like the no-op it is for a missing ref.
    Every push into a namespace is refused, GATE-CONFIG-NAMESPACE, and nothing moves."""
    server = seeded(tmp_path)
    w = server.work
    into_ns = ("--receive-pack=env GIT_NAMESPACE=team git-receive-pack",)
    head = w.head()
    git(server.bare, "update-ref", "refs/namespaces/team/refs/heads/release", head)  # served there before the gate
    before = git(server.bare, "for-each-ref").stdout
    # an ordinary push, by a human
    out = server.push("main:refs/heads/topic", extra=into_ns)
    assert out.returncode != 0 and "GATE-CONFIG-NAMESPACE" in out.stderr, out.stderr
    # the namespaced ref deleted stating no old value, by an agent (no refs/heads/release outside the
    # namespace: before, the gate took the line for a no-op and git deleted the namespace's release)
    res = raw_push(w.path, server.bare, [(ZERO, ZERO, "refs/heads/release")], {"REMOTE_USER": "agent-1",
                                                                                "GIT_NAMESPACE": "team"})
    assert not res.ok("refs/heads/release"), res.status
    assert git(server.bare, "for-each-ref").stdout == before
    assert [a["codes"] for a in server.audit()[-2:]] == [["GATE-CONFIG-NAMESPACE"]] * 2
    # without the namespace, the same human push is accepted
    assert server.push("main:refs/heads/topic").returncode == 0
