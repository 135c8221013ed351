"""The benchmark still runs: its generator is deterministic, and a smoke run of one scenario works.

Not a performance test (that is `./dev bench`); this only keeps bench/ from rotting.
"""

from __future__ import annotations

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
    assert "## Targets" in text and "small push: gate overhead" in text
    assert text in capsys.readouterr().out
