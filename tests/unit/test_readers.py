"""The gate's readers of a repository (git's own processes: `GitStream`, the hooks', and
`GitRepo`, the trusted side's, which also writes) agree with libgit2 (pygit2, the tests'
independent implementation: `support.libgit2`) on objects, refs and ancestry, and what `GitRepo`
writes through git's plumbing is byte for byte what libgit2 writes; a reader that cannot answer
fails closed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.formats import RepoFormat
from support.gitutil import AGENT, WorkRepo, git, git_bytes
from support.libgit2 import Libgit2

from gatecore.adapters.gitrepo import GitRepo
from gatecore.adapters.gitstream import GitStream
from gatecore.errors import GateError


@pytest.fixture
def repo(tmp_path: Path) -> WorkRepo:
    w = WorkRepo(tmp_path / "w")
    w.write("README", "hello\n")
    w.write("bin/run", b"#!/bin/sh\n", mode=0o755)
    w.symlink("link", "README")
    w.commit("base")
    git(w.path, "checkout", "-q", "-b", "side")
    w.write("side.txt", "side\n")
    w.commit("side", identity=AGENT)
    git(w.path, "checkout", "-q", "main")
    w.write("main.txt", b"\x00binary\xff" * 1000)
    w.commit("main")
    git(w.path, "merge", "-q", "--no-edit", "side")
    git(w.path, "tag", "-a", "-m", "v1", "v1")
    git(w.path, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    return w


def _all_objects(path: Path) -> list[str]:
    out = git_bytes(path, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return out.decode().split()


def test_symbolic_refs_asked_at_once_are_those_asked_one_by_one(repo: WorkRepo) -> None:
    """One for-each-ref for the names git lists; a symbolic ref whose target is missing (which
    for-each-ref passes over), packed refs and names below or above a ref read as one at a time."""
    git(repo.path, "symbolic-ref", "refs/heads/dangling", "refs/heads/nowhere")
    git(repo.path, "symbolic-ref", "refs/tags/to-tag", "refs/tags/v1")
    git(repo.path, "update-ref", "refs/heads/packed", "HEAD")
    git(repo.path, "pack-refs", "--all")
    git(repo.path, "symbolic-ref", "refs/heads/alias2", "refs/heads/packed")
    names = ["refs/heads/main", "refs/heads/alias", "refs/heads/alias2", "refs/heads/dangling", "refs/tags/to-tag",
             "refs/heads/packed", "refs/heads/none", "refs/heads", "refs/heads/main/below",
             "refs/tags/v1"]
    pg, gs = Libgit2(repo.path), GitStream(str(repo.path / ".git"))
    expected = {"refs/heads/alias": "refs/heads/main", "refs/heads/alias2": "refs/heads/packed",
                "refs/heads/dangling": "refs/heads/nowhere", "refs/tags/to-tag": "refs/tags/v1"}
    assert {n: t for n in names if (t := gs.symbolic_target(n))} == expected
    assert gs.symbolic_targets(names) == pg.symbolic_targets(names) == expected
    assert gs.symbolic_targets([]) == {}


@pytest.mark.parametrize("reader", ["GitStream", "GitRepo"])
def test_git_and_libgit2_hand_out_the_same_bytes_refs_and_ancestry(repo: WorkRepo, reader: str) -> None:
    pg = Libgit2(repo.path)
    gs = GitStream(str(repo.path / ".git")) if reader == "GitStream" else GitRepo.at(repo.path)
    oids = _all_objects(repo.path)
    assert len(oids) > 10
    for oid in oids:
        assert pg.read(oid) == gs.read(oid)
        assert pg.header(oid) == gs.header(oid)
    assert list(gs.read_many(oids)) == [(o, *pg.read(o)) for o in oids]
    blobs = [o for o in oids if pg.header(o)[0] == "blob"]
    assert gs.blob_digests(blobs) == pg.blob_digests(blobs)
    assert gs.ref_targets() == pg.ref_targets()
    assert gs.ref_targets(lambda n: n.startswith(b"refs/tags/")) == pg.ref_targets(lambda n: n.startswith(b"refs/tags/"))
    for name in ("refs/heads/main", "refs/heads/side", "refs/tags/v1", "refs/heads/alias", "refs/heads/none"):
        assert gs.ref_target(name) == pg.ref_target(name), name
        assert gs.symbolic_target(name) == pg.symbolic_target(name), name
    assert gs.symbolic_target("HEAD") == pg.symbolic_target("HEAD") == "refs/heads/main"
    main, side = pg.ref_target("refs/heads/main"), pg.ref_target("refs/heads/side")
    assert main and side
    assert gs.merge_base(main, side) == pg.merge_base(main, side) == side
    assert gs.is_ancestor(side, main) and not gs.is_ancestor(main, side)
    names = ["refs/heads/main", "refs/heads/alias", "refs/heads/none", "refs/heads/ma", "refs/heads/*", "HEAD"]
    assert gs.ref_values(names) == pg.ref_values(names) == {"refs/heads/main": main}
    walker = pg.repo.walk(main)
    walker.hide(side)
    assert [(i, p) for i, p in gs.walk_ids([main], [side], 100) or []] == [
        (str(c.id), tuple(str(p) for p in c.parent_ids)) for c in walker]
    listed = gs.walk_ids([main], [], 100)
    assert listed is not None and len(listed) == 4 and listed[0][0] == main and len(listed[0][1]) == 2
    assert gs.walk_ids([main], [], 3) is None  # more than the limit: git stops listing
    gs.close()


def test_a_missing_object_is_unreadable_and_a_failed_stream_is_never_asked_again(repo: WorkRepo) -> None:
    gs = GitStream(str(repo.path / ".git"))
    missing = "1" * 40
    with pytest.raises(GateError) as one:
        gs.read(missing)
    assert one.value.code == "GATE-GIT-UNREADABLE"
    assert gs.exists(missing) is False
    oids = _all_objects(repo.path)
    assert gs.read(oids[0])[1]  # a single missing object leaves the stream in step
    with pytest.raises(GateError) as many:
        list(gs.read_many([*oids[:3], missing, *oids[3:]]))
    assert many.value.code == "GATE-GIT-UNREADABLE"
    with pytest.raises(GateError) as after:
        gs.read(oids[0])  # the pipelined answers after the failure are out of step: refused
    assert after.value.code == "GATE-GIT-UNREADABLE"
    gs.close()


@pytest.mark.parametrize("bad", ["HEAD", "main", "1" * 39, "A" * 40, "1" * 40 + "\n" + "2" * 40, "--batch"])
def test_only_object_ids_reach_cat_file(repo: WorkRepo, bad: str) -> None:
    gs = GitStream(str(repo.path / ".git"))
    with pytest.raises(GateError) as got:
        gs.read(bad)
    assert got.value.code == "GATE-GIT-UNREADABLE"
    assert gs.exists(bad) is False
    gs.close()


def test_names_that_cannot_be_refs_are_absent_not_patterns(repo: WorkRepo) -> None:
    gs = GitStream(str(repo.path / ".git"))
    assert gs.ref_target("refs/heads/*") is None
    assert gs.ref_target("refs/heads/ma[i]n") is None
    assert gs.ref_target("refs/heads") is None  # a prefix of refs is not a ref
    assert gs.ref_target("refs/heads/main") is not None


def test_a_directory_that_is_no_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GateError) as got:
        GitStream(str(tmp_path))
    assert got.value.code == "GATE-GIT-REPOSITORY"


def test_what_a_push_brought_is_told_by_the_quarantine(repo: WorkRepo, tmp_path: Path) -> None:
    """Objects in a quarantine directory (as receive-pack leaves them for pre-receive) are new;
    the repository's own objects are not; a reader without a quarantine cannot tell."""
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo.path, "push", "-q", str(bare), "side:refs/heads/side")
    side = git(repo.path, "rev-parse", "side").stdout.strip()
    main = git(repo.path, "rev-parse", "main").stdout.strip()
    quarantine = bare / "objects" / "incoming-test"
    quarantine.mkdir()
    env = {"GIT_OBJECT_DIRECTORY": str(quarantine), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(bare / "objects")}
    git(bare, "fetch", "-q", str(repo.path), "main:refs/staged", env=env)
    git(bare, "update-ref", "-d", "refs/staged", env=env)
    env["GIT_QUARANTINE_PATH"] = str(quarantine)  # as receive-pack sets it (it forbids ref updates)
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        gs = GitStream(str(bare), str(quarantine))
        assert gs.read(main)[0] == "commit"  # the quarantine is visible
        assert gs.preexisting([main, side]) == {side}
        assert gs.preexisting([]) == set()
        assert GitStream(str(bare)).preexisting([main]) is None
        gs.close()
    assert GitRepo.at(repo.path).preexisting([main]) is None


def test_commits_only_on_review_refs_are_never_taken_as_checked(repo: WorkRepo) -> None:
    """The full walk hides every branch and tag but the review refs: a commit reachable only
    from refs/heads/review/runner/* is still new when main moves to it (a review found that
    `--exclude=refs/heads/...` before `--branches` excluded nothing)."""
    from gatecore.adapters import gitcmd

    git(repo.path, "checkout", "-q", "-b", "tmp")
    repo.write("ci/x.yml", "x\n")
    x = repo.commit("only on a review ref")
    git(repo.path, "update-ref", "refs/heads/review/runner/a1", x)
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "branch", "-q", "-D", "tmp")
    walked = [w.id for w in gitcmd.walk(str(repo.path / ".git"), [x], None, None)]
    assert walked == [x]


@pytest.mark.parametrize("where", ["none", "first-chunk", "last-chunk"])
def test_many_blob_digests_go_through_two_processes_and_fail_closed(tmp_path: Path, where: str) -> None:
    """Past PARALLEL_BLOBS, digests are read by two cat-file processes taking chunks in turn: the
    same digests as hashlib, in any order of sizes; a missing blob anywhere fails the request."""
    import hashlib

    from gatecore.adapters import gitstream

    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    blobs = [(b"x" * (i * 997 % 50000)) + str(i).encode() for i in range(gitstream.PARALLEL_BLOBS + 150)]
    oids = git_bytes(bare, "hash-object", "-w", "--stdin-paths", input="\n".join(
        str(_write(tmp_path, i, b)) for i, b in enumerate(blobs)).encode()).decode().split()
    asked = list(oids)
    missing = "1" * 40
    if where == "first-chunk":
        asked.insert(3, missing)
    elif where == "last-chunk":
        asked.append(missing)
    gs = GitStream(str(bare))
    try:
        if where == "none":
            got = gs.blob_digests(asked)
            assert got == {o: hashlib.sha256(b).hexdigest() for o, b in zip(oids, blobs, strict=True)}
        else:
            with pytest.raises(GateError) as exc:
                gs.blob_digests(asked)
            assert exc.value.code == "GATE-GIT-UNREADABLE"
    finally:
        gs.close()


def _write(tmp: Path, i: int, data: bytes) -> Path:
    path = tmp / f"blob-{i}"
    path.write_bytes(data)
    return path


def test_merge_bases_in_one_request_are_git_merge_base_pair_by_pair(tmp_path: Path) -> None:
    """`merge_bases` (one `rev-parse A...B` for many pairs) answers what `git merge-base A B`
    answers: a plain fork, one side an ancestor, the same commit twice, unrelated histories,
    and a criss-cross merge with two merge bases (asked of merge-base itself)."""
    w = WorkRepo(tmp_path / "w")
    w.write("a", "0\n")
    root = w.commit("root")
    git(w.path, "checkout", "-q", "-b", "x")
    w.write("x", "1\n")
    x1 = w.commit("x1")
    git(w.path, "checkout", "-q", "-b", "y", root)
    w.write("y", "1\n")
    y1 = w.commit("y1")
    git(w.path, "merge", "-q", "--no-edit", x1)  # y2 = y1 + x1
    y2 = git(w.path, "rev-parse", "HEAD").stdout.strip()
    git(w.path, "checkout", "-q", "x")
    git(w.path, "merge", "-q", "--no-edit", y1)  # x2 = x1 + y1: criss-cross with y2
    x2 = git(w.path, "rev-parse", "HEAD").stdout.strip()
    git(w.path, "checkout", "-q", "--orphan", "other")
    w.write("o", "o\n")
    other = w.commit("unrelated")
    pairs = [(x1, y1), (root, x2), (x2, x2), (x2, other), (x2, y2), (y2, x2)]
    for reader in (GitStream(str(w.path / ".git")), GitRepo.at(w.path)):
        got = reader.merge_bases(pairs)
        assert got == {p: reader.merge_base(*p) for p in pairs}
        assert got[(x1, y1)] == root and got[(x2, x2)] == x2 and got[(x2, other)] is None
        assert got[(x2, y2)] in (x1, y1)
    two = git(w.path, "merge-base", "--all", x2, y2).stdout.split()
    assert len(two) == 2  # the criss-cross case is real


def test_a_stream_left_half_read_is_never_asked_again(repo: WorkRepo) -> None:
    gs = GitStream(str(repo.path / ".git"))
    oids = _all_objects(repo.path)
    stream = gs.read_many(oids)
    assert next(stream)[0] == oids[0]
    stream.close()  # the caller stopped: the answers still coming are out of step
    with pytest.raises(GateError) as after:
        gs.read(oids[0])
    assert after.value.code == "GATE-GIT-UNREADABLE"
    gs.close()


def test_a_linked_worktree_is_read_in_its_repository_s_object_format(tmp_path: Path) -> None:
    """A worktree's git directory has no config: the object format is the common directory's
    (a sha256 repository's worktree read as sha1 refused every id)."""
    main = tmp_path / "main"
    git(tmp_path, "init", "-q", "--object-format=sha256", "-b", "main", str(main))
    git(main, "commit", "-q", "--allow-empty", "-m", "A")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    head = git(tmp_path / "wt", "rev-parse", "HEAD").stdout.strip()
    worktree_git_dir = git(tmp_path / "wt", "rev-parse", "--absolute-git-dir").stdout.strip()
    assert worktree_git_dir != str(main / ".git") and len(head) == 64
    reader = GitStream(worktree_git_dir)
    try:
        assert reader.object_format == "sha256"
        assert reader.header(head) == ("commit", reader.header(head)[1])
        assert reader.merge_base(head, head) == head
    finally:
        reader.close()


@pytest.mark.parametrize("bad", ["HEAD", "main", "HEAD~1", "--all", "0" * 39, "A" * 40])
def test_ancestry_questions_take_object_ids_only(repo: WorkRepo, bad: str) -> None:
    """Anything but a full id would reach git's argv as a revision expression or an option."""
    gs = GitStream(str(repo.path / ".git"))
    head = git(repo.path, "rev-parse", "HEAD").stdout.strip()
    try:
        for ask in (lambda: gs.merge_base(bad, head), lambda: gs.is_ancestor(head, bad),
                    lambda: gs.merge_bases([(bad, head)])):
            with pytest.raises(GateError) as err:
                ask()
            assert err.value.code == "GATE-GIT-UNREADABLE", err.value
    finally:
        gs.close()



def test_what_gitrepo_writes_through_git_is_what_libgit2_writes(repo: WorkRepo) -> None:
    """Ledger records, receipts, approvals and the archive are written through git's plumbing
    (`hash-object`, `mktree --batch`, `commit-tree`): the same objects, id for id, as libgit2
    wrote them when the trusted side used pygit2, so either kind of ledger reads the same."""
    gr, lg = GitRepo.at(repo.path), Libgit2(repo.path)
    try:
        files = {"record.json": b'{"a": 1}\n', "empty": b"", 'odd "name"\t\\': b"x\x00y", "caf\u00e9": b"\xff"}
        assert gr.write_tree(files) == lg.write_tree(files)
        nested = {"attempts/aa/bb/cc": b"a1", "attempts/aa/bc/dd": b"a1", "receipts/00/11/22": b"a2", "top": b"t"}
        base = gr.write_nested_tree(None, nested)
        assert base == lg.write_nested_tree(None, nested)
        more = {"attempts/aa/bb/ee": b"a3", "generations/ff/00/11": b"a3", "new": b""}
        grown = gr.write_nested_tree(base, more)
        assert grown == lg.write_nested_tree(base, more)
        assert gr.write_nested_tree(grown, {}) == grown
        main, side = (git(repo.path, "rev-parse", b).stdout.strip() for b in ("main", "side"))
        for parents, message in (([], "gate attempt a1: opened\n"), ([main], "gate approval \u00e9t\u00e9: x\n"),
                                 ([main, side], "two parents\n\nbody\n")):
            args = (grown, parents, message, "gate ledger", "ledger@gate.invalid", 1_700_000_000)
            assert gr.write_commit(*args) == lg.write_commit(*args)
    finally:
        gr.close()


def test_gitrepo_moves_a_ref_only_from_the_value_it_expects(repo: WorkRepo) -> None:
    gr = GitRepo.at(repo.path)
    try:
        main, side = gr.ref_target("refs/heads/main"), gr.ref_target("refs/heads/side")
        assert main and side
        gr.set_ref("refs/gate/t", main, None)
        with pytest.raises(GateError) as moved:
            gr.set_ref("refs/gate/t", side, None)  # it exists: "must not exist" fails
        assert moved.value.code == "GATE-LEDGER-REWRITE" and main in moved.value.detail
        with pytest.raises(GateError):
            gr.set_ref("refs/gate/t", side, side)
        gr.set_ref("refs/gate/t", side, main)
        gr.delete_ref("refs/gate/t", main)  # not the value it holds: left alone
        assert gr.ref_target("refs/gate/t") == side
        gr.delete_ref("refs/gate/t", side)
        assert gr.ref_target("refs/gate/t") is None
        assert gr.resolve("v1") == main and gr.resolve("main~0") == main
        for bad in ("-h", "--all", "nothing-here", "main:README", ""):
            with pytest.raises(GateError) as err:
                gr.resolve(bad)
            assert err.value.code == "GATE-INPUT-ARGUMENT", bad
    finally:
        gr.close()


def test_the_symbolic_ref_questions_of_a_push_are_one_batch_in_every_backend(repo_format: RepoFormat,
                                                                            tmp_path: Path) -> None:
    """A push creating 200 branches asked `git symbolic-ref` once per branch where refs were not
    loose files (reftable: 415-749 ms against 78-91 ms): now one `for-each-ref` and one `cat-file`
    for any number of names, in any backend, and `symbolic-ref` only for the dangling ones."""
    w = WorkRepo(tmp_path / "w")
    w.commit("base")
    git(w.path, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(w.path, "symbolic-ref", "refs/heads/dangling", "refs/heads/review/runner/a1")
    names = [f"refs/heads/new/b{i:03d}" for i in range(200)] + ["refs/heads/alias", "refs/heads/dangling",
                                                               "refs/heads/main"]
    trace = tmp_path / "trace"
    gs = GitStream(str(w.path / ".git"))
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GIT_TRACE", str(trace))
            found = gs.symbolic_targets(names)
    finally:
        gs.close()
    assert found == {"refs/heads/alias": "refs/heads/main", "refs/heads/dangling": "refs/heads/review/runner/a1"}
    ran = [line.split("built-in: git ", 1)[1].split(" ")[0] for line in trace.read_text().splitlines()
           if "built-in: git " in line]
    assert sorted(ran) == ["cat-file", "for-each-ref", "symbolic-ref"], ran


def test_a_collected_repository_ends_its_git_processes(repo: WorkRepo) -> None:
    """A GitRepo (a GitStream) nobody closed ends its `cat-file` processes when it is collected: a long-lived
    process opening many (the test tiers, a library caller) held thousands of them before."""
    import gc

    opened = GitRepo.at(repo.path)
    head = git(repo.path, "rev-parse", "HEAD").stdout.strip()
    assert opened.header(head)[0] == "commit" and list(opened.read_many([head]))
    procs = [p.proc for p in (opened._batch, opened._check) if p is not None]
    assert len(procs) == 2 and all(p.poll() is None for p in procs)
    del opened
    gc.collect()
    assert all(p.poll() is not None for p in procs), [p.pid for p in procs]
