"""Installation, doctor, configuration faults, the quarantine, and pushes over git daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import AGENT, GATE, HUMAN, ROOT, WorkRepo, gate, git
from support.net import git_daemon
from support.server import POLICY, Server
from support.verdicts import refused


def run_hook(server: Server, stdin: str) -> subprocess.CompletedProcess[str]:
    """Run the installed hook script directly, as git would (GIT_DIR set, input on stdin)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GL_", "GITEA_", "GITHUB_"))}
    env["GIT_DIR"] = str(server.bare)
    return subprocess.run([str(server.bare / "hooks" / "pre-receive")], input=stdin, env=env, cwd=server.bare,
                          capture_output=True, text=True)


def test_install_is_idempotent(server: Server) -> None:
    hook = (server.bare / "hooks" / "pre-receive").read_text()
    out = cli("server", "install", str(server.bare), "--policy", str(server.policy_file))
    assert out.returncode == 0, out.stderr
    assert (server.bare / "hooks" / "pre-receive").read_text() == hook
    assert json.loads((server.gate_dir / "config.json").read_text())["repository_id"] == "demo/repo"
    assert "server/launch.py server.prereceive --gate-dir" in hook and "(push-gate " in hook


def test_install_requires_a_policy_the_first_time(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "r.git")
    out = cli("server", "install", str(tmp_path / "r.git"))
    assert out.returncode == 2 and "GATE-CONFIG-POLICY" in out.stderr
    assert not (tmp_path / "r.git" / "hooks" / "pre-receive").exists()


def test_install_refuses_an_invalid_policy_and_changes_nothing(server: Server, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[freeze]]\npaths = []\ncolour = "red"\n')
    before = (server.gate_dir / "policy.toml").read_text()
    out = cli("server", "install", str(server.bare), "--policy", str(bad))
    assert out.returncode == 2
    assert "freeze[0].paths" in out.stderr and "freeze[0].colour" in out.stderr
    assert (server.gate_dir / "policy.toml").read_text() == before


def test_an_install_that_fails_late_leaves_the_hook_that_was_there(tmp_path: Path) -> None:
    """Every argument is checked before anything is written: an install refused for its last
    option (a relative syslog socket) neither moves the foreign hook away (the repository would
    be left with no pre-receive hook at all) nor installs the new policy."""
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    foreign = bare / "hooks" / "pre-receive"
    foreign.write_text("#!/bin/sh\necho foreign >&2\nexit 1\n")
    foreign.chmod(0o755)
    policy = tmp_path / "p.toml"
    policy.write_text(POLICY)
    out = cli("server", "install", str(bare), "--policy", str(policy), "--chain", "--audit-syslog", "dev/log")
    assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr, out.stdout + out.stderr
    assert foreign.read_text() == "#!/bin/sh\necho foreign >&2\nexit 1\n"
    assert not (bare / "hooks" / "gate-chained").exists() and not (bare / "gate").exists()
    work = tmp_path / "w"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "a").write_text("a")
    git(work, "add", "a")
    git(work, "commit", "-q", "-m", "a")
    out = git(work, "push", f"file://{bare}", "main", check=False)
    assert out.returncode != 0 and "foreign" in out.stderr  # the hook that was there still guards it
    # an installed gate keeps its policy when a re-install is refused late
    foreign.unlink()
    assert cli("server", "install", str(bare), "--policy", str(policy)).returncode == 0
    installed = (bare / "gate" / "policy.toml").read_text()
    other = tmp_path / "other.toml"
    other.write_text(POLICY.replace("ci/**", "deploy/**"))
    out = cli("server", "install", str(bare), "--policy", str(other), "--audit-syslog", "dev/log")
    assert out.returncode == 1 and (bare / "gate" / "policy.toml").read_text() == installed


def test_foreign_hook_is_refused_or_chained(tmp_path: Path) -> None:
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    foreign = bare / "hooks" / "pre-receive"
    marker = tmp_path / "chained-ran"
    foreign.write_text(f"#!/bin/sh\ncat > {marker}\nexit 0\n")
    foreign.chmod(0o755)
    policy = tmp_path / "p.toml"
    policy.write_text(POLICY)
    out = cli("server", "install", str(bare), "--policy", str(policy))
    assert out.returncode == 2 and "--chain" in out.stderr
    assert "managed-by" not in foreign.read_text()
    out = cli("server", "install", str(bare), "--policy", str(policy), "--chain")
    assert out.returncode == 0, out.stderr
    assert (bare / "hooks" / "gate-chained" / "pre-receive").exists()
    # The chained hook runs after the gate accepts, with the same input.
    work = tmp_path / "w"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "a").write_text("a")
    git(work, "add", "a")
    git(work, "commit", "-q", "-m", "a")
    assert git(work, "push", f"file://{bare}", "main", check=False).returncode == 0
    assert "refs/heads/main" in marker.read_text()
    # A chained hook that refuses rejects the push.
    (bare / "hooks" / "gate-chained" / "pre-receive").write_text("#!/bin/sh\necho no >&2\nexit 1\n")
    (work / "b").write_text("b")
    git(work, "add", "b")
    git(work, "commit", "-q", "-m", "b")
    out = git(work, "push", f"file://{bare}", "main", check=False)
    assert refused(out, "GATE-HOOK-CHAINED")
    # Uninstall restores the foreign hook.
    out = cli("server", "uninstall", str(bare))
    assert out.returncode == 0 and "restored" in out.stdout
    assert "exit 1" in foreign.read_text()
    # A chained hook that is gone is a configuration error, not a traceback; re-installing drops it.
    out = cli("server", "install", str(bare), "--chain")
    assert out.returncode == 0, out.stderr
    chained = bare / "hooks" / "gate-chained" / "pre-receive"
    chained.unlink()
    (work / "c").write_text("c")
    git(work, "add", "c")
    git(work, "commit", "-q", "-m", "c")
    out = git(work, "push", f"file://{bare}", "main", check=False)
    assert refused(out, "GATE-CONFIG-INSTALL") and "Traceback" not in out.stderr and "chained hook" in out.stderr
    out = cli("server", "install", str(bare))
    assert out.returncode == 0 and "dropped the chained hook" in out.stdout, out.stdout + out.stderr
    assert "gate-chained" not in (bare / "gate" / "config.json").read_text()
    assert git(work, "push", f"file://{bare}", "main", check=False).returncode == 0


@pytest.mark.parametrize("platform,path", [("gitlab", "custom_hooks/pre-receive.d/gate"),
                                           ("gitea", "hooks/pre-receive.d/gate")])
def test_platform_layouts(tmp_path: Path, platform: str, path: str) -> None:
    server = Server(tmp_path, platform=platform)
    hook = server.bare / path
    assert hook.is_file() and os.access(hook, os.X_OK)
    assert not (server.bare / "hooks" / "pre-receive").exists()
    assert cli("server", "uninstall", str(server.bare)).returncode == 0
    assert not hook.exists()


def test_auto_detects_gitlab_by_its_custom_hooks_directory(tmp_path: Path) -> None:
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (bare / "custom_hooks").mkdir()
    policy = tmp_path / "p.toml"
    policy.write_text(POLICY)
    out = cli("server", "install", str(bare), "--policy", str(policy))
    assert out.returncode == 0
    assert (bare / "custom_hooks" / "pre-receive.d" / "gate").exists()


def test_doctor_passes_on_a_good_installation(server: Server) -> None:
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAIL" not in out.stdout
    assert "read the quarantined objects" in out.stdout
    assert not [r for r in server.refs() if r.startswith("refs/gate/doctor/")]


@pytest.mark.parametrize("platform", ["gitlab", "gitea"])
def test_doctor_probes_platform_layouts_the_way_the_platform_runs_them(tmp_path: Path, platform: str) -> None:
    server = Server(tmp_path, platform=platform)
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "refused the probe" in out.stdout
    assert server.audit()[-1]["platform"] == platform


def test_doctor_reports_a_hook_that_does_not_run(server: Server) -> None:
    (server.bare / "hooks" / "pre-receive").chmod(0o644)
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1
    assert "FAIL hook is executable" in out.stdout


def test_doctor_fails_when_the_probe_carries_another_code(server: Server) -> None:
    """A probe refused with GATE-DOCTOR-PROBE *and* GATE-AUDIT-WRITE means every real push fails."""
    server.settle()
    audit = server.gate_dir / "audit.log"
    audit.unlink(missing_ok=True)
    audit.mkdir()  # cannot be opened for appending, even by root
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1 and "GATE-AUDIT-WRITE where only GATE-DOCTOR-PROBE was expected" in out.stdout, out.stdout


def test_doctor_and_install_name_gitolites_driver_instead_of_misreading_it(server: Server) -> None:
    hook = server.bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nstdin=`cat`\nfor h in $0.*; do\n    echo \"$stdin\" | $h || exit 1\ndone\n")
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert "FAIL hook is the gate's" in out.stdout and "--platform gitolite" in out.stdout
    assert "interpreter runs" not in out.stdout  # a foreign hook's words are not an interpreter
    out = cli("server", "install", str(server.bare), "--platform", "git", "--chain")
    assert out.returncode == 2 and "--platform gitolite" in out.stderr
    assert "for h in" in hook.read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository to another account")
def test_install_and_doctor_refuse_another_account_with_a_hint(server: Server) -> None:
    import shutil

    for p in [server.bare, *server.bare.rglob("*")]:
        if not p.is_symlink():
            shutil.chown(p, "nobody")
    before = sorted(str(p) for p in server.bare.rglob("*"))
    out = gate("server", "install", str(server.bare))
    assert out.returncode == 2 and "GATE-CONFIG-INSTALL" in out.stderr and "runuser -u nobody --" in out.stderr, out
    out = gate("server", "doctor", str(server.bare))
    assert out.returncode == 2 and "GATE-CONFIG-INSTALL" in out.stderr and "runuser -u nobody --" in out.stderr, out
    # run as `python -m gatecore.cli`, the hint is a command the account can run (not cli.py's path)
    out = subprocess.run([sys.executable, "-m", "gatecore.cli", "server", "doctor", str(server.bare)],
                         capture_output=True, text=True, check=False)
    hint = out.stderr[out.stderr.index("runuser"):].split("\n")[0]
    # Can nobody run this very interpreter? (Not where it lives under a private home: the venv trap.)
    runs = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-I", "-c", "pass"], capture_output=True,
                          check=False).returncode == 0
    if runs:
        assert f"-- {sys.executable} -m gatecore.cli server doctor" in hint, hint
    else:
        assert "nobody cannot run this environment" in out.stderr and "is not searchable by nobody" in out.stderr
        assert hint.startswith(f"runuser -u nobody -- /opt/push-gate/bin/gate server doctor {server.bare}"), hint
    assert sorted(str(p) for p in server.bare.rglob("*")) == before  # nothing created as root


def test_post_receive_logs_what_landed(server: Server) -> None:
    """The gate accepts both refs; git's update hook then refuses one: the decision line names both,
    the landed line only the ref that changed."""
    update = server.bare / "hooks" / "update"
    update.write_text('#!/bin/sh\n[ "$1" != refs/heads/blocked ]\n')
    update.chmod(0o755)
    seen = len(server.landed(0))
    server.work.write("src/landed.py", "x\n")
    server.work.commit("human", identity=HUMAN)
    out = server.push("main", "main:refs/heads/blocked")
    assert out.returncode != 0  # one ref refused by the update hook
    decision = server.audit()[-1]
    assert decision["decision"] == "accept" and len(decision["refs"]) == 2  # type: ignore[arg-type]
    landed = server.landed(seen + 1)[-1]
    assert [r["ref"] for r in landed["refs"]] == ["refs/heads/main"]  # type: ignore[attr-defined]
    for name in ("pusher", "transport", "client_address"):
        assert landed[name] == decision[name], name


def test_doctor_reports_a_broken_policy(server: Server) -> None:
    (server.gate_dir / "policy.toml").write_text("mode = 'sometimes'\n")
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1 and "FAIL policy valid" in out.stdout and "mode" in out.stdout


def test_broken_policy_rejects_with_exit_2(server: Server) -> None:
    (server.gate_dir / "policy.toml").write_text("this is [ not toml\n")
    server.work.write("src/x", "x")
    server.work.commit("human", identity=HUMAN)
    before = server.refs()
    out = server.push("main")
    assert refused(out, "GATE-CONFIG-POLICY")
    assert server.refs() == before
    hook = run_hook(server, f"{'0' * 40} {server.work.head()} refs/heads/x\n")
    assert hook.returncode == 2 and "GATE-CONFIG-POLICY" in hook.stderr


def test_missing_policy_rejects(server: Server) -> None:
    (server.gate_dir / "policy.toml").unlink()
    server.work.write("src/x", "x")
    server.work.commit("human", identity=HUMAN)
    assert refused(server.push("main"), "GATE-CONFIG-POLICY")


def test_broken_keyring_rejects_with_exit_2(tmp_path: Path) -> None:
    out = cli("keys", "generate", "--alg", "ed25519", "--id", "r1", "--purpose", "receipt",
              "--out", str(tmp_path / "k"))
    server = Server(tmp_path, keyring=out.stdout)
    server.work.write("src/x", "x")
    server.work.commit("human", identity=HUMAN)
    (server.gate_dir / "keyring.toml").write_text("[[key]]\nid = 3\n")
    assert refused(server.push("main"), "GATE-CONFIG-KEYRING")
    hook = run_hook(server, f"{'0' * 40} {server.work.head()} refs/heads/x\n")
    assert hook.returncode == 2


def test_missing_installation_record_rejects(server: Server) -> None:
    (server.gate_dir / "config.json").unlink()
    server.work.write("src/x", "x")
    server.work.commit("human", identity=HUMAN)
    assert refused(server.push("main"), "GATE-CONFIG-INSTALL")


def test_a_garbage_cache_is_a_configuration_error(server: Server) -> None:
    """A validated cache that matches the policy's hash but holds garbage: the fast form is not
    built from it (Policy.from_plain), and the push is rejected as a configuration error."""
    cache = server.gate_dir / "policy.toml.validated.json"
    doc = json.loads(cache.read_text())
    doc["value"]["freeze"] = [7]
    cache.write_text(json.dumps(doc))
    server.work.write("src/x", "x")
    server.work.commit("human", identity=HUMAN)
    out = server.push("main")
    assert refused(out, "GATE-CONFIG-POLICY") and "validated form unusable" in out.stderr
    hook = run_hook(server, f"{'0' * 40} {server.work.head()} refs/heads/x\n")
    assert hook.returncode == 2


def test_an_internal_error_rejects_with_exit_3(server: Server, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The hook's boundary, in process: an unexpected exception is a rejection (3), never a pass."""
    import io

    import server.prereceive as hook

    def surprise(*args: object) -> None:
        raise RuntimeError("surprise")

    monkeypatch.setattr(hook, "check_push", surprise)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"{'0' * 40} {'1' * 40} refs/heads/x\n".encode())))
    monkeypatch.setenv("GIT_DIR", str(server.bare))
    assert hook.main(["--gate-dir", str(server.gate_dir)]) == 3
    err = capsys.readouterr().err
    assert "gate: push rejected: GATE-HOOK-INTERNAL: RuntimeError: surprise" in err
    assert f"gate server doctor {server.bare}" in err
    assert server.audit()[-1]["codes"] == ["GATE-HOOK-INTERNAL"]


def test_a_stale_cache_is_not_used(server: Server) -> None:
    """Editing the installed policy in place takes effect: the cache no longer matches its hash."""
    policy = server.gate_dir / "policy.toml"
    policy.write_text(policy.read_text().replace('"ci/**", ', '"src/**", "ci/**", '))
    server.work.write("src/app.py", "agent\n")
    server.work.commit("agent code", identity=AGENT)
    assert refused(server.push("main"), "GATE-FROZEN-PATH")


def test_unwritable_audit_log_rejects(server: Server) -> None:
    server.settle()
    audit = server.gate_dir / "audit.log"
    audit.unlink(missing_ok=True)
    audit.mkdir()  # cannot be opened for appending, even by root
    server.work.write("src/x", "x")
    server.work.commit("human", identity=HUMAN)
    before = server.refs()
    out = server.push("main")
    assert refused(out, "GATE-AUDIT-WRITE")
    assert server.refs() == before


def test_deadline_rejects(tmp_path: Path) -> None:
    server = Server(tmp_path, policy=POLICY + "[limits]\ndeadline_seconds = 0.001\n")
    server.work.write("src/x", "x")
    server.work.commit("human", identity=HUMAN)
    out = server.push("main")
    assert refused(out, "GATE-HOOK-DEADLINE")
    assert server.ref("refs/heads/main") is None


@pytest.mark.parametrize("stdin,code", [
    ("garbage\n", "GATE-INPUT-MALFORMED"),
    (f"{'0' * 40} {'1' * 40} refs/heads/a b\n", "GATE-INPUT-MALFORMED"),
    (f"{'0' * 40} {'1' * 40} refs/heads/a..b\n", "GATE-REF-NAME"),
    (f"{'0' * 40} {'1' * 40} refs/heads/x\n{'0' * 40} {'1' * 40} refs/heads/x\n", "GATE-INPUT-MALFORMED"),
    (f"{'0' * 40} {'1' * 64} refs/heads/x\n", "GATE-INPUT-MALFORMED"),
    (f"{'0' * 40} {'A' * 40} refs/heads/x\n", "GATE-INPUT-MALFORMED"),
    (f"{'0' * 40} {'1' * 40} refs/heads/x", "GATE-INPUT-MALFORMED"),
])
def test_malformed_hook_input_rejects(server: Server, stdin: str, code: str) -> None:
    out = run_hook(server, stdin)
    assert out.returncode == 1
    assert code in out.stderr


def test_an_object_the_hook_cannot_read_rejects(server: Server) -> None:
    out = run_hook(server, f"{'0' * 40} {'1' * 40} refs/heads/ghost\n")
    assert out.returncode == 3
    assert "GATE-GIT-UNREADABLE" in out.stderr


def test_empty_input_is_accepted(server: Server) -> None:
    assert run_hook(server, "").returncode == 0


QUARANTINE_PROBE = """#!/bin/sh
# Runs chained after the gate, still inside git's quarantine.
read old new ref
echo "quarantine=$GIT_QUARANTINE_PATH" > {out}
if env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git cat-file -e "$new" 2>/dev/null; then
  echo "visible-without-env" >> {out}
else
  echo "hidden-without-env" >> {out}
fi
{python} -c "
import os, pygit2
try:
    pygit2.Repository(os.environ['GIT_DIR'])['$new']
    print('plain-open-sees-it')
except KeyError:
    print('plain-open-keyerror')
" >> {out}
exit 0
"""


def test_quarantine_regression(tmp_path: Path) -> None:
    """The pushed commit is only in the quarantine: a plain pygit2 open raises KeyError on it,
    yet the gate (opening FROM_ENV) reads it and decides."""
    import sys

    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    probe_out = tmp_path / "probe.txt"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(QUARANTINE_PROBE.format(out=probe_out, python=sys.executable))
    hook.chmod(0o755)
    policy = tmp_path / "p.toml"
    policy.write_text(POLICY)
    assert cli("server", "install", str(bare), "--policy", str(policy), "--chain").returncode == 0
    work = tmp_path / "w"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "ci").mkdir()
    (work / "ci" / "x.yml").write_text("x")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "human")
    out = git(work, "push", f"file://{bare}", "main", check=False)
    assert out.returncode == 0, out.stderr
    text = probe_out.read_text()
    assert "quarantine=" in text and "quarantine=\n" not in text
    assert "hidden-without-env" in text
    assert "plain-open-keyerror" in text
    # ...and the gate did read it: the same content by an agent is refused.
    (work / "ci" / "y.yml").write_text("y")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "agent", identity=AGENT)
    assert refused(git(work, "push", f"file://{bare}", "main", check=False), "GATE-FROZEN-PATH")


# --- over git daemon on 127.0.0.1 ------------------------------------------------------

@pytest.fixture
def daemon(server: Server) -> Iterator[str]:
    with git_daemon(server.root) as url:
        yield f"{url}/server.git"


def test_over_git_daemon_agent_rejected_human_accepted(server: Server, daemon: str) -> None:
    """git daemon authenticates nobody: its pushes are anonymous, restricted by default, so even a
    human's commit may not write a frozen path through it (tests/servers/ runs it as its own account)."""
    server.work.write("ci/deploy.yml", "agent\n")
    server.work.commit("agent", identity=AGENT)
    before = server.refs()
    out = server.push("main", url=daemon)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert server.refs() == before
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.write("ci/deploy.yml", "human\n")
    server.work.commit("human", identity=HUMAN)
    out = server.push("main", url=daemon)
    assert refused(out, "GATE-FROZEN-PATH") and "identity=pusher:anonymous" in out.stderr, out.stderr
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.write("src/app.py", "human\n")
    server.work.commit("human", identity=HUMAN)
    out = server.push("main", url=daemon)
    assert out.returncode == 0, out.stderr
    assert server.ref("refs/heads/main") == server.work.head()
    assert server.audit()[-1]["pusher"] == "anonymous"


def test_gate_hook_pre_receive_command_is_the_same_hook(server: Server) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GL_", "GITEA_", "GITHUB_"))}
    env["GIT_DIR"] = str(server.bare)
    out = subprocess.run([*GATE, "hook", "pre-receive", "--gate-dir", str(server.gate_dir)],
                         input=f"{'0' * 40} {'1' * 40} refs/heads/ghost\n", env=env, cwd=server.bare,
                         capture_output=True, text=True)
    assert out.returncode == 3 and "GATE-GIT-UNREADABLE" in out.stderr


def test_policy_check_cli(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(POLICY)
    assert cli("policy", "check", str(good)).returncode == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('mode = "maybe"\n[[freeze]]\npaths = ["ci/**"]\nrefs = ["heads/main"]\n[limits]\ndeadline_seconds = 0\n')
    out = cli("policy", "check", str(bad))
    assert out.returncode == 2
    for where in ("mode", "freeze[0].refs[0]", "limits.deadline_seconds"):
        assert where in out.stderr


# --- patterns that match nothing -------------------------------------------------------------

def test_policy_check_and_doctor_warn_about_frozen_patterns_that_match_nothing(server: Server,
                                                                             tmp_path: Path) -> None:
    # the installed policy (support.server.POLICY) freezes none of the gate's own files: a warning
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 0 and "warn no freeze rule freezes the gate's own files (.gate/policy.toml" in out.stdout
    policy = tmp_path / "typo.toml"
    # @agent-config's patterns name files a repository may not have yet, and .gate/** the gate's own
    # files, which a repository without client hooks has none of: no warning for those
    policy.write_text('[[freeze]]\nname = "ci"\npaths = ["ci/**", ".github/workflow/**", "src", "@agent-config", '
                      '".gate/**"]\nauthors = ["*@agents.example.com"]\n')
    out = cli("policy", "check", str(policy), "--repo", str(server.bare))
    assert out.returncode == 0, out.stderr
    warnings = [ln for ln in out.stdout.splitlines() if ln.startswith("warning:")]
    assert warnings == ["warning: freeze[0]:ci paths '.github/workflow/**' matches no path on refs/heads/main: it "
                        "freezes nothing there (a typo, or a path that does not exist yet?)"]
    assert not [ln for ln in cli("policy", "check", str(policy)).stdout.splitlines() if "warning" in ln]
    server.install("--policy", str(policy))
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 0, out.stdout  # a warning, not a failure
    assert "warn freeze[0]:ci paths '.github/workflow/**' matches no path on refs/heads/main" in out.stdout
    assert "'ci/**' matches" not in out.stdout and "'src' matches" not in out.stdout
    assert "'.gate/**' matches" not in out.stdout and "the gate's own files" not in out.stdout


def test_a_pattern_that_can_never_match_is_refused_at_install_and_changes_nothing(server: Server,
                                                                                  tmp_path: Path) -> None:
    """`./ci/**` once installed in silence and let an agent's ci/build.sh land with 0 violations."""
    policy = tmp_path / "dot.toml"
    policy.write_text('[[freeze]]\npaths = ["./ci/**"]\nauthors = ["*@agents.example.com"]\n')
    before = (server.gate_dir / "policy.toml").read_text()
    out = cli("server", "install", str(server.bare), "--policy", str(policy))
    assert out.returncode == 2 and "GATE-CONFIG-POLICY" in out.stderr
    assert f"{policy}:2: freeze[0].paths[0]: './ci/**' can never match" in out.stderr and "write 'ci/**'" in out.stderr
    assert (server.gate_dir / "policy.toml").read_text() == before
    server.work.write("ci/build.sh", "agent\n")
    server.work.commit("agent", identity=AGENT)
    assert refused(server.push("main"), "GATE-FROZEN-PATH")  # the installed policy still holds


# --- the environment the hook runs in --------------------------------------------------------

def make_venv(where: Path, site: dict[str, str] | None = None) -> Path:
    """A venv whose python finds this checkout's push-gate and the test venv's packages (through a
    .pth file, after its own site-packages, where `site`'s files go)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    own = next(where.glob("lib/python3*/site-packages"))
    test_site = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    (own / "zz-push-gate-tests.pth").write_text(f"{ROOT}\n{test_site}\n")
    for rel, text in (site or {}).items():
        (own / rel).parent.mkdir(parents=True, exist_ok=True)
        (own / rel).write_text(text)
    return where / "bin" / "python"


def open_dir() -> Path:
    """A directory every account can search (pytest's own tmp_path is root's, 0700)."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="gate-test-", dir="/var/tmp"))
    path.chmod(0o755)
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory another account cannot search")
def test_the_venv_trap_is_named_with_its_fix_at_install_and_by_doctor(tmp_path: Path) -> None:
    """An environment under a private directory: install refuses to hand the repository's owner a
    command that cannot run; doctor, run by the owner, names the directory in the way."""
    import shutil

    from support.hosting import as_account, server_python

    top = open_dir()
    try:
        private = top / "private"
        private.mkdir(mode=0o700)
        python = make_venv(private / "venv")
        bare = top / "r.git"
        git(top, "init", "-q", "--bare", "-b", "main", str(bare))
        policy = top / "policy.toml"
        policy.write_text(POLICY)
        for p in [bare, *bare.rglob("*")]:
            shutil.chown(p, "nobody")
        out = subprocess.run([str(python), "-m", "gatecore.cli", "server", "install", str(bare), "--policy",
                              str(policy)], capture_output=True, text=True, check=False)
        assert out.returncode == 2 and "GATE-CONFIG-INSTALL" in out.stderr, out.stderr
        assert f"nobody cannot run this environment: {private} (mode 0700, owner root) is not searchable by nobody" \
            in out.stderr
        assert f"runuser -u nobody -- /opt/push-gate/bin/gate server install {bare} --policy {policy}" in out.stderr
        assert not (bare / "hooks" / "pre-receive").exists()
        # Installed all the same (as root, then handed over): doctor, as the owner, says why it cannot run.
        for p in [bare, *bare.rglob("*")]:
            shutil.chown(p, "root")
        out = subprocess.run([str(python), "-m", "gatecore.cli", "server", "install", str(bare), "--policy",
                              str(policy)], capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stderr
        for p in [bare, *bare.rglob("*")]:
            shutil.chown(p, "nobody")
        out = as_account("nobody", str(server_python()), "-I", "-m", "gatecore.cli", "server", "doctor", str(bare),
                         check=False)
        assert out.returncode == 1, out.stdout + out.stderr
        line = next(ln for ln in out.stdout.splitlines() if "interpreter runs" in ln)
        assert line.startswith(f"FAIL interpreter runs: {python}: Permission denied: {private} (mode 0700, owner "
                               "root) is not searchable by nobody"), line
        assert "runuser -u nobody -- /opt/push-gate/bin/gate server install" in line
    finally:
        shutil.rmtree(top)


def _documented_venv_line() -> str:
    """docs/servers.md's line that makes the dedicated environment (the fix for the venv trap)."""
    import re

    text = (ROOT / "docs" / "servers.md").read_text()
    found = re.findall(r"^(\S+ -m venv /opt/push-gate)\b", text, flags=re.M)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory another account cannot search")
def test_a_python_under_a_private_directory_is_named_and_the_documented_fix_works(tmp_path: Path) -> None:
    """The environment is in an open directory, but the Python it was made from lives in a private
    one (pyenv under a 0700 /root): its `python3` links there and the hosting account cannot
    execute it. install, run as root, names the private directory instead of handing the owner a
    command that fails with 'Permission denied', and names a Python the owner can run; the fix
    as docs/servers.md writes it, run where `python3` is that private Python, gives an
    environment the owner installs and checks the gate with."""
    import shutil

    from support.hosting import as_account, populate, server_python

    server_python()  # skips where the system's Python is not the tests' version (compiled wheels)
    top = open_dir()
    try:
        private = top / "home"
        (private / "bin").mkdir(parents=True)
        private.chmod(0o700)
        (private / "bin" / "python3").symlink_to("/usr/bin/python3")  # "pyenv's" Python, reachable by root only
        env = top / "env"
        subprocess.run([str(private / "bin" / "python3"), "-m", "venv", "--without-pip", str(env)], check=True)
        populate(env)
        bare = top / "r.git"
        git(top, "init", "-q", "--bare", "-b", "main", str(bare))
        policy = top / "policy.toml"
        policy.write_text(POLICY)
        for p in [bare, *bare.rglob("*")]:
            shutil.chown(p, "nobody")
        out = subprocess.run([str(env / "bin" / "python3"), "-m", "gatecore.cli", "server", "install", str(bare),
                              "--policy", str(policy)], capture_output=True, text=True, check=False)
        assert out.returncode == 2 and "GATE-CONFIG-INSTALL" in out.stderr, out.stderr
        assert f"nobody cannot run this environment: {private} (mode 0700, owner root) is not searchable by nobody" \
            in out.stderr, out.stderr
        assert "make it from a Python nobody can run (/usr/bin/python3, Python 3." in out.stderr, out.stderr
        assert "/usr/bin/python3 -m venv /opt/push-gate" in out.stderr
        assert f"runuser -u nobody -- /opt/push-gate/bin/gate server install {bare} --policy {policy}" in out.stderr
        assert not (bare / "hooks" / "pre-receive").exists()
        # Installed all the same (as root, then handed over): doctor, as the owner, names the directory and the fix.
        for p in [bare, *bare.rglob("*")]:
            shutil.chown(p, "root")
        out = subprocess.run([str(env / "bin" / "python3"), "-m", "gatecore.cli", "server", "install", str(bare),
                              "--policy", str(policy)], capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stderr
        for p in [bare, *bare.rglob("*")]:
            shutil.chown(p, "nobody")
        out = as_account("nobody", str(server_python()), "-I", "-m", "gatecore.cli", "server", "doctor", str(bare),
                         check=False)
        line = next(ln for ln in out.stdout.splitlines() if "interpreter runs" in ln)
        assert line.startswith(f"FAIL interpreter runs: {env / 'bin' / 'python3'}: Permission denied: {private} (mode "
                               "0700, owner root) is not searchable by nobody"), line
        assert "/usr/bin/python3 -m venv /opt/push-gate" in line, line
        shutil.rmtree(bare / "gate")
        (bare / "hooks" / "pre-receive").unlink()
        (bare / "hooks" / "post-receive").unlink()
        # The documented fix, run where `python3` is the private Python (first on PATH, as pyenv's shims are).
        fixed = top / "opt-push-gate"
        line = _documented_venv_line().replace("/opt/push-gate", str(fixed))
        path = f"{private / 'bin'}:{os.environ['PATH']}"
        subprocess.run(["sh", "-c", line], check=True, env={**os.environ, "PATH": path})
        bare_python3 = subprocess.run(["sh", "-c", f"python3 -m venv --without-pip {top / 'trap'}"], check=True,
                                      env={**os.environ, "PATH": path})
        assert bare_python3.returncode == 0  # what the docs said before: `python3 -m venv` recreates the trap
        trapped = as_account("nobody", str(top / "trap" / "bin" / "python3"), "-c", "pass", check=False)
        assert trapped.returncode != 0
        assert as_account("nobody", str(fixed / "bin" / "python3"), "-c", "import sys; print(sys.version)").stdout
        populate(fixed)
        out = as_account("nobody", str(fixed / "bin" / "python3"), "-m", "gatecore.cli", "server", "install", str(bare),
                         "--policy", str(policy), check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        out = as_account("nobody", str(fixed / "bin" / "python3"), "-m", "gatecore.cli", "server", "doctor", str(bare),
                         check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "read the quarantined objects" in out.stdout
    finally:
        shutil.rmtree(top)


FOREIGN = {  # another distribution with top-level `server` and `hooks` packages (a web framework, say)
    "server/__init__.py": "raise ImportError('this is another project\\'s server package')\n",
    "hooks/__init__.py": "raise ImportError('this is another project\\'s hooks package')\n",
    "other_dist-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: other-dist\nVersion: 1.0\n",
    "other_dist-1.0.dist-info/RECORD": "server/__init__.py,,\nhooks/__init__.py,,\n",
}


def test_the_hook_runs_push_gates_own_packages_beside_another_server_package(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", FOREIGN)
    shadowed = subprocess.run([str(python), "-I", "-c", "import server"], capture_output=True, text=True, check=False)
    assert "another project's server package" in shadowed.stderr  # by name, the other one wins
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    (tmp_path / "policy.toml").write_text(POLICY)
    gate_cmd = [str(python), "-m", "gatecore.cli"]
    out = subprocess.run([*gate_cmd, "server", "install", str(bare), "--policy", str(tmp_path / "policy.toml")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    work = WorkRepo(tmp_path / "w")
    work.write("ci/deploy.yml", "x\n")
    work.commit("human")
    assert work.git("push", f"file://{bare}", "main", check=False).returncode == 0
    work.write("ci/deploy.yml", "agent\n")
    work.commit("agent", identity=AGENT)
    assert refused(work.git("push", f"file://{bare}", "main", check=False), "GATE-FROZEN-PATH")
    out = subprocess.run([*gate_cmd, "server", "doctor", str(bare)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"ok   files the hook runs: gatecore {ROOT / 'gatecore'}, server {ROOT / 'server'}, hooks {ROOT / 'hooks'}" \
        in out.stdout, out.stdout
    assert "warn other-dist 1.0 ships hooks in the hook's environment" in out.stdout
    assert "warn other-dist 1.0 ships server in the hook's environment" in out.stdout


# --- versions, upgrades, many repositories ----------------------------------------------------

def _as_older_version(bare: Path) -> None:
    """What an older push-gate's install left: its version in the marker, `-m server.prereceive`."""
    from gatecore import __version__

    for name in ("pre-receive", "post-receive"):
        hook = bare / "hooks" / name
        text = hook.read_text().replace(f"(push-gate {__version__})", "(push-gate 0.0.9)")
        hook.write_text(text.replace(f"{(ROOT / 'server' / 'launch.py')} server.", "-m server."))


def test_doctor_flags_a_hook_of_another_version_and_upgrade_rewrites_it(server: Server) -> None:
    from gatecore import __version__

    _as_older_version(server.bare)
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1
    assert (f"FAIL hook written by push-gate 0.0.9, older than this environment's {__version__}: run gate server upgrade {server.bare}"
            in out.stdout), out.stdout
    assert "FAIL hook starts the gate the old way" in out.stdout
    out = cli("server", "upgrade", str(server.bare))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"upgraded from push-gate 0.0.9 to {__version__}"
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 0 and f"ok   hook written by push-gate {__version__} (this version)" in out.stdout
    server.work.write("ci/deploy.yml", "agent\n")
    server.work.commit("agent", identity=AGENT)
    assert refused(server.push("main"), "GATE-FROZEN-PATH")


def _host(root: Path) -> dict[str, Path]:
    """A hosting root: two bare repositories, a work tree, and a nested group directory."""
    repos = {"a": root / "a.git", "b": root / "group" / "b.git", "c": root / "group" / "sub" / "c.git"}
    for path in repos.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    git(root, "init", "-q", "-b", "main", str(root / "work"))
    repos["work"] = root / "work" / ".git"
    return repos


def test_install_upgrade_and_doctor_over_every_repository_under_a_root(tmp_path: Path) -> None:
    from gatecore import __version__

    host = tmp_path / "srv"
    repos = _host(host)
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    out = cli("server", "install", "--all", str(host), "--policy", str(policy))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines[:-1]] == [f"ok   {repos[k]}" for k in ("a", "b", "c", "work")]
    assert [ln.split(": ", 1)[1] for ln in lines[:-1]] == [
        f"installed push-gate {__version__} (git, repository id {name})" for name in ("a", "b", "c", "work")]
    assert lines[-1] == f"install over {host}: 4 ok, 0 failed"
    # One repository is handed an older hook, one loses its installation, one gets a broken policy.
    _as_older_version(repos["a"])
    out = cli("server", "uninstall", str(repos["b"]))
    assert out.returncode == 0
    (repos["c"] / "gate" / "policy.toml").write_text('[[freeze]]\npaths = ["./ci/**"]\n')
    out = cli("server", "doctor", "--all", str(host))
    assert out.returncode == 1
    summary = out.stdout.splitlines()
    assert summary[0] == (f"FAIL {repos['a']}: hook written by push-gate 0.0.9, older than this environment's {__version__}: run gate server "
                          f"upgrade {repos['a']}")
    assert summary[1] == f"---- {repos['b']}: not gated"
    assert summary[2].startswith(f"FAIL {repos['c']}: policy valid: ") and "can never match" in summary[2]
    assert summary[3].startswith(f"ok   {repos['work']}: every check passed")
    assert summary[4] == f"doctor over {host}: 1 ok, 2 failed, 1 not gated"
    out = cli("server", "upgrade", "--all", str(host))
    assert out.returncode == 1  # c's policy is refused by this version: named, nothing changed there
    summary = out.stdout.splitlines()
    assert summary[0] == f"ok   {repos['a']}: upgraded from push-gate 0.0.9 to {__version__}"
    assert summary[1] == f"---- {repos['b']}: not gated"
    assert summary[2].startswith(f"FAIL {repos['c']}: GATE-CONFIG-POLICY: ") and "can never match" in summary[2]
    assert summary[3] == f"ok   {repos['work']}: re-installed push-gate {__version__} (the version already installed)"
    assert (repos["c"] / "gate" / "policy.toml").read_text() == '[[freeze]]\npaths = ["./ci/**"]\n'
    assert cli("server", "doctor", str(repos["a"])).returncode == 0
    assert cli("server", "doctor", "--all", str(tmp_path / "nowhere")).returncode == 1
    both = cli("server", "doctor", str(repos["a"]), "--all", str(host))
    assert both.returncode == 1 and "not both" in both.stderr


# --- operations: rotated logs, syslog -----------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to leave a file of another account")
def test_doctor_does_not_fail_on_a_rotated_log_of_another_account(server: Server) -> None:
    import shutil

    server.settle()
    rotated = server.gate_dir / "audit.log.1"
    shutil.copy(server.gate_dir / "audit.log", rotated)
    shutil.chown(rotated, "nobody")  # what a logrotate running as another account leaves
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 0, out.stdout
    assert "ok   not the hook's files (left alone): audit.log.1 belongs to another account" in out.stdout
    shutil.chown(server.gate_dir / "audit.log", "nobody")  # the hook's own file: that fails every push
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1 and "FAIL audit.log in" in out.stdout and "belong to another account" in out.stdout


def test_audit_lines_also_go_to_a_syslog_socket(server: Server) -> None:
    import socket
    import tempfile

    where = Path(tempfile.mkdtemp(prefix="gate-log-", dir="/tmp"))  # AF_UNIX paths are short
    path = where / "log"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(str(path))
        sock.settimeout(60)  # waits for the datagram, not for a time: a loaded machine only makes it later
        out = cli("server", "install", str(server.bare), "--audit-syslog", str(path))
        assert out.returncode == 0 and f"each line also to syslog at {path}" in out.stdout, out.stderr
        server.work.write("ci/deploy.yml", "agent\n")
        server.work.commit("agent", identity=AGENT)
        assert refused(server.push("main"), "GATE-FROZEN-PATH")
        while True:
            message = sock.recv(65536).decode()
            if '"event":"decision"' in message:
                break
        prefix, _, line = message.partition(": ")
        assert prefix.startswith("<12>gate-audit[")  # user.warning: a rejection
        assert json.loads(line)["codes"] == ["GATE-FROZEN-PATH"]
        assert json.loads(line) == server.audit()[-1]  # the file holds the same line
        out = cli("server", "doctor", str(server.bare))
        assert out.returncode == 0 and f"ok   audit lines also go to syslog at {path}" in out.stdout, out.stdout
    finally:
        sock.close()
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1 and f"FAIL audit lines to syslog: cannot send to {path}" in out.stdout
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.write("src/app.py", "human\n")
    server.work.commit("human")
    assert server.push("main").returncode == 0  # nobody listening: the file is the record, the push goes on
    assert cli("server", "install", str(server.bare), "--audit-syslog", "off").returncode == 0
    assert json.loads((server.gate_dir / "config.json").read_text())["syslog"] is None
    import shutil

    shutil.rmtree(where)
