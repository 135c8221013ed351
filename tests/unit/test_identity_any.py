"""A rule's identity globs are matched as one pattern (`policy._any`): the same answer as matching
each glob, whatever the globs and the identity (case, wildcards, brackets, newlines, Unicode folding)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gatecore.configuration.policy import IdentityGlob, _any

_chars = st.sampled_from([*"ab*?.[]()+\\|^$@<> \nK\u212a\u017fsSß", "bot", "agents.example.com"])
_globs = st.lists(st.lists(_chars, min_size=1, max_size=6).map("".join).filter(lambda g: g.strip()),
                  min_size=1, max_size=5)
_values = st.lists(_chars, max_size=8).map("".join)


@settings(max_examples=500, deadline=None)
@given(_globs, _values)
@example(["*@agents.example.com", "copilot@github.com"], "Agent-1@AGENTS.example.com")
@example(["k*"], "\u212aelvin")
@example(["a", "a*b"], "a\nb")
def test_one_pattern_matches_where_one_glob_does(patterns: list[str], value: str) -> None:
    globs = tuple(IdentityGlob.compile(p) for p in patterns)
    assert _any(globs, value) == any(g.matches(value) for g in globs)
    assert _any(globs, value) == _any(globs, value)  # (and again, from the memo)


def test_nothing_matches_no_glob_or_no_value() -> None:
    assert not _any((), "x")
    assert not _any((IdentityGlob.compile("*"),), None)
