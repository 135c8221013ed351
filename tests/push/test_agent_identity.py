"""Agents that show up only in names and trailers, and the built-in catalogue (`@known-agents`),
through real pushes: self-asserted signals only ever add restrictions."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitutil import HUMAN
from support.server import Server
from support.verdicts import refused

POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", ".pre-commit-config.yaml"]
authors = ["@known-agents", "*@agents.example.com"]
names = ["@known-agents"]
trailers = ["@known-agents"]
"""


@pytest.fixture
def server(tmp_path: Path) -> Server:
    s = Server(tmp_path, policy=POLICY)
    s.work.write("README", "base\n")
    s.work.commit("base", identity=HUMAN)
    assert s.push("main").returncode == 0
    return s


@pytest.mark.parametrize(("message", "identity"), [
    ("fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n", "co-author:noreply@anthropic.com"),
    ("fix ci\n\nco-authored-by: Copilot <175728472+Copilot@users.noreply.github.com>\n",
     "co-author:175728472+Copilot@users.noreply.github.com"),
    ("fix ci\n\nAssisted-by: Claude:claude-opus-4\nSigned-off-by: Hana <hana@example.com>\n",
     "trailer:Assisted-by: Claude:claude-opus-4"),
    ("fix ci\n\nMade-with: Cursor\n", "trailer:Made-with: Cursor"),
], ids=["claude-coauthor", "copilot-coauthor-numeric", "assisted-by", "made-with-cursor"])
def test_a_human_commit_carrying_an_agent_trailer_cannot_write_a_frozen_path(
        server: Server, message: str, identity: str) -> None:
    before = server.refs()
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit(message, identity=HUMAN)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert f"identity={identity}" in out.stderr
    assert server.refs() == before


def test_an_aider_author_name_is_an_agent(server: Server) -> None:
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("fix ci", identity=("Hana Human (aider)", "hana@example.com"))
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH") and "identity=name:Hana Human (aider)" in out.stderr


def test_a_github_app_account_is_matched_with_its_brackets(server: Server) -> None:
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("fix ci", identity=("Copilot", "198982749+Copilot@users.noreply.github.com"))
    assert refused(server.push("main"), "GATE-FROZEN-PATH")
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.write("ci/deploy.yml", "x\n")
    # `[bot]` is literal: "claudeb@..." is not claude[bot]'s account
    server.work.commit("fix ci", identity=("claudeb", "claudeb@users.noreply.github.com"))
    assert server.push("main").returncode == 0


def test_a_trailer_only_adds_restrictions(server: Server) -> None:
    """A forged agent trailer on a human's commit elsewhere changes nothing; a trailer can
    never make an agent's own commit unrestricted."""
    server.work.write("src/app.py", "x\n")
    server.work.commit("app\n\nCo-authored-by: Claude <noreply@anthropic.com>\n", identity=HUMAN)
    assert server.push("main").returncode == 0
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("ci\n\nReviewed-by: Hana <hana@example.com>\nSigned-off-by: Hana <hana@example.com>\n",
                       identity=("Bot", "bot@agents.example.com"))
    assert refused(server.push("main"), "GATE-FROZEN-PATH")


def test_a_trailer_outside_the_last_paragraph_is_not_a_trailer(server: Server) -> None:
    """Read as git reads trailers: only the message's last paragraph."""
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\nthe last paragraph is prose.\n",
                       identity=HUMAN)
    assert server.push("main").returncode == 0


def test_the_audit_line_records_the_catalogue_version(server: Server) -> None:
    from gatecore.adapters.config import load_catalogue

    assert server.audit()[-1]["catalogue"] == load_catalogue().version


@pytest.mark.parametrize("message", [
    "\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n# ------------------------ >8 ------------------------ \n",
    " \t \nCo-authored-by: Claude <noreply@anthropic.com>\n",
], ids=["blank-first-line", "scissors-with-a-blank", "blanks-only-first-line"])
def test_trailers_are_read_from_the_message_the_commit_holds(server: Server, message: str) -> None:
    """`git log` and the hook's walk print these messages re-flowed; git's trailer readings of
    the commit itself find the agent, and so does the gate (it missed them before)."""
    before = server.refs()
    server.work.write("ci/deploy.yml", "x\n")
    server.work.git("add", "-A")
    server.work.git("commit", "-q", "--cleanup=verbatim", "-m", message, identity=HUMAN)
    assert server.work.git("cat-file", "commit", "HEAD").stdout.endswith("\n\n" + message)
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH") and "identity=co-author:noreply@anthropic.com" in out.stderr, out.stderr
    assert server.refs() == before
