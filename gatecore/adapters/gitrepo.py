"""The trusted side's repository: `GitRepo`, the engine's `GitReader` plus the writes the
trusted commands make, all through git's own plumbing.

Reads are the hook's (`GitStream`: `cat-file --batch`, `for-each-ref`, `rev-list`); writes go
to `hash-object`, `mktree`, `commit-tree` and `update-ref --stdin` transactions. So every
repository the local git opens is served, whatever libgit2 can open: files or reftable refs,
refs kept at a path of their own (`extensions.refStorage = files://DIR`), SHA-1 or SHA-256
objects. Ids have the repository's width (`object_format`, as `git rev-parse
--show-object-format` says it); an id of the other width is refused before it reaches git.

Every git process gets `gitcmd`'s hardened environment (no replacement objects, no grafts,
no lazy fetch). Objects are handed out as raw bytes for `gatecore.git.objects` to parse; what
this module writes is exactly what libgit2 wrote before it (a differential test holds the
ids equal: tests/unit/test_readers.py), so ledgers written by either read the same.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence

from ..errors import GateError, malformed
from ..git.gitmodel import FORMATS, MODE_BLOB, MODE_GITLINK, MODE_TREE
from ..valueclass import field, valueclass
from . import gitcmd
from .gitstream import GitStream

#: The object type a tree entry's mode names (`mktree` checks it): any other mode is a blob's.
_KIND_OF_MODE = {MODE_TREE: "tree", MODE_GITLINK: "commit"}
#: Bytes a tree entry's name is written with as they are in `mktree`'s input; any other is
#: C-quoted (git's `unquote_c_style` reads it back byte for byte).
_PLAIN_NAME = frozenset(range(0x20, 0x7F)) - {ord('"'), ord("\\")}


class GitRepo(GitStream):
    """A repository opened by path, read and written through git. Not thread-safe; one per
    command; its git processes end with `close()` (or when it is collected, as a GitStream's)."""

    def __init__(self, git_dir: str, object_format: str, workdir: str | None) -> None:
        super().__init__(git_dir, workdir=workdir, object_format=object_format)

    # --- opening -------------------------------------------------------------
    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> GitRepo:
        """Open a repository by path (a work tree, a directory in one, or a git directory), as
        `git -C PATH` finds it: its git directory, object format and work tree, from one
        `git rev-parse`. GATE-GIT-REPOSITORY when git cannot open it."""
        where = os.fspath(path)
        if not os.path.isdir(where):
            raise GateError("GATE-GIT-REPOSITORY", f"cannot open repository {where}: no such directory")
        out = gitcmd.run_git(["rev-parse", "--absolute-git-dir", "--show-object-format", "--is-inside-work-tree",
                              "--show-cdup"], cwd=where, ok=None)
        lines = out.stdout.decode("utf-8", "surrogateescape").split("\n")
        if not out.ok or len(lines) < 3:
            raise GateError("GATE-GIT-REPOSITORY", f"cannot open repository {where}: {out.last_error()}")
        git_dir, fmt, inside = lines[0], lines[1], lines[2]
        if fmt not in FORMATS:
            raise GateError("GATE-GIT-OBJECT-FORMAT", f"{git_dir} uses the object format {fmt[:40]!r}, "
                                                      "which the gate does not know")
        workdir = os.path.abspath(os.path.join(where, lines[3])) if inside == "true" and len(lines) > 3 else None
        return cls(git_dir, fmt, workdir)

    # --- revisions -------------------------------------------------------------------
    def resolve(self, rev: str) -> str:
        """A revision expression to a commit id (GATE-INPUT-ARGUMENT when it names none)."""
        from ..git.objects import Objects

        if rev.startswith("-") or not rev or "\n" in rev:
            raise GateError("GATE-INPUT-ARGUMENT", f"cannot resolve {rev!r}: not a revision")
        out = self._git(["rev-parse", "--verify", "-q", rev], ok=None)
        oid = out.stdout.decode("ascii", "replace").strip()
        if not out.ok or not self._oid.fullmatch(oid):
            why = out.last_error() if out.stderr.strip() else "no such revision here"
            raise GateError("GATE-INPUT-ARGUMENT", f"cannot resolve {rev!r}: {why}")
        commit = Objects(self).peel_to_commit(oid)
        if commit is None:
            raise GateError("GATE-INPUT-ARGUMENT", f"{rev!r} does not name a commit")
        return commit

    # --- writes (the trusted side only; never from a hook) -----------------------------
    def _git(self, args: Sequence[str], *, input: bytes | None = None, env: Mapping[str, str] | None = None,
             ok: tuple[int, ...] | None = (0,), code: str = "GATE-GIT-REPOSITORY") -> gitcmd.GitResult:
        return gitcmd.run_git([f"--git-dir={self.path}", *args], input=input, env=env, ok=ok, code=code)

    def write_blobs(self, datas: Sequence[bytes]) -> list[str]:
        """Blobs of these bytes (as they are: no filters), their ids in order: one
        `git hash-object` for one blob, one `--stdin-paths` run for many."""
        distinct = list(dict.fromkeys(datas))
        if len(distinct) == 1:
            oid = self._written(self._git(["hash-object", "-w", "--stdin"], input=distinct[0]), 1)[0]
            return [oid for _ in datas]
        if not distinct:
            return []
        with tempfile.TemporaryDirectory(prefix="gate-blobs-") as tmp:
            paths = []
            for n, data in enumerate(distinct):
                paths.append(os.path.join(tmp, str(n)))
                with open(paths[-1], "wb") as f:
                    f.write(data)
            listed = "".join(p + "\n" for p in paths).encode("utf-8", "surrogateescape")
            ids = self._written(self._git(["hash-object", "-w", "--no-filters", "--stdin-paths"], input=listed),
                                len(distinct))
        by_data = dict(zip(distinct, ids, strict=True))
        return [by_data[d] for d in datas]

    def _written(self, out: gitcmd.GitResult, count: int) -> list[str]:
        """The ids a writing command printed, one a line, each of this repository's width."""
        ids = out.stdout.decode("ascii", "replace").split()
        if len(ids) != count or not all(self._oid.fullmatch(i) for i in ids):
            raise GateError("GATE-GIT-REPOSITORY", f"git wrote {len(ids)} object(s) where {count} were asked "
                                                   f"({out.stdout[:80]!r})")
        return ids

    def write_trees(self, trees: Sequence[Mapping[bytes, tuple[int, str]]]) -> list[str]:
        """Trees of these entries (name -> (mode, id)), their ids in order: one `git mktree --batch`
        (git sorts the entries and checks that every one names an object of its mode's type)."""
        if not trees:
            return []
        lines = []
        for entries in trees:
            for name, (mode, oid) in entries.items():
                if not name or b"/" in name or b"\0" in name:
                    raise malformed(f"cannot write a tree entry named {name!r}")
                lines.append(b"%o %s %s\t%s\n" % (mode, _KIND_OF_MODE.get(mode, "blob").encode(), oid.encode("ascii"),
                                                  _quoted(name)))
            lines.append(b"\n")
        return self._written(self._git(["mktree", "--batch"], input=b"".join(lines)), len(trees))

    def write_tree(self, files: dict[str, bytes]) -> str:
        """A flat tree of regular files (names without '/')."""
        names = sorted(files)
        blobs = self.write_blobs([files[n] for n in names])
        return self.write_trees([{n.encode("utf-8"): (MODE_BLOB, b) for n, b in zip(names, blobs, strict=True)}])[0]

    def write_nested_tree(self, base_tree: str | None, files: dict[str, bytes]) -> str:
        """`base_tree` (None: empty) with regular files added at nested paths ('a/b/c'): every
        blob in one `hash-object`, the trees level by level, one `mktree --batch` per level."""
        from ..git.objects import Objects

        objects = Objects(self)
        names = sorted(files)
        blobs = dict(zip(names, self.write_blobs([files[n] for n in names]), strict=True))
        root = _Dir(base_tree)
        for path, oid in blobs.items():
            node = root
            *dirs, leaf = path.split("/")
            for d in dirs:
                node = node.below.setdefault(d.encode("utf-8"), _Dir(None))
            node.files[leaf.encode("utf-8")] = oid
        levels: list[list[_Dir]] = [[root]]
        while True:  # read each level's base trees (top down), to know the next level's
            for node in levels[-1]:
                node.entries = dict(objects.tree(node.base)) if node.base is not None else {}
                for name, child in node.below.items():
                    have = node.entries.get(name)
                    if have is not None:
                        if have[0] != MODE_TREE:
                            raise malformed(f"tree {node.base}: {name!r} is not a directory")
                        child.base = have[1]
            nxt = [child for node in levels[-1] for child in node.below.values()]
            if not nxt:
                break
            levels.append(nxt)
        for level in reversed(levels):  # write them bottom up
            for node in level:
                node.entries.update({name: (MODE_BLOB, oid) for name, oid in node.files.items()})
                node.entries.update({name: (MODE_TREE, child.written) for name, child in node.below.items()})
            for node, oid in zip(level, self.write_trees([n.entries for n in level]), strict=True):
                node.written = oid
        return root.written

    def write_commit(self, tree_id: str, parents: list[str], message: str, name: str, email: str,
                     when: int) -> str:
        """A commit of `tree_id` by `name <email>` (author and committer) at `when` (UTC), the
        message byte for byte: `git commit-tree`, never signed, never re-encoded."""
        for oid in (tree_id, *parents):
            self._valid(oid)
        stamp = f"{when} +0000"
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": stamp,
               "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": stamp}
        args = ["-c", "i18n.commitEncoding=UTF-8", "commit-tree", "--no-gpg-sign", tree_id]
        for p in parents:
            args += ["-p", p]
        return self._written(self._git(args, input=message.encode("utf-8"), env=env), 1)[0]

    def update_refs(self, updates: Sequence[tuple[str, str | None, str | None]]) -> bool:
        """One `git update-ref --stdin` transaction of (ref, new, expected old) updates (new None:
        delete; old None: must not exist), each ref written as itself (a symbolic ref is
        replaced, never followed): all of them land, or none (False)."""
        zero = self.zero_id
        lines = []
        for ref, new, old in updates:
            if not ref.startswith("refs/") or any(c in ref for c in " \n\0"):
                raise GateError("GATE-INPUT-ARGUMENT", f"cannot write the ref {ref!r}")
            for oid in (new, old):
                if oid is not None:
                    self._valid(oid)
            lines += ["option no-deref", f"update {ref} {new or zero} {old or zero}"]
        lines.append("")
        out = self._git(["update-ref", "--stdin"], input="\n".join(lines).encode("utf-8"), ok=None)
        return out.ok

    def set_ref(self, name: str, target: str, expected_old: str | None) -> None:
        """Compare-and-swap a direct ref (`expected_old` None means: must not exist)."""
        if not self.update_refs([(name, target, expected_old)]):
            current = self.ref_target(name)
            detail = (f"expected {expected_old}, found {current}" if current != expected_old
                      else "git refused to write it")
            raise GateError("GATE-LEDGER-REWRITE", f"ref {name} moved: {detail}")

    def delete_ref(self, name: str, expected_old: str) -> None:
        """Delete `name` if it still points at `expected_old` (else leave it)."""
        self.update_refs([(name, None, expected_old)])


@valueclass(eq=False)
class _Dir:
    """A directory of a nested tree being written: its base tree, the blobs and directories
    added below it, its entries once read, its id once written."""

    base: str | None
    files: dict[bytes, str] = field(default_factory=dict)
    below: dict[bytes, _Dir] = field(default_factory=dict)
    entries: dict[bytes, tuple[int, str]] = field(default_factory=dict)
    written: str = ""


def _quoted(name: bytes) -> bytes:
    """A tree entry's name as `mktree` reads it: as it is, or C-quoted when it holds a byte
    that is not plain printable ASCII (or starts with a quote)."""
    if all(b in _PLAIN_NAME for b in name):
        return name
    return b'"' + b"".join(bytes([b]) if b in _PLAIN_NAME else b"\\%03o" % b for b in name) + b'"'
