"""Bounded pushes: `[limits] max_ref_updates` and `max_new_commits`, each with its code.

A real mirror import (ohmyzsh: 1 ref, 7,860 commits, 1,633 merges) passes the default limits
whole; the same push under a lower commit limit is refused, `GATE-LIMIT-COMMITS`, and nothing
lands; a push of more tags than `max_ref_updates` is refused, `GATE-LIMIT-REFS`, before any ref
is judged. In-process, a walk that never ends proves the commit limit stops reading at the first
commit past it and closes the walk.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import cli
from support.gitutil import AGENT, HUMAN, WorkRepo, git
from support.server import Server, settle
from support.verdicts import assert_refused, codes_of

from gatecore.adapters.gitrepo import GitRepo
from gatecore.checks.pushcheck import PushChecker
from gatecore.configuration.configschema import validate_policy
from gatecore.configuration.policy import DEFAULT_MAX_NEW_COMMITS, DEFAULT_MAX_REF_UPDATES, Policy
from gatecore.errors import GateError
from gatecore.git.gitmodel import WalkedCommit
from gatecore.git.limits import bounded
from gatecore.git.objects import Objects
from gatecore.git.refs import RefUpdate

DATA = Path("/work/shared/data")
EVERYONE = """\
mode = "{mode}"
[[freeze]]
paths = ["no/such/path/**"]
authors = ["*"]
pushers = ["*"]
{limits}
"""


def _gated(root: Path, limits: str = "", mode: str = "enforce") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    bare = root / "gated.git"
    git(root, "init", "-q", "--bare", str(bare))
    (root / "policy.toml").write_text(EVERYONE.format(mode=mode, limits=limits))
    out = cli("server", "install", str(bare), "--policy", str(root / "policy.toml"))
    assert out.returncode == 0, out.stdout + out.stderr
    return bare


def _refs(bare: Path) -> str:
    return git(bare, "for-each-ref").stdout


def test_a_mirror_import_passes_the_default_limits_and_a_lower_commit_limit_refuses_it(tmp_path: Path) -> None:
    bundle = DATA / "ohmyzsh-ohmyzsh.bundle"
    if not bundle.exists():
        pytest.skip(f"{bundle} is not on this machine")
    clone = tmp_path / "clone.git"
    git(tmp_path, "clone", "-q", "--mirror", str(bundle), str(clone))
    refs = len(_refs(clone).splitlines())
    commits = int(git(clone, "rev-list", "--all", "--count").stdout)
    assert (refs, commits) == (1, 7860)  # what docs/policy.md (Limits) says of it
    assert refs <= DEFAULT_MAX_REF_UPDATES and commits <= DEFAULT_MAX_NEW_COMMITS

    accepting = _gated(tmp_path / "default")
    out = git(clone, "push", "--porcelain", "--mirror", str(accepting), check=False)
    assert out.returncode == 0, out.stderr
    assert _refs(accepting) == _refs(clone)

    refusing = _gated(tmp_path / "lower", "[limits]\nmax_new_commits = 1000\n")
    out = git(clone, "push", "--porcelain", "--mirror", str(refusing), check=False)
    assert codes_of(out) == {"GATE-LIMIT-COMMITS"}, out.stderr
    assert "more than 1000 new commits" in out.stderr and "[limits] max_new_commits" in out.stderr
    assert _refs(refusing) == ""
    settle(refusing)


def test_more_ref_updates_than_the_limit_are_refused_in_every_mode_and_the_limit_itself_passes(
        tmp_path: Path) -> None:
    srv = Server(tmp_path, policy=EVERYONE.format(mode="evaluate", limits="[limits]\nmax_ref_updates = 4\n"))
    srv.work.write("README", "x\n")
    srv.work.commit("base", identity=HUMAN)
    for i in range(5):
        srv.work.git("tag", f"v{i}")
    before = srv.refs()
    out = srv.push("refs/heads/main", "refs/tags/v0", "refs/tags/v1", "refs/tags/v2", "refs/tags/v3")
    assert_refused(srv, before, out, "GATE-LIMIT-REFS")  # evaluate mode: still refused (the gate stopped)
    assert "the push updates 5 refs" in out.stderr
    assert srv.audit()[-1]["codes"] == ["GATE-LIMIT-REFS"]
    out = srv.push("refs/heads/main", "refs/tags/v0", "refs/tags/v1", "refs/tags/v2")
    assert out.returncode == 0, out.stderr
    assert set(srv.refs()) == {"refs/heads/main", "refs/tags/v0", "refs/tags/v1", "refs/tags/v2"}


def test_an_agent_history_longer_than_the_limit_is_refused_and_its_length_under_it_accepted(
        tmp_path: Path) -> None:
    srv = Server(tmp_path, policy=EVERYONE.format(mode="enforce", limits="[limits]\nmax_new_commits = 6\n"))
    for i in range(7):
        srv.work.write(f"f{i}", f"{i}\n")
        srv.work.commit(f"agent commit {i}", identity=AGENT)
    before = srv.refs()
    out = srv.push("HEAD~6:refs/heads/main")  # the first commit, then six more: seven new ones in all
    assert out.returncode == 0, out.stderr
    before = srv.refs()
    srv.work.git("checkout", "-q", "-b", "side", "HEAD~6")
    for i in range(7):
        srv.work.write(f"s{i}", f"{i}\n")
        srv.work.commit(f"side {i}", identity=AGENT)
    out = srv.push("refs/heads/side")
    assert_refused(srv, before, out, "GATE-LIMIT-COMMITS")
    line = srv.audit()[-1]  # the audit line says how far the walk went before it stopped
    assert line["codes"] == ["GATE-LIMIT-COMMITS"] and line["commits_read"] == 7 and line["walks"], line
    out = srv.push("main:refs/heads/main")  # the six commits on top of what the server has: within the limit
    assert out.returncode == 0, out.stderr


# --- in-process: the limit stops the walk where it is crossed ----------------------------------

class EndlessWalk:
    """A reader whose history walk never ends (its real commits, again and again), counting what
    the gate pulls from it and whether the gate closed it."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self.pulled = 0
        self.closed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.repo, name)

    def walk(self, tips: Iterable[str], hide: Iterable[str] | None, deadline: float | None,
             messages: bool = False) -> Iterator[WalkedCommit]:
        real = list(self.repo.walk(tips, hide, deadline, messages))
        try:
            for w in itertools.cycle(real):
                self.pulled += 1
                if self.pulled > 10_000:
                    raise AssertionError("the gate read past its commit limit")
                yield w
        finally:
            self.closed = True


def test_the_commit_limit_stops_an_endless_walk_at_the_first_commit_past_it(tmp_path: Path) -> None:
    work = WorkRepo(tmp_path / "w")
    for i in range(3):
        work.write(f"f{i}", f"{i}\n")
        work.commit(f"c{i}", identity=AGENT)
    policy = Policy.from_plain(validate_policy(
        EVERYONE.format(mode="enforce", limits="[limits]\nmax_new_commits = 25\n").encode(), "policy.toml"))
    reader = EndlessWalk(GitRepo.at(work.path))
    checker = PushChecker(Objects(reader), policy, "agent-1", existing={})  # type: ignore[arg-type]
    with pytest.raises(GateError) as err:
        checker.check([RefUpdate("0" * 40, work.head(), b"refs/heads/main")])
    assert err.value.code == "GATE-LIMIT-COMMITS"
    assert (reader.pulled, reader.closed) == (26, True)


def test_bounded_passes_what_fits_and_closes_its_source_either_way() -> None:
    def source(n: int, log: list[str]) -> Iterator[int]:
        try:
            yield from range(n)
        finally:
            log.append("closed")

    log: list[str] = []
    assert list(bounded(source(3, log), 3)) == [0, 1, 2] and log == ["closed"]
    log = []
    with pytest.raises(GateError):
        list(bounded(source(10**9, log), 3, " to refs/heads/main"))
    assert log == ["closed"]
