"""Checking many commits for frozen-file writes at once: the batching beside the rule (pure).

The rule (`gatecore.checks.frozen`) says what one commit wrote. This module decides how the trees
of a walk's restricted commits are read so that a push of 50,000 commits costs little more
than git's own walk:

* **batches**: `walk_violations` takes the restricted commits `BATCH_COMMITS` at a time while
  git goes on walking, and `Batches.prepare` compares all of a batch's tree pairs together,
  one level of directories at a time (each level's trees read in one request), so that
  `FrozenChecker.written` finds its comparisons done (the checker's `prepared` table);
* **merge bases**: the merges whose parents differ at some frozen path have their merge
  bases asked for in one request (kept in the checker's `bases` table);
* **a second process**: on a big push, half of each batch's pairs are searched by a second
  process (a `PairScan`, handed in by the composition root: `server/prereceive.py` starts
  `gatecore/adapters/treeworker.py` the way the hook itself starts, by file path), and the
  pairs it cannot call clean are compared here again (`gatecore/adapters/treescan.py`). It
  changes who searches, never what is found: without one, every pair is compared here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from ..configuration.policy import FreezeRule, Signals
from ..findings import Violation
from ..git.grammar import Commit
from ..git.treediff import Change
from .frozen import FrozenChecker, SignalReader, commit_violations, rules_key, trailer_keys, unread_violations

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Protocol
else:
    from ..valueclass import Protocol

Pair = tuple[str | None, str | None]

#: A search of tree pairs in a second process: given the pairs, the names that can matter at
#: the root and the id length, it starts the search and returns what waits for the indices of
#: the pairs whose entries found differ, or could not be searched (those are compared again).
PairScan = Callable[[Sequence[Pair], Sequence[str], int], Callable[[], set[int]]]


class Scanner(Protocol):
    """A second process's search (`PairScan`) that ends it on `close()` (`adapters.treescan.TreeScanner`)."""

    def __call__(self, pairs: Sequence[Pair], names: Sequence[str], id_bytes: int) -> Callable[[], set[int]]: ...

    def close(self) -> None: ...


class ScanOnDemand:
    """A `PairScan` whose scanner is made by `start` on first use: a push that never proves big
    loads nothing for it (not even the module that starts it)."""

    def __init__(self, start: Callable[[], Scanner]) -> None:
        self._start = start
        self._scanner: Scanner | None = None

    @property
    def started(self) -> bool:
        return self._scanner is not None

    def __call__(self, pairs: Sequence[Pair], names: Sequence[str], id_bytes: int) -> Callable[[], set[int]]:
        if self._scanner is None:
            self._scanner = self._start()
        return self._scanner(pairs, names, id_bytes)

    def close(self) -> None:
        if self._scanner is not None:
            self._scanner.close()


#: A second process searches half of a batch's tree pairs once the push has proved big: this
#: many pairs in the batch, after this many bytes of trees searched (some 2,000 root trees of a
#: big C project, 40,000 of a small one). The first such batch only starts it: below that, its
#: start-up (a Python process) costs more than it saves.
SCAN_PAIRS = 512
SCAN_AFTER_BYTES = 32 << 20

#: Restricted commits whose trees are compared together (`Batches.prepare`): large enough that
#: git streams each level's trees, small enough to bound what is held.
BATCH_COMMITS = 1024


class Batches:
    """Prepares a `FrozenChecker`'s comparisons a batch of commits at a time (one per check,
    kept across its walks: the second process, once started, serves them all)."""

    def __init__(self, checker: FrozenChecker, scan: PairScan | None = None) -> None:
        """`scan`: the second process's search, or None to compare every pair here."""
        self.checker = checker
        self.scan = scan
        #: the second process: starting (what waits for its first answer), or in use
        self._warming: Callable[[], set[int]] | None = None
        self._scanning = False

    def prepare(self, jobs: Sequence[tuple[Commit, Sequence[FreezeRule]]]) -> set[str]:
        """Compare in one pass the trees that `written(commit, rules, bad)` compares for each
        job, a level of directories at a time for all of them (each level's trees read in one
        request); `frozen_changes` finds the results until the next `prepare`.

        Returns the commits whose comparisons found anything: for every other job, `written`
        finds no frozen path and no non-canonical mode.
        """
        checker = self.checker
        checker.prepared.clear()
        checker.objects.prefetch_commits(p for c, _ in jobs for p in c.parent_ids)
        groups: dict[tuple[int, ...], tuple[Sequence[FreezeRule], dict[Pair, list[str]]]] = {}
        by_rules: dict[int, dict[Pair, list[str]]] = {}  # id(rules) -> its group's pairs
        tree_of = checker.objects.tree_id
        for c, rules in jobs:
            pairs = by_rules.get(id(rules))
            if pairs is None:
                pairs = by_rules[id(rules)] = groups.setdefault(rules_key(rules), (rules, {}))[1]
            parents = c.parent_ids
            if not parents:
                pairs.setdefault((None, c.tree_id), []).append(c.id)
            elif len(parents) == 1:
                before = tree_of(parents[0])
                if before != c.tree_id:
                    pairs.setdefault((before, c.tree_id), []).append(c.id)
            else:
                for p in parents:
                    pairs.setdefault((tree_of(p), c.tree_id), []).append(c.id)
        touched: set[str] = set()
        for key, (rules, unique) in groups.items():
            listed: list[Pair] = list(unique)
            per_pair: list[list[tuple[bytes, int]]] = [[] for _ in listed]
            found = (checker.diff.changes_many(listed, None, per_pair) if checker.whole_change else
                     self._compared(listed, rules, per_pair))
            for (old, new), changes, m in zip(listed, found, per_pair, strict=True):
                checker.prepared[(old, new, key, True)] = (changes, m)
                if changes or m:
                    touched.update(unique[(old, new)])
        self._prefetch_bases([(c, rules) for c, rules in jobs if c.id in touched and len(c.parent_ids) == 2])
        return touched

    def _compared(self, listed: Sequence[Pair], rules: Sequence[FreezeRule],
                  per_pair: Sequence[list[tuple[bytes, int]]]) -> list[list[Change]]:
        """`TreeDiff.changes_many` of the pairs, on both cores when a second process was handed in
        and the push is big: that process takes half of a batch, and the pairs it does not call
        clean are compared here again (treescan's docstring)."""
        checker = self.checker
        diff = checker.diff
        descend, names = checker.descender(rules), checker.name_patterns(rules)
        root = None if names is None else names(b"")
        scan = self.scan
        if root is None or root.dirs or scan is None or len(listed) < SCAN_PAIRS or (
                not self._scanning and self._warming is None and diff.searched_bytes < SCAN_AFTER_BYTES):
            return diff.changes_many(listed, descend, per_pair, names)
        id_bytes = len(checker.objects.zero_id) // 2
        if self._warming is None and not self._scanning:  # the push proved big: start it, no split yet
            self._warming = scan([], root.literals, id_bytes)
            return diff.changes_many(listed, descend, per_pair, names)
        if self._warming is not None:
            self._warming()
            self._warming, self._scanning = None, True
        half = len(listed) // 2
        collect = scan(listed[half:], root.literals, id_bytes)
        mine = diff.changes_many(listed[:half], descend, per_pair[:half], names)
        again = sorted(half + i for i in collect())
        redone = diff.changes_many([listed[i] for i in again], descend, [per_pair[i] for i in again], names)
        out: list[list[Change]] = [*mine, *([] for _ in range(len(listed) - half))]
        for i, changes in zip(again, redone, strict=True):
            out[i] = changes
        return out

    def _prefetch_bases(self, merges: Sequence[tuple[Commit, Sequence[FreezeRule]]]) -> None:
        """The merge bases `written` will ask for (merges whose parents differ at some frozen
        path), from one request (`GitReader.merge_bases`) instead of one git process each."""
        checker = self.checker
        need = []
        for c, rules in merges:
            first, second = c.parent_ids
            if (first, second) in checker.bases:
                continue
            ours, theirs = (checker.frozen_changes(checker.tree_of(p), c.tree_id, rules, []) for p in (first, second))
            if ours.keys() != theirs.keys():
                need.append((first, second))
        if need:
            checker.bases.update(checker.objects.reader.merge_bases(need))


def walk_violations(batches: Batches, commits: Iterable[Commit], rules: Sequence[FreezeRule],
                    ref: str, pusher: str | None) -> list[Violation]:
    """`commit_violations` for each commit some rule restricts; trees are read for those only.

    The restricted commits are checked `BATCH_COMMITS` at a time, their trees compared
    together, while git goes on walking (a parent the walk has not reached yet is read with
    its batch's, in one request): git's walk and the tree comparisons overlap, and only one
    batch of commits is held.
    """
    checker = batches.checker
    restricted: dict[tuple[str, str, Signals | None], list[FreezeRule]] = {}  # identities repeat: match once
    picked: list[tuple[Commit, list[FreezeRule]]] = []
    out: list[Violation] = []
    # Every rule restricts every commit (`authors = ["*"]`): no identity, name, trailer or signature is
    # read to decide, only to report what a commit is refused for (`unread_violations`).
    everyone = list(rules) if rules and all(r.any_author for r in rules) else None
    violations = commit_violations if everyone is None else unread_violations

    def check(batch: Sequence[tuple[Commit, list[FreezeRule]]]) -> None:
        touched = batches.prepare(batch)
        for c, _ in batch:
            if c.id in touched:
                out.extend(violations(checker, c, rules, ref, pusher))

    def restricting() -> Iterator[tuple[Commit, list[FreezeRule]]]:
        """Each commit some rule restricts, with those rules."""
        if everyone is not None:
            for c in commits:
                yield c, everyone
            return
        found = commits
        if checker.signatures is not None and any(r.signers for r in rules):
            found = list(commits)
            checker.signatures.prefetch([c.id for c in found])
        # A commit's signals can restrict it only through names, signers or a trailer whose key a rule
        # reads: without those they are read as none at all (`SignalReader`; a commit git re-encodes
        # is read whatever its raw bytes: what git shows may hold a trailer).
        read_signals = SignalReader(rules, checker.signatures, trailer_keys(rules))
        for c in found:
            idents = c.idents
            if idents is None or (c.reencoded and c.shown is None):
                idents = c.identities()  # raises
            seen = read_signals(c)
            key = (idents[0].email, idents[1].email, seen)
            applicable = restricted.get(key)
            if applicable is None:
                applicable = restricted[key] = [r for r in rules if r.restricted_identity(*key[:2], pusher, key[2])
                                                is not None]
            if applicable:
                yield c, applicable

    for job in restricting():
        picked.append(job)
        if len(picked) >= BATCH_COMMITS:
            check(picked)
            picked = []
    check(picked)
    return out
