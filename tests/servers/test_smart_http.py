"""Smart HTTP through a real Apache and git-http-backend on 127.0.0.1 (docs/servers.md,
"Smart HTTP (Apache + git-http-backend)"): the repository and the gate's installation belong to
the web server's account (www-data) and are made by it; `/git/` asks for basic auth, so the hook
sees REMOTE_USER; `/anon/` does not, and its pushes are anonymous.
"""

from __future__ import annotations

import json
import pwd
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, WorkRepo, git
from support.server import POLICY, settle
from support.verdicts import refused
from support.webserver import WEB_ACCOUNT, Apache, HostedArea, apache, as_account, gate_as, missing_for_servers

USERS = {"alice": "alice-secret", "agent-1": "agent-secret"}
OPEN_POLICY = POLICY + '[pushers]\nanonymous = "unrestricted"\n'


@dataclass
class Site:
    web: Apache
    projects: Path

    def bare(self, name: str = "server.git") -> Path:
        return self.projects / name

    def url(self, who: str | None, name: str = "server.git") -> str:
        return self.web.url(name, who, USERS[who] if who else None)

    def audit(self, name: str = "server.git", event: str = "decision") -> list[dict[str, object]]:
        """The audit log's lines of one event (post-receive's "landed" lines are written in the
        background: wait for them first)."""
        settle(self.bare(name))
        lines = [json.loads(line) for line in (self.bare(name) / "gate" / "audit.log").read_text().splitlines()]
        return [d for d in lines if d.get("event") == event]

    def refs(self, name: str = "server.git") -> str:
        return as_account(WEB_ACCOUNT, "git", "-C", str(self.bare(name)), "for-each-ref").stdout


def hosted_repository(projects: Path, name: str, policy: Path) -> Path:
    """What the docs say to do, as the web server's account: a bare repository that takes
    anonymous pushes (`http.receivepack`), with the gate installed."""
    bare = projects / name
    as_account(WEB_ACCOUNT, "git", "init", "-q", "--bare", "-b", "main", str(bare))
    as_account(WEB_ACCOUNT, "git", "-C", str(bare), "config", "http.receivepack", "true")
    gate_as(WEB_ACCOUNT, "server", "install", str(bare), "--policy", str(policy), "--repository-id", "demo/repo")
    return bare


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    reason = missing_for_servers("apache")
    if reason:
        pytest.skip(reason)
    area = HostedArea("gate-http-")
    try:
        projects = area.owned_dir("projects", WEB_ACCOUNT)
        (area.path / "policy.toml").write_text(POLICY)
        (area.path / "open-policy.toml").write_text(OPEN_POLICY)
        hosted_repository(projects, "server.git", area.path / "policy.toml")
        hosted_repository(projects, "open.git", area.path / "open-policy.toml")
        with apache(area.path / "apache", projects, USERS) as web:
            s = Site(web, projects)
            for name in ("server.git", "open.git"):  # a human's base: README, ci/deploy.yml, src/app.py
                w = WorkRepo(tmp_path_factory.mktemp("seed"))
                w.write("README", "hello\n")
                w.write("ci/deploy.yml", "deploy: true\n")
                w.write("src/app.py", "print('hi')\n")
                w.commit("base", identity=HUMAN)
                out = w.git("push", s.url("alice", name), "main", check=False)
                assert out.returncode == 0, out.stderr + web.error_log()
            yield s
    finally:
        area.close()


def clone(site: Site, tmp_path: Path, name: str = "server.git") -> WorkRepo:
    w = WorkRepo(tmp_path / "work")
    w.git("fetch", "-q", site.url(None, name), "main")
    w.git("reset", "-q", "--hard", "FETCH_HEAD")
    return w


def push(w: WorkRepo, url: str, *refspecs: str) -> subprocess.CompletedProcess[str]:
    return git(w.path, "push", "--porcelain", url, *refspecs, check=False)


def test_installed_by_the_web_servers_account(site: Site) -> None:
    owner = pwd.getpwnam(WEB_ACCOUNT).pw_uid
    for path in (site.bare(), site.bare() / "hooks" / "pre-receive", site.bare() / "gate",
                 site.bare() / "gate" / "policy.toml", site.bare() / "gate" / "audit.log"):
        assert path.stat().st_uid == owner, path


def test_doctor_as_the_web_servers_account_reports_ok(site: Site) -> None:
    out = gate_as(WEB_ACCOUNT, "server", "doctor", str(site.bare()), check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAIL" not in out.stdout and "refused the probe" in out.stdout


def test_an_authenticated_human_writes_a_frozen_path(site: Site, tmp_path: Path) -> None:
    w = clone(site, tmp_path)
    w.write("ci/deploy.yml", "deploy: alice\n")
    head = w.commit("human change", identity=HUMAN)
    out = push(w, site.url("alice"), "HEAD:refs/heads/alice-ci")
    assert out.returncode == 0, out.stderr
    assert f"{head} commit\trefs/heads/alice-ci" in site.refs()
    last = site.audit()[-1]
    assert (last["pusher"], last["pusher_source"], last["decision"]) == ("alice", "REMOTE_USER", "accept")
    assert (last["transport"], last["client_address"], last["platform"]) == ("http", "127.0.0.1", "git")


def test_an_agent_account_writing_a_frozen_path_is_rejected(site: Site, tmp_path: Path) -> None:
    """agent-1 authenticates; the commit says it is a human's: the pusher rule still applies."""
    w = clone(site, tmp_path)
    w.write("ci/deploy.yml", "deploy: agent\n")
    w.commit("agent change", identity=HUMAN)
    before = site.refs()
    out = push(w, site.url("agent-1"), "HEAD:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH"), out
    assert "identity=pusher:agent-1" in out.stderr
    assert site.refs() == before
    last = site.audit()[-1]
    assert (last["pusher"], last["pusher_source"], last["decision"]) == ("agent-1", "REMOTE_USER", "reject")
    assert last["client_address"] == "127.0.0.1" and last["codes"] == ["GATE-FROZEN-PATH"]


def test_an_anonymous_push_writing_a_frozen_path_is_rejected(site: Site, tmp_path: Path) -> None:
    w = clone(site, tmp_path)
    w.write("ci/deploy.yml", "deploy: anyone\n")
    w.commit("human change", identity=HUMAN)
    before = site.refs()
    out = push(w, site.url(None), "HEAD:refs/heads/main")
    assert refused(out, "GATE-FROZEN-PATH"), out
    assert "identity=pusher:anonymous" in out.stderr
    assert site.refs() == before
    last = site.audit()[-1]
    assert (last["pusher"], last["pusher_source"], last["decision"]) == ("anonymous", "anonymous", "reject")
    assert (last["transport"], last["client_address"]) == ("http", "127.0.0.1")


def test_an_anonymous_push_elsewhere_is_accepted(site: Site, tmp_path: Path) -> None:
    w = clone(site, tmp_path)
    w.write("src/app.py", "print('anyone')\n")
    head = w.commit("code", identity=AGENT)
    out = push(w, site.url(None), "HEAD:refs/heads/anon-src")
    assert out.returncode == 0, out.stderr
    assert f"{head} commit\trefs/heads/anon-src" in site.refs()
    assert site.audit()[-1]["pusher"] == "anonymous"


def test_an_anonymous_push_may_not_delete(site: Site, tmp_path: Path) -> None:
    """refs.delete = "deny-restricted" (the default): an anonymous pusher is restricted."""
    w = clone(site, tmp_path)
    assert push(w, site.url("alice"), "HEAD:refs/heads/doomed").returncode == 0
    out = push(w, site.url(None), ":refs/heads/doomed")
    assert refused(out, "GATE-REF-DELETE"), out
    assert push(w, site.url("alice"), ":refs/heads/doomed").returncode == 0


def test_anonymous_unrestricted_lets_an_anonymous_human_commit_through(site: Site, tmp_path: Path) -> None:
    """`[pushers] anonymous = "unrestricted"`: the commit's own identities still count."""
    w = clone(site, tmp_path, "open.git")
    w.write("ci/deploy.yml", "deploy: open\n")
    w.commit("human change", identity=HUMAN)
    out = push(w, site.url(None, "open.git"), "HEAD:refs/heads/main")
    assert out.returncode == 0, out.stderr
    w.write("ci/deploy.yml", "deploy: agent\n")
    w.commit("agent change", identity=AGENT)
    assert refused(push(w, site.url(None, "open.git"), "HEAD:refs/heads/main"), "GATE-FROZEN-PATH")
    assert site.audit("open.git")[-1]["pusher"] == "anonymous"
