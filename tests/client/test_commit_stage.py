"""The pre-commit and commit-msg stages through the real pre-commit framework: `git commit` by an
agent writing a frozen path is stopped with the server's code, every way git builds a commit is
seen, trailers at the commit-msg stage, a bad policy fails closed; try-repo on this checkout."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, WorkRepo, git, git_bytes, git_env
from support.precommit import (
    CLIENT_POLICY,
    PRE_COMMIT,
    HookRepo,
    Verdict,
    client_verdict,
    commit,
    install_client,
    pc_env,
    push_both,
    text,
)
from support.server import Server


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


def test_git_commit_by_an_agent_touching_a_frozen_file_is_stopped_with_the_servers_code(
        fmt_gated: Server, pc_home: Path) -> None:
    """In every repository format (the client hooks read through git, as the server's hook does)."""
    gated = fmt_gated
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
    """An agent's trailer on a human's commit: a human's commit with an `Assisted-by:` trailer
    writing a frozen path. The pre-commit stage cannot see the message; the commit-msg stage can,
    and agrees with the server."""
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


def test_an_agents_git_merge_is_judged_at_the_commit_msg_stage(gated: Server, pc_home: Path) -> None:
    """`git merge` starts `pre-merge-commit` and `commit-msg`, never `pre-commit`: the commit-msg hook,
    the one the README configures, stops an agent's merge whose result writes a frozen path (both
    sides changed the file, so the merged file differs from each parent), as the server would."""
    w = gated.work
    env = pc_env(pc_home)

    def human_writes(text: str, branch: str) -> None:
        git(w.path, "checkout", "-q", "-B", branch)
        w.write("ci/deploy.yml", text)
        git(w.path, "add", "-A")
        assert commit(w, f"human ci on {branch}", HUMAN, env).returncode == 0

    human_writes("one\ntwo\nthree\nfour\nfive\n", "main")
    human_writes("ONE\ntwo\nthree\nfour\nfive\n", "side")
    git(w.path, "checkout", "-q", "main")
    human_writes("one\ntwo\nthree\nfour\nFIVE\n", "main")
    before = w.head()
    out = git(w.path, "merge", "--no-edit", "side", identity=AGENT, env=env, check=False)
    assert out.returncode != 0 and w.head() == before, text(out)
    assert "hook id: gate-frozen-files-msg" in text(out) and "hook id: gate-frozen-files\n" not in text(out)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"})), text(out)
    git(w.path, "merge", "--abort")
    git(w.path, "merge", "-q", "--no-edit", "--no-verify", "side", identity=AGENT)
    client, server, _ = push_both(gated, "main", env=env)
    assert client == server == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))


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


@pytest.mark.parametrize("policy, code, detail", [
    ("mode = 'enforce'\n[[freeze]]\npaths = []\n", "GATE-CONFIG-POLICY", "freeze[0].paths"),
    ("mode = = 1\n", "GATE-CONFIG-POLICY", "not valid TOML"),
    ("mode = 'enforce'\nsurprise = 1\n", "GATE-CONFIG-POLICY", "surprise"),
    (None, "GATE-CLIENT-NO-POLICY", "commit .gate/policy.toml (docs/client.md): the client hooks read the policy "
                                    "from it, and it is not in HEAD nor in the work tree"),
], ids=["invalid", "toml", "unknown-key", "missing"])
def test_a_bad_or_missing_policy_fails_closed_with_exit_2(gated: Server, pc_home: Path, policy: str | None,
                                                           code: str, detail: str) -> None:
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
    assert client_verdict(out) == Verdict(2, frozenset({code})), text(out)
    assert detail in text(out) and f"gate: commit rejected: {code}" in text(out)


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



def test_a_co_author_behind_escapes_is_seen_by_both_stages_as_git_shows_it(tmp_path: Path, hook_repo: HookRepo,
                                                                           pc_home: Path) -> None:
    """Under `i18n.commitEncoding = ISO-2022-JP`, a human's commit writing a frozen path whose
    message names an agent as co-author behind a line of escapes: `git log` shows the trailer
    (the escape line vanishes from git's text), so the commit-msg stage refuses it, and so do the
    pre-push stage and the server, alike."""
    s = Server(tmp_path, policy=CLIENT_POLICY)
    w = s.work
    w.write("README", "hello\n")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home)
    assert s.push("main", url="origin", pusher_env=pc_env(pc_home)).returncode == 0
    git(w.path, "config", "i18n.commitEncoding", "ISO-2022-JP")
    before = w.head()
    w.write("ci/deploy.yml", "deploy: co-authored\n")
    git(w.path, "add", "-A")
    message = "update ci\n\x1b(B\nCo-authored-by: Bot <bot@agents.example.com>\n"
    out = commit(w, message, HUMAN, pc_env(pc_home), "--cleanup=verbatim")
    assert out.returncode != 0 and w.head() == before, text(out)
    assert "gate frozen files (commit message)" in text(out) and "Failed" in text(out)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))
    assert commit(w, message, HUMAN, pc_env(pc_home), "--cleanup=verbatim", "--no-verify").returncode == 0
    assert b"encoding ISO-2022-JP" in git_bytes(w.path, "cat-file", "commit", "HEAD")
    client, server, _ = push_both(s, "main", env=pc_env(pc_home))
    assert client == server == Verdict(1, frozenset({"GATE-FROZEN-PATH"}))


def test_a_top_level_files_filter_that_leaves_out_the_message_is_named(gated: Server, pc_home: Path) -> None:
    """pre-commit filters the commit-msg stage's one file (the message) by the configuration's
    top-level `files:` too: the msg hook then has nothing to read, and refuses every commit saying why
    (docs/client.md), not with a bare count of its arguments."""
    w = gated.work
    config = w.path / ".pre-commit-config.yaml"
    config.write_text("files: ^src/\n" + config.read_text())
    git(w.path, "add", "-A")
    git(w.path, "commit", "-q", "--no-verify", "-m", "only src", identity=HUMAN)
    before = w.head()
    w.write("src/app.py", "print('human')\n")
    git(w.path, "add", "-A")
    out = commit(w, "human code", HUMAN, pc_env(pc_home))
    assert out.returncode != 0 and w.head() == before, text(out)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-INPUT-ARGUMENT"})), text(out)
    assert "got no message file" in text(out) and "top-level `files:` or `exclude:`" in text(out)
