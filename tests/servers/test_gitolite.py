"""gitolite3 over sshd on 127.0.0.1: the gate as a repo-specific hook, installed and checked as the
hosting account, still enforcing after `gitolite setup --hooks-only` and `gitolite compile`, and
doctor failing whenever the gate is not what runs (docs/servers.md, gitolite).

One gitolite for the module (setting it up costs seconds); each test leaves it enforcing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.gitolite import SSHD, Gitolite
from support.gitutil import AGENT, HUMAN, WorkRepo
from support.hosting import require, require_root
from support.server import settle, wait_for_landed
from support.verdicts import codes_of

POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
"""

CONF = """\
repo gitolite-admin
    RW+     =   admin

@gated = project other
repo @gated
    option hook.pre-receive = gate
    option hook.post-receive = gate-landed

repo project other
    RW+     =   alice agent-1
"""



@pytest.fixture(scope="module")
def gl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gitolite]:
    require_root()
    require("gitolite", SSHD, "ssh", "ssh-keygen", "runuser")
    g = Gitolite(tmp_path_factory.mktemp("gitolite"))
    try:
        # The steps of docs/servers.md: the repository first, the gate in it, then gitolite.conf.
        g.run("git", "init", "-q", "--bare", "-b", "main", str(g.repo("project")))
        policy = g.home / "policy.toml"
        policy.write_text(POLICY)
        out = g.gate("server", "install", str(g.repo("project")), "--platform", "gitolite", "--policy", str(policy))
        assert out.returncode == 0, out.stdout + out.stderr
        assert "NOT ACTIVE YET" in out.stdout and "option hook.pre-receive = gate" in out.stdout
        doctor = g.gate("server", "doctor", str(g.repo("project")))
        assert doctor.returncode == 1 and "the gate does not run" in doctor.stdout, doctor.stdout
        g.configure(CONF)
        yield g
    finally:
        g.close()
        shutil.rmtree(g.home, ignore_errors=True)


@pytest.fixture
def work(tmp_path: Path, gl: Gitolite) -> WorkRepo:
    w = WorkRepo(tmp_path / "work")
    head = gl.run("git", "--git-dir", str(gl.repo("project")), "rev-parse", "-q", "--verify", "main",
                  check=False).stdout.strip()
    if head:
        w.git("fetch", "-q", gl.url("project"), "main", env=gl.ssh_env("alice"))
        w.git("reset", "-q", "--hard", "FETCH_HEAD")
    return w


def _commit(work: WorkRepo, path: str, identity: tuple[str, str]) -> None:
    work.write(path, f"{path} {work.git('rev-parse', '-q', '--verify', 'HEAD', check=False).stdout}\n")
    work.git("add", "-A")
    work.git("commit", "-q", "-m", f"change {path}", identity=identity)


def _audit(gl: Gitolite, event: str = "decision") -> list[dict[str, object]]:
    settle(gl.repo("project"))
    path = gl.repo("project") / "gate" / "audit.log"
    return [d for d in map(json.loads, path.read_text().splitlines()) if d.get("event") == event]


def _assert_enforcing(gl: Gitolite, work: WorkRepo) -> None:
    """A human's frozen write is accepted (and logged as landed); an agent's is rejected."""
    _commit(work, "ci/deploy.yml", HUMAN)
    seen = len(_audit(gl, "landed"))
    out = gl.push(work.path, "alice", "HEAD:refs/heads/main")
    assert out.returncode == 0, out.stderr
    assert _audit(gl)[-1]["pusher"] == "alice" and _audit(gl)[-1]["decision"] == "accept"
    landed = wait_for_landed(gl.repo("project") / "gate" / "audit.log", seen + 1)[-1]
    new = work.git("rev-parse", "HEAD").stdout.strip()
    assert landed["pusher"] == "alice" and landed["refs"] == [  # what landed, as git updated it
        {"ref": "refs/heads/main", "old": landed["refs"][0]["old"], "new": new}]  # type: ignore[index]
    _commit(work, "ci/deploy.yml", HUMAN)
    out = gl.push(work.path, "agent-1", "HEAD:refs/heads/main")
    assert out.returncode != 0 and "GATE-FROZEN-PATH" in codes_of(out), out.stderr
    last = _audit(gl)[-1]
    assert last["pusher"] == "agent-1" and last["pusher_source"] == "GL_USER" and last["platform"] == "gitolite"
    work.git("reset", "-q", "--hard", "HEAD~1")  # the rejected commit never landed


def test_installed_gate_enforces_and_doctor_agrees(gl: Gitolite, work: WorkRepo) -> None:
    out = gl.gate("server", "doctor", str(gl.repo("project")))
    assert out.returncode == 0, out.stdout
    assert "gitolite runs the gate" in out.stdout and "probe push: the hook ran" in out.stdout
    _assert_enforcing(gl, work)
    # gitolite's own access rules still apply after the gate: an agent's commit outside the
    # frozen paths is accepted.
    _commit(work, "src/app.py", AGENT)
    assert gl.push(work.path, "agent-1", "HEAD:refs/heads/main").returncode == 0


def test_gate_survives_setup_hooks_only_and_compile(gl: Gitolite, work: WorkRepo) -> None:
    gl.run("gitolite", "setup", "--hooks-only")
    _assert_enforcing(gl, work)
    gl.run("gitolite", "compile")
    gl.run("gitolite", "trigger", "POST_COMPILE")
    _assert_enforcing(gl, work)
    gl.run("gitolite", "setup")
    _assert_enforcing(gl, work)
    assert gl.gate("server", "doctor", str(gl.repo("project"))).returncode == 0


def test_doctor_fails_when_gitolite_replaces_the_gate(gl: Gitolite, work: WorkRepo) -> None:
    """A common pre-receive in LOCAL_CODE, then `gitolite setup --hooks-only`: every repository's
    hooks/pre-receive is now that hook, and the gate no longer runs. Doctor must say so."""
    common = gl.home / "local" / "hooks" / "common"
    gl.run("mkdir", "-p", str(common))
    gl.run("sh", "-c", f"printf '#!/bin/sh\\nexit 0\\n' > {common}/pre-receive && chmod 755 {common}/pre-receive")
    try:
        gl.run("gitolite", "setup", "--hooks-only")
        out = gl.gate("server", "doctor", str(gl.repo("project")))
        assert out.returncode == 1 and "the gate does not run" in out.stdout, out.stdout
    finally:
        gl.run("rm", "-f", str(common / "pre-receive"))
        gl.run("gitolite", "setup")  # POST_COMPILE puts the driver back
    assert gl.gate("server", "doctor", str(gl.repo("project"))).returncode == 0
    _assert_enforcing(gl, work)


def test_a_repository_without_an_installation_is_refused(gl: Gitolite, tmp_path: Path) -> None:
    """The `repo` line gives a new repository the gate's hook at once; until the gate is installed
    in it, it is refused, never pushed to unchecked."""
    w = WorkRepo(tmp_path / "other")
    _commit(w, "README", HUMAN)
    out = gl.push(w.path, "alice", "HEAD:refs/heads/main", repo="other")
    assert out.returncode != 0 and codes_of(out) == {"GATE-CONFIG-INSTALL"}, out.stderr  # not GATE-AUDIT-WRITE too
    assert "Traceback" not in out.stderr
    assert gl.run("git", "--git-dir", str(gl.repo("other")), "for-each-ref").stdout == ""


def test_install_and_doctor_as_root_refuse_with_a_hint(gl: Gitolite) -> None:
    """Run as root, install and doctor would leave root's files in the repository (every later
    push then fails): both refuse, with the command to run instead, and change nothing."""
    from support.gitutil import gate

    before = sorted(p.name for p in (gl.repo("project") / "gate").iterdir())
    for args in (("server", "install", str(gl.repo("project"))), ("server", "doctor", str(gl.repo("project")))):
        out = gate(*args)
        assert out.returncode in (1, 2) and "runuser -u gate-gitolite --" in out.stdout + out.stderr, out
    assert sorted(p.name for p in (gl.repo("project") / "gate").iterdir()) == before
    assert all(p.owner() == "gate-gitolite" for p in (gl.repo("project") / "gate").iterdir())


def test_doctor_fails_on_an_audit_log_the_hook_cannot_write(gl: Gitolite, work: WorkRepo) -> None:
    settle(gl.repo("project"))
    log = gl.repo("project") / "gate" / "audit.log"
    shutil.chown(log, "root", "root")
    log.chmod(0o600)
    try:
        out = gl.gate("server", "doctor", str(gl.repo("project")))
        assert out.returncode == 1 and "audit.log" in out.stdout and "another account" in out.stdout, out.stdout
    finally:
        shutil.chown(log, "gate-gitolite", "gate-gitolite")
        log.chmod(0o640)
    assert gl.gate("server", "doctor", str(gl.repo("project"))).returncode == 0


def test_the_admin_still_pushes_gitolite_admin(gl: Gitolite) -> None:
    """docs/servers.md names the gated repositories, not `@all` (which takes in gitolite-admin,
    where no gate is installed): the admin's next conf push goes through."""
    out = gl.configure(CONF + "# a later change of the admin's\n")
    assert out.returncode == 0, out.stderr
