"""Frozen-path globs as the tree search relies on them: `PathGlob.tail`'s claim (a `**/T1/../Tk`
pattern matches exactly the paths whose segments hold the run T1..Tk, and those below), and a
rule's one-pattern answer (`FreezeRule.matches_path`) against its globs' own (`PathGlob.matches`).

Paths are normalised as the check normalises them (`normalize_path`): a directory whose name is
only code points HFS+ ignores (U+200C, U+FEFF, ...) is an empty segment there, and `**`, any
number of whole segments, spans it as `*` matches it."""

from __future__ import annotations

import itertools
import random

import pytest

from gatecore.configuration.policy import FreezeRule, PathGlob, normalize_path

#: Path segments: tail names in several spellings, names folding onto them, and names of code
#: points HFS+ ignores only (an empty segment once normalised).
SEGMENTS = ["a", "A.", "b ", "a\u200c", "\u200c", "\ufeff\u200d", "\u200c.", "x", "ss", "\u00df", "\u212a", "k",
            "agents.md", "AGENTS.md.", ".claude", ".Claude ", "...", "a\u0301", "\u00e1", "\uff41"]
TAILS = ["**/a", "**/a/**", "**/a/b", "**/x/a/**", "**/a/a", "**/AGENTS.md", "**/.claude/**", "**/\u00e1/k",
         "**/SS", "**/\u200c/x"]


def _paths(rng: random.Random) -> list[str]:
    out = {"/".join(p) for n in (1, 2, 3) for p in itertools.product(["a", "\u200c", "x", "b"], repeat=n)}
    out |= {"/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 5))) for _ in range(3000)}
    return sorted(out)


@pytest.mark.parametrize("pattern", TAILS)
def test_a_tail_pattern_matches_exactly_the_paths_holding_its_run(pattern: str) -> None:
    glob = PathGlob.compile(pattern)
    assert glob.tail
    k = len(glob.tail)
    for path in _paths(random.Random(pattern)):
        norm = normalize_path(path)
        segs = tuple(norm.split("/"))
        holds = any(segs[i:i + k] == glob.tail for i in range(len(segs) - k + 1))
        assert glob.matches(norm) == holds, (pattern, path, norm)


@pytest.mark.parametrize(("pattern", "path"), [
    ("**/AGENTS.md", "\u200c/AGENTS.md"),
    ("**/AGENTS.md", "src/\ufeff/AGENTS.md"),
    ("**/.claude/**", "\u200c\u200d/.claude/settings.json"),
    ("**/a/b", "x/\u200c/a/b"),
    ("src/**/AGENTS.md", "src/\u200c/AGENTS.md"),
    ("docs/**", "docs/\u200c/x"),
])
def test_double_star_spans_a_directory_named_only_of_hfs_ignorable_code_points(pattern: str, path: str) -> None:
    """Such a directory normalises to an empty segment: `**` matched none (`(?:[^/]+/)*`), so that an
    agent's AGENTS.md or .claude/settings.json below a directory named U+200C (or U+FEFF) was no
    `@agent-config` path."""
    assert PathGlob.compile(pattern).matches(normalize_path(path))


def test_a_rules_one_pattern_answers_as_its_globs() -> None:
    rng = random.Random(5)
    globs = [PathGlob.compile(p) for p in [*TAILS, "ci/**", "gate.toml", "**/*.md", "src/*/secret", "*", "a/**/b",
                                            "**/a/**/b", "?", "a*/b?"]]
    paths = _paths(rng)
    for _ in range(300):
        chosen = tuple(rng.sample(globs, rng.randint(0, 6)))
        rule = FreezeRule(0, "r", chosen, (), (), None)
        for path in rng.sample(paths, 40):
            norm = normalize_path(path)
            assert rule.matches_path(norm) == any(g.matches(norm) for g in chosen), ([g.pattern for g in chosen], path)
