"""A repository read through git's own processes: the pre-receive hook's `GitReader` (no pygit2).

Importing pygit2 costs a Python process about 100 ms, more than the rest of a small push's
check together; and for a large push, git streams objects faster than libgit2 hands them
out one call at a time. So inside the hook every read goes to git itself:

* **objects**: one `git cat-file --batch` (contents) and one `--batch-check` (type and
  size), each started when first needed and kept for the hook's life. One object is one
  request and its answer; many objects (`read_many`, `blob_digests`) are one pipelined
  request: a writer thread feeds the ids while the answers are read back, so git streams
  them at its own speed instead of waiting for a round trip per object.
* **refs**: `git for-each-ref` (every ref at once, or the names asked), in any ref backend
  (files, reftable, refs at a path of their own): nothing is read from the directory. The
  symbolic refs among a push's names are one `for-each-ref` and, for the names it does not list,
  one `cat-file` (`unlisted_symbolic`), whatever the number of names and the backend.
* **walks and ancestry**: `gitcmd.walk` (`rev-list`), `gitcmd.quick_walk` (`rev-list
  --boundary`, read whole: a push's new commits and the hidden parents they stop at), `merge-base`.

Every process gets `gitcmd`'s hardened environment (no replacement objects, no grafts, no
lazy fetch) and inherits `GIT_DIR` and the quarantine's object directories, so it sees
exactly the objects the push brought.

Both of git's object formats are read: the repository's, as `git rev-parse
--show-object-format` says it once (or, in the pre-receive hook, as the width of the ids
receive-pack handed it, confirmed by the first full id git prints: `confirm_format`), gives
the width every id is checked against before it reaches git, 40 hex digits for sha1 and 64
for sha256, and the all-zero id of that width. An
object git reports missing is `GATE-GIT-UNREADABLE`; a process that ends or answers out of
turn is too, and is never asked again (a request that failed leaves the stream out of step).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..errors import GateError, malformed, unreadable
from ..git.gitmodel import FORMATS, ShownCommit, WalkedCommit
from . import gitcmd

#: An id, and a whole request of ids, one per line (checked in one pass), of a format of `hexsz` digits
#: (compiled for the repository's format only, by `re`'s own cache: a hook reads one format).
_OID = r"[0-9a-f]{%d}"
_REQUEST = "(?:[0-9a-f]{%d}\n)*"
_HASH_CHUNK = 1 << 20
_BUFFER = 1 << 16
#: git's memory for a long read (the whole history's root trees): a 16 MiB cache of delta
#: bases (96 MiB by default) and 32 MiB of pack mapped at a time; reading in history order,
#: as the gate does, is no slower with them (git's peak: 169 -> 70 MiB on 80,000 trees).
_BOUNDED = ("-c", "core.deltaBaseCacheLimit=16m", "-c", "core.packedGitLimit=32m",
            "-c", "core.packedGitWindowSize=4m")
#: From this many blobs on, `blob_digests` reads them through two `cat-file` processes.
PARALLEL_BLOBS = 256
_CHUNK = 64  # blobs asked for at once by each of the two processes
#: Characters no ref name can hold (git check-ref-format), and for-each-ref would read as a pattern.
_NOT_IN_REFS = re.compile(r"[*?\[\\\s]")
#: A ref name `cat-file` reads as that ref alone (no `:`, `^`, `~`, `@{`, `..`: checked apart).
_PLAIN_REF = r"refs/[^\x00-\x20\x7f*?\[\\:^~]+"  # (compiled where used: a create's names only)
#: What git says (LC_ALL=C) when a name resolves through a symbolic ref to nothing (`expand_ref`).
_DANGLING = "warning: ignoring dangling symref "
#: The parents a commit's header names (`missing_parent`).
_PARENT = rb"(?m)^parent ([0-9a-f]+)$"  # (compiled where used: a walk that failed)


class _CatFile:
    """One `git cat-file --batch` or `--batch-check` process and its answers, in order."""

    def __init__(self, git_dir: str, mode: str, oid_re: re.Pattern[str], request_re: re.Pattern[str]) -> None:
        self.mode = mode
        self.oid_re = oid_re
        self.request_re = request_re
        self.proc, self.stdin, self.stdout = gitcmd.helper(
            ["git", f"--git-dir={git_dir}", *_BOUNDED, "cat-file", mode], "run git cat-file", _BUFFER)
        self.broken = False
        gitcmd.widen(self.stdout)

    def died(self, what: str) -> Exception:
        self.broken = True
        return unreadable(f"git cat-file {self.mode} {what}{gitcmd.killed_saying(self.proc)}")

    def checked(self, oid: str) -> bytes:
        """An object id as a request line; GATE-GIT-UNREADABLE for anything but a full id of the
        repository's format (git would read it as a revision expression)."""
        if not self.oid_re.fullmatch(oid):
            raise unreadable(f"{oid[:80]!r} is not an object id of this repository's format")
        return oid.encode("ascii") + b"\n"

    def request(self, oids: Sequence[str]) -> bytes:
        """Object ids as request lines, every one checked (in one pass) as `checked` checks it."""
        data = ("\n".join(oids) + "\n").encode("utf-8", "surrogateescape") if oids else b""
        if self.request_re.fullmatch(data.decode("ascii", "replace")) is None or data.count(b"\n") != len(oids):
            for oid in oids:
                self.checked(oid)
        return data

    def ask(self, lines: bytes) -> None:
        try:
            self.stdin.write(lines)
            self.stdin.flush()
        except OSError:
            raise self.died("stopped reading requests") from None

    def answer(self, oid: str) -> tuple[str, int]:
        """(type, size) of the next answer, which must be about `oid`."""
        line = self.stdout.readline()
        parts = line.split(b" ")
        if len(parts) == 3 and parts[0] == oid.encode("ascii") and parts[2][:-1].isdigit() and line[-1:] == b"\n":
            return parts[1].decode("ascii", "replace"), int(parts[2])
        if line == oid.encode("ascii") + b" missing\n":
            raise unreadable(f"object {oid} is not in the repository (quarantine not visible?)")
        raise self.died(f"answered {line[:100]!r} for {oid}" if line else "ended")

    def contents(self, oid: str, size: int) -> bytes:
        data = self.stdout.read(size)
        if len(data) != size or self.stdout.read(1) != b"\n":
            raise self.died(f"ended in the middle of {oid}")
        return data

    def digest(self, oid: str, size: int) -> str:
        """SHA-256 of the next `size` bytes, read in chunks (a large blob is never held whole)."""
        import hashlib  # (a review's blobs only: OpenSSL's, not on a plain push's start-up path)

        h = hashlib.sha256()
        left = size
        while left:
            chunk = self.stdout.read(min(left, _HASH_CHUNK))
            if not chunk:
                raise self.died(f"ended in the middle of {oid}")
            h.update(chunk)
            left -= len(chunk)
        if self.stdout.read(1) != b"\n":
            raise self.died(f"ended in the middle of {oid}")
        return h.hexdigest()

    def pipelined(self, oids: Sequence[str], each: Callable[[str, str, int], None]) -> None:
        """Ask for every id at once (from a writer thread) and hand each answer to `each`,
        which must consume the contents. Any failure leaves the process unusable."""
        writer, failed = gitcmd.start_writer(self.stdin, self.request(oids), "gate-cat-file")
        try:
            for oid in oids:
                kind, size = self.answer(oid)
                each(oid, kind, size)
        except BaseException:
            self.broken = True
            self.proc.kill()
            raise
        finally:
            writer.join()
        if failed:
            raise self.died("stopped reading requests")

    def stream(self, oids: Sequence[str]) -> Iterator[tuple[str, str, bytes]]:
        """(id, type, contents) of every id, each handed out as soon as git has written it
        (one pipelined request, fed by a writer thread): many objects, never all held at
        once. A failure, or a caller that stops early, leaves the process unusable."""
        writer, failed = gitcmd.start_writer(self.stdin, self.request(oids), "gate-cat-file")
        done = False
        try:
            for oid in oids:
                kind, size = self.answer(oid)
                yield oid, kind, self.contents(oid, size)
            done = True
        finally:
            if not done:
                self.broken = True
                self.proc.kill()
            writer.join()
        if failed:
            raise self.died("stopped reading requests")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.stdin.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.stdout.close()
        if self.proc.stderr is not None:
            self.proc.stderr.close()


#: Bytes of ref names given to one git command line (Linux takes 2 MiB of arguments and environment).
FOR_EACH_REF_ARGV = 128 << 10


def _argv_chunks(names: Sequence[str]) -> list[list[str]]:
    """`names` in runs of at most `FOR_EACH_REF_ARGV` bytes each (one name, whatever its size, at least)."""
    chunks: list[list[str]] = []
    size = FOR_EACH_REF_ARGV
    for name in names:
        length = len(name.encode("utf-8", "surrogateescape")) + 1
        if size + length > FOR_EACH_REF_ARGV:
            chunks.append([])
            size = 0
        chunks[-1].append(name)
        size += length
    return chunks


class GitStream:
    """The `GitReader` of a running hook (or of any repository, by its git dir). Not
    thread-safe; one per process; `close()` (or its collection) ends the git processes it started."""

    def __init__(self, git_dir: str, quarantine: str | None = None, workdir: str | None = None,
                 object_format: str | None = None, *, stated: bool = False) -> None:
        """`quarantine`: git's quarantine directory of the running push (`GIT_QUARANTINE_PATH`),
        if any; it lets `preexisting` tell what this push brought. `workdir`: the work tree
        (a client hook's), if any. `object_format`: as git said it, if the caller asked already
        (else git is asked here); with `stated`, as the width of the ids git handed the hook says it
        (receive-pack writes them in the repository's format), which is not git's word for it yet:
        the first full id git prints here confirms it (one of another width is
        GATE-GIT-OBJECT-FORMAT), and `confirm_format` asks git when none did."""
        fmt = gitcmd.object_format(git_dir) if object_format is None else object_format
        if fmt not in FORMATS:
            raise GateError("GATE-GIT-OBJECT-FORMAT", f"{git_dir} uses the object format {fmt[:40]!r}, "
                                                      "which the gate does not know")
        self.object_format = fmt
        self.zero_id = FORMATS[fmt].zero_id
        self._oid = re.compile(_OID % FORMATS[fmt].hexsz)
        self._request = re.compile(_REQUEST % FORMATS[fmt].hexsz)
        self.path = git_dir
        self.quarantine = quarantine
        self.workdir = workdir
        self._batch: _CatFile | None = None
        self._check: _CatFile | None = None
        self._blob_digests: dict[str, str] = {}
        #: each ref name `symbolic_targets` listed -> its value as `ref_values` gives it (None: absent
        #: or symbolic): a push's refs are read once (`ref_values` of the same names asks nothing)
        self._listed: dict[str, str | None] = {}
        self._unconfirmed = stated  # the format is the input's, and no id git printed has confirmed it yet

    # --- the object format ---------------------------------------------------------------
    def _printed(self, oid: bytes | str) -> None:
        """A full id git printed (a ref's value, a walked commit): its width is the repository's."""
        if len(oid) != len(self.zero_id):
            raise GateError("GATE-GIT-OBJECT-FORMAT", self._other_format(f"git prints ids of {len(oid)} hex digits"))
        self._unconfirmed = False

    def _other_format(self, what: str) -> str:
        return (f"{what} in {self.path}, where the ids the hook was handed have {len(self.zero_id)} "
                f"({self.object_format}): ids of another width than the repository's object format")

    def confirm_format(self) -> None:
        """GATE-GIT-OBJECT-FORMAT unless the format this reader reads by is the repository's:
        confirmed already by an id git printed, else asked of git (`rev-parse --show-object-format`)."""
        if self._unconfirmed:
            fmt = gitcmd.object_format(self.path)
            if fmt != self.object_format:
                raise GateError("GATE-GIT-OBJECT-FORMAT", self._other_format(f"the object format is {fmt[:40]!r}"))
            self._unconfirmed = False

    def _process(self, mode: str) -> _CatFile:
        current = self._batch if mode == "--batch" else self._check
        if current is not None and current.broken:
            raise unreadable(f"git cat-file {mode} failed earlier in this check")
        if current is None:
            current = _CatFile(self.path, mode, self._oid, self._request)
            if mode == "--batch":
                self._batch = current
            else:
                self._check = current
        return current

    def __del__(self) -> None:
        # One nobody closed (a library caller, the test tiers) ends its processes when collected.
        if hasattr(self, "_batch"):  # (not when opening failed half-way)
            self.close()

    def close(self) -> None:
        for p in (self._batch, self._check):
            if p is not None:
                p.close()
        self._batch = self._check = None

    # --- objects ---------------------------------------------------------------------
    def _valid(self, oid: str) -> str:
        if not self._oid.fullmatch(oid):
            raise unreadable(f"{oid[:80]!r} is not an object id of this repository's format")
        return oid

    def header(self, oid: str) -> tuple[str, int]:
        p = self._process("--batch-check")
        p.ask(p.checked(oid))
        return p.answer(oid)

    def exists(self, oid: str) -> bool:
        if not self._oid.fullmatch(oid):
            return False
        p = self._process("--batch-check")
        p.ask(p.checked(oid))
        line = p.stdout.readline()
        if not line:
            raise p.died("ended")
        return not line.rstrip().endswith(b" missing")

    def read(self, oid: str) -> tuple[str, bytes]:
        p = self._process("--batch")
        p.ask(p.checked(oid))
        kind, size = p.answer(oid)
        return kind, p.contents(oid, size)

    def read_many(self, oids: Sequence[str]) -> Iterator[tuple[str, str, bytes]]:
        """(id, type, raw bytes) for every id, in order, streamed from one pipelined request:
        the caller must take every answer before asking this reader anything else."""
        if len(oids) <= 1:
            for oid in oids:
                yield (oid, *self.read(oid))
            return
        yield from self._process("--batch").stream(oids)

    def blob_sha256(self, oid: str) -> str:
        return self.blob_digests([oid])[oid]

    def blob_digests(self, oids: Iterable[str]) -> dict[str, str]:
        """SHA-256 of each blob's bytes, streamed (each blob read at most once per process).

        Many blobs (a review of thousands of files) are split between this stream's
        `cat-file --batch` and a second one started for the purpose, each read by its own
        thread: git inflating objects is most of the cost, and two processes do it on two
        cores (pipe reads and hashing let go of the GIL)."""
        asked = list(dict.fromkeys(oids))
        wanted = [o for o in asked if o not in self._blob_digests]
        if len(wanted) >= PARALLEL_BLOBS and (os.cpu_count() or 1) > 1:
            self._digests_in_parallel(wanted)
        elif wanted:
            self._digests_on(self._process("--batch"), wanted)
        return {o: self._blob_digests[o] for o in asked}

    def _digests_on(self, p: _CatFile, wanted: Sequence[str]) -> None:
        def each(oid: str, kind: str, size: int) -> None:
            digest = p.digest(oid, size)
            if kind != "blob":
                raise malformed(f"object {oid} is a {kind}, not a blob")
            self._blob_digests[oid] = digest

        if len(wanted) == 1:
            p.ask(p.checked(wanted[0]))
            kind, size = p.answer(wanted[0])
            each(wanted[0], kind, size)
        else:
            p.pipelined(wanted, each)

    def _digests_in_parallel(self, wanted: Sequence[str]) -> None:
        """Blobs in chunks to this stream's `cat-file --batch` and a second one, each fed by its
        own thread, which takes the next chunk when it is done with one: the two stay busy
        whatever the sizes (the old and new sides of a change alternate in `wanted`, so a fixed
        split would give one process every new blob). A failure on either side fails the whole
        request."""
        chunks = iter([wanted[i:i + _CHUNK] for i in range(0, len(wanted), _CHUNK)])
        lock = threading.Lock()
        first = self._process("--batch")
        second = _CatFile(self.path, "--batch", self._oid, self._request)
        failed: list[BaseException] = []

        def drain(p: _CatFile) -> None:
            while not failed:
                with lock:
                    chunk = next(chunks, None)
                if chunk is None:
                    return
                self._digests_on(p, chunk)

        def work() -> None:
            try:
                drain(second)
            except BaseException as exc:  # handed to the caller's thread below
                failed.append(exc)

        worker = threading.Thread(target=work, name="gate-blob-digests", daemon=True)
        worker.start()
        try:
            drain(first)
        except BaseException as exc:
            failed.append(exc)
            second.broken = True
            second.proc.kill()
            raise
        finally:
            worker.join()
            second.close()
        if failed:
            raise failed[0]

    # --- history -----------------------------------------------------------------------
    #: Commits `missing_parent` reads at most before it gives up.
    INCOMPLETE_SEARCH = 20_000

    def walk(self, tips: Iterable[str], hide: Iterable[str] | None, deadline: float | None,
             messages: bool = False) -> Iterator[WalkedCommit]:
        start = list(tips)
        try:
            walked = gitcmd.walk(self.path, start, hide, deadline, messages)
            first = next(walked, None)
            if first is not None:
                if self._unconfirmed:
                    self._printed(first.id)
                yield first
                yield from walked
        except GateError as exc:
            raise self._unwalkable(exc, start) from None

    def shown_commits(self, oids: Sequence[str]) -> dict[str, ShownCommit]:
        return gitcmd.shown_commits(self.path, [self._valid(o) for o in oids])

    def quick_walk(self, tips: Sequence[str], hide: Sequence[str], limit: int, deadline: float | None
                   ) -> tuple[list[WalkedCommit], list[str]] | None:
        found = gitcmd.quick_walk(self.path, [self._valid(t) for t in tips], [self._valid(h) for h in hide], limit,
                                  deadline)
        if found is not None and self._unconfirmed and (found[0] or found[1]):
            self._printed(found[0][0].id if found[0] else found[1][0])
        return found

    def walk_ids(self, tips: Sequence[str], hide: Sequence[str], limit: int
                 ) -> list[tuple[str, tuple[str, ...]]] | None:
        try:
            return gitcmd.walk_ids(self.path, [self._valid(t) for t in tips],
                                   [self._valid(h) for h in hide], limit, None)
        except GateError as exc:
            raise self._unwalkable(exc, tips) from None

    def _unwalkable(self, exc: GateError, tips: Sequence[str]) -> GateError:
        """Why git could not walk from `tips`: GATE-GIT-INCOMPLETE when a commit names a parent
        that neither the push nor the repository holds (git's walk fails there, and git's
        connectivity check refuses the push too, unless it was skipped); else `exc` as it is."""
        if exc.code != "GATE-GIT-UNREADABLE":
            return exc
        found = self.missing_parent(tips)
        if found is None:
            return exc
        commit, parent = found
        return GateError("GATE-GIT-INCOMPLETE", f"commit {commit} names the parent {parent}, which neither the push "
                                                "nor the repository holds: the pushed history is incomplete (a "
                                                "push from a shallow clone, or one whose connectivity check was "
                                                "skipped)")

    def missing_parent(self, tips: Sequence[str]) -> tuple[str, str] | None:
        """(commit, parent) for a commit reachable from `tips` that names a parent the repository
        (the push included) does not hold, searched level by level through at most
        `INCOMPLETE_SEARCH` commits; a shallow boundary's parents are not searched, as git does
        not walk them. None if none was found (or a tip itself is missing)."""
        shallow = gitcmd.shallow_commits(self.path)
        level = list(dict.fromkeys(tips))
        if not all(self._oid.fullmatch(t) and self.exists(t) for t in level):
            return None
        seen = set(level)
        while level and len(seen) <= self.INCOMPLETE_SEARCH:
            following: list[str] = []
            for oid, kind, data in self.read_many(level):
                if kind != "commit" or oid in shallow:
                    continue
                header = data.split(b"\n\n", 1)[0]
                for parent in (m.decode("ascii") for m in re.findall(_PARENT, header)):
                    if parent in seen or not self._oid.fullmatch(parent):
                        continue
                    if not self.exists(parent):
                        return oid, parent
                    seen.add(parent)
                    following.append(parent)
            level = following
        return None

    def preexisting(self, oids: Sequence[str]) -> set[str] | None:
        if self.quarantine is None:
            return None
        return gitcmd.outside_quarantine(self.path, [self._valid(o) for o in oids])

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return ancestor == descendant or gitcmd.is_ancestor(self.path, self._valid(ancestor), self._valid(descendant))

    def merge_base(self, a: str, b: str) -> str | None:
        return gitcmd.merge_base(self.path, self._valid(a), self._valid(b))

    def merge_bases(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
        return gitcmd.merge_bases(self.path, [(self._valid(a), self._valid(b)) for a, b in pairs])

    # --- refs --------------------------------------------------------------------------
    def _for_each_ref(self, *patterns: str) -> list[tuple[bytes, bytes, bytes]]:
        """Every ref (no `patterns`), or those the patterns match: asked of one `for-each-ref`
        per `FOR_EACH_REF_ARGV` bytes of patterns (a push's names on one command line can pass
        the system's limit: 1,024-byte names and a raised `[limits] max_ref_updates`)."""
        rows: list[tuple[bytes, bytes, bytes]] = []
        seen: set[bytes] = set()  # (a pattern matches the refs below it too: two chunks may list one ref)
        for chunk in _argv_chunks(patterns) if patterns else [[]]:
            out = gitcmd.run_git([f"--git-dir={self.path}", "for-each-ref",
                                  "--format=%(refname)%00%(objectname)%00%(symref)", *chunk])
            for line in out.stdout.split(b"\n"):
                if line:
                    name, oid, symref = line.split(b"\0")
                    if name not in seen:
                        seen.add(name)
                        rows.append((name, oid, symref))
        if rows and self._unconfirmed:
            self._printed(rows[0][1])
        return rows

    def ref_targets(self, keep: Callable[[bytes], bool] | None = None) -> dict[bytes, str]:
        return {name: oid.decode("ascii") for name, oid, symref in self._for_each_ref()
                if not symref and (keep is None or keep(name))}

    def ref_target(self, name: str) -> str | None:
        return self.ref_values([name]).get(name)

    def ref_values(self, names: Sequence[str]) -> dict[str, str]:
        # names no ref can hold are left out (for-each-ref would read them as patterns)
        wanted = {n.encode("utf-8", "surrogateescape"): n for n in names
                  if n.startswith("refs/") and not _NOT_IN_REFS.search(n)}
        if not wanted:
            return {}
        if all(n in self._listed for n in wanted.values()):
            return {n: oid for n in wanted.values() if (oid := self._listed[n]) is not None}
        return {wanted[ref]: oid.decode("ascii") for ref, oid, symref in self._for_each_ref(*wanted.values())
                if ref in wanted and not symref}

    def symbolic_target(self, name: str) -> str | None:
        out = gitcmd.run_git([f"--git-dir={self.path}", "symbolic-ref", "-q", name], ok=(0, 1))
        text = out.stdout.decode("utf-8", "surrogateescape").strip()
        return text if out.returncode == 0 and text else None

    def symbolic_targets(self, names: Sequence[str]) -> dict[str, str]:
        """One `for-each-ref` for all the names (a push of 1,000 refs asked `symbolic-ref` 1,000
        times: 1.4 s), then `unlisted_symbolic` for the names it did not list."""
        wanted = {n.encode("utf-8", "surrogateescape"): n for n in names
                  if n.startswith("refs/") and not _NOT_IN_REFS.search(n)}
        rows = [row for row in self._for_each_ref(*wanted.values()) if row[0] in wanted] if wanted else []
        listed = {ref: symref for ref, _, symref in rows}
        for name in wanted.values():
            self._listed.setdefault(name, None)
        self._listed.update((wanted[ref], oid.decode("ascii")) for ref, oid, symref in rows if not symref)
        out = {wanted[ref]: symref.decode("utf-8", "surrogateescape") for ref, symref in listed.items() if symref}
        out.update(self.unlisted_symbolic([n for n in names if n.encode("utf-8", "surrogateescape") not in listed]))
        return out

    def unlisted_symbolic(self, names: Sequence[str]) -> dict[str, str]:
        """The symbolic refs among names `for-each-ref` did not list, and their targets.

        `for-each-ref` passes over a symbolic ref whose target is missing (a dangling one, through
        which a push creates its target), in every ref backend. The names are asked of one
        `git cat-file --batch-check`, whatever the backend: git resolves each as a revision and
        warns `ignoring dangling symref NAME` for every dangling one, which is then asked of
        `git symbolic-ref` (a push creating 1,000 branches costs one process, not 1,000). A
        name cat-file would read as more than a ref name, or anything else git says on stderr,
        sends every name to `symbolic-ref` (the certain way, one process each)."""
        plain = [n for n in names if re.fullmatch(_PLAIN_REF, n) and ".." not in n and "@{" not in n]
        plain_set = set(plain)
        ask = [n for n in names if n not in plain_set]
        if plain:
            request = "".join(n + "\n" for n in plain).encode("utf-8", "surrogateescape")
            out = gitcmd.run_git([f"--git-dir={self.path}", "-c", "core.warnAmbiguousRefs=false", "cat-file",
                                  "--batch-check=%(objectname)"], input=request, env={"LC_ALL": "C", "LANGUAGE": "C"})
            flagged: set[str] = set()
            certain = out.stdout.count(b"\n") == len(plain)
            for line in out.stderr.decode("utf-8", "surrogateescape").splitlines():
                if line.startswith(_DANGLING):
                    flagged.add(line[len(_DANGLING):].strip())
                elif line.strip():
                    certain = False
            ask += [n for n in plain if n in flagged or not certain]
        found = {}
        for name in ask:
            target = self.symbolic_target(name)
            if target is not None:
                found[name] = target
        return found
