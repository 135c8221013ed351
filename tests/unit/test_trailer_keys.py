"""The walk parses a message's trailers only when it holds a key some rule reads (`frozen.trailer_keys`):
who is restricted, and why, is the same as when every message's trailers are parsed."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gatecore.checks.frozen import EVERY_TRAILER, SignalReader, signals, trailer_keys
from gatecore.configuration.policy import FreezeRule, IdentityGlob, PathGlob
from gatecore.git.grammar import Commit, Ident

KEYS = ["Co-authored-by", "co-AUTHORED-by", "Assisted-by", "Made-with", "Signed-off-by", "X", "Claude-Session"]
VALUES = ["Bot <bot@agents.example.com>", "Cursor", "a (aider) <x@y>", "Devin", "", "me <me@example.org>"]
GLOBS = ["Assisted-by: *", "Made-with: Cursor", "Co-authored-by: Devin", "co-authored-by: * <*@agents.example.com>",
         "*devin*", "Ass*-by: *", "Claude-Session: *", "Not a key: *", "ümlaut: *", "x:y"]


def _rule(trailers: list[str], authors: list[str]) -> FreezeRule:
    return FreezeRule(0, "", (PathGlob.compile("ci/**"),), tuple(IdentityGlob.compile(a) for a in authors), (), None,
                      trailers=tuple(IdentityGlob.compile(t) for t in trailers))


def _commit(message: bytes) -> Commit:
    human = Ident("Human", "human@example.org")
    return Commit("1" * 40, "2" * 40, (), (human, human), "", message, b"")


_lines = st.lists(st.one_of(
    st.builds(lambda k, sep, v: f"{k}{sep}{v}", st.sampled_from(KEYS), st.sampled_from([": ", ":", " : ", ": \t"]),
              st.sampled_from(VALUES)),
    st.sampled_from(["", "title", "  ", "---", "# comment", " continued", "Co-authored-by", "text: with colon"])),
    max_size=8)


@settings(max_examples=400, deadline=None)
@given(_lines, _lines, st.lists(st.sampled_from(GLOBS), max_size=3), st.lists(st.sampled_from(
    ["*@agents.example.com", "me@example.org", "*"]), max_size=2))
@example(["title"], ["Co-authored-by: Bot <bot@agents.example.com>"], [], ["*@agents.example.com"])
@example(["title"], ["Made-with: Cursor"], ["Made-with: Cursor"], [])
def test_a_message_without_the_rules_keys_restricts_as_when_its_trailers_are_parsed(
        head: list[str], block: list[str], globs: list[str], authors: list[str]) -> None:
    message = ("\n".join(head) + "\n\n" + "\n".join(block)).encode()  # (a last paragraph: where trailers are)
    rules = [_rule(globs, authors)]
    keys = trailer_keys(rules)
    commit = _commit(message)
    filtered = SignalReader(rules, None, keys)(commit)
    whole = signals(commit, rules)  # every trailer parsed
    for r in rules:
        assert (r.restricted_identity("human@example.org", "human@example.org", "someone", filtered)
                == r.restricted_identity("human@example.org", "human@example.org", "someone", whole))
        assert (r.evidence(("", "human@example.org"), ("", "human@example.org"), "someone", filtered)
                == r.evidence(("", "human@example.org"), ("", "human@example.org"), "someone", whole))


def test_the_keys_are_the_globs_keys_and_co_authored_by_for_authors() -> None:
    assert trailer_keys([_rule([], [])]) is None
    got = trailer_keys([_rule(["Assisted-by: *", "Made-with: Cursor"], ["*@agents.example.com"])])
    assert got is not None and got is not EVERY_TRAILER
    # (searched in the message lowered)
    assert got.search(b"x\n\nASSISTED-BY: me".lower()) and got.search(b"co-authored-BY: a <b>".lower())
    assert not got.search(b"Signed".lower())
    # a key with a wildcard, or a glob without a key, reads every trailer
    assert trailer_keys([_rule(["Ass*-by: *"], [])]) is EVERY_TRAILER
    assert trailer_keys([_rule(["*devin*"], [])]) is EVERY_TRAILER
    # a key no trailer can have matches nothing: it needs no message read
    assert trailer_keys([_rule(["Not a key: *"], [])]) is not EVERY_TRAILER
