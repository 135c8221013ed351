"""The pre-push stage through the real pre-commit framework and as git's own pre-push hook: an
agent's frozen commit is stopped before the server, every ref of a push is checked, the client
agrees with the server (frozen files, force pushes, signatures, root commits, refs pre-commit
drops); unreadable objects and remote values not fetched fail closed; try-repo on this checkout."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, WorkRepo, git, git_env
from support.keygen import needs_ssh_keygen, ssh_key
from support.precommit import (
    CLIENT_POLICY,
    PRE_COMMIT,
    HookRepo,
    Verdict,
    client_verdict,
    commit,
    git_hook_verdict,
    install_as_git_hook,
    install_client,
    pc_env,
    push_both,
    server_verdict,
    text,
)
from support.server import Server


def test_try_repo_pre_push_stage_checks_the_from_to_range(tmp_path: Path, hook_repo: HookRepo) -> None:
    w = WorkRepo(tmp_path / "work")
    w.write(".gate/policy.toml", CLIENT_POLICY)
    w.write("ci/deploy.yml", "a\n")
    base = w.commit("base", identity=HUMAN)
    w.write("src/ok.py", "1\n")
    w.commit("agent, not frozen", identity=AGENT)
    w.write("ci/deploy.yml", "b\n")
    head = w.commit("agent, frozen", identity=AGENT)
    cmd = [*PRE_COMMIT, "try-repo", str(hook_repo.path), "gate-frozen-files-push", "--ref", hook_repo.rev,
           "--hook-stage", "pre-push", "--from-ref", base, "--to-ref", head,
           "--remote-branch", "refs/heads/main", "--local-branch", "refs/heads/main",
           "--remote-name", "origin", "--remote-url", "file:///nowhere.git"]
    out = subprocess.run(cmd, cwd=w.path, env=git_env(HUMAN, PRE_COMMIT_COLOR="never"),
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"GATE-FROZEN-PATH ref=refs/heads/main commit={head[:12]} " in out.stdout
    assert out.stdout.count("GATE-FROZEN-PATH ref=") == 1  # the base commit is the remote's: not checked


def test_git_push_of_an_agents_frozen_commit_is_stopped_before_the_server(gated: Server, pc_home: Path) -> None:
    w = gated.work
    before = gated.refs()
    w.write("ci/deploy.yml", "x\n")
    git(w.path, "add", "-A")
    assert commit(w, "agent", AGENT, pc_env(pc_home), "--no-verify").returncode == 0
    n = len(gated.audit())
    out = gated.push("main", url="origin", pusher_env=pc_env(pc_home))
    assert out.returncode != 0
    assert len(gated.audit()) == n and gated.refs() == before  # the server never saw it
    assert "gate frozen files (commits being pushed)" in text(out)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    assert f"commit={w.head()[:12]}" in text(out)


def test_every_ref_of_a_push_is_checked_not_only_the_first(gated: Server, hook_repo: HookRepo,
                                                            pc_home: Path) -> None:
    w = gated.work
    env = pc_env(pc_home)
    git(w.path, "checkout", "-q", "-b", "side")
    w.write("ci/side.yml", "x\n")
    git(w.path, "add", "-A")
    assert commit(w, "agent on side", AGENT, env, "--no-verify").returncode == 0
    git(w.path, "checkout", "-q", "main")
    w.write("src/app.py", "print('human')\n")
    git(w.path, "add", "-A")
    assert commit(w, "human on main", HUMAN, env).returncode == 0
    for order in (("main", "side"), ("side", "main")):
        client, server, out = push_both(gated, *order, env=env)
        assert client == server == Verdict(1, frozenset({"GATE-FROZEN-PATH"})), text(out)
        assert "ref=refs/heads/side" in text(out)
    # Only the named ref, when asked to.
    install_client(w, hook_repo, pc_home, push_args=("--named-ref-only",))
    out = gated.push("main", url="origin", pusher_env=env)
    assert out.returncode == 0, text(out)


def test_force_push_with_new_commits_is_refused_when_policy_denies_it(tmp_path: Path, hook_repo: HookRepo,
                                                                       pc_home: Path) -> None:
    policy = CLIENT_POLICY + '[refs]\nforce = "deny"\n'
    s = Server(tmp_path, policy=policy)
    w = s.work
    w.write("src/app.py", "1\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home, policy=policy)
    w.write("src/app.py", "2\n")
    w.commit("two", identity=HUMAN)
    env = pc_env(pc_home)
    assert s.push("main", url="origin", pusher_env=env).returncode == 0
    git(w.path, "reset", "-q", "--hard", "HEAD~1")
    w.write("src/app.py", "3\n")
    git(w.path, "add", "-A")
    assert commit(w, "rewritten", HUMAN, env).returncode == 0
    client, server, _ = push_both(s, "+main", env=env)
    assert client == server == Verdict(1, frozenset({"GATE-REF-FORCE"}))


def test_unreadable_objects_fail_closed_with_exit_3(gated: Server, pc_home: Path) -> None:
    w = gated.work
    w.write("ci/deploy.yml", "x\n")
    git(w.path, "add", "-A")
    assert commit(w, "agent", AGENT, pc_env(pc_home), "--no-verify").returncode == 0
    ci_tree = git(w.path, "rev-parse", "HEAD:ci").stdout.strip()
    (w.path / ".git" / "objects" / ci_tree[:2] / ci_tree[2:]).unlink()  # what does ci/ hold? nobody knows
    n = len(gated.audit())
    out = gated.push("main", url="origin", pusher_env=pc_env(pc_home))
    assert out.returncode != 0 and len(gated.audit()) == n  # refused on the client (pre-commit fails first)
    line = f"refs/heads/main {w.head()} refs/heads/main {gated.ref('refs/heads/main')}\n"
    direct = subprocess.run([sys.executable, "-m", "hooks.frozen_push", "origin", gated.url], input=line,
                            cwd=w.path, env=git_env(HUMAN), capture_output=True, text=True)
    assert direct.returncode == 3, direct.stderr
    assert "gate: push rejected: GATE-GIT-UNREADABLE" in direct.stderr and ci_tree in direct.stderr


def test_a_root_commit_push_is_checked_whole(tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> None:
    """pre-commit passes no from/to refs when the push contains a root commit."""
    s = Server(tmp_path, policy=CLIENT_POLICY)
    w = s.work
    w.write("README", "x\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home)
    w.write("ci/deploy.yml", "x\n")
    git(w.path, "add", "-A")
    assert commit(w, "agent", AGENT, pc_env(pc_home), "--no-verify").returncode == 0
    client, server, _ = push_both(s, "main", env=pc_env(pc_home))
    assert client == server == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))


SIGNED_POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", ".gate/**", ".pre-commit-config.yaml"]
signers = ["agent-*"]
[signatures]
require = ["refs/heads/main"]
"""


@needs_ssh_keygen
def test_the_pre_push_hook_reads_gpg_ssh_allowedSignersFile_and_agrees_with_the_server(
        tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> None:
    """SSH-signed commits (gpg.format=ssh) through pre-commit's pre-push stage: the agent's key
    restricts (`identity=signer:agent-7`, whatever the email says), an unsigned commit into the
    `require` scope is GATE-SIG-MISSING, a human's key passes; the server says the same."""
    keys = tmp_path / "keys"
    keys.mkdir()
    lines = []
    for name, principal in (("human", "hana@example.com"), ("agent", "agent-7")):
        lines.append(f'{principal} namespaces="git" {ssh_key(keys / name, name)}\n')
    signers = keys / "allowed_signers"
    signers.write_text("".join(lines))
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=SIGNED_POLICY, extra=("--allowed-signers", str(signers)))
    w = s.work
    for name, value in (("gpg.format", "ssh"), ("user.signingkey", str(keys / "human")), ("commit.gpgsign", "true")):
        git(w.path, "config", name, value)  # every commit the human's unless a test says otherwise
    w.write("README", "hello\n")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home, policy=SIGNED_POLICY)
    env = pc_env(pc_home)
    out = s.push("main", url="origin", pusher_env=env)
    assert out.returncode != 0 and not s.refs()  # the client cannot verify: no keys named
    assert client_verdict(out) == Verdict(2, frozenset({"GATE-CONFIG-SIGNERS"})), text(out)
    git(w.path, "config", "gpg.ssh.allowedSignersFile", str(signers))
    out = s.push("main", url="origin", pusher_env=env)
    assert out.returncode == 0, text(out)
    base = w.head()

    # Signed by the agent's key, with a human's email: restricted by the signature.
    w.write("ci/deploy.yml", "deploy: agent\n")
    git(w.path, "add", "-A")
    git(w.path, "-c", f"user.signingkey={keys / 'agent'}", "commit", "-q", "-m", "agent edits ci", env=env)
    assert git(w.path, "verify-commit", "HEAD", check=False).returncode == 0  # git agrees it is a good signature
    client, server, out = push_both(s, "main", env=env)
    assert client == server == Verdict(1, frozenset({"GATE-FROZEN-PATH"})), text(out)
    assert "gate frozen files (commits being pushed)" in text(out)
    assert f"commit={w.head()[:12]} identity=signer:agent-7 path=ci/deploy.yml" in text(out)

    # Unsigned, into the scope signatures.require names.
    git(w.path, "reset", "-q", "--hard", base)
    w.write("src/app.py", "print('unsigned')\n")
    git(w.path, "add", "-A")
    git(w.path, "commit", "-q", "--no-gpg-sign", "-m", "unsigned", env=env)
    client, server, out = push_both(s, "main", env=env)
    assert client == server == Verdict(1, frozenset({"GATE-SIG-MISSING"})), text(out)
    assert f"commit={w.head()[:12]}" in text(out)

    # Signed by the human's key: the same frozen path passes both.
    git(w.path, "reset", "-q", "--hard", base)
    w.write("ci/deploy.yml", "deploy: human\n")
    git(w.path, "add", "-A")
    git(w.path, "commit", "-q", "-m", "human edits ci", env=env)
    n = len(s.audit())
    out = s.push("main", url="origin", pusher_env=env)
    assert out.returncode == 0, text(out)
    assert re.search(r"^gate frozen files \(commits being pushed\)\.+Passed$", text(out), re.M), text(out)
    assert len(s.audit()) == n + 1 and s.audit()[-1]["decision"] == "accept"
    assert s.ref("refs/heads/main") == w.head()


#: One scenario of the push corpus through git's own hook and a real push; every scenario (a rewind,
#: a deletion, two refs, a tag) runs on git's input in `tests/engine/test_client_parity.py`.
PUSH_CORPUS = ("two_refs_second_bad",)


@pytest.mark.parametrize("scenario", PUSH_CORPUS)
def test_parity_push_refs_as_git_pre_push_hook(tmp_path: Path, scenario: str) -> None:
    s = Server(tmp_path, policy=CLIENT_POLICY)
    w = s.work
    w.write(".gate/policy.toml", CLIENT_POLICY)
    w.write("ci/deploy.yml", "a\n")
    w.commit("base", identity=HUMAN)
    assert s.push("main", url="origin").returncode == 0
    install_as_git_hook(w)
    env: dict[str, str] = {}
    refspecs: tuple[str, ...]
    if scenario == "rewind_discards_frozen":  # no new commits: pre-commit would not even run
        w.write("ci/deploy.yml", "b\n")
        w.commit("human ci", identity=HUMAN)
        assert s.push("main", url="origin").returncode == 0
        env = {"GATE_PUSHER": "agent-1", "REMOTE_USER": "agent-1"}
        refspecs = ("+main~1:main",)
        expected = {"GATE-FROZEN-REF"}
    elif scenario == "delete_by_restricted_pusher":  # pre-commit drops deletions
        git(w.path, "branch", "old")
        assert s.push("old", url="origin").returncode == 0
        env = {"GATE_PUSHER": "agent-1", "REMOTE_USER": "agent-1"}
        refspecs = (":refs/heads/old",)
        expected = {"GATE-REF-DELETE"}
    elif scenario == "two_refs_second_bad":
        git(w.path, "checkout", "-q", "-b", "side")
        w.write("ci/x.yml", "x\n")
        w.commit("agent", identity=AGENT)
        git(w.path, "checkout", "-q", "main")
        w.write("README", "y\n")
        w.commit("human", identity=HUMAN)
        refspecs = ("main", "side")
        expected = {"GATE-FROZEN-PATH"}
    else:
        w.write("ci/deploy.yml", "tagged\n")
        agent = w.commit("agent", identity=AGENT)
        git(w.path, "reset", "-q", "--hard", "HEAD~1")
        git(w.path, "tag", "-a", "-m", "t", "v1", agent, identity=HUMAN)
        refspecs = ("refs/tags/v1",)
        expected = {"GATE-FROZEN-PATH"}
    seen = len(s.audit())
    out = s.push(*refspecs, pusher_env=env, url="origin")
    assert out.returncode != 0
    assert len(s.audit()) == seen, out.stderr  # stopped on the client
    client = git_hook_verdict(out)
    assert "git's pre-push input" in out.stderr
    s.push(*refspecs, pusher_env=env, url="origin", extra=("--no-verify",))
    assert client == server_verdict(s) == Verdict(1, frozenset(expected)), out.stderr


def test_git_pre_push_hook_with_a_remote_value_not_fetched_fails_closed(tmp_path: Path) -> None:
    s = Server(tmp_path, policy=CLIENT_POLICY)
    w = s.work
    w.write(".gate/policy.toml", CLIENT_POLICY)
    w.commit("base", identity=HUMAN)
    missing = "1" * 40
    line = f"refs/heads/main {w.head()} refs/heads/main {missing}\n"
    out = subprocess.run([sys.executable, "-m", "hooks.frozen_push", "origin", s.url], input=line, cwd=w.path,
                         env=git_env(HUMAN), capture_output=True, text=True)
    assert out.returncode == 3
    assert "GATE-GIT-UNREADABLE" in out.stderr and "git fetch origin" in out.stderr

