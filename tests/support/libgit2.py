"""libgit2 (pygit2) as the tests' second implementation of git: the reference the gate's own
readers and writers (git's plumbing: `GitStream`, `GitRepo`) are held equal to.

The product reads and writes every repository through git itself (libgit2 1.9 opens neither
reftable nor SHA-256 repositories, and importing pygit2 costs a command more than the git
processes it would save: docs/architecture.md). What libgit2 reads and writes in the
repositories it opens is an independent account of the same bytes, refs and ancestry: the
differential tests in tests/unit/test_readers.py compare the two.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import ObjectType

_TYPE_NAMES = {ObjectType.COMMIT: "commit", ObjectType.TREE: "tree", ObjectType.BLOB: "blob", ObjectType.TAG: "tag"}


class Libgit2:
    """A repository through pygit2: objects, refs, ancestry, and the trusted side's writes."""

    def __init__(self, path: Path | str) -> None:
        self.repo = pygit2.Repository(str(path))

    def header(self, oid: str) -> tuple[str, int]:
        otype, size = self.repo.odb.read_header(oid)
        return _TYPE_NAMES[otype], int(size)

    def read(self, oid: str) -> tuple[str, bytes]:
        otype, data = self.repo.odb.read(oid)
        return _TYPE_NAMES[otype], bytes(data)

    def blob_digests(self, oids: Sequence[str]) -> dict[str, str]:
        return {o: hashlib.sha256(self.read(o)[1]).hexdigest() for o in oids}

    def ref_targets(self, keep: Callable[[bytes], bool] | None = None) -> dict[bytes, str]:
        return {ref.raw_name: str(ref.target) for ref in self.repo.listall_reference_objects()
                if isinstance(ref.target, pygit2.Oid) and (keep is None or keep(ref.raw_name))}

    def ref_target(self, name: str) -> str | None:
        try:
            ref = self.repo.references.get(name)
        except (pygit2.GitError, ValueError):
            return None
        return str(ref.target) if ref is not None and isinstance(ref.target, pygit2.Oid) else None

    def ref_values(self, names: Sequence[str]) -> dict[str, str]:
        return {n: t for n in names if (t := self.ref_target(n)) is not None}

    def symbolic_target(self, name: str) -> str | None:
        try:
            ref = self.repo.references.get(name)
        except (pygit2.GitError, ValueError):
            return None
        return ref.target if ref is not None and isinstance(ref.target, str) else None

    def symbolic_targets(self, names: Sequence[str]) -> dict[str, str]:
        return {n: t for n in names if (t := self.symbolic_target(n)) is not None}

    def merge_base(self, a: str, b: str) -> str | None:
        oid = self.repo.merge_base(a, b)
        return None if oid is None else str(oid)

    # --- the trusted side's writes, as the product made them with pygit2 before git's plumbing ---
    def write_tree(self, files: dict[str, bytes]) -> str:
        builder = self.repo.TreeBuilder()
        for name, data in sorted(files.items()):
            builder.insert(name, self.repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        return str(builder.write())

    def write_nested_tree(self, base_tree: str | None, files: dict[str, bytes]) -> str:
        here: dict[str, bytes] = {}
        below: dict[str, dict[str, bytes]] = {}
        for path, data in files.items():
            head, _, rest = path.partition("/")
            if rest:
                below.setdefault(head, {})[rest] = data
            else:
                here[head] = data
        base = None if base_tree is None else self.repo[base_tree]
        assert base is None or isinstance(base, pygit2.Tree)
        builder = self.repo.TreeBuilder() if base is None else self.repo.TreeBuilder(base)
        for name, data in here.items():
            builder.insert(name, self.repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        for name, sub in below.items():
            existing = str(base[name].id) if base is not None and name in base else None
            builder.insert(name, pygit2.Oid(hex=self.write_nested_tree(existing, sub)), pygit2.GIT_FILEMODE_TREE)
        return str(builder.write())

    def write_commit(self, tree_id: str, parents: list[str], message: str, name: str, email: str,
                     when: int) -> str:
        sig = pygit2.Signature(name, email, when, 0)
        return str(self.repo.create_commit(None, sig, sig, message, pygit2.Oid(hex=tree_id),
                                           [pygit2.Oid(hex=p) for p in parents]))
