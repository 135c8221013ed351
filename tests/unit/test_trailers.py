"""Trailers read as git reads them (`git interpret-trailers --parse`), the agent catalogue,
and identity globs whose brackets are literal."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.gitutil import ROOT

from gatecore import catalogue, trailers
from gatecore.adapters.config import load_catalogue
from gatecore.policy import IdentityGlob

MESSAGES = [
    "title only",
    "title\n\nbody\n",
    "title\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "title\n\nbody\n\nCo-authored-by: A <a@x>\nCo-authored-by: B <b@x>\n",
    "title\n\nCo-authored-by: A <a@x>\n\nprose after the trailers\n",
    "title\n\nAssisted-by: Claude:claude-opus-4 coccinelle\nSigned-off-by: Dev <d@x>\n",
    "title\n\nsome prose line\nSigned-off-by: Dev <d@x>\n",
    "title\n\nline one\nline two\nline three\nline four\nSigned-off-by: Dev <d@x>\n",
    "title\n\nKey: value\n  folded onto\n  two lines\nOther: x\n",
    "title\n\nMade-with: Cursor\n# a comment\n",
    "title\n\nKey : spaced key\nBad Key: not a key\n",
    "title\n\nFixes: 123\n---\npatch text\nCo-authored-by: X <x@x>\n",
    "title\n\n(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)\n",
    "Co-authored-by: T <t@x>\n",
    "title\n\nco-authored-by: lower <l@x>\nCO-AUTHORED-BY: upper <u@x>\n",
    "title\n\n\n\nKey: after blank lines\n\n\n",
    "title\n\nURL: https://example.com/a:b\n",
    # git's whitespace is space, tab, CR, LF: not \f, \v or Unicode spaces (a review found these)
    "title\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\x0c\nSigned-off-by: x <x@x>\n",
    "title\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\u00a0\nSigned-off-by: x <x@x>\n",
    "title\n\nbody\n---\x0c\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "title\n\nbody\n---\u00a0x\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "title\n\nCo-authored-by: C <c@x>\n\x0ccontinued\n",
    "title\n \nCo-authored-by: C <c@x>\n",
    "title\n\t\nCo-authored-by: C <c@x>\n",
    "title\r\n\r\nCo-authored-by: C <c@x>\r\n",
    "\nCo-authored-by: C <c@x>\n",
    "title\n\nbody\n---",
    "title\n\nKey: v\n---\nCo-authored-by: C <c@x>",
    # what git ignores at the end of a message (ignored_log_message_bytes): an old Conflicts: block,
    # trailing comments, a scissors line (a review found the Conflicts: block hid a trailer)
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\nConflicts:\n\tci/deploy.yml\n",
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\nConflicts:\n\tci/a\n\tci/b\n# comment\n\n",
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\nConflicts:\n\tci/a\nprose\n",
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n# ------------------------ >8 ------------------------\n"
    "diff --git a/x b/x\n",
    "fix ci\n\nbody\n\nConflicts:",
    # git reads a message up to its first NUL (a review found trailers hidden by one)
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\x00\nunrelated prose\n",
    "fix ci\n\nbody\x00\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    # a first line of spaces is a blank title (a review found the cheap test skipped these)
    " \nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "\t\r\nCo-authored-by: Claude <noreply@anthropic.com>\n",
]


def _git_parse(message: str, tmp: Path) -> list[str]:
    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=message.encode(), capture_output=True,
                         check=True, cwd=tmp, timeout=600)
    return out.stdout.decode().split("\n")[:-1]  # lines end in \n only (a value may hold \r)


@pytest.mark.parametrize("message", MESSAGES)
def test_trailers_are_read_as_git_reads_them(message: str, tmp_path: Path) -> None:
    assert trailers.lines(message) == _git_parse(message, tmp_path)
    if not trailers.may_have(message.encode()):
        assert not trailers.lines(message)  # the cheap test never hides a trailer


def _git_log_trailers(message: str, tmp: Path) -> list[str]:
    """The trailers `git log --format=%(trailers)` shows for a commit with this exact message."""
    repo = tmp / "r"
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "PATH": "/usr/bin:/bin", "GIT_DIR": str(repo)}
    if not repo.exists():
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    empty_tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    commit = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], capture_output=True, check=True,
                            env=env, input=f"tree {empty_tree}\nauthor a <a@x> 0 +0000\ncommitter a <a@x> 0 +0000\n\n"
                            .encode() + message.encode()).stdout.decode().strip()
    out = subprocess.run(["git", "log", "-1", "--format=%(trailers:only,unfold)", commit],
                         capture_output=True, check=True, env=env).stdout.decode()
    return [line for line in out.split("\n") if line]


@pytest.mark.parametrize("message", MESSAGES)
def test_signals_are_what_either_of_gits_readings_finds(message: str, tmp_path: Path) -> None:
    """`signals` (what the policy matches) holds every trailer of `git interpret-trailers --parse`
    and of `git log --format=%(trailers)` (which reads past a `---` line)."""
    found = trailers.lines(message) + [f"{k}: {v}" for k, v in trailers.signals(message)]
    for line in _git_parse(message, tmp_path) + _git_log_trailers(message, tmp_path):
        assert line in found, (line, found)
    if not trailers.may_have(message.encode()):
        assert not trailers.signals(message)


_PIECES = st.sampled_from([
    "title", "", " ", "\t", "prose line", "Co-authored-by: Claude <noreply@anthropic.com>", "Assisted-by: X:y",
    "Signed-off-by: D <d@x>", "Key : v", "  folded", "\tci/deploy.yml", "Conflicts:", "# comment", "---", "--- x",
    "# ------------------------ >8 ------------------------", "Bad Key: v", "\r", "Made-with: Cursor\r",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, max_size=12), st.booleans())
def test_random_messages_are_read_as_git_reads_them(tmp_path: Path, pieces: list[str], newline: bool) -> None:
    """Messages made of the lines that matter to git's trailer reading, against git itself."""
    message = "\n".join(pieces) + ("\n" if newline else "")
    scissors = [i for i, p in enumerate(pieces) if p.startswith("# -----")]
    # git 2.39's interpret-trailers loops forever on a "---" line before a scissors line
    assume(not scissors or not any(p.startswith("---") for p in pieces[:scissors[-1]]))
    assert trailers.lines(message) == _git_parse(message, tmp_path)
    found = [f"{k}: {v}" for k, v in trailers.signals(message)]
    for line in _git_log_trailers(message, tmp_path):
        assert line in found, (line, found)
    if not trailers.may_have(message.encode()):
        assert not trailers.signals(message)


def test_coauthor_emails_come_from_coauthored_by_trailers_only() -> None:
    found = trailers.parse("t\n\nCo-authored-by: A <a@x>\nReviewed-by: R <r@x>\nco-authored-by: B < b@x >\n")
    assert trailers.coauthor_emails(found) == ["a@x", "b@x"]


def test_identity_globs_take_brackets_literally() -> None:
    g = IdentityGlob.compile("*claude[bot]@users.noreply.github.com")
    assert g.matches("41898282+Claude[bot]@users.noreply.github.com")
    assert not g.matches("claudeb@users.noreply.github.com")
    assert IdentityGlob.compile("agent-?").matches("agent-7") and not IdentityGlob.compile("agent-?").matches("agent-")
    assert IdentityGlob.compile("a.b").matches("A.B") and not IdentityGlob.compile("a.b").matches("axb")


def test_the_shipped_catalogue_is_valid_and_documented() -> None:
    cat = load_catalogue()
    assert cat.version and len(cat.agents) >= 10
    doc = (ROOT / "docs" / "agents.md").read_text()
    assert cat.version in doc
    for a in cat.agents:
        assert a.name in doc, a.name
        for p in (*a.emails, *a.names, *a.trailers):
            IdentityGlob.compile(p)
            assert f"`{p}`" in doc, p
    emails = cat.patterns("emails")
    for account in ("copilot-swe-agent[bot]", "claude[bot]", "chatgpt-codex-connector[bot]",
                    "devin-ai-integration[bot]", "google-labs-jules[bot]", "amazon-q-developer[bot]"):
        numeric = f"123456+{account}@users.noreply.github.com"
        assert any(IdentityGlob.compile(p).matches(numeric) for p in emails), account
    for email in ("cursoragent@cursor.com", "noreply@aider.chat", "noreply@anthropic.com"):
        assert any(IdentityGlob.compile(p).matches(email) for p in emails), email


def test_named_sets_expand_only_where_they_mean_something() -> None:
    cat = load_catalogue()
    assert catalogue.expand("authors", ["x@y", "@known-agents"], cat)[0] == "x@y"
    assert "Assisted-by: *" in catalogue.expand("trailers", ["@known-agents"], cat)
    for key, values, cat_or_none in (("pushers", ["@known-agents"], cat), ("authors", ["@other"], cat),
                                     ("authors", ["@known-agents"], None)):
        with pytest.raises(ValueError):
            catalogue.expand(key, values, cat_or_none)
    with pytest.raises(ValueError):
        catalogue.parse(b'version = "1"\n')
