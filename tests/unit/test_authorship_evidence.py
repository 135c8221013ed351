"""Every signal of a reviewed commit is evidence (`gatecore.checks.authorship`): what a commit with
several signals shows is the union of what each shows alone, whatever their order and case.

Before (issue 44) the reader kept the first model a commit's trailers named: `Assisted-by:
Claude:claude-sonnet-4-5` then `Assisted-by: Claude:claude-opus-4-1` named sonnet only, and a
review by opus was accepted under `independent = "model"`. Here commits are built from the
catalogue's real shapes (emails, bot names, aider's name suffix, co-author and `Assisted-by` /
`Generated-by` trailers, cursor's `Made-with`, Claude's session trailer), several at once in any
order, trailer keys in any case, and read by the catalogue the validated policy carries."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gatecore.adapters.config import policy_from_bytes
from gatecore.checks.authorship import Shown, _rules, commit_shows, failures
from gatecore.checks.independence import Author
from gatecore.git.grammar import parse_commit

POLICY = policy_from_bytes(b'[review]\nindependent = "model"\n', "test policy")
RULES = _rules(POLICY.review_agents)
HUMAN = ("Hana Human", "hana@example.com")

IDENTS = [HUMAN, ("anthropic-code-agent[bot]", "242468646+Claude@users.noreply.github.com"),
          ("Codex", "codex@openai.com"), ("Hana Human (aider)", "hana@example.com"),
          ("Cursor Agent", "cursoragent@cursor.com"), ("openhands", "openhands@all-hands.dev"),
          ("Ada Person", "claude@example.com")]  # (a person called Claude shows no agent)
TRAILERS = ["Co-authored-by: Claude <noreply@anthropic.com>", "Co-authored-by: Codex <noreply@openai.com>",
            "Assisted-by: Claude:claude-sonnet-4-5", "Assisted-by: Claude:claude-opus-4-1 coccinelle",
            "Generated-by: tool:gpt-5", "Co-authored-by: aider (gpt-4o) <aider@aider.chat>",
            "Co-authored-by: aider (anthropic/claude-sonnet-4-20250514) <noreply@aider.chat>",
            "Made-with: Cursor", "Claude-Session: https://claude.ai/code/session_01AbC",
            "Signed-off-by: Hana Human <hana@example.com>"]


def _key_case(line: str, how: int) -> str:
    key, sep, value = line.partition(": ")
    return {0: key, 1: key.lower(), 2: key.upper(), 3: key.swapcase()}[how] + sep + value


def commit(author: tuple[str, str], committer: tuple[str, str], trailers: Sequence[str], n: int = 0) -> bytes:
    header = b"tree %s\nauthor %s <%s> 1700000000 +0000\ncommitter %s <%s> 1700000000 +0000\n" % (
        b"4b825dc642cb6eb9a060e54bf8d69288fbee4904", author[0].encode(), author[1].encode(),
        committer[0].encode(), committer[1].encode())
    message = b"Tidy the parser\n\nA body.\n" + (b"\n" + "".join(f"{t}\n" for t in trailers).encode() if trailers
                                                 else b"")
    return header + b"\0" + message


def shows(author: tuple[str, str], committer: tuple[str, str], trailers: Sequence[str]) -> set[tuple[str, object]]:
    """What the commit shows, as facts: each agent with its vendor, and each model it names."""
    header, _, message = commit(author, committer, trailers).partition(b"\0")
    found = commit_shows(parse_commit("c" * 40, header, message), RULES)
    return {(s.agent, s.vendor) for s in found} | {(s.agent, m) for s in found for m in s.models}


signals = st.tuples(st.sampled_from(IDENTS), st.sampled_from(IDENTS),
                    st.lists(st.tuples(st.sampled_from(TRAILERS), st.integers(0, 3)), max_size=6))


@settings(max_examples=300, deadline=None)
@given(signals)
@example((HUMAN, HUMAN, [("Assisted-by: Claude:claude-sonnet-4-5", 0), ("Assisted-by: Claude:claude-opus-4-1", 0)]))
@example((IDENTS[1], IDENTS[2], [("Co-authored-by: aider (gpt-4o) <aider@aider.chat>", 1),
                                 ("Generated-by: tool:gpt-5", 2)]))
def test_a_commits_evidence_is_the_union_of_what_each_signal_shows_alone(
        drawn: tuple[tuple[str, str], tuple[str, str], list[tuple[str, int]]]) -> None:
    author, committer, listed = drawn
    trailers = [_key_case(line, how) for line, how in listed]
    alone = shows(author, HUMAN, []) | shows(HUMAN, committer, [])
    for line in trailers:
        alone |= shows(HUMAN, HUMAN, [line])
    assert shows(author, committer, trailers) == alone


def test_the_issues_commit_is_refused_whichever_trailer_comes_first() -> None:
    """The ledger says gpt-5 wrote the change, the reviewer is claude-opus-4-1, and one reviewed
    commit names claude-sonnet-4-5 and claude-opus-4-1: refused in either order."""
    names = POLICY.model_reader()
    for order in (["Assisted-by: Claude:claude-sonnet-4-5", "Assisted-by: Claude:claude-opus-4-1"],
                  ["Assisted-by: Claude:claude-opus-4-1", "Assisted-by: Claude:claude-sonnet-4-5"]):
        header, _, message = commit(HUMAN, HUMAN, order).partition(b"\0")
        evidence: list[Shown] = commit_shows(parse_commit("c" * 40, header, message), RULES)
        found = failures("model", Author("gpt-5"), evidence, "claude-opus-4-1", POLICY.review_vendors, names)
        assert [f.code for f in found] == ["GATE-REVIEW-SAME-MODEL"], found
        assert "naming claude-opus-4-1" in found[0].detail
