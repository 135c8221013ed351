"""Fixtures for the client hooks: this project as a hook repository and one pre-commit store per
test run, shared by its pytest-xdist workers (the hook environment is built once), a gated server
with the hooks installed in its work repository, the trusted side in such a clone. The harness is
`support.precommit`."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.formats import RepoFormat
from support.gitutil import HUMAN, git
from support.precommit import CLIENT_POLICY, HookRepo, Review, install_client, pc_env
from support.server import Server
from support.snapshot import project_repository


@contextlib.contextmanager
def _run_wide(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """`name` in the directory every worker of this test run shares (pytest-xdist's workers each
    have their own base directory inside it), held under a lock while yielded."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    with (base / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield base / name


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    """This project as a git repository, committed, for `repo:`/`rev:` and `try-repo`: one for the
    run, so that every worker's pre-commit finds the environment built for it."""
    with _run_wide(tmp_path_factory, "hookrepo") as shared:
        dest = shared / "push-gate"
        if not (shared / "made").exists():
            project_repository(dest)
            (shared / "made").touch()
    return HookRepo(dest, git(dest, "rev-parse", "HEAD").stdout.strip())


@pytest.fixture(scope="session")
def pc_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit store for the run (pre-commit locks it while it builds an environment)."""
    with _run_wide(tmp_path_factory, "pre-commit-home") as home:
        home.mkdir(exist_ok=True)
    return home


@pytest.fixture(autouse=True)
def _the_runs_store(pc_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every git command of the tier runs the client hooks with the run's store (`git_env` keeps
    PRE_COMMIT_HOME): a commit made without `pc_env` once ran them with the account's own
    ~/.cache/pre-commit, where each run's hook repository (a new path) built an environment again
    and left it there."""
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pc_home))


@pytest.fixture
def gated(tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> Server:
    """A server with the gate installed and a work repository with the client hooks, in sync."""
    return _gated(tmp_path, hook_repo, pc_home)


@pytest.fixture
def fmt_gated(repo_format: RepoFormat, tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> Server:
    """`gated` in one of the four repository formats (support.formats)."""
    return _gated(tmp_path, hook_repo, pc_home)


def _gated(tmp_path: Path, hook_repo: HookRepo, pc_home: Path) -> Server:
    s = Server(tmp_path, policy=CLIENT_POLICY)
    w = s.work
    w.write("README", "hello\n")
    w.write("ci/deploy.yml", "deploy: true\n")
    w.write("src/app.py", "print('hi')\n")
    w.commit("base", identity=HUMAN)
    install_client(w, hook_repo, pc_home)
    # the setup push skips the client hooks (git push --no-verify): the server still checks it
    out = s.push("main", url="origin", pusher_env=pc_env(pc_home), extra=("--no-verify",))
    assert out.returncode == 0, out.stdout + out.stderr
    return s


@pytest.fixture
def review(tmp_path: Path, hook_repo: HookRepo, pc_home: Path, monkeypatch: pytest.MonkeyPatch) -> Review:
    return Review(tmp_path, hook_repo, pc_home, monkeypatch)


@pytest.fixture
def fmt_review(repo_format: RepoFormat, tmp_path: Path, hook_repo: HookRepo, pc_home: Path,
               monkeypatch: pytest.MonkeyPatch) -> Review:
    """`review` in one of the four repository formats (support.formats)."""
    return Review(tmp_path, hook_repo, pc_home, monkeypatch)
