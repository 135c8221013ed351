"""The benchmark still runs: its generator is deterministic, and a smoke run of one scenario works.

Not a performance test (that is `./dev bench`); this only keeps bench/ from rotting.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from support.gitutil import ROOT

sys.path.insert(0, str(ROOT))

from bench.cli import main
from bench.generate import Cache
from bench.gitenv import Git, base_env


def test_generator_is_deterministic(tmp_path: Path) -> None:
    git = Git(base_env(tmp_path / "home"))
    heads = []
    for name in ("a", "b"):
        cache = Cache(tmp_path / name, git, log=lambda _: None)
        hist = cache.history(60, 40)
        refs = cache.with_refs(hist, 25)
        assert git.out("rev-list", "--count", "--all", cwd=hist) == "60"
        assert len(git.out("for-each-ref", "--format=%(refname)", cwd=refs).splitlines()) == 25
        heads.append(git.out("rev-parse", "refs/heads/main", cwd=hist))
        assert cache.history(60, 40) == hist  # cached: not generated again
    assert heads[0] == heads[1]


def test_smoke_run_of_the_small_push(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "smoke.md"
    rc = main(["--quick", "--scenario", "small", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    text = out.read_text()
    assert rc == 0, text
    for variant in ("none", "floor", "peer", "gate"):
        assert f"| {variant} |" in text
    assert "rejected by both peer and gate" in text  # the peer is a real check, like the gate
    assert "## Targets" in text and "small push: the whole hook" in text
    assert text in capsys.readouterr().out


def test_a_history_replayed_is_new_commits_over_the_same_trees(tmp_path: Path) -> None:
    """The "real" scenario's 50k history: the real one, replayed in a row by fast-import."""
    git = Git(base_env(tmp_path / "home"))
    cache = Cache(tmp_path / "c", git, log=lambda _: None)
    hist = cache.history(40, 30)
    replayed = cache.real_replayed(hist, 3)
    assert git.out("rev-list", "--count", "refs/heads/main", cwd=replayed) == "120"
    assert len(git.out("rev-list", "--max-parents=0", "refs/heads/main", cwd=replayed).split()) == 1
    assert git.out("rev-list", "--count", "--merges", "refs/heads/main", cwd=replayed) == str(
        3 * int(git.out("rev-list", "--count", "--merges", "refs/heads/main", cwd=hist)))
    assert git.out("rev-parse", "main^{tree}", cwd=replayed) == git.out("rev-parse", "main^{tree}", cwd=hist)
    earlier = cache.real_earlier(hist, 5)
    assert git.out("rev-parse", "main", cwd=earlier) == git.out("rev-parse", "main~5", cwd=hist)


def test_smoke_run_of_the_agent_check(tmp_path: Path) -> None:
    """The agent scenario: `gate agents check` allowed and refused, against `python -I -c pass`."""
    out = tmp_path / "smoke.md"
    rc = main(["--quick", "--scenario", "agent", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    text = out.read_text()
    assert rc == 0, text  # the allowed check exited 0, the refused one 2 (else the case carries an error)
    for variant in ("python -I -c pass", "allowed", "denied"):
        assert f"| {variant} |" in text
    assert "allowed: " in text and " git processes (" in text and "imports " in text
    assert "agent check, a write allowed: the whole `gate agents check` process <= 2x" in text
    assert "agent check, a write refused" in text


def test_the_floors_under_the_hook_are_timed_beside_the_peer(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m bench.profile SCENARIO --floor` (bench/README.md): every row measured, and every
    command of it ran to a clean exit (a floor that failed would time nothing)."""
    from bench.profile import main as profile

    assert profile(["small", "--quick", "--floor", "--runs", "1", "--cache-dir", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    for row in ("careful peer", "python -I -c pass", "the hook's imports", "git rev-list --header",
                "floor: commits listed and parsed, no tree", "the gate's hook"):
        assert re.search(rf"^  [^\n]*{re.escape(row)}[^\n]* ms +[0-9.]+x the peer$", out, re.M), out
    assert "(exit" not in out, out
