"""`git daemon` on 127.0.0.1, run as its own account (docs/servers.md, "git daemon"): the
repository and the gate's installation belong to that account and are made by it. git daemon
authenticates nobody, so every push through it is anonymous: restricted by default, whatever
the commits say about their authors.
"""

from __future__ import annotations

import json
import pwd
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.gitutil import HUMAN, WorkRepo, git
from support.keygen import needs_ssh_keygen, ssh_key
from support.net import git_daemon
from support.server import POLICY, settle
from support.verdicts import refused
from support.webserver import (
    DAEMON_ACCOUNT,
    HostedArea,
    as_account,
    ensure_system_account,
    gate_as,
    missing_for_servers,
)


@dataclass
class Daemon:
    url: str
    bare: Path
    area: Path

    def audit(self, event: str = "decision") -> list[dict[str, object]]:
        """The audit log's lines of one event (post-receive's "landed" lines are written in the
        background: wait for them first)."""
        settle(self.bare)
        lines = [json.loads(line) for line in (self.bare / "gate" / "audit.log").read_text().splitlines()]
        return [d for d in lines if d.get("event") == event]

    def refs(self) -> str:
        return as_account(DAEMON_ACCOUNT, "git", "-C", str(self.bare), "for-each-ref").stdout


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    reason = missing_for_servers("git-daemon")
    if reason:
        pytest.skip(reason)
    ensure_system_account(DAEMON_ACCOUNT)
    area = HostedArea("gate-daemon-")
    try:
        projects = area.owned_dir("projects", DAEMON_ACCOUNT)
        (area.path / "policy.toml").write_text(POLICY)
        bare = projects / "server.git"
        as_account(DAEMON_ACCOUNT, "git", "init", "-q", "--bare", "-b", "main", str(bare))
        gate_as(DAEMON_ACCOUNT, "server", "install", str(bare), "--platform", "git-daemon",
                "--policy", str(area.path / "policy.toml"), "--repository-id", "demo/repo")
        with git_daemon(projects, account=DAEMON_ACCOUNT) as url:
            yield Daemon(f"{url}/server.git", bare, area.path)
    finally:
        area.close()


def push(w: WorkRepo, url: str, *refspecs: str) -> subprocess.CompletedProcess[str]:
    return git(w.path, "push", "--porcelain", url, *refspecs, check=False)


def test_installed_and_doctored_as_the_daemons_account(daemon: Daemon) -> None:
    owner = pwd.getpwnam(DAEMON_ACCOUNT).pw_uid
    for path in (daemon.bare / "hooks" / "pre-receive", daemon.bare / "gate" / "config.json"):
        assert path.stat().st_uid == owner, path
    out = gate_as(DAEMON_ACCOUNT, "server", "doctor", str(daemon.bare), check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAIL" not in out.stdout


def test_a_frozen_write_is_rejected_even_with_a_humans_commit(daemon: Daemon, tmp_path: Path) -> None:
    w = WorkRepo(tmp_path / "work")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.commit("human", identity=HUMAN)
    before = daemon.refs()
    out = push(w, daemon.url, "HEAD:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stdout + out.stderr
    assert "identity=pusher:anonymous" in out.stderr
    assert daemon.refs() == before
    last = daemon.audit()[-1]
    assert (last["pusher"], last["pusher_source"], last["decision"]) == ("anonymous", "git-daemon", "reject")
    assert (last["transport"], last["client_address"]) == ("git-daemon", "127.0.0.1")


def test_a_push_elsewhere_is_accepted(daemon: Daemon, tmp_path: Path) -> None:
    w = WorkRepo(tmp_path / "work")
    w.write("src/app.py", "print('hi')\n")
    head = w.commit("human", identity=HUMAN)
    out = push(w, daemon.url, "HEAD:refs/heads/daemon-src")
    assert out.returncode == 0, out.stderr
    assert f"{head} commit\trefs/heads/daemon-src" in daemon.refs()
    last = daemon.audit()[-1]
    assert (last["pusher"], last["transport"], last["decision"], last["push_cert"]) == (
        "anonymous", "git-daemon", "accept", None)
    landed = daemon.audit("landed")[-1]
    assert (landed["pusher"], landed["transport"], landed["client_address"]) == ("anonymous", "git-daemon", "127.0.0.1")


@needs_ssh_keygen
def test_a_signed_push_puts_its_certificate_in_the_audit_line(daemon: Daemon, tmp_path: Path) -> None:
    """receive.certNonceSeed + `git push --signed` (an SSH key here): git verifies the certificate
    and the hook logs signer, key and status. It changes nobody's rights: still anonymous."""
    key = tmp_path / "alice-key"
    signers = daemon.area / "allowed_signers"
    signers.write_text(f"alice@example.com {ssh_key(key, 'alice')}\n")
    for name, value in (("receive.certNonceSeed", "test-seed"), ("gpg.ssh.allowedSignersFile", str(signers))):
        as_account(DAEMON_ACCOUNT, "git", "-C", str(daemon.bare), "config", name, value)
    try:
        w = WorkRepo(tmp_path / "work")
        w.write("src/signed.py", "print('signed')\n")
        w.commit("human", identity=HUMAN)
        out = git(w.path, "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "push", "--porcelain", "--signed",
                  daemon.url, "HEAD:refs/heads/daemon-signed", check=False)
        assert out.returncode == 0, out.stderr
        last = daemon.audit()[-1]
        cert = last["push_cert"]
        assert isinstance(cert, dict), last
        assert (cert["status"], cert["signer"], cert["nonce_status"]) == ("G", "alice@example.com", "OK"), cert
        assert str(cert["key"]).startswith("SHA256:") and len(str(cert["cert"])) == 40
        assert last["pusher"] == "anonymous"
        # The same certificate over a frozen path changes nothing: still refused.
        w.write("ci/deploy.yml", "signed\n")
        w.commit("human", identity=HUMAN)
        out = git(w.path, "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "push", "--porcelain", "--signed",
                  daemon.url, "HEAD:refs/heads/daemon-signed", check=False)
        assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    finally:
        for name in ("receive.certNonceSeed", "gpg.ssh.allowedSignersFile"):
            as_account(DAEMON_ACCOUNT, "git", "-C", str(daemon.bare), "config", "--unset", name, check=False)


def test_a_daemon_started_from_an_ssh_login_is_still_anonymous(daemon: Daemon, tmp_path: Path) -> None:
    """An admin who starts git daemon from an ssh session passes SSH_CONNECTION on to every hook.
    A repository installed with the plain `git` platform (the environment decides) still reads
    the daemon's REMOTE_ADDR first: the push is anonymous, not the daemon account's."""
    projects = daemon.bare.parent
    bare = projects / "auto.git"
    as_account(DAEMON_ACCOUNT, "git", "init", "-q", "--bare", "-b", "main", str(bare))
    gate_as(DAEMON_ACCOUNT, "server", "install", str(bare), "--platform", "git",
            "--policy", str(daemon.area / "policy.toml"), "--repository-id", "demo/auto")
    login = {"SSH_CONNECTION": "192.0.2.9 50000 192.0.2.1 22", "SSH_CLIENT": "192.0.2.9 50000 22"}
    w = WorkRepo(tmp_path / "work")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.commit("human", identity=HUMAN)
    with git_daemon(projects, login, account=DAEMON_ACCOUNT) as url:
        out = push(w, f"{url}/auto.git", "HEAD:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH") and "identity=pusher:anonymous" in out.stderr, out.stderr
    settle(bare)
    [last] = [d for d in map(json.loads, (bare / "gate" / "audit.log").read_text().splitlines())
              if d.get("event") == "decision"]
    assert (last["pusher"], last["transport"], last["client_address"]) == ("anonymous", "git-daemon", "127.0.0.1")
