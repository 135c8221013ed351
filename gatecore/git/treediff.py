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
found, they are, a search that finds every subdirectory refuses a file before one of them
named as it (git's lookups find the file, and lose what the directory holds), and entries
named `.` or `..` are refused wherever a tree is searched (docs/security.md,
duplicateEntries, treeNotSorted, hasDot).

The records correspond one to one with `git diff-tree -r -z --no-renames --raw` lines
for trees of canonical modes (docs/digest.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..errors import malformed
from ..valueclass import valueclass
from .gitmodel import CANONICAL_MODES, MODE_TREE, DescendFilter, canon_mode
from .grammar import mode_value
from .objects import Objects

Entries = dict[bytes, tuple[int, str]]
#: The entries of a tree where no name matters (one object, never changed).
_NOTHING: Entries = {}

#: For a directory (its raw path with a trailing slash, b"" for the root), the names that can
#: matter there (`NameSearch`), or None when any name can (read the tree whole).
NamePatterns = Callable[[bytes], "NameSearch | None"]

class NameSearch:
    """Finds, in a raw tree, the entries whose names are one of some ASCII names in any case,
    with trailing dots and spaces (`find`). One regular expression tokenises the tree and
    stops only at an entry whose name starts like one of them (and then only if it is one),
    at a name starting outside ASCII, at anything that is not a whole entry, or at the end.

    A name starting with any other ASCII byte is skipped whatever else it holds but `/` (no
    folding turns its first character into one the names start with); a name starting like one
    of them must be ASCII throughout, and no name may hold `/` (the whole parse refuses it, so
    the tree is then read whole and refused: tests/unit/test_tree_names.py). Names of dots (and
    spaces) alone are always found, for `checked_entries` to refuse `.` and `..`."""

    def __init__(self, names: Sequence[str], dirs: bool = False) -> None:
        """`dirs`: every subdirectory is found too (with any other entry whose mode is not one of
        git's canonical file modes): `**/NAME` patterns can match below any directory. A file
        skipped before one of them and named as it is not skipped: the tree is read whole
        (`_shadowed`)."""
        if not all(n.isascii() for n in names):
            raise ValueError("NameSearch finds ASCII names only (read trees whole for the others)")
        self.dirs = dirs
        # `.` too, whatever the rules: an entry named `.` or `..` is refused wherever a tree
        # is searched (a path through it reads, to a reader that joins names, as one without it).
        alts = sorted({n.encode("ascii") for n in names if n} | {b"."})
        self.names = tuple(alts)
        self.literals = tuple(sorted(set(names)))  # as given (what a second process is handed)
        # Bytes a matching name can start with (either case); a name starting otherwise is
        # skipped without looking further.
        firsts = sorted({c for a in alts for c in (a[:1].lower(), a[:1].upper())})
        self._first = b"".join(re.escape(c) for c in firsts)
        self._name = (rb"(?i:" + b"|".join(re.escape(a) for a in alts) + rb")(?>[. ]*)") if alts else rb"(?!)"
        self._compiled: dict[int, tuple[re.Pattern[bytes], re.Pattern[bytes]]] = {}

    def _patterns(self, id_bytes: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
        got = self._compiled.get(id_bytes)
        if got is None:
            # (no `/` anywhere in a name: the whole parse refuses one, git fsck's fullPathname)
            plain = rb"[^\0/\x80-\xff%s](?>[^\0/]*)" % self._first
            other = (rb"|(?!%s\0)[%s](?>[^\0/\x80-\xff]*)" % (self._name, self._first)) if self._first else b""
            # (atomic groups everywhere: about twice as fast as backtracking on a 500-entry tree; written
            # (?>X*) rather than the possessive X*+, which CPython before 3.11.5 matches wrongly when X
            # holds an alternation (gh-106052), and Debian 12's python3 is 3.11.2)
            # With `dirs`, only entries of git's canonical file modes are skipped: the search stops at
            # every other (a directory, or an odd mode) and finds it whatever its name holds but `/`.
            mode = b"(?:" + b"|".join(sorted(_FILE_MODES)) + b")" if self.dirs else rb"(?>[0-7]+)"
            skip = re.compile(rb"(?>(?:%s (?:%s%s)\0.{%d})*)" % (mode, plain, other, id_bytes), re.DOTALL)
            name = rb"%s|(?>[^\0/]+)" % self._name if self.dirs else self._name
            hit = re.compile(rb"((?>[0-7]+)) (%s)\0(.{%d})" % (name, id_bytes), re.DOTALL)
            got = self._compiled[id_bytes] = (skip, hit)
        return got

    def find(self, data: bytes, id_bytes: int) -> list[tuple[bytes, bytes, bytes]] | None:
        """(mode text, name, raw id) of the entries whose names match, in order; None if the
        tree is not a list of whole entries with ASCII names (then read it whole). Every
        entry is tokenised from the first, so a name inside an id or inside another name
        (a file named `40000 ci`) is never taken for an entry."""
        skip, hit = self._patterns(id_bytes)
        found: list[tuple[bytes, bytes, bytes]] = []
        runs: list[int] = []  # (with `dirs`) where the entries skipped before each found one start
        dirs = self.dirs
        pos = 0
        end = len(data)
        while True:
            m = skip.match(data, pos)
            assert m is not None  # (it always matches, if only the empty run)
            run, pos = pos, m.end()
            if pos == end:
                return found
            h = hit.match(data, pos)
            if h is None:
                return None
            entry = (h[1], h[2], h[3])
            if dirs:
                if entry[0] not in _FILE_MODES and _shadowed(data, entry[1], run, pos, found, runs):
                    return None  # (read whole, and refused)
                runs.append(run)
            found.append(entry)
            pos = h.end()


#: The modes of the entries a search with `dirs` skips by name (git's canonical modes but a directory's).
_FILE_MODES = frozenset((b"100644", b"100755", b"120000", b"160000"))


def _shadowed(data: bytes, name: bytes, run: int, at: int, found: Sequence[tuple[bytes, bytes, bytes]],
              runs: Sequence[int]) -> bool:
    """Could a file a search with `dirs` skipped bear the name of the directory it found at `at` (git
    fsck's duplicateEntries)? The whole parse refuses the tree, and git's path lookups find the first
    of the two, the file, losing what the directory holds (`x/AGENTS.md`, hidden by a file `x`).

    In git's order a file `x` comes before the directory `x`, with only names of `x` and a byte below
    `/` between them (`x.d`, `x-1`): the entries skipped since the last found entry, or since the
    found entries of such names, are looked through for ` x\0` (a name or an id that merely holds it
    reads the tree whole). A file after its directory is out of git's order, its name one no rule
    reads there: order and duplicates outside the names found are git fsck's."""
    n = len(name)
    i = len(found)
    while i and len(found[i - 1][1]) > n and found[i - 1][1][n] < 0x2F and found[i - 1][1].startswith(name):
        i -= 1
        run = runs[i]
    return data.rfind(b" " + name + b"\0", run, at) != -1


def checked_entries(tree_id: str, found: Sequence[tuple[bytes, bytes, bytes]]) -> list[tuple[int, bytes, bytes]]:
    """(mode, name, raw id) of the entries `NameSearch.find` found, checked as `parse_tree`
    checks entries: each name once, in git's order, never `.` or `..` (GATE-GIT-MALFORMED)."""
    out = []
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
        out.append((mode, name, raw_id))
    return out


#: (names, dirs) -> its search: directories of one policy mostly need one of a few sets of names, and
#: a search compiles its patterns once (at most `_SEARCHES_KEPT` kept).
_SEARCHES: dict[tuple[tuple[str, ...], bool], NameSearch] = {}
_SEARCHES_KEPT = 1024


def name_pattern(names: Sequence[str], dirs: bool = False) -> NameSearch | None:
    """A `NamePatterns` answer for names that matter when, case-folded and without trailing
    dots and spaces, they are one of `names` (normalised literal segments), and with `dirs` every
    subdirectory; None (read trees whole) if one of those names is outside ASCII."""
    if not all(n.isascii() for n in names):
        return None
    key = (tuple(names), dirs)
    got = _SEARCHES.get(key)
    if got is None:
        if len(_SEARCHES) >= _SEARCHES_KEPT:
            _SEARCHES.clear()
        got = _SEARCHES[key] = NameSearch(names, dirs)
    return got


@valueclass(frozen=True, slots=True)
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

    #: (tree, prefix, filter) entries kept (bounded like the object store's tree cache), and at most
    #: this many entries in them all (a search that keeps every subdirectory keeps dozens a tree).
    KEPT_CACHE = 16384
    KEPT_ENTRIES = 1 << 16

    def __init__(self, objects: Objects) -> None:
        self.objects = objects
        self._kept: dict[tuple[str, bytes, DescendFilter], Entries] = {}
        self._held = 0  # entries in `_kept`'s values (as added)
        #: bytes of raw trees searched so far (what tells a big push: `frozenbatch.Batches`)
        self.searched_bytes = 0
        self._same: dict[tuple[bytes, DescendFilter, tuple[tuple[bytes, bytes, bytes], ...]], Entries] = {}

    def _filtered(self, tree_id: str, prefix: bytes, descend: DescendFilter, entries: Entries,
                  kept: dict[tuple[str, bytes], Entries]) -> None:
        # A path descend() rejects cannot match, nor can anything below it.
        got = {name: e for name, e in entries.items() if descend(prefix + name)}
        kept[(tree_id, prefix)] = self._kept[(tree_id, prefix, descend)] = got
        self._held += len(got)

    def _found(self, tree_id: str, prefix: bytes, descend: DescendFilter,
               found: list[tuple[bytes, bytes, bytes]], kept: dict[tuple[str, bytes], Entries], share: bool) -> None:
        """The entries `NameSearch.find` found, as `_filtered` keeps them, checked as `parse_tree`
        checks entries (names once each, in git's order, never `.` or `..`). `share`: the same
        entries found in other trees are kept as one object (not for a search that keeps every
        subdirectory: two trees with the same subdirectories and nothing else are one tree)."""
        if not found:  # the common case: no name that matters (shared, never changed)
            kept[(tree_id, prefix)] = self._kept[(tree_id, prefix, descend)] = _NOTHING
            return
        # The same entries found in many trees (a frozen directory that did not change) are one
        # object: a pair of trees holding it is skipped at once.
        memo_key = (prefix, descend, tuple(found)) if share else None
        shared = None if memo_key is None else self._same.get(memo_key)
        if shared is not None:
            kept[(tree_id, prefix)] = self._kept[(tree_id, prefix, descend)] = shared
            return
        got: Entries = {}
        for mode, name, raw_id in checked_entries(tree_id, found):
            if descend(prefix + name):
                got[name] = (mode, raw_id.hex())
        kept[(tree_id, prefix)] = self._kept[(tree_id, prefix, descend)] = got
        self._held += len(got)
        if memo_key is not None:
            if len(self._same) >= self.KEPT_CACHE:
                self._same.clear()
            self._same[memo_key] = got

    def _read_level(self, level: Sequence[tuple[int, bytes, str | None, str | None]],  # noqa: PLR0912 - the tree reader's batching; treediff.py is helper reading's
                    descend: DescendFilter | None, names: NamePatterns | None
                    ) -> tuple[dict[str, Entries], dict[tuple[str, bytes], Entries]]:
        """The entries each tree of a level needs: whole trees (parsed) where any name can
        matter, and, where a `names` pattern says which can, only those (`NameSearch`)."""
        kept: dict[tuple[str, bytes], Entries] = {}
        if descend is None:
            return self.objects.trees([t for _, _, o, n in level for t in (o, n) if t is not None]), kept
        if len(self._kept) >= self.KEPT_CACHE or self._held >= self.KEPT_ENTRIES:
            self._kept.clear()
            self._held = 0
        whole: dict[tuple[str, bytes], None] = {}
        raw: dict[str, list[tuple[bytes, NameSearch]]] = {}
        patterns: dict[bytes, NameSearch | None] = {}
        cache = self._kept
        for _, prefix, o, n in level:
            if prefix in patterns:
                pattern = patterns[prefix]
            else:
                pattern = patterns[prefix] = None if names is None else names(prefix)
            for t in (o, n):
                if t is None or (t, prefix) in kept or (t, prefix) in whole:
                    continue
                got = cache.get((t, prefix, descend))
                if got is not None:
                    kept[(t, prefix)] = got
                elif pattern is None:
                    whole[(t, prefix)] = None
                else:
                    kept[(t, prefix)] = _NOTHING  # until read below
                    raw.setdefault(t, []).append((prefix, pattern))
        id_bytes = len(self.objects.zero_id) // 2
        for oid, data in self.objects.raw_trees(list(raw)):
            self.searched_bytes += len(data)
            for prefix, pattern in raw[oid]:
                found = pattern.find(data, id_bytes)
                if found is None:  # not plain ASCII names: parse it whole
                    self._filtered(oid, prefix, descend, self.objects.tree_from_bytes(oid, data), kept)
                else:
                    self._found(oid, prefix, descend, found, kept, not pattern.dirs)
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
                    old = _NOTHING if old_id is None else kept[(old_id, prefix)]
                    new = _NOTHING if new_id is None else kept[(new_id, prefix)]
                    if old is new:  # (most often: neither holds a name that matters)
                        continue
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
