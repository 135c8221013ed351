"""The one module that talks to pygit2: `GitRepo`, the engine's `GitReader`, plus the writes
the trusted side makes.

Inside a pre-receive hook the repository is opened with `RepositoryOpenFlag.FROM_ENV`, so
that objects still in git's quarantine directory are visible; an object that cannot be
read is `GATE-GIT-UNREADABLE` (fail closed), never "nothing to check". Objects are handed
out as raw bytes for `gatecore.objects` to parse: libgit2's own reading of trees, modes
and commit headers is never used for a decision. libgit2 does not honour
`refs/replace/*`; it does honour `info/grafts`, so where a graft file exists, ancestry
questions go to git with grafts switched off (`gitcmd`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence

import pygit2
from pygit2.enums import ObjectType, RepositoryOpenFlag

from ..errors import GateError, malformed, unreadable
from ..gitmodel import MODE_BLOB, MODE_TREE, ShownCommit, WalkedCommit
from . import gitcmd

_TYPE_NAMES = {ObjectType.COMMIT: "commit", ObjectType.TREE: "tree", ObjectType.BLOB: "blob",
               ObjectType.TAG: "tag"}


def _sha1_only(git_dir: str) -> None:
    """GATE-GIT-OBJECT-FORMAT for a repository of any object format but sha1.

    Everything that reads through pygit2 (the client hooks, the trusted side's commands,
    receipts, the ledger, approvals) works on sha1 repositories only: no released libgit2
    opens SHA-256 ones. The pre-receive hook reads through git itself (`gitstream`) and
    works in both; docs/security.md has the table. When libgit2 reads SHA-256, this is
    the one check to lift (with `object_format` below) once those paths are tested there.
    """
    fmt = gitcmd.object_format(git_dir) if os.path.isfile(os.path.join(git_dir, "config")) else "sha1"
    if fmt != "sha1":
        raise GateError("GATE-GIT-OBJECT-FORMAT",
                        f"{git_dir} uses the {fmt} object format: the client hooks and the trusted side read "
                        "repositories through libgit2, which cannot open it (the server's pre-receive hook can)")


class GitRepo:
    """A repository handle. Not thread-safe; one per process."""

    object_format = "sha1"
    zero_id = "0" * 40

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self._blob_digests: dict[str, str] = {}
        self._grafts = os.path.exists(os.path.join(str(repo.path), "info", "grafts"))

    # --- opening -------------------------------------------------------------
    @classmethod
    def for_hook(cls, git_dir: str) -> GitRepo:
        """Open the repository of a running hook: `git_dir` plus the quarantine, from the env."""
        # A hook is its own short process that keeps what it needs (parsed trees, digests):
        # libgit2's object cache for commits and trees would only hold memory.
        pygit2.settings.cache_object_limit(ObjectType.COMMIT, 0)
        pygit2.settings.cache_object_limit(ObjectType.TREE, 0)
        return cls._open(git_dir, RepositoryOpenFlag.FROM_ENV)

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> GitRepo:
        """Open a repository by path (work tree or git dir), for commands outside hooks."""
        return cls._open(os.fspath(path), RepositoryOpenFlag(0))

    @classmethod
    def _open(cls, path: str, flags: RepositoryOpenFlag) -> GitRepo:
        try:
            repo = pygit2.Repository(path, flags=flags)
        except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
            for git_dir in (path, os.path.join(path, ".git")):
                _sha1_only(git_dir)
            raise GateError("GATE-GIT-REPOSITORY", f"cannot open repository {path}: {exc}") from None
        _sha1_only(str(repo.path))  # a libgit2 that opens SHA-256 repositories: still not read here, untested
        return cls(repo)

    @property
    def path(self) -> str:
        return str(self._repo.path)

    @property
    def workdir(self) -> str | None:
        wd = self._repo.workdir
        return None if wd is None else str(wd)

    # --- objects (the GitReader port) -------------------------------------------------
    def header(self, oid: str) -> tuple[str, int]:
        try:
            otype, size = self._repo.odb.read_header(oid)
        except (KeyError, pygit2.GitError, ValueError):
            raise unreadable(f"object {oid} is not in the repository (quarantine not visible?)") from None
        return _TYPE_NAMES.get(otype, "unknown"), int(size)

    def exists(self, oid: str) -> bool:
        try:
            return oid in self._repo.odb
        except (pygit2.GitError, ValueError):
            return False

    def read(self, oid: str) -> tuple[str, bytes]:
        try:
            otype, data = self._repo.odb.read(oid)
        except (KeyError, pygit2.GitError, ValueError):
            raise unreadable(f"object {oid} is not in the repository (quarantine not visible?)") from None
        return _TYPE_NAMES.get(otype, "unknown"), bytes(data)

    def read_many(self, oids: Sequence[str]) -> Iterator[tuple[str, str, bytes]]:
        for oid in oids:
            yield (oid, *self.read(oid))

    def blob_digests(self, oids: Iterable[str]) -> dict[str, str]:
        return {oid: self.blob_sha256(oid) for oid in oids}

    def blob_sha256(self, oid: str) -> str:
        """SHA-256 of a blob's bytes; each blob is read at most once per process."""
        digest = self._blob_digests.get(oid)
        if digest is None:
            kind, _size = self.header(oid)
            if kind != "blob":
                raise malformed(f"object {oid} is a {kind}, not a blob")
            try:
                obj = self._repo[oid]
            except (KeyError, pygit2.GitError, ValueError):
                raise unreadable(f"blob {oid} cannot be read") from None
            if not isinstance(obj, pygit2.Blob):
                raise malformed(f"object {oid} is not a blob")
            # The buffer protocol hands libgit2's bytes to OpenSSL: `obj.data` costs a second
            # pass over every blob (as much as reading it).
            digest = hashlib.sha256(memoryview(obj)).hexdigest()
            self._blob_digests[oid] = digest
        return digest

    def walk(self, tips: Iterable[str], hide: Iterable[str] | None, deadline: float | None,
             messages: bool = False) -> Iterator[WalkedCommit]:
        return gitcmd.walk(self.path, list(tips), hide, deadline, messages)

    def shown_commits(self, oids: Sequence[str]) -> dict[str, ShownCommit]:
        return gitcmd.shown_commits(self.path, oids)

    def walk_ids(self, tips: Sequence[str], hide: Sequence[str], limit: int
                 ) -> list[tuple[str, tuple[str, ...]]] | None:
        return gitcmd.walk_ids(self.path, tips, hide, limit, None)

    def preexisting(self, oids: Sequence[str]) -> set[str] | None:
        return None  # the trusted side and the client hooks do not run inside a push

    def _graph_error(self, exc: Exception, *oids: str | None) -> GateError:
        missing = [o for o in oids if o is not None and not self.exists(o)]
        if missing:
            return unreadable(f"object {missing[0]} is not in the repository")
        return malformed(f"libgit2 cannot walk the history of {', '.join(o for o in oids if o)}: {exc}")

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if ancestor == descendant:
            return True
        if self._grafts:
            return gitcmd.is_ancestor(self.path, ancestor, descendant)
        try:
            return bool(self._repo.descendant_of(descendant, ancestor))
        except (pygit2.GitError, KeyError, ValueError) as exc:
            raise self._graph_error(exc, ancestor, descendant) from None

    def merge_base(self, a: str, b: str) -> str | None:
        if self._grafts:
            return gitcmd.merge_base(self.path, a, b)
        try:
            oid = self._repo.merge_base(a, b)
        except (pygit2.GitError, KeyError, ValueError) as exc:
            raise self._graph_error(exc, a, b) from None
        return None if oid is None else str(oid)

    def merge_bases(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
        if self._grafts:
            return gitcmd.merge_bases(self.path, pairs)
        return {(a, b): self.merge_base(a, b) for a, b in pairs}

    # --- refs ------------------------------------------------------------------
    def ref_targets(self, keep: Callable[[bytes], bool] | None = None) -> dict[bytes, str]:
        out: dict[bytes, str] = {}
        try:
            for ref in self._repo.listall_reference_objects():
                name: bytes = ref.raw_name
                if keep is not None and not keep(name):
                    continue
                target = ref.target
                if isinstance(target, pygit2.Oid):
                    out[name] = str(target)
        except pygit2.GitError as exc:
            raise unreadable(f"cannot list refs: {exc}") from None
        return out

    def _lookup(self, name: str) -> pygit2.Reference | None:
        try:
            return self._repo.references.get(name)
        except (pygit2.GitError, ValueError) as exc:
            raise unreadable(f"cannot read ref {name}: {exc}") from None

    def ref_target(self, name: str) -> str | None:
        ref = self._lookup(name)
        target = None if ref is None else ref.target
        return str(target) if isinstance(target, pygit2.Oid) else None

    def ref_values(self, names: Sequence[str]) -> dict[str, str]:
        found = {n: self.ref_target(n) for n in names}
        return {n: t for n, t in found.items() if t is not None}

    def symbolic_target(self, name: str) -> str | None:
        ref = self._lookup(name)
        target = None if ref is None else ref.target
        return target if isinstance(target, str) else None

    def symbolic_targets(self, names: Sequence[str]) -> dict[str, str]:
        found = {n: self.symbolic_target(n) for n in names}
        return {n: t for n, t in found.items() if t is not None}

    # --- revisions and writes (trusted side and tests only; never from a hook) ----------
    def resolve(self, rev: str) -> str:
        """A revision expression to a commit id."""
        from ..objects import Objects

        try:
            obj = self._repo.revparse_single(rev)
        except (KeyError, pygit2.GitError, ValueError) as exc:
            raise GateError("GATE-INPUT-ARGUMENT", f"cannot resolve {rev!r}: {exc}") from None
        commit = Objects(self).peel_to_commit(str(obj.id))
        if commit is None:
            raise GateError("GATE-INPUT-ARGUMENT", f"{rev!r} does not name a commit")
        return commit

    def write_tree(self, files: dict[str, bytes]) -> str:
        """A flat tree of regular files (names without '/')."""
        builder = self._repo.TreeBuilder()
        for name, data in sorted(files.items()):
            builder.insert(name, self._repo.create_blob(data), MODE_BLOB)
        return str(builder.write())

    def write_nested_tree(self, base_tree: str | None, files: dict[str, bytes]) -> str:
        """`base_tree` (None: empty) with regular files added at nested paths ('a/b/c')."""
        here: dict[str, bytes] = {}
        below: dict[str, dict[str, bytes]] = {}
        for path, data in files.items():
            head, _, rest = path.partition("/")
            if rest:
                below.setdefault(head, {})[rest] = data
            else:
                here[head] = data
        base = None if base_tree is None else self._repo[base_tree]
        if base is not None and not isinstance(base, pygit2.Tree):
            raise malformed(f"object {base_tree} is not a tree")
        builder = self._repo.TreeBuilder() if base is None else self._repo.TreeBuilder(base)
        for name, data in here.items():
            builder.insert(name, self._repo.create_blob(data), MODE_BLOB)
        for name, sub in below.items():
            existing = str(base[name].id) if base is not None and name in base else None
            builder.insert(name, pygit2.Oid(hex=self.write_nested_tree(existing, sub)), MODE_TREE)
        return str(builder.write())

    def write_commit(self, tree_id: str, parents: list[str], message: str, name: str, email: str,
                     when: int) -> str:
        sig = pygit2.Signature(name, email, when, 0)
        oid = self._repo.create_commit(None, sig, sig, message, pygit2.Oid(hex=tree_id),
                                       [pygit2.Oid(hex=p) for p in parents])
        return str(oid)

    def set_ref(self, name: str, target: str, expected_old: str | None) -> None:
        """Compare-and-swap a direct ref (`expected_old` None means: must not exist)."""
        current = self.ref_target(name)
        if current != expected_old:
            raise GateError("GATE-LEDGER-REWRITE", f"ref {name} moved: expected {expected_old}, found {current}")
        self._repo.references.create(name, pygit2.Oid(hex=target), force=current is not None)

    def delete_ref(self, name: str, expected_old: str) -> None:
        if self.ref_target(name) == expected_old:
            self._repo.references.delete(name)
