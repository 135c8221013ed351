"""Client hooks through the real pre-commit framework, and their parity with the server.

The hooks are installed the way a user installs them: a `.pre-commit-config.yaml` that
points at a git repository holding this project (a snapshot of the working tree,
committed in a temporary directory, since `pre-commit try-repo` and `rev:` need a commit
and try-repo leaves untracked files out), then `pre-commit install` and real `git commit`
and `git push` commands. The parity tests run one corpus of scenarios through the client
hooks and through the server (a real push into a bare repository with the gate
installed, its verdict read from the audit log) and require the same exit status and
the same codes.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.corpus import stage
from support.gitutil import AGENT, HUMAN, ROOT, WorkRepo, git, git_env
from support.keygen import needs_ssh_keygen, ssh_key
from support.lab import BASIC_KEYS, key_material, now
from support.server import Server
from support.snapshot import project_repository

from gatecore import codes
from gatecore.trusted import attempts
from gatecore.trusted.review import push_review, record_review

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
HOOK_IDS = ("gate-frozen-files", "gate-frozen-files-msg", "gate-frozen-files-push", "gate-review-receipt")
REVIEW = "refs/heads/review/runner/"
RECEIPTS = "refs/gate/receipts/"
FETCH_LEDGER = "git fetch origin '+refs/gate/*:refs/gate/*'"

CLIENT_POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml", "vendor/sub", ".gate/policy.toml", ".gate/keyring.toml"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[trusted]
pushers = ["runner-*"]
"""


# --- the framework around the hooks -----------------------------------------------------

@dataclass(frozen=True)
class HookRepo:
    path: Path
    rev: str


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    """This project as a git repository, committed, for `repo:`/`rev:` and `try-repo`."""
    dest = tmp_path_factory.mktemp("hookrepo") / "push-gate"
    return HookRepo(dest, project_repository(dest))


@pytest.fixture(scope="session")
def pc_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit store for the session: the hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def pc_env(pc_home: Path, **extra: str) -> dict[str, str]:
    return {"PRE_COMMIT_HOME": str(pc_home), "PRE_COMMIT_COLOR": "never", **extra}


def config_yaml(hook_repo: HookRepo, receipt_args: tuple[str, ...] = ("--repository-id", "demo/repo"),
                push_args: tuple[str, ...] = ()) -> str:
    def args(values: tuple[str, ...]) -> str:
        return f"\n    args: [{', '.join(values)}]" if values else ""

    return (f"default_install_hook_types: [pre-commit, commit-msg, pre-push]\n"
            f"repos:\n- repo: {hook_repo.path}\n  rev: {hook_repo.rev}\n  hooks:\n"
            f"  - id: gate-frozen-files\n    verbose: true\n"
            f"  - id: gate-frozen-files-msg\n    verbose: true\n"
            f"  - id: gate-frozen-files-push\n    verbose: true{args(push_args)}\n"
            f"  - id: gate-review-receipt\n    verbose: true{args(receipt_args)}\n")


def install_client(w: WorkRepo, hook_repo: HookRepo, pc_home: Path, policy: str = CLIENT_POLICY,
                   keyring: str | None = None, **config: tuple[str, ...]) -> None:
    """Commit the client policy and the hook configuration (as a human) and install the hooks."""
    w.write(".gate/policy.toml", policy)
    if keyring is not None:
        w.write(".gate/keyring.toml", keyring)
    w.write(".pre-commit-config.yaml", config_yaml(hook_repo, **config))
    git(w.path, "add", "-A")
    git(w.path, "commit", "-q", "--no-verify", "-m", "client hooks", identity=HUMAN)
    out = subprocess.run([*PRE_COMMIT, "install"], cwd=w.path, env=git_env(HUMAN, **pc_env(pc_home)),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@dataclass(frozen=True)
class Verdict:
    exit: int
    codes: frozenset[str]

    @property
    def rejected(self) -> bool:
        return self.exit != 0


def text(out: subprocess.CompletedProcess[str]) -> str:
    return out.stdout + out.stderr


EXIT_RE = re.compile(r"^- exit code: (\d+)$", re.M)


def client_verdict(out: subprocess.CompletedProcess[str]) -> Verdict:
    """What the client hooks said: the worst hook exit code, the codes of their gate-json lines."""
    output = out.stdout + out.stderr
    codes = set()
    for line in output.splitlines():
        if line.startswith("gate-json: "):
            doc = json.loads(line[len("gate-json: "):])
            if "code" in doc:
                codes.add(doc["code"])
    return Verdict(max((int(x) for x in EXIT_RE.findall(output)), default=0), frozenset(codes))


def server_verdict(server: Server) -> Verdict:
    last: dict[str, Any] = server.audit()[-1]
    return Verdict(int(last["exit"]), frozenset(last["codes"]))


def push_both(server: Server, *refspecs: str, env: dict[str, str], extra: tuple[str, ...] = ()) -> tuple[
        Verdict, Verdict, subprocess.CompletedProcess[str]]:
    """Push with the client hooks; if they stop it, push again without them. (client, server, output)."""
    seen = len(server.audit())
    out = server.push(*refspecs, pusher_env=env, url="origin", extra=extra)
    client = client_verdict(out)
    if len(server.audit()) == seen:
        assert client.rejected, out.stdout + out.stderr
        assert "pre-receive hook declined" not in out.stderr
        server.push(*refspecs, pusher_env=env, url="origin", extra=(*extra, "--no-verify"))
    assert len(server.audit()) == seen + 1
    return client, server_verdict(server), out


@pytest.fixture
def gated(tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> Server:
    """A server with the gate installed and a work repository with the client hooks, in sync."""
    s = Server(tmp_path, policy=CLIENT_POLICY)
    w = s.work
    w.write("README", "hello\n")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.write("src/app.py", "print('hi')\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home)
    out = s.push("main", url="origin", pusher_env=pc_env(pc_home))
    assert out.returncode == 0, out.stdout + out.stderr
    return s


# --- the manifest and its documentation ---------------------------------------------------

def manifest() -> list[dict[str, object]]:
    import yaml  # pre-commit's own dependency

    doc = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(doc, list)
    return doc


def test_manifest_hooks_are_python_console_scripts_of_the_package() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    hooks = {h["id"]: h for h in manifest()}
    assert tuple(hooks) == HOOK_IDS
    stages = {"gate-frozen-files": ["pre-commit"], "gate-frozen-files-msg": ["commit-msg"],
              "gate-frozen-files-push": ["pre-push"], "gate-review-receipt": ["pre-push"]}
    for hook_id, hook in hooks.items():
        assert hook["language"] == "python"
        assert hook["entry"] in scripts and scripts[hook["entry"]].startswith("hooks.")
        assert hook["stages"] == stages[hook_id]
        # the commit-msg stage's one file is the message; the others read the index and commits themselves
        assert hook["pass_filenames"] is (hook_id == "gate-frozen-files-msg") and hook["always_run"] is True


def test_manifest_is_valid_for_pre_commit() -> None:
    out = subprocess.run([*PRE_COMMIT, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_every_hook_id_is_documented_in_docs_client_md() -> None:
    text = (ROOT / "docs" / "client.md").read_text()
    for hook in manifest():
        assert f"id: {hook['id']}" in text, f"{hook['id']} missing from the YAML in docs/client.md"
        assert f"| `{hook['id']}` |" in text, f"{hook['id']} missing from the table in docs/client.md"
        assert f"`{hook['entry']}`" in text


def test_docs_say_the_client_is_advice_and_show_the_fetch_command() -> None:
    text = (ROOT / "docs" / "client.md").read_text()
    assert "The client check is advice; the server is the enforcement point." in text
    assert FETCH_LEDGER in text and ".gate/policy.toml" in text and "GATE_PUSHER" in text


# --- try-repo: the project's own checkout, both stages ---------------------------------------

def test_try_repo_pre_commit_stage_rejects_an_agents_staged_frozen_change(tmp_path: Path,
                                                                         hook_repo: HookRepo) -> None:
    w = WorkRepo(tmp_path / "work")
    w.write(".gate/policy.toml", CLIENT_POLICY)
    w.write("ci/deploy.yml", "a\n")
    w.commit("base", identity=HUMAN)
    w.write("ci/deploy.yml", "b\n")
    git(w.path, "add", "-A")
    cmd = [*PRE_COMMIT, "try-repo", str(hook_repo.path), "gate-frozen-files", "--ref", hook_repo.rev]
    out = subprocess.run(cmd, cwd=w.path, env=git_env(AGENT, PRE_COMMIT_COLOR="never"),
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "- exit code: 1" in out.stdout
    assert "GATE-FROZEN-PATH ref=refs/heads/main commit=(staged) identity=bot-7@agents.example.com " \
           "path=ci/deploy.yml rule=freeze[0]:governance reason=modify of a frozen path" in out.stdout


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


# --- installed hooks, pre-commit stage: git commit ---------------------------------------------

def commit(w: WorkRepo, message: str, identity: tuple[str, str], env: dict[str, str],
           *extra: str) -> subprocess.CompletedProcess[str]:
    return git(w.path, "commit", "-m", message, *extra, identity=identity, env=env, check=False)


def test_git_commit_by_an_agent_touching_a_frozen_file_is_stopped_with_the_servers_code(
        gated: Server, pc_home: Path) -> None:
    w = gated.work
    before = w.head()
    w.write("ci/deploy.yml", "deploy: false\n")
    git(w.path, "add", "-A")
    out = commit(w, "agent edits ci", AGENT, pc_env(pc_home))
    assert out.returncode != 0 and w.head() == before
    assert "gate frozen files (staged change)" in text(out) and "Failed" in text(out)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    assert "path=ci/deploy.yml" in text(out) and "identity=bot-7@agents.example.com" in text(out)
    assert "client check (advice)" in text(out)
    # The server gives the same code for the same commit.
    assert commit(w, "agent edits ci", AGENT, pc_env(pc_home), "--no-verify").returncode == 0
    client, server, _ = push_both(gated, "main", env=pc_env(pc_home))
    assert client == server == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))


def test_git_commit_by_a_human_or_of_unfrozen_files_passes(gated: Server, pc_home: Path) -> None:
    w = gated.work
    w.write("ci/deploy.yml", "deploy: human\n")
    git(w.path, "add", "-A")
    assert commit(w, "human", HUMAN, pc_env(pc_home)).returncode == 0
    w.write("src/app.py", "print('agent')\n")
    git(w.path, "add", "-A")
    out = commit(w, "agent code", AGENT, pc_env(pc_home))
    assert out.returncode == 0, text(out)
    assert "gate frozen files (staged change)" in text(out) and "Passed" in text(out)


TRAILER_POLICY = CLIENT_POLICY.replace('authors = ["*@agents.example.com"]\n',
                                       'authors = ["*@agents.example.com"]\ntrailers = ["Assisted-by: *"]\n')


def test_a_trailer_naming_an_agent_is_seen_at_the_commit_msg_stage_as_the_server_sees_it(
        tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> None:
    """Issue 25, 6: a human's commit with an `Assisted-by:` trailer writing a frozen path. The
    pre-commit stage cannot see the message; the commit-msg stage can, and agrees with the server."""
    s = Server(tmp_path, policy=TRAILER_POLICY)
    w = s.work
    w.write("README", "hello\n")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home, policy=TRAILER_POLICY)
    assert s.push("main", url="origin", pusher_env=pc_env(pc_home)).returncode == 0
    before = w.head()
    w.write("ci/deploy.yml", "deploy: assisted\n")
    git(w.path, "add", "-A")
    message = "tune deploy\n\n# a comment git strips\nAssisted-by: Claude Code\n"
    out = commit(w, message, HUMAN, pc_env(pc_home), "--cleanup=strip")
    assert out.returncode != 0 and w.head() == before, text(out)
    assert "gate frozen files (commit message)" in text(out) and "Failed" in text(out)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    assert commit(w, message, HUMAN, pc_env(pc_home), "--cleanup=strip", "--no-verify").returncode == 0
    client, server, _ = push_both(s, "main", env=pc_env(pc_home))
    assert client == server == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    # Without the trailer the same human commit passes both stages.
    git(w.path, "reset", "-q", "--hard", before)
    w.write("ci/deploy.yml", "deploy: human\n")
    git(w.path, "add", "-A")
    out = commit(w, "tune deploy\n\n# Assisted-by: only in a comment\n", HUMAN, pc_env(pc_home), "--cleanup=strip")
    assert out.returncode == 0, text(out)


@pytest.mark.parametrize("how", ["commit_a", "commit_paths", "author_option", "delete_only", "config_email"])
def test_every_way_git_builds_the_commit_is_seen(gated: Server, pc_home: Path, how: str) -> None:
    w = gated.work
    env = pc_env(pc_home)
    identity = AGENT
    extra: tuple[str, ...] = ()
    if how == "commit_a":  # git commit -a: a temporary index (GIT_INDEX_FILE)
        w.write("ci/deploy.yml", "x\n")
        extra = ("-a",)
    elif how == "commit_paths":  # git commit PATH: another temporary index
        w.write("ci/deploy.yml", "x\n")
        extra = ("--", "ci/deploy.yml")
    elif how == "author_option":
        w.write("ci/deploy.yml", "x\n")
        git(w.path, "add", "-A")
        identity, extra = HUMAN, ("--author", f"{AGENT[0]} <{AGENT[1]}>")
    elif how == "delete_only":  # pre-commit passes no file for a deletion: always_run
        git(w.path, "rm", "-q", "ci/deploy.yml")
    elif how == "config_email":  # no GIT_AUTHOR_EMAIL: git takes user.email
        w.write("ci/deploy.yml", "x\n")
        git(w.path, "add", "-A")
        git(w.path, "config", "user.email", AGENT[1])
        git(w.path, "config", "user.name", AGENT[0])
        env = {**env, "GIT_AUTHOR_EMAIL": "", "GIT_COMMITTER_EMAIL": ""}
    before = w.head()
    if how == "config_email":
        run_env = {k: v for k, v in git_env(HUMAN, **pc_env(pc_home)).items()
                   if k not in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")}
        proc = subprocess.run(["git", "commit", "-m", "agent"], cwd=w.path, env=run_env, capture_output=True,
                              text=True)
        out = subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout, proc.stderr)
    else:
        out = commit(w, "agent", identity, env, *extra)
    assert out.returncode != 0, text(out)
    assert w.head() == before
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"})), text(out)
    assert "identity=bot-7@agents.example.com" in text(out)


def test_committer_identity_and_gate_pusher_count(gated: Server, pc_home: Path) -> None:
    w = gated.work
    w.write("ci/deploy.yml", "x\n")
    git(w.path, "add", "-A")
    out = commit(w, "agent commits a human's change", HUMAN,
                 pc_env(pc_home, GIT_COMMITTER_NAME=AGENT[0], GIT_COMMITTER_EMAIL=AGENT[1]))
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    assert f"committer {AGENT[1]}" in text(out)
    out = commit(w, "human change, agent's session", HUMAN, pc_env(pc_home, GATE_PUSHER="agent-1"))
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    assert "identity=pusher:agent-1" in text(out)


def test_an_agent_cannot_unfreeze_by_editing_the_policy_in_the_same_commit(gated: Server, pc_home: Path) -> None:
    w = gated.work
    w.write(".gate/policy.toml", 'mode = "enforce"\n')  # no rules at all
    w.write("ci/deploy.yml", "x\n")
    git(w.path, "add", "-A")
    out = commit(w, "agent relaxes its own check", AGENT, pc_env(pc_home))
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    assert "path=.gate/policy.toml" in text(out) and "path=ci/deploy.yml" in text(out)
    assert "policy HEAD:.gate/policy.toml" in text(out)


def test_merge_takes_a_humans_frozen_change_without_writing_it(gated: Server, pc_home: Path) -> None:
    w = gated.work
    env = pc_env(pc_home)
    git(w.path, "checkout", "-q", "-b", "agent")
    w.write("src/app.py", "print('agent')\n")
    git(w.path, "add", "-A")
    assert commit(w, "agent work", AGENT, env).returncode == 0
    git(w.path, "checkout", "-q", "main")
    w.write("ci/deploy.yml", "deploy: human\n")
    git(w.path, "add", "-A")
    assert commit(w, "human ci", HUMAN, env).returncode == 0
    git(w.path, "checkout", "-q", "agent")
    git(w.path, "merge", "-q", "--no-ff", "--no-commit", "main", identity=AGENT, env=env)
    out = commit(w, "agent merges main", AGENT, env)
    assert out.returncode == 0, text(out)  # equal to the second parent: not written
    client, server, _ = push_both(gated, "agent", env=env)
    assert client == server == Verdict(0, frozenset())
    # Resolving the merge with the agent's own version of the frozen file is writing it.
    git(w.path, "checkout", "-q", "main")
    w.write("ci/deploy.yml", "deploy: human 2\n")
    git(w.path, "add", "-A")
    assert commit(w, "human ci 2", HUMAN, env).returncode == 0
    git(w.path, "checkout", "-q", "agent")
    git(w.path, "merge", "-q", "--no-ff", "--no-commit", "main", identity=AGENT, env=env)
    w.write("ci/deploy.yml", "deploy: agent\n")
    git(w.path, "add", "-A")
    out = commit(w, "agent merges, its way", AGENT, env)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"})), text(out)


def test_evaluate_mode_reports_and_accepts(tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> None:
    w = WorkRepo(tmp_path / "work")
    w.write("ci/deploy.yml", "a\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home, policy=CLIENT_POLICY.replace('"enforce"', '"evaluate"'))
    w.write("ci/deploy.yml", "b\n")
    git(w.path, "add", "-A")
    out = commit(w, "agent", AGENT, pc_env(pc_home))
    assert out.returncode == 0, text(out)
    assert "gate: commit would be rejected (evaluate mode: accepted): 1 violation" in text(out)
    assert client_verdict(out) == Verdict(0, frozenset({"GATE-FROZEN-PATH"}))


@pytest.mark.parametrize("policy, detail", [
    ("mode = 'enforce'\n[[freeze]]\npaths = []\n", "freeze[0].paths"),
    ("mode = = 1\n", "not valid TOML"),
    ("mode = 'enforce'\nsurprise = 1\n", "surprise"),
    (None, "no policy"),
], ids=["invalid", "toml", "unknown-key", "missing"])
def test_a_bad_or_missing_policy_fails_closed_with_exit_2(gated: Server, pc_home: Path, policy: str | None,
                                                           detail: str) -> None:
    w = gated.work
    if policy is None:
        git(w.path, "rm", "-q", ".gate/policy.toml")
    else:
        w.write(".gate/policy.toml", policy)
        git(w.path, "add", "-A")
    git(w.path, "commit", "-q", "--no-verify", "-m", "break the policy", identity=HUMAN)
    w.write("src/app.py", "print('harmless')\n")
    git(w.path, "add", "-A")
    out = commit(w, "harmless", HUMAN, pc_env(pc_home))
    assert out.returncode != 0
    assert client_verdict(out) == Verdict(2, frozenset({"GATE-CONFIG-POLICY"})), text(out)
    assert detail in text(out) and "gate: commit rejected: GATE-CONFIG-POLICY" in text(out)


# --- installed hooks, pre-push stage: git push ------------------------------------------------

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


# --- the parity corpus: frozen files, both client stages and the server ----------------------

FROZEN_CORPUS = {
    # kind: (author, committer, pusher account, expected codes)
    "modify": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "delete": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "rename_out": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "rename_in": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "mode": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "symlink": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "file_to_dir": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "root_file": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "submodule": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "case_variant": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "trailing_dot": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "policy_file": (AGENT, AGENT, None, {"GATE-FROZEN-PATH"}),
    "committer": (HUMAN, AGENT, None, {"GATE-FROZEN-PATH"}),
    "pusher": (HUMAN, HUMAN, "agent-1", {"GATE-FROZEN-PATH"}),
    "not_frozen": (AGENT, AGENT, None, set()),
    "human": (HUMAN, HUMAN, None, set()),
}


@pytest.mark.parametrize("scenario", sorted(FROZEN_CORPUS))
def test_parity_frozen_files_commit_stage_push_stage_and_server(gated: Server, pc_home: Path,
                                                                scenario: str) -> None:
    author, committer, pusher, codes = FROZEN_CORPUS[scenario]
    kind = "modify" if scenario in ("committer", "pusher") else scenario
    w = gated.work
    env = pc_env(pc_home, GIT_COMMITTER_NAME=committer[0], GIT_COMMITTER_EMAIL=committer[1])
    if pusher is not None:
        env.update(GATE_PUSHER=pusher, REMOTE_USER=pusher)  # the client's guess, the server's truth
    stage(w, "modify" if kind == "human" else kind)
    before = w.head()
    out = commit(w, scenario, author, env)
    at_commit = client_verdict(out)
    if at_commit.rejected:
        assert w.head() == before
        assert commit(w, scenario, author, env, "--no-verify").returncode == 0
    else:
        assert out.returncode == 0, text(out)
    at_push, server, out = push_both(gated, "main", env=env)
    expected = Verdict(1 if codes else 0, frozenset(codes))
    assert at_commit == at_push == server == expected, text(out)


# --- the parity corpus: every ref of a push, through git's own pre-push input ----------------

def install_as_git_hook(w: WorkRepo) -> None:
    """Both push hooks as git's own pre-push hook, reading git's input (every ref, deletions too)."""
    hook = w.path / ".git" / "hooks" / "pre-push"
    hook.write_text(f"""#!/bin/sh
input=$(cat)
run() {{
  printf '%s' "$input${{input:+
}}" | "{sys.executable}" -m "$@"
  rc=$?
  if [ "$rc" -ne 0 ]; then echo "hook-exit: $rc" >&2; exit "$rc"; fi
}}
run hooks.frozen_push "$1" "$2"
run hooks.receipt_push --repository-id demo/repo "$1" "$2"
""")
    hook.chmod(0o755)


def git_hook_verdict(out: subprocess.CompletedProcess[str]) -> Verdict:
    codes = {json.loads(line[len("gate-json: "):]).get("code") for line in out.stderr.splitlines()
             if line.startswith("gate-json: ")}
    status = re.search(r"^hook-exit: (\d+)$", out.stderr, re.M)
    return Verdict(int(status.group(1)) if status else 0, frozenset(c for c in codes if c))


PUSH_CORPUS = ("rewind_discards_frozen", "delete_by_restricted_pusher", "two_refs_second_bad", "tag_on_agent_commit")


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


# --- the receipt hook ----------------------------------------------------------------------

PASS = json.dumps({"verdict": "pass", "reasons": ["small and tested"]}).encode()
FAIL = json.dumps({"verdict": "fail", "reasons": ["breaks the build"]}).encode()


class Review:
    """The trusted side (orchestrator and runner) in a clone with the client hooks installed."""

    def __init__(self, root: Path, hook_repo: HookRepo, pc_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.keyring, keys = key_material(root / "keys", BASIC_KEYS)
        self.server = Server(root, policy=CLIENT_POLICY, keyring=self.keyring)
        self.attempt_key = keys["orch-1"]
        self.receipt_key = keys["runner-1"]
        self.pc_home = pc_home
        w = self.server.work
        self.repo = w.path
        w.write("README", "base\n")
        w.write("src/app.py", "print(1)\n")
        w.commit("base", identity=HUMAN)
        install_client(w, hook_repo, pc_home, keyring=self.keyring)
        self.base = w.head()
        for var, value in {**pc_env(pc_home), "REMOTE_USER": "runner-1", "GATE_PUSHER": "runner-1"}.items():
            monkeypatch.setenv(var, value)
        assert self.server.push("main", url="origin").returncode == 0
        git(self.repo, "checkout", "-q", "-b", "feature")
        w.write("src/app.py", "print(2)\n")
        self.head = w.commit("agent change", identity=AGENT)
        self.prompt_sha = hashlib.sha256(b"Review the change.\n").hexdigest()
        self.scoring = root / "scoring"
        self.monkeypatch = monkeypatch

    def open(self, attempt: str, model: str = "model-a", generation: str = "gen-1") -> None:
        for kind, extra in (("opened", {"repository": "demo/repo", "workspace": "ws-1",
                                        "workspace_generation": generation, "prompt_sha256": self.prompt_sha}),
                            ("model-selected", {"model_id": model})):
            _, res = attempts.append_record(self.repo, attempt, self.attempt_key, kind, "origin", now(), **extra)
            assert res is not None and res.ok, res.output if res else ""

    def failover(self, attempt: str, model: str) -> None:
        _, res = attempts.append_record(self.repo, attempt, self.attempt_key, "failover", "origin", now(),
                                        model_id=model)
        assert res is not None and res.ok, res.output

    def record(self, attempt: str, name: str, output: bytes = PASS) -> Path:
        return record_review(self.repo, attempt, self.base, self.head, output, self.receipt_key,
                                    self.scoring / attempt / name, "origin", None, 3600, now())

    def push_review(self, attempt: str, receipt: Path) -> tuple[Verdict, Verdict, str]:
        """The runner's own push (gate review push), with the client hooks; then without them if stopped."""
        seen = len(self.server.audit())
        result = push_review(self.repo, attempt, receipt, "origin", now())
        client = client_verdict(subprocess.CompletedProcess([], 0, result.output, ""))
        if len(self.server.audit()) == seen:
            assert not result.ok and client.rejected, result.output
            self.monkeypatch.setenv("SKIP", ",".join(HOOK_IDS))
            push_review(self.repo, attempt, receipt, "origin", now())
            self.monkeypatch.delenv("SKIP")
        assert len(self.server.audit()) == seen + 1
        return client, server_verdict(self.server), result.output


@pytest.fixture
def review(tmp_path: Path, hook_repo: HookRepo, pc_home: Path, monkeypatch: pytest.MonkeyPatch) -> Review:
    return Review(tmp_path, hook_repo, pc_home, monkeypatch)


def test_parity_review_good_receipt_is_accepted_by_both(review: Review) -> None:
    review.open("att-1")  # the ledger pushes go through the receipt hook too
    assert review.server.push("feature", url="origin").returncode == 0
    receipt = review.record("att-1", "receipt.json")
    client, server, output = review.push_review("att-1", receipt)
    assert client == server == Verdict(0, frozenset()), output
    assert review.server.ref(REVIEW + "att-1") == review.head
    # pre-commit named the receipt ref only (the reviewed commit is on the remote already); the hook
    # found the review ref from the receipt and checked both.
    assert f"checked {RECEIPTS}att-1, {REVIEW}att-1;" in output, output
    assert "nothing the server would reject" in output


def test_parity_review_stale_receipt_after_failover_the_incident(review: Review) -> None:
    review.open("att-1", model="model-a")
    stale = review.record("att-1", "receipt.json")
    review.failover("att-1", "model-b")
    client, server, output = review.push_review("att-1", stale)
    assert client == server == Verdict(1, frozenset({"GATE-BIND-MODEL", "GATE-BIND-LEDGER"})), output
    assert "field=model_id" in output
    fresh = review.record("att-1", "receipt-b.json")
    client, server, output = review.push_review("att-1", fresh)
    assert client == server == Verdict(0, frozenset()), output


def test_parity_review_failing_verdict(review: Review) -> None:
    review.open("att-1")
    receipt = review.record("att-1", "receipt.json", FAIL)
    client, server, _ = review.push_review("att-1", receipt)
    assert client == server == Verdict(1, frozenset({"GATE-VERDICT-FAIL"}))


@pytest.mark.parametrize("who", ["agent", "runner"])
def test_parity_review_ref_pushed_by_hand(review: Review, who: str) -> None:
    """An agent may not push review refs; the runner may not push one without its receipt."""
    review.open("att-1")
    env = {"GATE_PUSHER": "agent-7", "REMOTE_USER": "agent-7"} if who == "agent" else {}
    expected = {"GATE-REVIEW-PUSHER"} if who == "agent" else {"GATE-RECEIPT-MISSING"}
    client, server, out = push_both(review.server, f"+feature:{REVIEW}att-1", env=env)
    assert client == server == Verdict(1, frozenset(expected)), text(out)


def test_unknown_pusher_is_treated_as_untrusted(review: Review, monkeypatch: pytest.MonkeyPatch) -> None:
    review.open("att-1")
    monkeypatch.delenv("GATE_PUSHER")
    out = review.server.push(f"+feature:{REVIEW}att-1", url="origin")
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-REVIEW-PUSHER"}))
    assert "pusher (unknown: set GATE_PUSHER)" in text(out)


def test_ledger_not_fetched_says_how_to_fetch_it(review: Review, hook_repo: HookRepo, tmp_path: Path) -> None:
    review.open("att-1")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", review.server.url, str(clone))
    git(clone, "config", "commit.gpgsign", "false")
    out = subprocess.run([*PRE_COMMIT, "install"], cwd=clone, env=git_env(HUMAN, **pc_env(review.pc_home)),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    git(clone, "checkout", "-q", "-b", "work")
    (clone / "src" / "app.py").write_text("print(3)\n")
    git(clone, "commit", "-q", "-a", "--no-verify", "-m", "x", identity=AGENT)
    out = git(clone, "push", "origin", f"HEAD:{REVIEW}att-1", check=False)
    verdict = client_verdict(out)
    assert verdict == Verdict(1, frozenset({"GATE-LEDGER-MISSING"})), text(out)
    assert FETCH_LEDGER in text(out)
    git(clone, "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*")
    out = git(clone, "push", "origin", f"HEAD:{REVIEW}att-1", check=False)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-RECEIPT-MISSING"})), text(out)


def test_a_committed_hmac_keyring_is_refused(review: Review) -> None:
    review.open("att-1")
    w = review.server.work
    git(w.path, "checkout", "-q", "main")
    w.write(".gate/keyring.toml", '[[key]]\nid = "h"\nalgorithm = "hmac-sha256"\npurpose = "receipt"\n'
                                  'secret = "' + "A" * 43 + '="\n')
    w.commit("hmac keyring", identity=HUMAN)
    assert review.server.push("main", url="origin", extra=("--no-verify",)).returncode == 0
    git(w.path, "checkout", "-q", "feature")
    git(w.path, "merge", "-q", "main", identity=HUMAN)
    receipt = review.record("att-1", "receipt.json")
    result = push_review(review.repo, "att-1", receipt, "origin", now())
    assert not result.ok
    verdict = client_verdict(subprocess.CompletedProcess([], 0, result.output, ""))
    assert verdict == Verdict(2, frozenset({"GATE-CONFIG-KEYRING"})), result.output
    assert "public keys only" in result.output


# --- the error boundary and speed ------------------------------------------------------------

def test_the_boundary_maps_unexpected_errors_to_3_never_0(capsys: pytest.CaptureFixture[str]) -> None:
    from hooks.common import run

    def boom() -> tuple[int, list[str]]:
        raise RuntimeError("surprise")

    assert run(boom, "commit") == 3
    err = capsys.readouterr().err
    assert "gate: commit rejected: GATE-HOOK-INTERNAL: RuntimeError: surprise" in err


def test_outside_a_repository_is_an_error_not_a_pass(tmp_path: Path) -> None:
    for module in ("hooks.frozen_commit", "hooks.frozen_push", "hooks.receipt_push"):
        out = subprocess.run([sys.executable, "-m", module], cwd=tmp_path, env=git_env(HUMAN, GIT_CEILING_DIRECTORIES=str(tmp_path.parent)),
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
        found = re.search(r"rejected: (GATE-GIT-[A-Z-]+):", out.stderr)
        assert found, (module, out.stderr)
        assert out.returncode == codes.exit_code(found.group(1)) != 0, (module, out.stderr)


def test_parse_pre_push_is_strict() -> None:
    from gatecore.errors import GateError
    from gatecore.refs import parse_pre_push

    a, b = "a" * 40, "b" * 40
    ups = parse_pre_push(f"refs/heads/x {a} refs/heads/y {b}\n(delete) {'0' * 40} refs/heads/z {b}\n".encode())
    assert [(u.ref, u.old, u.new) for u in ups] == [("refs/heads/y", b, a), ("refs/heads/z", b, "0" * 40)]
    assert ups[1].is_delete
    for bad in (f"refs/heads/x {a} refs/heads/y\n", f"refs/heads/x {a} refs/heads/y {b}",
                f"x {a} refs/heads/y {b}\nx {a} refs/heads/y {b}\n", f"x {a[:39]} refs/heads/y {b}\n"):
        with pytest.raises(GateError):
            parse_pre_push(bad.encode())


def test_fetch_refspec_mapping() -> None:
    from hooks.pushset import map_back, map_forward

    specs = [("refs/heads/*", "refs/remotes/origin/*"), ("refs/gate/*", "refs/gate/*"), ("refs/x", "refs/y")]
    assert map_back("refs/remotes/origin/main", specs) == "refs/heads/main"
    assert map_back("refs/remotes/origin/review/runner/a", specs) == "refs/heads/review/runner/a"
    assert map_back("refs/gate/attempts/a", specs) == "refs/gate/attempts/a"
    assert map_back("refs/y", specs) == "refs/x" and map_back("refs/heads/main", specs) is None
    assert map_forward("refs/heads/main", specs) == "refs/remotes/origin/main"
    assert map_forward("refs/tags/v1", specs) is None


def test_a_large_staged_change_is_checked_whole(tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> None:
    """5,000 staged files (50 of them frozen): one hook run, a handful of git calls."""
    w = WorkRepo(tmp_path / "work")
    w.write(".gate/policy.toml", CLIENT_POLICY)
    w.write("README", "x\n")
    w.commit("base", identity=HUMAN)
    for i in range(5000):
        rel = f"ci/gen/f{i}.yml" if i % 100 == 0 else f"src/pkg{i % 50}/m{i}.py"
        w.write(rel, f"{i}\n")
    git(w.path, "add", "-A")
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "hooks.frozen_commit"], cwd=w.path,
                         env=git_env(AGENT), capture_output=True, text=True)
    direct = time.monotonic() - started
    assert out.returncode == 1, out.stderr
    assert "gate: commit rejected: 50 violations" in out.stderr
    assert out.stderr.count("GATE-FROZEN-PATH ref=") == 50
    install_client(w, hook_repo, pc_home)  # commits the 5,000 files (human), then one more agent change
    for i in range(5000):
        if i % 100 == 0:
            w.write(f"ci/gen/f{i}.yml", "changed\n")
        elif i % 7 == 0:
            w.write(f"src/pkg{i % 50}/m{i}.py", "changed\n")
    git(w.path, "add", "-A")
    started = time.monotonic()
    out = commit(w, "agent", AGENT, pc_env(pc_home))
    framework = time.monotonic() - started
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    print(f"\n5000 staged files: hook alone {direct:.2f}s, git commit through pre-commit {framework:.2f}s")


def test_the_commit_hook_reads_a_policy_with_signers_and_trailers(tmp_path: Path) -> None:
    """Before the commit exists there is no signature and no message: `signers` and
    `trailers` cannot restrict it there (the push hooks and the server see them), emails still do."""
    w = WorkRepo(tmp_path / "work")
    w.write(".gate/policy.toml", 'mode = "enforce"\n[[freeze]]\npaths = ["ci/**"]\nsigners = ["agent-*"]\n'
                                 'trailers = ["@known-agents"]\nauthors = ["*@agents.example.com"]\n')
    w.write("README", "x\n")
    w.commit("base", identity=HUMAN)
    w.write("ci/deploy.yml", "x\n")
    git(w.path, "add", "-A")
    for who, rc in ((HUMAN, 0), (AGENT, 1)):
        out = subprocess.run([sys.executable, "-m", "hooks.frozen_commit"], cwd=w.path, env=git_env(who),
                             capture_output=True, text=True)
        assert out.returncode == rc, out.stderr
