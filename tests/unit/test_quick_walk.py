"""The push's quick walk (`pushcheck.QuickWalk`: one `rev-list --boundary` walk answering which ids
are commits, which old values are ancestors of their new ones, and which commits are new) gives
git's own answers, each held here to the git command that answered it before (`rev-list` without
`--boundary`, `merge-base --is-ancestor`, `cat-file`), over a history with merges and random
pushes; the push tests (tests/push/test_frozen_files.py, tests/push/test_ref_rules.py and the
engine tiers) hold the decisions it feeds."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support.gitutil import git, git_bytes

from gatecore.adapters.gitstream import GitStream
from gatecore.checks.pushcheck import QuickWalk
from gatecore.errors import GateError


def _history(path: Path, commits: int, seed: int) -> list[str]:
    """A repository of `commits` commits: a main line, side branches forked a few commits back and
    merged (octopus merges among them); its commit ids, oldest first."""
    rnd = random.Random(seed)
    git(path.parent, "init", "-q", str(path))
    stream: list[bytes] = []
    marks: list[int] = []
    for i in range(1, commits + 1):
        parents = [rnd.choice(marks[-8:])] if marks else []
        if len(marks) > 3 and rnd.random() < 0.3:
            parents.append(rnd.choice(marks[-12:-1]))
            if rnd.random() < 0.2:
                parents.append(rnd.choice(marks[-20:-1]))
        parents = list(dict.fromkeys(parents))
        message = f"c{i}\n\nbody {i}\n".encode()
        stream += [b"commit refs/heads/main\n", f"mark :{i}\n".encode(),
                   f"committer C <c@example.com> {1_700_000_000 + i} +0000\n".encode(),
                   f"data {len(message)}\n".encode(), message]
        if parents:
            stream.append(f"from :{parents[0]}\n".encode())
            stream += [f"merge :{p}\n".encode() for p in parents[1:]]
        stream.append(f"M 100644 inline f{i % 7}\ndata 3\n{i % 100:02d}\n\n".encode())
        marks.append(i)
    stream.append(f"reset refs/heads/main\nfrom :{commits}\n\n".encode())
    git_bytes(path, "fast-import", "--quiet", input=b"".join(stream))
    return git(path, "rev-list", "--reverse", "--topo-order", "main").stdout.split()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("quick") / "repo"
    return path, _history(path, 300, seed=3)


def _ancestor(path: Path, a: str, b: str) -> bool:
    return git(path, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def test_the_quick_walk_is_the_walk_and_its_boundary_the_hidden_parents(history: tuple[Path, list[str]]) -> None:
    path, ids = history
    gs = GitStream(str(path / ".git"))
    rnd = random.Random(11)
    for _ in range(40):
        tips = rnd.sample(ids, rnd.choice([1, 1, 2, 3]))
        hide = rnd.sample(ids, rnd.choice([0, 1, 1, 2, 3]))
        found = gs.quick_walk(tips, hide, 1000, None)
        assert found is not None
        walked, boundary = found
        assert walked == list(gs.walk(tips, hide, None, messages=True))  # ids, order, parents, headers, messages
        inside = {w.id for w in walked}
        assert set(boundary) == {p for w in walked for p in w.git_parents if p not in inside}
        assert len(boundary) == len(set(boundary))
        listed = gs.walk_ids(tips, hide, 1000)
        assert listed == [(w.id, w.git_parents) for w in walked]
        if len(walked) > 1:
            assert gs.quick_walk(tips, hide, len(walked) - 1, None) is None  # past the limit: none
            assert gs.quick_walk(tips, hide, len(walked), None) == found
        quick = QuickWalk(tips, hide, walked, boundary)
        assert all(gs.header(oid)[0] == "commit" for oid in quick.ids)
    gs.close()


def test_an_old_value_is_proven_an_ancestor_exactly_when_git_says_it_is(history: tuple[Path, list[str]]) -> None:
    """One update (its old value hidden): proven ⟺ `merge-base --is-ancestor`. Several tips and
    hidden values: what is proven holds (a pair not proven is asked of git)."""
    path, ids = history
    gs = GitStream(str(path / ".git"))
    rnd = random.Random(5)
    proven = refused = 0
    for _ in range(60):
        new = rnd.choice(ids[20:])
        old = rnd.choice(ids[max(0, ids.index(new) - 40):ids.index(new)] if rnd.random() < 0.6 else ids)
        if old == new:
            continue
        found = gs.quick_walk([new], [old], 1000, None)
        assert found is not None
        quick = QuickWalk([new], [old], *found)
        assert quick.ancestor(old, new) == _ancestor(path, old, new), (old, new)
        proven += quick.ancestor(old, new)
        refused += not quick.ancestor(old, new)
    assert proven > 10 and refused > 10
    for _ in range(30):
        tips = rnd.sample(ids[50:], 3)
        olds = rnd.sample(ids, 3)
        found = gs.quick_walk(tips, olds, 1000, None)
        assert found is not None
        quick = QuickWalk(tips, olds, *found)
        for new in tips:
            for old in olds:
                if quick.ancestor(old, new):
                    assert _ancestor(path, old, new) and old != new
    gs.close()


def test_trees_and_blobs_are_no_tips_and_a_missing_object_is_an_error(history: tuple[Path, list[str]]) -> None:
    """git walks from commits only (as `Objects.walk`, which peels each tip and drops what is no
    commit): a tree or a blob among the tips adds nothing and is not printed, so its type is asked
    of git as before; a missing tip fails the quick walk (the push then asks each question on its
    own, as before, and fails as that fails)."""
    path, ids = history
    gs = GitStream(str(path / ".git"))
    tree = git(path, "rev-parse", f"{ids[-1]}^{{tree}}").stdout.strip()
    blob = git(path, "rev-parse", f"{ids[-1]}:f{300 % 7}").stdout.strip()
    alone = gs.quick_walk([ids[-1]], [ids[-5]], 1000, None)
    for other in (tree, blob):
        found = gs.quick_walk([other, ids[-1]], [ids[-5]], 1000, None)
        assert found == alone and found is not None
        assert other not in QuickWalk([other, ids[-1]], [ids[-5]], *found).ids
    for tips in (["1" * 40], [ids[-1], "2" * 40]):
        with pytest.raises(GateError) as got:
            gs.quick_walk(tips, [ids[0]], 1000, None)
        assert got.value.code == "GATE-GIT-UNREADABLE"
    gs.close()
