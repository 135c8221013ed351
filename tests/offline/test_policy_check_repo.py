"""`gate policy check FILE --repo R` warns about frozen patterns that match nothing on R's
default branch; a repository git cannot read is said to be one, with git's reason and the fix,
never taken for one with no commit yet (which printed "no commit on its default branch yet" and
exit 0, so the warnings the check exists for never appeared)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import git

POLICY = '[[freeze]]\npaths = ["ci/**", ".github/workflow/**"]\nauthors = ["*@agents.example.com"]\n'


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(POLICY)
    return path


def test_an_empty_repository_is_one_with_no_commit_yet(tmp_path: Path, policy: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "empty.git")
    out = cli("policy", "check", str(policy), "--repo", str(tmp_path / "empty.git"))
    assert out.returncode == 0, out.stderr
    assert "has no commit on its default branch yet" in out.stdout


def test_a_directory_that_is_no_repository_is_refused_with_gits_reason(tmp_path: Path, policy: Path) -> None:
    (tmp_path / "plain").mkdir()
    out = cli("policy", "check", str(policy), "--repo", str(tmp_path / "plain"))
    assert out.returncode == 2, out.stdout
    assert "GATE-GIT-REPOSITORY" in out.stderr and "not a git repository" in out.stderr
    assert "no commit" not in out.stdout + out.stderr
    out = cli("policy", "check", str(policy), "--repo", str(tmp_path / "nowhere"))
    assert out.returncode == 2 and "is not a directory" in out.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository to another account")
def test_another_accounts_repository_is_refused_with_the_fix(tmp_path: Path, policy: Path) -> None:
    """git refuses a repository another account owns (safe.directory): the check says so, names
    the owner, and gives both fixes, instead of reporting an empty repository."""
    repo = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(repo))
    for p in [repo, *repo.rglob("*")]:
        shutil.chown(p, "nobody")
    out = cli("policy", "check", str(policy), "--repo", str(repo))
    assert out.returncode == 2, out.stdout
    assert f"git cannot read {repo}: it belongs to nobody (git: detected dubious ownership)" in out.stderr
    assert "runuser -u nobody -- gate" in out.stderr
    assert f"git config --global --add safe.directory {repo}" in out.stderr
    assert "no commit" not in out.stdout + out.stderr
