"""The object store the engine reads through: typed, cached access to a repository's objects,
each parsed by the one grammar (`grammar.py`), and the commit walk (pure; the reading itself is
the port's, `gitmodel.GitReader`).

What the grammar accepts and refuses, and why, is written in `grammar.py`; this module decides
nothing about an object's bytes. It caches what a walk reads twice (a commit's tree, then its
parent's), re-reads through git the commits whose message or idents git shows differently from
their bytes (`with_shown`), and reads the one file a record, receipt or approval commit holds
(`single_file`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..errors import GateError, malformed
from .gitmodel import MODE_BLOB, MODE_EXEC, MODE_TREE, GitReader, WalkedCommit
from .grammar import MAX_TAG_DEPTH, Commit, parse_commit, parse_tag, parse_tree, split_commit, with_shown


class Objects:
    """Typed, cached access to a repository's objects through one parser.

    Not thread-safe; one per check. Caches parsed commits and trees by id (a walk reads a
    commit's tree, then its parent's).
    """

    #: Parsed trees kept (bounded: a parent's tree is needed right after its child's).
    TREE_CACHE = 16384

    def __init__(self, reader: GitReader) -> None:
        self.reader = reader
        self._commits: dict[str, Commit] = {}
        self._tree_ids: dict[str, str] = {}  # commit -> tree, for every commit a walk saw
        self._trees: dict[str, dict[bytes, tuple[int, str]]] = {}
        self._types: dict[str, str] = {}  # id -> type, as git said it (objects never change)

    @property
    def zero_id(self) -> str:
        return self.reader.zero_id

    def type_of(self, oid: str) -> str:
        got = self._types.get(oid)
        if got is None:
            got = self._types[oid] = self.reader.header(oid)[0]
        return got

    def note_commits(self, oids: Iterable[str]) -> None:
        """Ids git printed as commits (a walk's, its boundary's): their type is known without asking."""
        self._types.update(dict.fromkeys(oids, "commit"))

    def _read(self, oid: str, want: str) -> bytes:
        kind, data = self.reader.read(oid)
        if kind != want:
            raise malformed(f"object {oid} is a {kind}, not a {want}")
        return data

    def commit(self, oid: str) -> Commit:
        """A commit, parsed; one that names an encoding, with what `git log` shows of it (`with_shown`)."""
        got = self._commits.get(oid)
        if got is None:
            raw = self._read(oid, "commit")
            header, message = split_commit(raw)
            got = self._commits[oid] = parse_commit(oid, header, message)
            if got.reencoded and b"\n\n" not in raw and got.idents is not None:
                # git re-encodes the commit, then looks for its message past the end of it
                got = self._commits[oid] = got._replace(idents=None, problem=(
                    "it names an encoding and has no message (no blank line after its header): git's reading of "
                    "such a commit, once re-encoded, is not defined"))
        if got.reencoded and got.shown is None and got.idents is not None:
            got = self._commits[oid] = self.shown([got], [oid])[0]
        return got

    def shown(self, commits: list[Commit], oids: Sequence[str]) -> list[Commit]:
        """`commits`, those named in `oids` with what `git log` shows of them (`with_shown`), asked
        of git in one request. (Those whose idents are refused already are not asked for: git's
        reading of a commit it cannot re-encode line by line, UTF-16's say, is not defined.)"""
        readable = {c.id for c in commits if c.idents is not None}
        wanted = [o for o in dict.fromkeys(oids) if o in readable]
        if not wanted:
            return commits
        got = self.reader.shown_commits(wanted)
        return [c if c.id not in got or c.shown is not None else with_shown(c, got[c.id]) for c in commits]

    def tree_id(self, commit: str) -> str:
        """A commit's tree (remembered from walks, so that a walked parent is not read again)."""
        got = self._tree_ids.get(commit)
        return got if got is not None else self.commit(commit).tree_id

    def tree(self, oid: str) -> dict[bytes, tuple[int, str]]:
        got = self._trees.get(oid)
        if got is None:
            got = self._keep_tree(oid, parse_tree(oid, self._read(oid, "tree")))
        return got

    def _keep_tree(self, oid: str, entries: dict[bytes, tuple[int, str]]) -> dict[bytes, tuple[int, str]]:
        if len(self._trees) >= self.TREE_CACHE:
            self._trees.clear()
        self._trees[oid] = entries
        return entries

    def trees(self, oids: Iterable[str]) -> dict[str, dict[bytes, tuple[int, str]]]:
        """Many trees at once: those not cached are read in one request (which the reader
        may stream), parsed, and kept."""
        out: dict[str, dict[bytes, tuple[int, str]]] = {}
        missing: list[str] = []
        for oid in oids:
            if oid in out:
                continue
            got = self._trees.get(oid)
            if got is None:
                missing.append(oid)
                out[oid] = {}
            else:
                out[oid] = got
        for oid, kind, data in self.reader.read_many(missing):
            if kind != "tree":
                raise malformed(f"object {oid} is a {kind}, not a tree")
            out[oid] = self._keep_tree(oid, parse_tree(oid, data))
        return out

    def raw_trees(self, oids: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        """(id, raw bytes) of each tree, in order, streamed from one request (not kept)."""
        for oid, kind, data in self.reader.read_many(oids):
            if kind != "tree":
                raise malformed(f"object {oid} is a {kind}, not a tree")
            yield oid, data

    def tree_from_bytes(self, oid: str, data: bytes) -> dict[bytes, tuple[int, str]]:
        """`tree(oid)`, from bytes already read (`raw_trees`)."""
        got = self._trees.get(oid)
        return got if got is not None else self._keep_tree(oid, parse_tree(oid, data))

    def prefetch_commits(self, oids: Iterable[str]) -> None:
        """Read and parse, in one request, the commits among `oids` not seen yet (a walk's
        boundary parents, say), so that their trees are known."""
        missing = list(dict.fromkeys(o for o in oids if o not in self._tree_ids and o not in self._commits))
        for oid, kind, data in self.reader.read_many(missing):
            if kind != "commit":
                raise malformed(f"object {oid} is a {kind}, not a commit")
            header, message = split_commit(data)
            self._commits[oid] = parse_commit(oid, header, message)

    def blob(self, oid: str) -> bytes:
        return self._read(oid, "blob")

    def peel_to_commit(self, oid: str) -> str | None:
        """The commit an object (a commit, or a chain of tags) resolves to; None for trees and blobs."""
        current = oid
        for _ in range(MAX_TAG_DEPTH + 1):
            kind = self.type_of(current)
            if kind == "commit":
                return current
            if kind != "tag":
                return None
            target, declared = parse_tag(current, self._read(current, "tag"))
            actual = self.type_of(target)
            if actual != declared:
                raise malformed(f"tag {current} says its object is a {declared}, but {target} is a {actual}")
            current = target
        raise malformed(f"tag chain at {oid} is deeper than {MAX_TAG_DEPTH}")

    #: Messages read again from their objects in one request (and walked commits held meanwhile, at most).
    RAW_MESSAGE_BATCH = 1024
    RAW_MESSAGE_HELD = 16384

    def walk(self, tips: Iterable[str], hide: Iterable[str] | None, deadline: float | None,
             messages: bool = False, limit: tuple[int, str] | None = None,
             walked: Sequence[WalkedCommit] | None = None) -> Iterator[Commit]:
        """The commits git's walk finds (`rev-list TIPS --not HIDE`), each parsed here and
        cross-checked: git's parents must be the parents the raw header names.

        `walked`: that walk as git printed it already (a quick walk's commits, their messages
        kept: `GitReader.quick_walk`), read here instead of asking git again.

        `limit` (count, what): past `count` commits the walk is closed and GATE-LIMIT-COMMITS
        raised (`limits.bounded`), counted as git hands them over, before any is held below.

        With `messages`, each commit's message is the one its object holds, as far as trailers
        can tell. The walk prints messages re-flowed (leading blank lines dropped, blanks
        trimmed from line ends), which can move where git's trailer readings start and stop,
        so a message is read again from the object unless its printed form proves the
        readings alike (`trailers.reflowed_alike`), and always when the commit names an
        encoding.

        A commit whose header names an encoding other than UTF-8 (rare) is also read as
        `git log` shows it, re-encoded by git (`with_shown`): its idents held to git's, and, with
        `messages`, its message as git shows it (`Commit.shown`).

        Those read again are read `RAW_MESSAGE_BATCH` at a time, one request each (a `cat-file`
        request for raw messages, one `git log` for what git shows); the commits walked
        meanwhile are held, in order, `RAW_MESSAGE_HELD` at most.
        """
        from .limits import bounded
        from .trailers import reflowed_alike

        source: Iterable[WalkedCommit]
        if walked is not None:
            # The tips are read as the walk below reads them (a tag chain by the grammar: deeper than
            # MAX_TAG_DEPTH, or lying about its target, is refused), whatever git's walk made of them; a
            # commit the walk printed is known already (`note_commits`), so this asks git nothing for it.
            for t in tips:
                self.peel_to_commit(t)
            source = walked if messages else (w._replace(message=b"") for w in walked)
        else:
            start = [c for c in (self.peel_to_commit(t) for t in tips) if c is not None]
            if not start:
                return
            source = self.reader.walk(start, hide, deadline, messages)
        if limit is not None:
            source = bounded(source, *limit)
        held: list[Commit] = []
        again: list[str] = []
        encoded: list[str] = []
        tree_ids = self._tree_ids
        for w in source:
            # (`_walked`, inline: this loop runs once per commit of the push)
            c = parse_commit(w.id, w.header, w.message) if w.headed else self.commit(w.id)
            if c.parent_ids != w.git_parents:
                c = self._walked(w)  # a shallow boundary read without parents; else it raises
            tree_ids[c.id] = c.tree_id
            if c.reencoded and c.shown is None:
                encoded.append(c.id)
                if messages:
                    again.append(c.id)
            elif messages and not reflowed_alike(c.message):
                again.append(c.id)
            elif not held:
                yield c  # (nothing waits: the common case)
                continue
            held.append(c)
            if len(again) >= self.RAW_MESSAGE_BATCH or len(encoded) >= self.RAW_MESSAGE_BATCH or (
                    len(held) >= self.RAW_MESSAGE_HELD):
                yield from self.shown(self._raw_messages(held, again), encoded)
                held, again, encoded = [], [], []
        yield from self.shown(self._raw_messages(held, again), encoded)

    def _raw_messages(self, commits: list[Commit], again: list[str]) -> list[Commit]:
        """`commits`, those named in `again` with the message their object holds (one request)."""
        if not again:
            return commits
        raw: dict[str, bytes] = {}
        for oid, kind, data in self.reader.read_many(again):
            if kind != "commit":
                raise malformed(f"object {oid} is a {kind}, not a commit")
            raw[oid] = split_commit(data)[1]
        return [c if c.id not in raw else c._replace(message=raw[c.id]) for c in commits]

    def _walked(self, w: WalkedCommit) -> Commit:
        # No blank line after the header: no message, or a NUL that git stopped printing at
        # (which the raw bytes show, and which is refused): read the object itself.
        c = parse_commit(w.id, w.header, w.message) if w.headed else self.commit(w.id)
        if c.parent_ids != w.git_parents:
            if not (w.shallow and not w.git_parents):
                raise malformed(f"commit {w.id}: git walks parents {list(w.git_parents)}, the commit names "
                                f"{list(c.parent_ids)} (grafts or a replaced commit?)")
            # A shallow boundary, read as git reads it: no parents (docs/policy.md, shallow repositories).
            c = c._replace(parent_ids=())
        self._tree_ids[c.id] = c.tree_id
        return c


def single_file(objects: Objects, tree_id: str, name: str, code: str, too_large: str | None = None) -> bytes:
    """The bytes of the one regular file a record, receipt or approval commit holds (size-capped).
    GateError(code) when it does not hold one; over the cap GateError(too_large), when the
    caller's area has such a code (receipts), else GateError(code)."""
    from ..strictjson import MAX_DOCUMENT_BYTES

    entries = objects.tree(tree_id)
    key = name.encode()
    if set(entries) != {key} or entries[key][0] != MODE_BLOB:
        raise GateError(code, f"tree {tree_id[:12]} must hold exactly one regular file {name}")
    blob = entries[key][1]
    kind, size = objects.reader.header(blob)
    if kind != "blob":
        raise GateError(code, f"{name} in tree {tree_id[:12]} is a {kind}, not a file")
    if size > MAX_DOCUMENT_BYTES:
        raise GateError(too_large or code, f"{name} in tree {tree_id[:12]} is {size} bytes, over the "
                                           f"{MAX_DOCUMENT_BYTES}-byte cap")
    return objects.blob(blob)


def committed_blob(objects: Objects, commit: str, path: str, code: str) -> str | None:
    """The blob id of `path` in `commit`'s tree; None if absent; GateError(code) if it is not a regular
    file (a symlink's blob holds its target's text; the id alone does not say which it is)."""
    parts = path.split("/")
    tree = objects.commit(commit).tree_id
    where = f"{commit[:12]}:{path}"
    for name in parts[:-1]:
        entry = objects.tree(tree).get(name.encode())
        if entry is None:
            return None
        if entry[0] != MODE_TREE:
            raise GateError(code, f"{where}: {name} is not a directory")
        tree = entry[1]
    entry = objects.tree(tree).get(parts[-1].encode())
    if entry is None:
        return None
    if entry[0] not in (MODE_BLOB, MODE_EXEC):
        raise GateError(code, f"{where} is not a regular file")
    return entry[1]


def committed_file(objects: Objects, commit: str, path: str, code: str, cap: int) -> bytes | None:
    """The bytes of `path` in `commit`'s tree; None if absent; GateError(code) if it is not a regular
    file of at most `cap` bytes (the client hooks' policy and keyring, a forge check's, read from a commit)."""
    blob = committed_blob(objects, commit, path, code)
    if blob is None:
        return None
    if objects.reader.header(blob)[1] > cap:
        raise GateError(code, f"{commit[:12]}:{path} is larger than {cap} bytes")
    return objects.blob(blob)
