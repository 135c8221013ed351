"""The canonical tree-delta digest, checked record by record against `git diff-tree`."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import ROOT, WorkRepo, git, git_bytes

from gatecore.adapters.gitrepo import GitRepo
from gatecore.adapters.gitstream import GitStream
from gatecore.git import digest
from gatecore.git.objects import Objects

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def diff_tree_records(repo: Path, old: str, new: str) -> set[tuple[bytes, int, int, str, str]]:
    out = git_bytes(repo, "diff-tree", "-r", "-z", "--no-renames", "--raw", old, new)
    parts = out.split(b"\0")
    recs = set()
    i = 0
    while i + 1 < len(parts) and parts[i]:
        meta, path = parts[i], parts[i + 1]
        om, nm, oid, nid, _status = meta.lstrip(b":").split(b" ")
        recs.add((path, int(om, 8), int(nm, 8), oid.decode(), nid.decode()))
        i += 2
    return recs


def gate_records(repo: Path, old: str | None, new: str) -> list[digest.DeltaRecord]:
    """The records through both readers (pygit2, and git's own processes), which must agree."""
    found = []
    for reader in (GitRepo.at(repo), GitStream(str(repo / ".git"))):
        objects = Objects(reader)
        found.append(digest.delta_records(objects, None if old is None else objects.commit(old).tree_id,
                                          objects.commit(new).tree_id))
    assert found[0] == found[1]
    return found[0]


def check(repo: WorkRepo, old: str | None, new: str) -> list[digest.DeltaRecord]:
    ours = gate_records(repo.path, old, new)
    theirs = diff_tree_records(repo.path, old or EMPTY_TREE, new)
    assert {(r.path, r.old_mode, r.new_mode, r.old_id, r.new_id) for r in ours} == theirs
    assert len(ours) == len(theirs)
    for r in ours:
        for mode, oid, h in ((r.old_mode, r.old_id, r.old_sha256), (r.new_mode, r.new_id, r.new_sha256)):
            if mode in (0, 0o160000):
                assert h == ""
            else:
                blob = git_bytes(repo.path, "cat-file", "blob", oid)
                assert h == hashlib.sha256(blob).hexdigest()
    return ours


@pytest.fixture
def base(work: WorkRepo) -> tuple[WorkRepo, str]:
    work.write("README", "hello\n")
    work.write("src/a.py", "print(1)\n")
    work.write("src/deep/b.py", "x = 2\n")
    work.write("tools/run.sh", "#!/bin/sh\n", mode=0o644)
    work.write("swap", "file that becomes a directory\n")
    work.write("dir2file/x", "dir that becomes a file\n")
    work.write("bin.dat", bytes(range(256)))
    work.symlink("link", "README")
    return work, work.commit("base")


def test_root_commit(base: tuple[WorkRepo, str]) -> None:
    repo, c0 = base
    recs = check(repo, None, c0)
    assert all(r.old_mode == 0 for r in recs)


@pytest.mark.parametrize("change", [
    "add", "delete", "modify", "mode", "symlink_retarget", "file_to_symlink", "symlink_to_file",
    "file_to_dir", "dir_to_file", "binary", "rename", "submodule_add", "nested_add", "noop",
])
def test_change_kinds_match_diff_tree(base: tuple[WorkRepo, str], change: str) -> None:
    repo, c0 = base
    p = repo.path
    if change == "add":
        repo.write("new.txt", "new\n")
    elif change == "delete":
        (p / "src/a.py").unlink()
    elif change == "modify":
        repo.write("src/deep/b.py", "x = 3\n")
    elif change == "mode":
        (p / "tools/run.sh").chmod(0o755)
    elif change == "symlink_retarget":
        repo.symlink("link", "src/a.py")
    elif change == "file_to_symlink":
        repo.symlink("README", "src/a.py")
    elif change == "symlink_to_file":
        repo.write("link", "now a file\n")
    elif change == "file_to_dir":
        (p / "swap").unlink()
        repo.write("swap/inner", "inside\n")
    elif change == "dir_to_file":
        (p / "dir2file/x").unlink()
        (p / "dir2file").rmdir()
        repo.write("dir2file", "a file now\n")
    elif change == "binary":
        repo.write("bin.dat", bytes(reversed(range(256))) + b"\0\0")
    elif change == "rename":
        (p / "src/a.py").rename(p / "src/renamed.py")
    elif change == "submodule_add":
        git(p, "update-index", "--add", "--cacheinfo", f"160000,{c0},vendor/sub")
    elif change == "nested_add":
        repo.write("a/b/c/d/e.txt", "deep\n")
    if change == "submodule_add":
        git(p, "commit", "-q", "-m", "sub")
        c1 = repo.head()
    else:
        c1 = repo.commit(change)
    recs = check(repo, c0, c1)
    if change == "noop":
        assert recs == []
    if change == "rename":
        assert {r.path for r in recs} == {b"src/a.py", b"src/renamed.py"}
    if change == "file_to_symlink":
        assert len(recs) == 1 and recs[0].old_mode == 0o100644 and recs[0].new_mode == 0o120000


def test_submodule_pointer_change(base: tuple[WorkRepo, str]) -> None:
    repo, c0 = base
    git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{c0},vendor/sub")
    git(repo.path, "commit", "-q", "-m", "sub")
    c1 = repo.head()
    git(repo.path, "update-index", "--cacheinfo", f"160000,{c1},vendor/sub")
    git(repo.path, "commit", "-q", "-m", "bump")
    recs = check(repo, c1, repo.head())
    assert [(r.path, r.old_mode, r.new_mode) for r in recs] == [(b"vendor/sub", 0o160000, 0o160000)]


def test_non_utf8_path(base: tuple[WorkRepo, str]) -> None:
    repo, c0 = base
    (repo.path / "caf\xe9".encode("latin-1").decode("utf-8", "surrogateescape")).write_text("x")
    c1 = repo.commit("latin-1 name")
    recs = check(repo, c0, c1)
    assert recs[0].path == b"caf\xe9"


def test_digest_is_independent_of_rename_detection_and_diff_config(base: tuple[WorkRepo, str]) -> None:
    repo, c0 = base
    (repo.path / "src/a.py").rename(repo.path / "src/renamed.py")
    c1 = repo.commit("rename")
    before = cli("digest", "--repo", str(repo.path), "--from", c0, "--to", c1).stdout
    git(repo.path, "config", "diff.renames", "copies")
    git(repo.path, "config", "diff.algorithm", "histogram")
    assert cli("digest", "--repo", str(repo.path), "--from", c0, "--to", c1).stdout == before
    assert before.startswith("gate-tree-delta-v1 ")


# --- golden vectors (also printed in docs/digest.md) -----------------------------------

Z = "0" * 40


def h(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


R = digest.DeltaRecord
HELLO, HELLO_WORLD = "ce013625030ba8dba906f756967f9e9ca394464a", "94954abda49de8615a048f8d2e64b5de848e27a1"
EMPTY, A = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", "2e65efe2a145dda7ee51d1741299f848e5bf752e"
DOC_VECTORS: list[tuple[str, list[digest.DeltaRecord], str]] = [
    ("empty", [], "6b24fdafc31e28c3abf45e018c5b59c23249200bfff9d03a0e340fab98f77e74"),
    ("one-add", [R(b"hello.txt", 0, 0o100644, Z, HELLO, "", h(b"hello\n"))],
     "e84a5c1b871a5b3e4c9dca9bd1c595a188ff39309e2485415d9c38d6373a09f1"),
    ("mixed", [
        R(b"README", 0o100644, 0o100644, HELLO, HELLO_WORLD, h(b"hello\n"), h(b"hello, world\n")),
        R(b"ci/deploy.yml", 0o100644, 0, EMPTY, Z, h(b""), ""),
        R(b"link", 0o100644, 0o120000, HELLO, A, h(b"hello\n"), h(b"a")),
        R(b"tools/run.sh", 0o100644, 0o100755, EMPTY, EMPTY, h(b""), h(b"")),
        R(b"vendor/sub", 0, 0o160000, Z, "1" * 40, "", ""),
    ], "5b3fe4ae06928f64f44d7ee5ac14587f6efa2e06bbcd9d6f6e84fc75b4834bf1"),
]


def test_vector_encoding_layout() -> None:
    rec = digest.DeltaRecord(b"a", 0, 0o100644, Z, "e" * 40, "", "f" * 64)
    enc = digest.encode_records("sha1", [rec])
    assert enc.startswith(b"gate-tree-delta-v1\nsha1\n" + (1).to_bytes(8, "big"))
    assert enc[len(b"gate-tree-delta-v1\nsha1\n") + 8:] == (
        b"\0\0\0\x01a" + b"\0\0\0\x06000000" + b"\0\0\0\x06100644" + b"\0\0\0\x28" + Z.encode()
        + b"\0\0\0\x28" + b"e" * 40 + b"\0\0\0\x00" + b"\0\0\0\x40" + b"f" * 64)


def test_vectors_from_docs() -> None:
    doc = (ROOT / "docs" / "digest.md").read_text()
    for name, records, expected in DOC_VECTORS:
        assert digest.digest_records("sha1", records) == expected, name
        assert expected in doc, f"vector {name} is not in docs/digest.md"


def test_records_are_sorted_and_unique() -> None:
    a = digest.DeltaRecord(b"b", 0, 0o100644, Z, "1" * 40, "", "2" * 64)
    b = digest.DeltaRecord(b"a", 0, 0o100644, Z, "3" * 40, "", "4" * 64)
    assert digest.digest_records("sha1", [a, b]) == digest.digest_records("sha1", [b, a])
    with pytest.raises(ValueError):
        digest.encode_records("sha1", [a, a])

