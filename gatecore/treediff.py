"""Tree-to-tree changes: the one comparison the digest and the frozen-file rule rest on (pure).

Recursive, no rename detection, identical subtrees skipped by id, one record per path
whose (mode, id) differs; a file <-> directory swap is the file's record plus the
directory's contents. Entries are compared by their raw mode and id, so a change of the
raw mode alone (100644 -> 100664) is a change; directories are recognised by git's
canonical mode, as every checkout recognises them. Many pairs of trees are compared
together, a level of directories at a time, so that the trees each level needs are read
in one request. With a `descend` filter, entries whose
path cannot matter are skipped by name before anything below them is read.

Reading only the names that can matter (`names`): a tree of 500 entries parsed into a
dict costs Python some 300 us, and a big history has one new root tree per commit. When
the caller knows which names can matter in a directory (the frozen-path rules' literal
segments: `ci`, `gate.toml`), the tree's raw bytes are searched for those names (ASCII,
any case, trailing dots and spaces) in C, and each hit is proven an entry (every entry
before it tokenised by one regular expression, never guessed from the bytes around it:
a file named `40000 ci` is not an entry `ci`). The tree is still tokenised whole, so a
tree that is not a well-formed list of entries is read the careful way; a tree holding a
name outside ASCII (which Unicode folding could map onto a frozen name) is parsed whole,
as before. Trees read this way are not checked for order and duplicates outside the
names found (those are git fsck's: `gate server install --fsck`); between the names
found, they are.

The records correspond one to one with `git diff-tree -r -z --no-renames --raw` lines
for trees of canonical modes (docs/digest.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .errors import malformed
from .gitmodel import CANONICAL_MODES, MODE_TREE, DescendFilter, canon_mode
from .objects import Objects, mode_value

Entries = dict[bytes, tuple[int, str]]

#: For a directory (its raw path with a trailing slash, b"" for the root), a pattern whose
#: group 1 finds, in a raw tree, every ASCII name (preceded by the space after the mode and
#: followed by the NUL) whose path could matter there; None when any name could (read the
#: tree whole). `name_pattern` builds one.
NamePatterns = Callable[[bytes], "re.Pattern[bytes] | None"]

_RUNS: dict[int, re.Pattern[bytes]] = {}
_OCTAL = re.compile(rb"[0-7]+")


def _run(id_bytes: int) -> re.Pattern[bytes]:
    """Whole entries with ASCII names, as many as there are from a position (possessive)."""
    got = _RUNS.get(id_bytes)
    if got is None:
        # (possessive everywhere: about twice as fast as `[0-7]+` on a 500-entry tree)
        got = _RUNS[id_bytes] = re.compile(rb"(?:[0-7]++ [^\0/\x80-\xff]++\0.{%d})*+" % id_bytes, re.DOTALL)
    return got


def _through(m: re.Match[bytes] | None) -> int:
    """Where a `_run` match ends (it always matches, if only the empty run)."""
    assert m is not None
    return m.end()


def name_pattern(names: Sequence[str]) -> re.Pattern[bytes]:
    """A `NamePatterns` answer for names that matter when, case-folded and without trailing
    dots and spaces, they are one of `names` (normalised literal segments). Names outside
    ASCII are never found by it: a tree holding one is read whole."""
    alts = sorted({n.encode("ascii") for n in names if n.isascii()})
    if not alts:
        return re.compile(rb"(?!)")
    return re.compile(rb" ((?i:" + b"|".join(re.escape(a) for a in alts) + rb")[. ]*+)\0")


def extract(data: bytes, hits: re.Pattern[bytes], id_bytes: int) -> list[tuple[bytes, bytes, bytes]] | None:
    """(mode text, name, raw id) of the entries of a raw tree whose names `hits` finds, in
    order; None if the tree is not a list of whole entries with ASCII names (read it whole).

    Each hit is taken only where the entries before it tokenise up to its mode: the tree is
    tokenised once, from hit to hit, so a hit inside an id or a name is never an entry."""
    run = _run(id_bytes)
    pos = 0
    found = []
    for h in hits.finditer(data):
        space = h.start()
        if space < pos:
            continue
        start = _through(run.match(data, pos, space))
        if _OCTAL.fullmatch(data, start, space):
            end = h.end() + id_bytes
            if end > len(data):
                return None
            found.append((data[start:space], h.group(1), data[h.end():end]))
            pos = end
    if _through(run.match(data, pos)) != len(data):
        return None
    return found


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

    def _filtered(self, tree_id: str, prefix: bytes, descend: DescendFilter, entries: Entries,
                  kept: dict[tuple[str, bytes], Entries]) -> None:
        # A path descend() rejects cannot match, nor can anything below it.
        got = {name: e for name, e in entries.items() if descend(prefix + name)}
        kept[(tree_id, prefix)] = self._kept[(tree_id, prefix, descend)] = got

    def _found(self, tree_id: str, prefix: bytes, descend: DescendFilter,
               found: list[tuple[bytes, bytes, bytes]], kept: dict[tuple[str, bytes], Entries]) -> None:
        """The entries `extract` found, as `_filtered` keeps them, checked as `parse_tree`
        checks entries (names once each, in git's order, never `.` or `..`)."""
        got: Entries = {}
        seen: set[bytes] = set()
        prev = b""
        for mode_text, name, raw_id in found:
            mode = mode_value(mode_text)
            key = name + b"/" if mode & 0o170000 == MODE_TREE else name
            if name in seen or key <= prev:
                raise malformed(f"tree {tree_id} has two entries named {name!r} (git fsck: duplicateEntries)"
                                if name in seen or key == prev else
                                f"tree {tree_id} is not sorted the way git sorts trees (git fsck: treeNotSorted)")
            seen.add(name)
            prev = key
            if name in (b".", b".."):
                raise malformed(f"tree {tree_id} has an entry named {name!r}")
            if descend(prefix + name):
                got[name] = (mode, raw_id.hex())
        kept[(tree_id, prefix)] = self._kept[(tree_id, prefix, descend)] = got

    def _read_level(self, level: Sequence[tuple[int, bytes, str | None, str | None]],
                    descend: DescendFilter | None, names: NamePatterns | None
                    ) -> tuple[dict[str, Entries], dict[tuple[str, bytes], Entries]]:
        """The entries each tree of a level needs: whole trees (parsed) where any name can
        matter, and, where a `names` pattern says which can, only those (`extract`)."""
        kept: dict[tuple[str, bytes], Entries] = {}
        if descend is None:
            return self.objects.trees([t for _, _, o, n in level for t in (o, n) if t is not None]), kept
        if len(self._kept) >= self.KEPT_CACHE:
            self._kept.clear()
        whole: dict[tuple[str, bytes], None] = {}
        raw: dict[str, list[tuple[bytes, re.Pattern[bytes]]]] = {}
        for _, prefix, o, n in level:
            for t in (o, n):
                if t is None or (t, prefix) in kept or (t, prefix) in whole:
                    continue
                got = self._kept.get((t, prefix, descend))
                if got is not None:
                    kept[(t, prefix)] = got
                    continue
                pattern = None if names is None else names(prefix)
                if pattern is None:
                    whole[(t, prefix)] = None
                elif (prefix, pattern) not in raw.setdefault(t, []):
                    raw[t].append((prefix, pattern))
        id_bytes = len(self.objects.zero_id) // 2
        for oid, data in self.objects.raw_trees(list(raw)):
            for prefix, pattern in raw[oid]:
                found = extract(data, pattern, id_bytes)
                if found is None:  # not plain ASCII names: parse it whole
                    self._filtered(oid, prefix, descend, self.objects.tree_from_bytes(oid, data), kept)
                else:
                    self._found(oid, prefix, descend, found, kept)
        trees = self.objects.trees([t for t, _ in whole])
        for t, prefix in whole:
            self._filtered(t, prefix, descend, trees[t], kept)
        return trees, kept

    def changes(self, old_tree: str | None, new_tree: str | None, descend: DescendFilter | None = None,
                modes: list[tuple[bytes, int]] | None = None, names: NamePatterns | None = None) -> list[Change]:
        """Every path that differs between two trees (None is the empty tree), sorted by path.

        With `modes`, every differing entry (directories included, which yield no record of
        their own) whose raw mode is not one of git's canonical modes is appended to it.
        With `names` (only with `descend`), trees are searched for the names that can matter
        instead of being parsed whole (module docstring).
        """
        found = self.changes_many([(old_tree, new_tree)], descend, None if modes is None else [modes], names)
        return found[0]

    def changes_many(self, pairs: Sequence[tuple[str | None, str | None]], descend: DescendFilter | None = None,
                     modes: Sequence[list[tuple[bytes, int]]] | None = None,
                     names: NamePatterns | None = None) -> list[list[Change]]:
        """`changes` for many pairs of trees at once, one level of directories at a time: the
        trees each level needs, for every pair, are read in one request (`Objects.trees`)."""
        zero = self.objects.zero_id
        out: list[list[Change]] = [[] for _ in pairs]
        # Breadth first, with an explicit list, not recursion: a pushed tree may be nested
        # thousands deep.
        level: list[tuple[int, bytes, str | None, str | None]] = [
            (i, b"", old, new) for i, (old, new) in enumerate(pairs) if old != new]
        while level:
            trees, kept = self._read_level(level, descend, names)
            deeper: list[tuple[int, bytes, str | None, str | None]] = []
            for i, prefix, old_id, new_id in level:
                if descend is None:
                    old = {} if old_id is None else trees[old_id]
                    new = {} if new_id is None else trees[new_id]
                else:
                    old = {} if old_id is None else kept[(old_id, prefix)]
                    new = {} if new_id is None else kept[(new_id, prefix)]
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
