"""Rules that restrict every commit (`authors = ["*"]`, `FreezeRule.any_author`) read no identity,
name, trailer or message to decide (issue 47): the walk keeps no messages and `walk_violations`
compares every commit's trees; who wrote a commit is read only for one it refuses
(`frozen.unread_violations`). What it reports, identity and evidence included, is what reading every
commit's identity and message reports (`commit_violations` on a walk that kept them), over a history
of agents' and humans' commits, co-author trailers, a merge, a commit git re-encodes and modes git
does not write; a commit whose identity git and other readers read differently is decided when it
writes nothing frozen, and refused as before when it does."""

from __future__ import annotations

import pytest
from support.gitutil import AGENT, HUMAN, WorkRepo, git, git_bytes

from gatecore.adapters.gitstream import GitStream
from gatecore.checks.frozen import FrozenChecker, commit_violations
from gatecore.checks.frozenbatch import Batches, walk_violations
from gatecore.configuration.policy import FreezeRule, IdentityGlob, PathGlob
from gatecore.errors import GateError
from gatecore.git.objects import Objects


def _rule(index: int, authors: list[str], **kw: list[str]) -> FreezeRule:
    globs = {k: tuple(IdentityGlob.compile(p) for p in v) for k, v in kw.items()}
    return FreezeRule(index, "", (PathGlob.compile("ci/**"), PathGlob.compile("gate.toml")),
                      tuple(IdentityGlob.compile(a) for a in authors), (), None, **globs)


def _raw(repo: WorkRepo, parent: str, header: bytes, message: bytes, writes: str | None = None) -> str:
    """A commit on `parent` with this raw header (after tree and parent) and message: `parent`'s tree,
    or with the file `writes` added."""
    if writes is not None:
        repo.write(writes, "written\n")
        git(repo.path, "add", "-A")
    tree = git(repo.path, "write-tree").stdout.strip()
    git(repo.path, "reset", "-q", "--hard", parent)
    data = b"tree %s\nparent %s\n%s\n%s" % (tree.encode(), parent.encode(), header, message)
    return git_bytes(repo.path, "hash-object", "-t", "commit", "-w", "--literally", "--stdin",
                     input=data).decode().strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[WorkRepo, str, str]:
    repo = WorkRepo(tmp_path_factory.mktemp("any") / "w")
    repo.write("README", "hello\n")
    base = repo.commit("base")
    repo.write("ci/deploy.yml", "agent\n")
    repo.commit("agent ci\n\nCo-authored-by: Bot <bot@agents.example.com>\n", identity=AGENT)
    repo.write("src/a.py", "1\n")
    repo.commit("human src\n\nCo-authored-by: Me <me@example.org>\n", identity=HUMAN)
    git(repo.path, "checkout", "-q", "-b", "side", base)
    repo.write("gate.toml", "x\n")
    repo.commit("side gate.toml", identity=HUMAN)
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "merge", "-q", "--no-edit", "side")
    repo.write("ci/tool", b"#!/bin/sh\n", mode=0o755)
    repo.commit("agent tool", identity=AGENT)
    head = repo.head()
    latin = _raw(repo, head, b"author J\xf6rg <jorg@example.org> 1 +0000\ncommitter J\xf6rg <jorg@example.org> "
                 b"1 +0000\nencoding ISO-8859-1\n", b"\xe9t\xe9\n\nCo-authored-by: X <x@agents.example.com>\n",
                 writes="ci/latin.yml")
    git(repo.path, "update-ref", "refs/heads/main", latin)
    git(repo.path, "reset", "-q", "--hard", "main")
    repo.write("ci/later.yml", "y\n")
    tip = repo.commit("later\n\n\n   \nCo-authored-by: Bot <bot@agents.example.com>   \n", identity=AGENT)
    return repo, base, tip


RULE_SETS = {
    "authors *": [_rule(0, ["*"])],
    "authors * and co-author trailers": [_rule(0, ["*", "*@agents.example.com"], trailers=["Co-authored-by: *"])],
    "two rules, both *": [_rule(0, ["*"]), _rule(1, ["**"], names=["Bot*"])],
}


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_what_is_refused_is_what_reading_every_identity_refuses(history: tuple[WorkRepo, str, str],
                                                                 name: str) -> None:
    repo, base, tip = history
    rules = RULE_SETS[name]
    assert all(r.any_author for r in rules)
    reader = GitStream(str(repo.path / ".git"))
    fast = Objects(reader)
    fast_checker = FrozenChecker(fast)
    got = walk_violations(Batches(fast_checker), fast.walk([tip], [base], None, messages=False), rules, "main",
                          "someone")
    slow = Objects(reader)
    slow_checker = FrozenChecker(slow)
    expected = [v for c in slow.walk([tip], [base], None, messages=True)
                for v in commit_violations(slow_checker, c, rules, "main", "someone")]
    assert got == expected and len(got) >= 4
    assert any("co-author" in v.evidence for v in got) and any("J\xf6rg" in v.evidence or "jorg" in v.evidence
                                                                 for v in got)
    reader.close()


def test_a_commit_whose_identity_readers_disagree_on_is_decided_unless_it_writes_a_frozen_path(
        history: tuple[WorkRepo, str, str]) -> None:
    repo, _, tip = history
    broken = b"author A <a@example.org\ncommitter A <a@example.org> 1 +0000\n"  # a broken <email>
    git(repo.path, "reset", "-q", "--hard", tip)
    quiet = _raw(repo, tip, broken, b"nothing frozen\n")
    frozen = _raw(repo, tip, broken, b"writes ci/\n", writes="ci/evil.yml")
    reader = GitStream(str(repo.path / ".git"))
    objects = Objects(reader)
    checker = FrozenChecker(objects)
    rules = [_rule(0, ["*"])]
    assert walk_violations(Batches(checker), objects.walk([quiet], [tip], None), rules, "main", "x") == []
    agents = [_rule(0, ["*@agents.example.com"])]  # a rule that reads who wrote it: refused, as ever
    with pytest.raises(GateError) as read:
        walk_violations(Batches(checker), objects.walk([quiet], [tip], None, messages=True), agents, "main", "x")
    assert read.value.code == "GATE-GIT-MALFORMED"
    with pytest.raises(GateError) as written:
        walk_violations(Batches(checker), objects.walk([frozen], [tip], None), rules, "main", "x")
    assert written.value.code == "GATE-GIT-MALFORMED"
    reader.close()
