"""Frozen files through real `git push` into a bare repository with the hook installed: a frozen
write and a human's, one change kind, one ref rule (`support.cases.frozen`), and what only a hook
run by git shows: each platform's pusher, push options, GitLab's prefix, the audit line, which
commits a push brings (git's quarantine). Every change kind, identity, merge, ref rule and report
of `support.cases.frozen` runs in process in tests/engine/test_frozen_permutations.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cases import frozen as cases
from support.cases.frozen import test_rewinding_away_a_human_frozen_change_is_rejected  # noqa: F401
from support.gitutil import AGENT, HUMAN, git
from support.server import Server
from support.verdicts import refused

AGENT2 = ("Other Bot", "helper@AGENTS.example.com")


def test_agent_add_to_frozen_path_is_rejected_and_human_accepted(server: Server) -> None:
    before = server.refs()
    server.work.write("ci/new.yml", "x\n")
    server.work.commit("agent adds ci file", identity=AGENT)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH")
    assert "path=ci/new.yml" in out.stderr and "identity=bot-7@agents.example.com" in out.stderr
    assert server.refs() == before
    # The same change by a human is accepted.
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.write("ci/new.yml", "x\n")
    server.work.commit("human adds ci file", identity=HUMAN)
    assert server.push("main").returncode == 0
    assert server.ref("refs/heads/main") == server.work.head()


def test_a_frozen_file_renamed_away_by_an_agent_is_rejected(server: Server) -> None:
    """One change kind through a real push; every kind: tests/engine/test_frozen_permutations.py."""
    cases.test_every_change_kind_by_an_agent_is_rejected(server, "rename_out")


@pytest.mark.parametrize("env", [
    {"GL_USERNAME": "agent-1", "GL_ID": "user-7", "GL_PROTOCOL": "ssh"},
    {"GITEA_PUSHER_NAME": "agent-1", "GITEA_PUSHER_ID": "7"},
    {"GITHUB_USER_LOGIN": "agent-1"},
    {"GL_USER": "agent-1"},
    {"REMOTE_USER": "agent-1"},
], ids=["gitlab", "gitea", "github", "gitolite", "http"])
def test_agent_pusher_of_human_commits_is_rejected_on_each_platform(tmp_path: Path, env: dict[str, str]) -> None:
    server = Server(tmp_path, platform="git")
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("human commit", identity=HUMAN)
    out = server.push("main", pusher_env=env)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert "identity=pusher:agent-1" in out.stderr
    human = {k: ("hana" if v == "agent-1" else v) for k, v in env.items()}
    assert server.push("main", pusher_env=human).returncode == 0
    assert server.audit()[-1]["pusher"] == "hana"


DISPATCHER = """#!/bin/sh
# Runs every hook in pre-receive.d with the same input, as Gitea and GitLab do.
input=$(cat)
for h in "$(dirname "$0")"/%s/*; do
  printf '%%s\\n' "$input" | "$h" "$@" || exit 1
done
"""


def install_dispatcher(server: Server, platform: str) -> None:
    d = "../custom_hooks/pre-receive.d" if platform == "gitlab" else "pre-receive.d"
    hook = server.bare / "hooks" / "pre-receive"
    hook.write_text(DISPATCHER % d)
    hook.chmod(0o755)


@pytest.mark.parametrize("platform,env,agent", [
    ("gitlab", {"GL_USERNAME": "agent-1", "GL_ID": "user-1", "GL_PROTOCOL": "ssh"}, True),
    ("gitea", {"GITEA_PUSHER_NAME": "agent-1", "GITEA_PUSHER_ID": "1"}, True),
    ("gitlab", {"GL_USERNAME": "hana", "GL_ID": "user-2"}, False),
])
def test_platform_layouts_run_and_read_their_pusher(tmp_path: Path, platform: str, env: dict[str, str],
                                                     agent: bool) -> None:
    server = Server(tmp_path, platform=platform)
    install_dispatcher(server, platform)
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("human", identity=HUMAN)
    out = server.push("main", pusher_env=env)
    if agent:
        assert refused(out, "GATE-FROZEN-PATH"), out.stderr
        assert "identity=pusher:agent-1" in out.stderr
    else:
        assert out.returncode == 0, out.stderr


def test_pinned_platform_without_its_identity_variable_rejects(tmp_path: Path) -> None:
    server = Server(tmp_path, platform="gitlab")
    install_dispatcher(server, "gitlab")
    server.work.write("README", "x\n")
    server.work.commit("c", identity=HUMAN)
    out = server.push("main")
    assert refused(out, "GATE-INPUT-PUSHER")
    assert "GL-HOOK-ERR: " in out.stderr or "GATE-INPUT-PUSHER" in out.stderr


def test_push_options_never_supply_identity(server: Server) -> None:
    git(server.bare, "config", "receive.advertisePushOptions", "true")
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("human", identity=HUMAN)
    out = server.push("main", pusher_env={"GL_USERNAME": "agent-1", "GL_ID": "1"},
                      extra=("-o", "GL_USERNAME=hana", "-o", "pusher=hana"))
    assert refused(out, "GATE-FROZEN-PATH")


def test_gitlab_lines_are_prefixed_for_the_web_ui(server: Server) -> None:
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("agent", identity=AGENT)
    out = server.push("main", pusher_env={"GL_USERNAME": "bot", "GL_ID": "user-1", "GL_PROTOCOL": "web"})
    gate_lines = [ln for ln in out.stderr.splitlines() if "GATE-" in ln]
    assert gate_lines and all(ln.startswith("remote: GL-HOOK-ERR: ") for ln in gate_lines)


def test_merge_with_an_evil_resolution_is_rejected(server: Server) -> None:
    w = server.work
    base = w.head()
    w.write("src/app.py", "human\n")
    w.commit("human", identity=HUMAN)
    assert server.push("main").returncode == 0
    w.git("checkout", "-q", "-b", "feature", base)
    w.write("src/other.py", "agent\n")
    w.commit("agent", identity=AGENT)
    w.git("merge", "-q", "--no-commit", "main", identity=AGENT)
    w.write("ci/deploy.yml", "smuggled in the merge\n")
    w.git("add", "-A")
    w.git("commit", "-q", "--no-edit", identity=AGENT)
    out = server.push("feature")
    assert refused(out, "GATE-FROZEN-PATH")
    assert "path=ci/deploy.yml" in out.stderr


def test_audit_has_one_line_per_push(server: Server) -> None:
    n = len(server.audit())
    server.work.write("ci/x", "x")
    server.work.commit("agent", identity=AGENT)
    server.push("main")
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.write("src/y", "y")
    server.work.commit("agent ok", identity=AGENT)
    server.push("main")
    lines = server.audit()
    assert len(lines) == n + 2
    assert [entry["decision"] for entry in lines[-2:]] == ["reject", "accept"]
    assert lines[-2]["codes"] == ["GATE-FROZEN-PATH"]
    assert lines[-1]["refs"][0]["ref"] == "refs/heads/main"


def test_a_push_of_new_commits_walks_only_what_it_brought(server: Server) -> None:
    server.work.write("src/a.py", "1\n")
    server.work.commit("agent one", identity=AGENT)
    server.work.write("src/b.py", "2\n")
    server.work.commit("agent two", identity=AGENT)
    assert server.push("main").returncode == 0
    last = server.audit()[-1]
    assert last["walks"] == ["pushed"] and last["commits_checked"] == 2


def test_commits_already_on_a_branch_stay_checked_when_another_branch_takes_them(server: Server) -> None:
    """A human's frozen write lands on a topic branch; an agent pusher then fast-forwards main
    to it: nothing new is written, so the push passes, and the gate knows it from the full walk."""
    server.work.git("checkout", "-q", "-b", "topic")
    server.work.write("ci/deploy.yml", "human\n")
    server.work.commit("human ci change", identity=HUMAN)
    assert server.push("topic").returncode == 0
    out = server.push("topic:main", pusher_env={"REMOTE_USER": "agent-1"})
    assert out.returncode == 0, out.stderr
    last = server.audit()[-1]
    assert last["walks"] == ["all-refs"] and last["commits_checked"] == 0


def test_a_commit_left_in_the_store_but_on_no_ref_is_checked_again(server: Server) -> None:
    """The commit is in the repository's own object store (its branch was deleted), so the
    push brings nothing: the full walk still finds it new, and the agent pusher is refused."""
    server.work.git("checkout", "-q", "-b", "gone")
    server.work.write("ci/deploy.yml", "human\n")
    server.work.commit("human ci change", identity=HUMAN)
    assert server.push("gone").returncode == 0
    assert server.push(":gone").returncode == 0
    before = server.refs()
    out = server.push("gone:main", pusher_env={"REMOTE_USER": "agent-1"})
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert server.refs() == before
    assert server.audit()[-1]["walks"] == ["all-refs"]


def test_a_merge_of_a_checked_branch_counts_only_its_new_commits(server: Server) -> None:
    server.work.git("checkout", "-q", "-b", "topic")
    for i in range(3):
        server.work.write(f"src/t{i}.py", f"{i}\n")
        server.work.commit(f"topic {i}", identity=HUMAN)
    assert server.push("topic").returncode == 0
    server.work.git("checkout", "-q", "main")
    server.work.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic", identity=HUMAN)
    assert server.push("main").returncode == 0
    last = server.audit()[-1]
    assert last["walks"] == ["all-refs"] and last["commits_checked"] == 1
