"""A second process that searches trees for the frozen names beside the hook (both cores).

A big push's cost is reading one root tree per restricted commit and searching it for the
frozen names (`gatecore.treediff.NameSearch`); the regular expressions hold Python's lock,
so a thread would not help. For a batch of tree pairs the hook hands half to this worker,
`python -I -m gatecore.adapters.treescan GIT_DIR`, started once for the hook's life with the
hook's environment (the quarantine's objects included), and searches the other half itself.
The worker reads its trees through its own `git cat-file --batch` (`GitStream`), searches
each with the same `NameSearch`, and answers with the pairs it cannot call clean: a pair is
clean only when both trees were searched (plain entries, ASCII names), the entries found are
the same in both, byte for byte, and well-formed (`treediff.checked_entries`). Every other
pair - a root commit's, a tree read whole, entries that differ or are malformed, anything the
worker failed to read - is compared again by the hook itself, the careful way. A clean pair
is exactly one the hook's own comparison would find nothing in (the same entries found in
both trees: nothing below them differs either), so the split changes who searches, not what
is found (tests/unit/test_tree_search.py holds it to the whole parse over real histories).
A worker that dies or answers out of turn is GATE-GIT-UNREADABLE.

Protocol (bytes, one request at a time): `batch N ID_BYTES NAMES_JSON\n` then N lines
`OLD NEW\n` (`-` for no tree); the answer is one line per pair to compare again (its index),
or `all\n`, then `done N\n`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from ..errors import GateError, unreadable
from . import gitcmd

if TYPE_CHECKING:
    from ..objects import Objects
    from ..treediff import NameSearch

#: The entries a search found in one tree (mode text, name, raw id), as the worker keeps them.
Found = tuple[tuple[bytes, bytes, bytes], ...]

#: Trees whose search results the worker keeps (a tree is one pair's new side and the next's old).
KEPT = 1 << 16


class TreeScanner:
    """The hook's side of the worker: started on first use, asked one batch at a time."""

    def __init__(self, git_dir: str) -> None:
        self.proc, self.stdin, self.stdout = gitcmd.helper(
            [sys.executable, "-I", "-m", "gatecore.adapters.treescan", git_dir], "start the tree search process")
        self.broken = False

    def submit(self, pairs: Sequence[tuple[str | None, str | None]], names: Sequence[str], id_bytes: int
               ) -> Callable[[], set[int]]:
        """Send a batch (from a writer thread: the hook goes on with its own half at once) and
        return what waits for the answer: the indices of the pairs to compare again."""
        if self.broken:
            raise unreadable("the tree search process failed earlier in this check")
        head = b"batch %d %d %s\n" % (len(pairs), id_bytes, json.dumps(list(names)).encode("ascii"))
        body = "".join(f"{o or '-'} {n or '-'}\n" for o, n in pairs).encode("ascii")
        writer, _ = gitcmd.start_writer(self.stdin, head + body, "gate-tree-scan")  # (a stop shows in the answer)

        def collect() -> set[int]:
            try:
                return self._answer(len(pairs))
            except BaseException:
                self.broken = True
                self.proc.kill()
                raise
            finally:
                writer.join()

        return collect

    def _answer(self, n: int) -> set[int]:
        again: set[int] = set()
        while True:
            line = self.stdout.readline()
            if line == b"done %d\n" % n:
                return again
            if line == b"all\n":
                again.update(range(n))
            elif line[:-1].isdigit() and line.endswith(b"\n") and int(line) < n:
                again.add(int(line))
            else:
                raise self._died(f"answered {line[:80]!r}" if line else "ended")

    def _died(self, what: str) -> GateError:
        return unreadable(f"the tree search process {what}{gitcmd.killed_saying(self.proc)}")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.stdin.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def serve(git_dir: str, requests: IO[bytes], answers: IO[bytes]) -> int:
    """The worker: answer batches until the hook closes the pipe."""
    from ..objects import Objects
    from ..treediff import NameSearch
    from .gitstream import GitStream

    reader = GitStream(git_dir)
    objects = Objects(reader)
    found: dict[tuple[str, tuple[str, ...]], Found | None] = {}
    searches: dict[tuple[str, ...], NameSearch] = {}
    try:
        while True:
            head = requests.readline()
            if not head:
                return 0
            word, n_text, id_text, names_json = head.rstrip(b"\n").split(b" ", 3)
            if word != b"batch":
                raise ValueError(f"not a batch: {head[:60]!r}")
            names = tuple(json.loads(names_json))
            search = searches.get(names) or searches.setdefault(names, NameSearch(names))
            id_bytes = int(id_text)
            pairs = []
            for _ in range(int(n_text)):
                old, new = requests.readline().decode("ascii").split()
                pairs.append((None if old == "-" else old, None if new == "-" else new))
            try:
                again = _compare(pairs, names, search, id_bytes, objects, found)
                answers.write(b"".join(b"%d\n" % i for i in again) + b"done %d\n" % len(pairs))
            except GateError:  # the hook compares them all itself, and says what is wrong
                answers.write(b"all\ndone %d\n" % len(pairs))
                reader.close()
                reader = GitStream(git_dir)
                objects = Objects(reader)
            answers.flush()
    finally:
        reader.close()


def _compare(pairs: Sequence[tuple[str | None, str | None]], names: tuple[str, ...], search: NameSearch,
             id_bytes: int, objects: Objects, found: dict[tuple[str, tuple[str, ...]], Found | None]) -> list[int]:
    """The indices of the pairs the hook must compare again (module docstring)."""
    from ..treediff import checked_entries

    wanted = list(dict.fromkeys(t for pair in pairs for t in pair if t is not None and (t, names) not in found))
    if len(found) + len(wanted) > KEPT:
        found.clear()
        wanted = list(dict.fromkeys(t for pair in pairs for t in pair if t is not None))
    for oid, data in objects.raw_trees(wanted):
        got = search.find(data, id_bytes)
        if got is not None:
            try:
                checked_entries(oid, got)
            except GateError:
                got = None  # malformed: the hook finds it so itself
        found[(oid, names)] = None if got is None else tuple(got)
    again = []
    for i, (old, new) in enumerate(pairs):
        a = None if old is None else found[(old, names)]
        b = None if new is None else found[(new, names)]
        if a is None or b is None or a != b:
            again.append(i)
    return again


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.stderr.write("usage: python -m gatecore.adapters.treescan GIT_DIR (the hook starts it)\n")
        return 2
    return serve(args[0], sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())
