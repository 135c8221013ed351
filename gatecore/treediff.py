"""Tree-to-tree changes: the one comparison the digest and the frozen-file rule rest on (pure).

Recursive, no rename detection, identical subtrees skipped by id, one record per path
whose (mode, id) differs; a file <-> directory swap is the file's record plus the
directory's contents. Entries are compared by their raw mode and id, so a change of the
raw mode alone (100644 -> 100664) is a change; directories are recognised by git's
canonical mode, as every checkout recognises them. Many pairs of trees are compared
together, a level of directories at a time, so that the trees each level needs are read
in one request. With a `descend` filter, entries whose
path cannot matter are skipped by name before anything below them is read.

The records correspond one to one with `git diff-tree -r -z --no-renames --raw` lines
for trees of canonical modes (docs/digest.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .gitmodel import CANONICAL_MODES, MODE_TREE, DescendFilter, canon_mode
from .objects import Objects

Entries = dict[bytes, tuple[int, str]]


@dataclass(frozen=True, slots=True)
class Change:
    """One path that differs between two trees. A side where the path is absent has mode 0
    and the zero id; modes are the raw modes the trees hold."""

    path: bytes
    old_mode: int
    new_mode: int
    old_id: str
    new_id: str


def _is_tree(entry: tuple[int, str] | None) -> bool:
    return entry is not None and canon_mode(entry[0]) == MODE_TREE


class TreeDiff:
    """Tree comparisons over one object store, remembering the entries each filter keeps."""

    #: (tree, prefix, filter) entries kept (bounded like the object store's tree cache).
    KEPT_CACHE = 16384

    def __init__(self, objects: Objects) -> None:
        self.objects = objects
        self._kept: dict[tuple[str, bytes, DescendFilter], Entries] = {}

    def _entries(self, trees: dict[str, Entries], tree_id: str | None, prefix: bytes,
                 descend: DescendFilter | None) -> Entries:
        if tree_id is None:
            return {}
        entries = trees[tree_id]
        if descend is None:
            return entries
        key = (tree_id, prefix, descend)
        got = self._kept.get(key)
        if got is None:
            # A path descend() rejects cannot match, nor can anything below it.
            got = {name: e for name, e in entries.items() if descend(prefix + name)}
            if len(self._kept) >= self.KEPT_CACHE:
                self._kept.clear()
            self._kept[key] = got
        return got

    def changes(self, old_tree: str | None, new_tree: str | None, descend: DescendFilter | None = None,
                modes: list[tuple[bytes, int]] | None = None) -> list[Change]:
        """Every path that differs between two trees (None is the empty tree), sorted by path.

        With `modes`, every differing entry (directories included, which yield no record of
        their own) whose raw mode is not one of git's canonical modes is appended to it.
        """
        found = self.changes_many([(old_tree, new_tree)], descend, None if modes is None else [modes])
        return found[0]

    def changes_many(self, pairs: Sequence[tuple[str | None, str | None]], descend: DescendFilter | None = None,
                     modes: Sequence[list[tuple[bytes, int]]] | None = None) -> list[list[Change]]:
        """`changes` for many pairs of trees at once, one level of directories at a time: the
        trees each level needs, for every pair, are read in one request (`Objects.trees`)."""
        zero = self.objects.zero_id
        out: list[list[Change]] = [[] for _ in pairs]
        # Breadth first, with an explicit list, not recursion: a pushed tree may be nested
        # thousands deep.
        level: list[tuple[int, bytes, str | None, str | None]] = [
            (i, b"", old, new) for i, (old, new) in enumerate(pairs) if old != new]
        while level:
            trees = self.objects.trees([t for _, _, o, n in level for t in (o, n) if t is not None])
            deeper: list[tuple[int, bytes, str | None, str | None]] = []
            for i, prefix, old_id, new_id in level:
                old = self._entries(trees, old_id, prefix, descend)
                new = self._entries(trees, new_id, prefix, descend)
                found = out[i]
                for name in old.keys() | new.keys():
                    o = old.get(name)
                    n = new.get(name)
                    if o == n:
                        continue
                    path = prefix + name
                    if modes is not None:
                        modes[i].extend((path, e[0]) for e in (o, n) if e is not None and e[0] not in CANONICAL_MODES)
                    o_tree, n_tree = _is_tree(o), _is_tree(n)
                    if o_tree or n_tree:
                        deeper.append((i, path + b"/", o[1] if o is not None and o_tree else None,
                                       n[1] if n is not None and n_tree else None))
                        # The non-tree side (file <-> directory swap) is its own change.
                        o = None if o_tree else o
                        n = None if n_tree else n
                        if o is None and n is None:
                            continue
                    found.append(Change(path, o[0] if o else 0, n[0] if n else 0, o[1] if o else zero,
                                        n[1] if n else zero))
            level = deeper
        for found in out:
            found.sort(key=lambda c: c.path)
        return out
