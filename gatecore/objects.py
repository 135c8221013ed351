"""The one reading of git objects: strict parsers for commits, trees and tags (pure).

git, libgit2 and the tools that later show or check out a tree do not agree on every
object, and wherever they disagree the gate must not believe the harmless reading. So
every fact a decision uses comes from the raw bytes of the object, parsed here the way
git itself parses them, and anything git would read differently from another tool is
refused as malformed (`GATE-GIT-MALFORMED`):

* **commits**: `tree` first, then `parent` lines, then exactly one `author` and one
  `committer` line (git's log shows the last `author` line, libgit2 the first: a second one
  is refused), each ident `Name <email> seconds +zone` as `git fsck` checks it, the email
  neither starting nor ending with whitespace (libgit2 trims it, git does not) and without
  control characters; an
  `encoding` header is honoured only for ASCII-compatible encodings Python knows (git
  re-encodes the whole commit with it: a UTF-16 header makes git's `%ae` empty); no NUL
  byte in the header. The parents a walk used (`git rev-list --parents`) must equal the
  parents parsed here.
* **trees**: every entry `<octal mode> SP <name> NUL <20-byte id>`, names non-empty,
  without `/`, not `.` or `..`, sorted the way git sorts them, each name once. Modes are
  classified by git's `canon_mode` (`gitmodel.canon_mode`); a mode that is not one of the
  five canonical ones is kept as it is, for the caller to refuse (`GATE-GIT-MODE`).
* **tags**: `object`, then `type` naming the target's real type; chains of at most
  `MAX_TAG_DEPTH` tags.

An object that is absent is unreadable (`GATE-GIT-UNREADABLE`, from the reader); one that
is present but does not parse is malformed.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from .errors import GateError, malformed
from .gitmodel import MODE_BLOB, MODE_TREE, GitReader, WalkedCommit

MAX_TAG_DEPTH = 16

_HEX40 = re.compile(rb"[0-9a-f]{40}")
#: fsck's ident: a name without <>\n, " <", an email without <>\n, "> ", seconds, " ", +-HHMM.
_IDENT = re.compile(rb"([^<>\n]*) <([^<>\n]*)> (0|[1-9][0-9]{0,17}) ([+-][0-9]{4})")
_EMAIL_BAD = re.compile(rb"[\x00-\x1f\x7f]|^\s|\s$")
_IDENT_RX = rb"([^<>\n]*) <([^<>\n]*)> (?:0|[1-9][0-9]{0,17}) [+-][0-9]{4}"
#: The common shape, read in one match: tree, parents, author, committer, then other headers.
_FAST = re.compile(rb"tree ([0-9a-f]{40})\n((?:parent [0-9a-f]{40}\n)*)author " + _IDENT_RX
                   + rb"\ncommitter " + _IDENT_RX + rb"(\n.*)?", re.DOTALL)
#: Anything in the other headers that sends a commit down the careful road.
_ODD = re.compile(rb"\n(?:author|committer|encoding|tree|parent) ")
_ENTRY = re.compile(rb"([0-7]+) ([^\0/]+)\0(.{20})", re.DOTALL)
_TREE = re.compile(rb"(?:[0-7]+ [^\0/]+\0.{20})*", re.DOTALL)
_MODE_VALUES = {b"100644": 0o100644, b"100755": 0o100755, b"40000": 0o40000, b"120000": 0o120000,
                b"160000": 0o160000}
_UTF8 = ("utf-8", "utf8")


@dataclass(frozen=True, slots=True)
class Ident:
    """An author or committer as git records it."""

    name: str
    email: str


@dataclass(frozen=True, slots=True)
class Commit:
    id: str
    tree_id: str
    parent_ids: tuple[str, ...]
    #: (author, committer), or None with `problem` saying why they cannot be read the way git does.
    idents: tuple[Ident, Ident] | None
    problem: str
    message: bytes
    extra: bytes  # the raw header lines after committer (gpgsig, mergetag, encoding, ...)

    def identities(self) -> tuple[Ident, Ident]:
        """(author, committer); GATE-GIT-MALFORMED if git would not read them as they are parsed here."""
        if self.idents is None:
            raise malformed(f"commit {self.id}: {self.problem}")
        return self.idents

    @property
    def author_email(self) -> str:
        return self.identities()[0].email

    @property
    def committer_email(self) -> str:
        return self.identities()[1].email


def _ascii_compatible(name: str) -> codecs.CodecInfo | None:
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    probe = bytes(range(0x20, 0x7F)) + b"\n"
    try:
        return info if info.decode(probe)[0] == probe.decode("ascii") else None
    except (UnicodeDecodeError, ValueError, TypeError):
        return None


def parse_ident(value: bytes, decode: codecs.CodecInfo | None = None) -> Ident | str:
    """An Ident, or the reason git and other readers could disagree about it."""
    m = _IDENT.fullmatch(value)
    if m is None:
        return "an ident is not 'Name <email> seconds +zone' (git fsck)"
    name, email = m.group(1), m.group(2)
    if not email or _EMAIL_BAD.search(email):
        return ("an email is empty, starts or ends with whitespace (libgit2 trims it, git does not) or holds "
                "a control character")
    if decode is None:
        return Ident(name.decode("utf-8", "surrogateescape").strip(), email.decode("utf-8", "surrogateescape"))
    try:
        return Ident(decode.decode(name)[0].strip(), decode.decode(email)[0])
    except (UnicodeDecodeError, ValueError):
        return "an ident does not decode in the commit's encoding"


def split_commit(raw: bytes) -> tuple[bytes, bytes]:
    """(header, message) of a raw commit object."""
    end = raw.find(b"\n\n")
    if end < 0:
        return (raw[:-1] if raw.endswith(b"\n") else raw), b""
    return raw[:end], raw[end + 2:]


_IDENTS: dict[tuple[bytes, bytes], Ident | None] = {}
_IDENTS_KEPT = 4096


def _plain_ident(name: bytes, email: bytes) -> Ident | None:
    """The fast road's ident (memoised: a history holds few distinct people), or None if
    the email needs the careful road."""
    key = (name, email)
    try:
        return _IDENTS[key]
    except KeyError:
        pass
    got = None if not email or _EMAIL_BAD.search(email) else Ident(
        name.decode("utf-8", "surrogateescape").strip(), email.decode("utf-8", "surrogateescape"))
    if len(_IDENTS) >= _IDENTS_KEPT:
        _IDENTS.clear()
    _IDENTS[key] = got
    return got


def parse_commit(oid: str, header: bytes, message: bytes = b"") -> Commit:
    """A commit from its raw header (everything before the first blank line) and message.

    Structural faults (no tree, a bad parent line, a NUL in the header, a header out of
    place) raise GATE-GIT-MALFORMED at once; faults in the idents are recorded and raise
    when the identities are asked for (a parent's tree is still usable).
    """
    if b"\0" in header:
        raise malformed(f"commit {oid}: a NUL byte in the header")
    fast = _FAST.fullmatch(header)
    if fast is not None:
        tree, listed, an, ae, cn, ce, extra = fast.groups(b"")
        fast_author, fast_committer = _plain_ident(an, ae), _plain_ident(cn, ce)
        if fast_author is not None and fast_committer is not None and not (extra and _ODD.search(extra)):
            listed_ids = (listed[7:47].decode("ascii"),) if len(listed) == 48 else tuple(
                listed[i + 7:i + 47].decode("ascii") for i in range(0, len(listed), 48))
            return Commit(oid, tree.decode("ascii"), listed_ids, (fast_author, fast_committer), "", message,
                          extra[1:])
    lines = header.split(b"\n")
    first = lines[0]
    if not first.startswith(b"tree ") or not _HEX40.fullmatch(first, 5):
        raise malformed(f"commit {oid}: the first line is not 'tree <id>'")
    i = 1
    parents: list[str] = []
    while i < len(lines) and lines[i].startswith(b"parent "):
        if not _HEX40.fullmatch(lines[i], 7):
            raise malformed(f"commit {oid}: a parent line is not 'parent <id>'")
        parents.append(lines[i][7:].decode("ascii"))
        i += 1
    # The remaining headers, continuation lines (starting with a space) folded into their header.
    rest: list[tuple[bytes, bytes]] = []
    for line in lines[i:]:
        if line.startswith(b" ") and rest:
            key, value = rest[-1]
            rest[-1] = (key, value + b"\n" + line[1:])
            continue
        key, sep, value = line.partition(b" ")
        if not sep or not key:
            raise malformed(f"commit {oid}: a header line is not 'key value'")
        if key in (b"tree", b"parent"):
            raise malformed(f"commit {oid}: a {key.decode()} line out of place")
        rest.append((key, value))
    problem = ""
    idents: tuple[Ident, Ident] | None = None
    keys = [k for k, _ in rest]
    encodings = [v for k, v in rest if k == b"encoding"]
    decode: codecs.CodecInfo | None = None
    if keys[:2] != [b"author", b"committer"] or keys.count(b"author") != 1 or keys.count(b"committer") != 1:
        problem = "not exactly one author line followed by one committer line"
    elif len(encodings) > 1:
        problem = "more than one encoding header"
    elif encodings and encodings[0].strip().lower().decode("ascii", "replace") not in _UTF8:
        name = encodings[0].strip().decode("ascii", "replace")
        decode = _ascii_compatible(name)
        if decode is None:
            problem = f"encoding {name!r} is not one the gate can read the way git does (ASCII-compatible)"
    if not problem:
        author, committer = parse_ident(rest[0][1], decode), parse_ident(rest[1][1], decode)
        if isinstance(author, str):
            problem = f"author: {author}"
        elif isinstance(committer, str):
            problem = f"committer: {committer}"
        else:
            idents = (author, committer)
    after = rest[2:] if idents is not None else rest
    return Commit(oid, first[5:].decode("ascii"), tuple(parents), idents, problem, message,
                  b"\n".join(k + b" " + v.replace(b"\n", b"\n ") for k, v in after))


def mode_value(text: bytes) -> int:
    """A tree entry's mode as `parse_tree` reads it (octal, as git parses it into an unsigned int)."""
    mode = _MODE_VALUES.get(text)
    return int(text, 8) & 0xFFFFFFFF if mode is None else mode


def parse_tree(oid: str, data: bytes) -> dict[bytes, tuple[int, str]]:
    """The entries of a raw tree: name -> (raw mode, id), checked as git fsck checks them."""
    if not _TREE.fullmatch(data):
        raise malformed(f"tree {oid}: an entry is not '<octal mode> <name>\\0<id>' (or a name holds '/')")
    entries = _ENTRY.findall(data)
    out: dict[bytes, tuple[int, str]] = {}
    prev = b""
    for mode_text, name, raw_id in entries:
        mode = _MODE_VALUES.get(mode_text)
        if mode is None:
            mode = int(mode_text, 8) & 0xFFFFFFFF  # git parses into an unsigned int
        key = name + b"/" if mode & 0o170000 == MODE_TREE else name
        if key <= prev or name in out:
            if name in out or key == prev:
                raise malformed(f"tree {oid} has two entries named {name!r} (git fsck: duplicateEntries)")
            raise malformed(f"tree {oid} is not sorted the way git sorts trees (git fsck: treeNotSorted)")
        if name in (b".", b".."):
            raise malformed(f"tree {oid} has an entry named {name!r}")
        out[name] = (mode, raw_id.hex())
        prev = key
    return out


def parse_tag(oid: str, data: bytes) -> tuple[str, str]:
    """(target id, declared target type) of a raw tag object."""
    lines = data.split(b"\n", 2)
    if (len(lines) < 3 or not lines[0].startswith(b"object ") or not _HEX40.fullmatch(lines[0], 7)
            or lines[1] not in (b"type commit", b"type tree", b"type blob", b"type tag")):
        raise malformed(f"tag {oid}: does not start with 'object <id>' and 'type <type>'")
    return lines[0][7:].decode("ascii"), lines[1][5:].decode("ascii")


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

    @property
    def zero_id(self) -> str:
        return self.reader.zero_id

    def type_of(self, oid: str) -> str:
        return self.reader.header(oid)[0]

    def _read(self, oid: str, want: str) -> bytes:
        kind, data = self.reader.read(oid)
        if kind != want:
            raise malformed(f"object {oid} is a {kind}, not a {want}")
        return data

    def commit(self, oid: str) -> Commit:
        got = self._commits.get(oid)
        if got is None:
            header, message = split_commit(self._read(oid, "commit"))
            got = self._commits[oid] = parse_commit(oid, header, message)
        return got

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

    def walk(self, tips: Iterable[str], hide: Iterable[str] | None, deadline: float | None,
             messages: bool = False) -> Iterator[Commit]:
        """The commits git's walk finds (`rev-list TIPS --not HIDE`), each parsed here and
        cross-checked: git's parents must be the parents the raw header names."""
        start = [c for c in (self.peel_to_commit(t) for t in tips) if c is not None]
        if not start:
            return
        for w in self.reader.walk(start, hide, deadline, messages):
            yield self._walked(w)

    def _walked(self, w: WalkedCommit) -> Commit:
        c = parse_commit(w.id, w.header, w.message)
        if c.parent_ids != w.git_parents:
            raise malformed(f"commit {w.id}: git walks parents {list(w.git_parents)}, the commit names "
                            f"{list(c.parent_ids)} (grafts, a shallow file or a replaced commit?)")
        self._tree_ids[c.id] = c.tree_id
        return c


def single_file(objects: Objects, tree_id: str, name: str, code: str) -> bytes:
    """The bytes of the one regular file a record, receipt or approval commit holds (size-capped)."""
    from .strictjson import MAX_DOCUMENT_BYTES

    entries = objects.tree(tree_id)
    key = name.encode()
    if set(entries) != {key} or entries[key][0] != MODE_BLOB:
        raise GateError(code, f"tree {tree_id[:12]} must hold exactly one regular file {name}")
    blob = entries[key][1]
    kind, size = objects.reader.header(blob)
    if kind != "blob":
        raise GateError(code, f"{name} in tree {tree_id[:12]} is a {kind}, not a file")
    if size > MAX_DOCUMENT_BYTES:
        raise GateError("GATE-RECEIPT-TOO-LARGE", f"{name} in tree {tree_id[:12]} is over the size cap")
    return objects.blob(blob)
