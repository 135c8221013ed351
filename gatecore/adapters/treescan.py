"""A second process that searches trees for the frozen names beside the hook (both cores): the hook's side.

A big push's cost is reading one root tree per restricted commit and searching it for the
frozen names (`gatecore.git.treediff.NameSearch`); the regular expressions hold Python's lock,
so a thread would not help. For a batch of tree pairs the hook hands half to a worker
(`treeworker.py`), started once for the hook's life with the hook's environment (the
quarantine's objects included), and searches the other half itself (`gatecore.checks.frozenbatch`).
The worker answers with the pairs it cannot call clean; every other pair - a root commit's, a
tree read whole, entries that differ or are malformed, anything the worker failed to read - is
compared again by the hook itself, the careful way. A clean pair is exactly one the hook's own
comparison would find nothing in (the same entries found in both trees: nothing below them
differs either), so the split changes who searches, not what is found
(tests/unit/test_tree_search.py holds it to the whole parse over real histories).

**The worker runs the hook's own code.** The composition root (`server/prereceive.py`) hands
in how to start it: the hook's interpreter with `-I`, the hook's own `server/launch.py` by its
file path, which binds `gatecore`, `server` and `hooks` to the directories beside it and
refuses any imported from elsewhere (`server.launch.helper_argv`), whatever the install
layout: site-packages, `pip install --user` or `--target`, a source tree. Before it reads
anything else, the hook reads the worker's first line, which says what code it runs
(`server.launch.identity`: push-gate's version, the interpreter, and the directory each of
the three packages was bound from), and compares it with its own: a worker that runs other
code (another installation, another version, another interpreter) is refused,
`GATE-CONFIG-INSTALL`, and never asked anything.

A worker that cannot start, dies or answers out of turn is GATE-GIT-UNREADABLE and never asked
again.

Protocol (bytes, one request at a time): the worker's first line is `identity JSON\n`; a
request is `batch N ID_BYTES NAMES_JSON\n` then N lines `OLD NEW\n` (`-` for no tree); the
answer is one line per pair to compare again (its index), or `all\n`, then `done N\n`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from typing import IO

from ..errors import GateError, unreadable
from . import gitcmd, spawn


class TreeScanner:
    """The hook's side of the worker (a `frozenbatch.PairScan`): started on first use, asked one
    batch at a time; `close()` ends it."""

    def __init__(self, argv: Sequence[str], identity: Callable[[], str]) -> None:
        """`argv`: how to start the worker (`server.launch.helper_argv`); `identity`: what the
        worker must say it runs (`server.launch.identity` of the hook itself)."""
        self.argv = list(argv)
        self.identity = identity
        self.proc: spawn.Child | None = None
        self.stdin: IO[bytes] | None = None
        self.stdout: IO[bytes] | None = None
        self.broken = False
        self._expected = b""
        self._greeted = False

    def __call__(self, pairs: Sequence[tuple[str | None, str | None]], names: Sequence[str], id_bytes: int
                 ) -> Callable[[], set[int]]:
        """Send a batch (from a writer thread: the hook goes on with its own half at once) and
        return what waits for the answer: the indices of the pairs to compare again."""
        if self.broken:
            raise unreadable("the tree search process failed earlier in this check")
        if self.proc is None:
            self._expected = b"identity " + self.identity().encode("utf-8", "surrogateescape") + b"\n"
            self.proc, self.stdin, self.stdout = gitcmd.helper(self.argv, "start the tree search process")
        assert self.stdin is not None
        head = b"batch %d %d %s\n" % (len(pairs), id_bytes, json.dumps(list(names)).encode("ascii"))
        body = "".join(f"{o or '-'} {n or '-'}\n" for o, n in pairs).encode("ascii")
        writer, _ = gitcmd.start_writer(self.stdin, head + body, "gate-tree-scan")  # (a stop shows in the answer)

        def collect() -> set[int]:
            try:
                return self._answer(len(pairs))
            except BaseException:
                self.broken = True
                if self.proc is not None:
                    self.proc.kill()
                raise
            finally:
                writer.join()

        return collect

    def _answer(self, n: int) -> set[int]:
        assert self.stdout is not None
        if not self._greeted:
            line = self.stdout.readline()
            if line != self._expected:
                if not line.startswith(b"identity "):
                    raise self._died(f"answered {line[:80]!r} before saying what code it runs" if line else "ended")
                raise GateError("GATE-CONFIG-INSTALL", "the tree search process runs other code than the hook: it "
                                f"says {line[9:-1][:300]!r}, the hook is {self._expected[9:-1][:300]!r} "
                                "(re-run gate server install)")
            self._greeted = True
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
        assert self.proc is not None
        return unreadable(f"the tree search process {what}{gitcmd.killed_saying(self.proc)}")

    def close(self) -> None:
        if self.proc is None:
            return
        if self.stdin is not None:
            with contextlib.suppress(OSError):
                self.stdin.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        self.proc = None
