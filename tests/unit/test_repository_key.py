"""`trusted.attempts.repository_key`: the names git takes for one repository compare equal (a
`--ledger-remote` naming the forge itself is refused: docs/forges.md), and other repositories do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatecore.trusted.attempts import repository_key

ONE = ["git@github.com:acme/project.git", "ssh://git@github.com/acme/project", "https://github.com/acme/project/",
       "https://GitHub.com/acme/project.git", "git://github.com/acme/project", "github.com:/acme/project"]
OTHERS = ["git@github.com:acme/project-gate-ledger.git", "https://gitlab.com/acme/project",
          "git@github.com:acme/project/ledger", "https://github.com/acme/Project"]


@pytest.mark.parametrize(("one", "other"), [
    ("forge@ci.corp:project.git", "gate@ci.corp:project.git"),  # each user's home
    ("ssh://alice@host/~/repo.git", "ssh://ledger@host/~/repo.git"),
])
def test_repositories_in_two_users_homes_are_two(one: str, other: str) -> None:
    assert repository_key(one, Path("/")) != repository_key(other, Path("/"))


def test_a_home_is_the_same_however_it_is_written() -> None:
    keys = {repository_key(u, Path("/")) for u in ("alice@Host:repo.git", "alice@host:~/repo", "ssh://alice@host/~/repo/")}
    assert len(keys) == 1, keys


@pytest.mark.parametrize("spelling", ONE)
def test_the_spellings_of_one_hosted_repository_are_one(spelling: str) -> None:
    assert repository_key(spelling, Path("/")) == repository_key(ONE[0], Path("/"))


@pytest.mark.parametrize("other", OTHERS)
def test_another_repository_is_another(other: str) -> None:
    assert repository_key(other, Path("/")) != repository_key(ONE[0], Path("/"))


def test_a_local_repository_by_each_name_git_opens_it_by(tmp_path: Path) -> None:
    (tmp_path / "forge.git").mkdir()
    (tmp_path / "work" / ".git").mkdir(parents=True)
    forge = repository_key(str(tmp_path / "forge.git"), tmp_path)
    for name in ("forge.git", "forge.git/", "./forge", str(tmp_path / "forge"), f"file://{tmp_path}/forge.git",
                 f"file://localhost{tmp_path}/forge%2Egit"):
        assert repository_key(name, tmp_path) == forge, name
    work = repository_key("work", tmp_path)
    assert repository_key("work/.git", tmp_path) == work == repository_key(f"file://{tmp_path}/work/", tmp_path)
    assert work != forge
