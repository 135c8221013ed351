"""Agents that show up only in names and trailers, and the built-in catalogue (`@known-agents`,
`@agent-config`), through real pushes: self-asserted signals only ever add restrictions, people
named like agents are not agents, and every rejection says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitutil import HUMAN
from support.server import IDENTITY_POLICY as POLICY
from support.server import Server
from support.verdicts import refused


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


def test_the_rejection_and_the_audit_line_say_why(server: Server) -> None:
    """Every reason, strongest first: the authenticated pusher, then what the commit says about
    itself, each pattern shown with the catalogue entry it came from."""
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n", identity=HUMAN)
    out = server.push("main", pusher_env={"REMOTE_USER": "agent-7"})
    why = ("pusher agent-7 matched agent-*; co-author email noreply@anthropic.com (Co-authored-by trailer) matched "
           "@known-agents (claude); trailer Co-authored-by: Claude <noreply@anthropic.com> matched @known-agents (claude)")
    assert refused(out, "GATE-FROZEN-PATH") and f"restricted: {why}" in out.stderr, out.stderr
    assert f'"evidence": "{why}"' in out.stderr
    line = server.audit()[-1]
    assert line["evidence"] == [{"commit": server.work.head(), "identity": "co-author:noreply@anthropic.com",
                                 "evidence": why}]


@pytest.mark.parametrize(("author", "message"), [
    (("Devin Smith", "devin.smith@example.com"), "fix ci"),
    (("Claude Dupont", "claude.dupont@example.fr"), "fix ci"),
    (HUMAN, "fix ci\n\nCo-authored-by: Devin Smith <devin.smith@example.com>\n"),
    (HUMAN, "fix ci\n\nCo-authored-by: Claude Dupont <claude.dupont@example.fr>\n"),
], ids=["devin-author", "claude-author", "devin-coauthor", "claude-coauthor"])
def test_people_named_like_agents_are_people(server: Server, author: tuple[str, str], message: str) -> None:
    """A bare first name restricts nobody (catalogues before 2026.12.4 matched `Devin*` and `Claude*`)."""
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit(message, identity=author)
    out = server.push("main")
    assert out.returncode == 0, out.stderr


def test_an_agent_bot_account_is_a_restricted_pusher(server: Server) -> None:
    """`pushers = ["@known-agents"]`: the platform's bot accounts agents push as."""
    server.work.write("ci/deploy.yml", "x\n")
    server.work.commit("fix ci", identity=HUMAN)
    out = server.push("main", pusher_env={"REMOTE_USER": "copilot-swe-agent[bot]"})
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    assert "identity=pusher:copilot-swe-agent[bot]" in out.stderr
    assert "pusher copilot-swe-agent[bot] matched @known-agents (copilot)" in out.stderr


@pytest.mark.parametrize("path", [".claude/settings.json", "AGENTS.md", "src/CLAUDE.md", ".mcp.json",
                                  ".cursor/mcp.json", ".github/copilot-instructions.md"])
def test_agent_config_is_frozen_for_agents(server: Server, path: str) -> None:
    """`paths = ["@agent-config"]`: an agent cannot rewrite the settings that say what it may run."""
    server.work.write(path, "{}\n")
    server.work.commit("tune the agent", identity=("Bot", "bot@agents.example.com"))
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH") and f"path={path}" in out.stderr, out.stderr
    server.work.git("reset", "-q", "--hard", "HEAD~1")
    server.work.write(path, "{}\n")
    server.work.commit("tune the agent", identity=HUMAN)
    assert server.push("main").returncode == 0


@pytest.mark.parametrize(("path", "shown"), [
    ("\u200c/AGENTS.md", "\\xe2\\x80\\x8c/AGENTS.md"),
    ("src/\ufeff/.claude/settings.json", "src/\\xef\\xbb\\xbf/.claude/settings.json"),
    ("docs/\u200c\u200d/deep/.github/copilot-instructions.md.", None),  # (a root-only literal: not frozen)
], ids=["zwnj-agents-md", "bom-claude-settings", "literal-below"])
def test_agent_config_below_a_directory_named_only_of_ignorable_code_points(
        server: Server, path: str, shown: str | None) -> None:
    """A directory named U+200C (U+FEFF, ...) is an empty segment once normalised, and `**` spans it:
    `@agent-config`'s `**/AGENTS.md` and `**/.claude/**` freeze what is below it."""
    server.work.write(path, "{}\n")
    server.work.commit("tune the agent", identity=("Bot", "bot@agents.example.com"))
    out = server.push("main")
    if shown is None:
        assert out.returncode == 0, out.stderr
        return
    assert refused(out, "GATE-FROZEN-PATH") and f"path={shown}" in out.stderr, out.stderr


def test_a_file_beside_a_directory_of_agent_config_of_the_same_name_is_refused(server: Server) -> None:
    """git fsck's duplicateEntries: a file `src` and the directory `src` unchanged. git's path lookups find
    the file (`git show C:src/.claude/settings.json` finds nothing: the agent's commit hides the settings
    from them); a `**/.claude/**` search reads every directory but skipped the file, and took the tree."""
    server.work.write("src/.claude/settings.json", "{}\n")
    server.work.commit("settings", identity=HUMAN)
    assert server.push("main").returncode == 0
    blob = server.work.hash_object(b"not a directory\n")
    src = server.work.head("HEAD:src")
    readme = server.work.head("HEAD:README")
    tree = server.work.hash_object(b"".join([
        b"100644 README\0" + bytes.fromhex(readme), b"100644 src\0" + bytes.fromhex(blob),
        b"40000 src\0" + bytes.fromhex(src)]), "tree")
    head = server.work.git("commit-tree", tree, "-p", "HEAD", "-m", "tidy",
                           identity=("Bot", "bot@agents.example.com")).stdout.strip()
    assert server.work.git("show", f"{head}:src/.claude/settings.json", check=False).returncode != 0
    out = server.push(f"{head}:refs/heads/main")
    assert refused(out, "GATE-GIT-MALFORMED"), out.stderr
