"""What the gate reads of git's layout by hand (`gatecore.adapters.gitlayout`) is what git reads:
each reading held equal to git's own answer, in the layouts git makes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.gitutil import ROOT, WorkRepo, git

from gatecore.adapters import gitlayout


def _merging(tmp_path: Path, branches: int, object_format: str = "sha1") -> WorkRepo:
    """A repository in the middle of a merge of `branches` branches into main (stopped before the commit)."""
    w = WorkRepo(tmp_path / "w", object_format)
    w.write("base", "0\n")
    w.commit("base")
    for i in range(branches):
        git(w.path, "checkout", "-q", "-b", f"b{i}", "main")
        w.write(f"f{i}", f"{i}\n")
        w.commit(f"b{i}")
    git(w.path, "checkout", "-q", "main")
    git(w.path, "merge", "-q", "--no-commit", "--no-ff", *(f"b{i}" for i in range(branches)))
    return w


@pytest.mark.parametrize("branches,object_format", [(1, "sha1"), (3, "sha1"), (2, "sha256")])
def test_merge_heads_are_the_parents_git_gives_the_merge(tmp_path: Path, branches: int, object_format: str) -> None:
    w = _merging(tmp_path, branches, object_format)
    git_dir = git(w.path, "rev-parse", "--absolute-git-dir").stdout.strip()
    heads = gitlayout.merge_heads(git_dir)
    assert heads and heads[0] == git(w.path, "rev-parse", "MERGE_HEAD").stdout.strip()
    git(w.path, "commit", "-q", "--no-edit")
    assert git(w.path, "rev-parse", "HEAD^@").stdout.split()[1:] == heads  # what git concluded the merge with
    assert gitlayout.merge_heads(git_dir) == []


def test_merge_heads_of_a_linked_worktree_are_its_own(tmp_path: Path) -> None:
    w = _merging(tmp_path, 1)
    git(w.path, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "other", "b0")
    wt_git_dir = git(tmp_path / "wt", "rev-parse", "--absolute-git-dir").stdout.strip()
    assert gitlayout.merge_heads(wt_git_dir) == []  # the main work tree's merge is not this one's


def test_merge_head_that_holds_no_ids_is_refused(tmp_path: Path) -> None:
    w = _merging(tmp_path, 1)
    (w.path / ".git" / "MERGE_HEAD").write_text("main\n")
    assert gitlayout.merge_heads(str(w.path / ".git")) is None


def test_the_shallow_list_is_where_git_looks_for_it(tmp_path: Path) -> None:
    """In a shallow clone and in a linked worktree of it (whose `commondir` names the clone's git
    directory), the shallow file is the one `git rev-parse --git-path shallow` names, and lists
    the commits git walks without parents."""
    w = WorkRepo(tmp_path / "w")
    for i in range(3):
        w.write("f", f"{i}\n")
        w.commit(f"c{i}")
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{w.path}", str(tmp_path / "shallow"))
    git(tmp_path / "shallow", "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "other")
    for where in (tmp_path / "shallow", tmp_path / "wt"):
        git_dir = git(where, "rev-parse", "--absolute-git-dir").stdout.strip()
        said = git(where, "rev-parse", "--path-format=absolute", "--git-path", "shallow").stdout.strip()
        assert Path(gitlayout.shallow_path(git_dir)).resolve() == Path(said).resolve()
        assert Path(said).read_text().split() == [git(where, "rev-parse", "main").stdout.strip()]


def _paths_built(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines where a path is built from one of `names` (os.path.join, open, Path(...), `/`)."""
    lines = []
    for node in ast.walk(tree):
        parts: list[ast.expr] = []
        if isinstance(node, ast.Call):
            f = node.func
            called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if called in ("join", "open", "Path", "joinpath", "exists", "isfile", "isdir", "lexists"):
                parts = list(node.args)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts = [node.left, node.right]
        if any(isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.split("/")[0] in names
               for a in parts):
            lines.append(node.lineno)
    return lines


def test_nothing_else_reads_git_s_layout_by_hand() -> None:
    """The hooks, the server's hook and the adapters build no path into a git directory
    themselves: git's layout is read by hand only in gitlayout (install and doctor, which
    write and check hook files, are the admin's tools)."""
    layout = {"packed-refs", "MERGE_HEAD", "commondir", "reftable", "refs", "HEAD", "config", "objects",
              "info", "logs", "worktrees"}
    allowed = {ROOT / "gatecore" / "adapters" / "gitlayout.py", ROOT / "server" / "install.py",
               ROOT / "server" / "doctor.py", ROOT / "server" / "gitolite.py", ROOT / "server" / "demo.py"}
    found = []
    for path in [*(ROOT / "gatecore").rglob("*.py"), *(ROOT / "hooks").glob("*.py"), *(ROOT / "server").glob("*.py")]:
        if path not in allowed:
            found += [f"{path.relative_to(ROOT)}:{n}" for n in _paths_built(ast.parse(path.read_text()), layout)]
    assert not found, found
