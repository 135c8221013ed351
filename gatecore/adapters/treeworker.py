"""The tree search's second process itself (the hook's side is `treescan.py`).

Started by the hook the way the hook itself is started, by file path and bound to the hook's
own packages: `python -I .../server/launch.py gatecore.adapters.treeworker GIT_DIR`
(`server.launch.helper_argv`). `launch.py` first writes the line that says which code runs
here (`server.launch.identity`), which the hook compares with its own before it trusts an
answer; then `main` answers batches until the hook closes the pipe.

For each batch it reads the trees through its own `git cat-file --batch` (`GitStream`, with
the hook's environment, the quarantine's objects included), searches each with the hook's
`NameSearch`, and answers with the pairs it cannot call clean: a pair is clean only when both
trees were searched (plain entries, ASCII names), the entries found are the same in both,
byte for byte, and well-formed (`treediff.checked_entries`). The protocol is `treescan.py`'s.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import IO

from ..errors import GateError
from ..git.objects import Objects
from ..git.treediff import NameSearch, checked_entries
from .gitstream import GitStream

#: The entries a search found in one tree (mode text, name, raw id), as the worker keeps them.
Found = tuple[tuple[bytes, bytes, bytes], ...]

#: Trees whose search results the worker keeps (a tree is one pair's new side and the next's old).
KEPT = 1 << 16


def serve(git_dir: str, requests: IO[bytes], answers: IO[bytes]) -> int:
    """Answer batches until the hook closes the pipe."""
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
        sys.stderr.write("usage: python -I server/launch.py gatecore.adapters.treeworker GIT_DIR (the hook starts "
                         "it)\n")
        return 2
    return serve(args[0], sys.stdin.buffer, sys.stdout.buffer)
