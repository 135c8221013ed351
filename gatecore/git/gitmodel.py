"""The port: what the engine reads from git, and nothing else (a Protocol, no I/O here).

The engine (`objects`, `treediff`, `digest`, `frozen`, `pushcheck`, the `reserved`
stage) reads a repository only through a `GitReader`. The reader hands out raw
object bytes and ref values; every fact a decision uses is parsed from those bytes by
`gatecore.git.objects`, one parser whose reading matches git's. The implementation over a real
repository is `gatecore.adapters.gitstream.GitStream` (git's own processes: `cat-file --batch`,
`for-each-ref`, `rev-list`), the hooks' reader; `gatecore.adapters.gitrepo.GitRepo`, the trusted
side's, is the same reader plus writes through git's plumbing. Both read every repository the
local git opens (files or reftable refs, SHA-1 or SHA-256), with replacement objects and grafts
switched off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from ..valueclass import valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import NamedTuple, Protocol
else:
    from ..valueclass import NamedTuple, Protocol

#: git's five canonical tree-entry modes.
MODE_TREE = 0o040000
MODE_BLOB = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000
CANONICAL_MODES = frozenset((MODE_TREE, MODE_BLOB, MODE_EXEC, MODE_LINK, MODE_GITLINK))

_S_IFMT = 0o170000


@valueclass(frozen=True, slots=True)
class ObjectFormat:
    """A repository's object format (`extensions.objectFormat`): how long its ids are.

    Every id the engine handles has the width of its repository's format: hex ids on the
    hooks' stdin, in commit and tag headers and from git's commands, raw ids inside trees.
    Nothing in `gatecore` assumes sha1: the width comes from here (`FORMATS[reader.object_format]`,
    or `format_of(oid)` for an id already validated), so that a SHA-256 repository, and git 3.0's
    SHA-256 default, read through the same code.
    """

    name: str  # "sha1" | "sha256", as git spells it
    hexsz: int  # hex digits of an id (git's hexsz)
    rawsz: int  # bytes of an id inside a tree (git's rawsz)

    @property
    def zero_id(self) -> str:
        """The all-zero id: a ref that does not exist (creation's old value, deletion's new one)."""
        return "0" * self.hexsz


SHA1 = ObjectFormat("sha1", 40, 20)
SHA256 = ObjectFormat("sha256", 64, 32)
#: The formats git knows, by the name `extensions.objectFormat` and `rev-parse --show-object-format` use.
FORMATS = {f.name: f for f in (SHA1, SHA256)}
_BY_HEXSZ = {f.hexsz: f for f in FORMATS.values()}


def format_of(oid: str | bytes) -> ObjectFormat:
    """The format whose ids are as long as `oid` (a hex id already taken from git or validated);
    ValueError for any other length."""
    got = _BY_HEXSZ.get(len(oid))
    if got is None:
        raise ValueError(f"an object id of {len(oid)} characters belongs to no object format")
    return got


def canon_mode(mode: int) -> int:
    """The mode git uses for a raw tree-entry mode (git's `canon_mode`, by the type bits).

    Regular files keep only the owner-execute bit (100755 or 100644); anything whose type
    bits are neither a regular file, a symlink nor a directory is a submodule (gitlink).
    This is how `git ls-tree`, `diff-tree`, `archive` and every checkout read a tree.
    """
    kind = mode & _S_IFMT
    if kind == 0o100000:
        return MODE_EXEC if mode & 0o100 else MODE_BLOB
    if kind == MODE_LINK:
        return MODE_LINK
    if kind == MODE_TREE:
        return MODE_TREE
    return MODE_GITLINK


def kind_of(mode: int) -> str:
    """file, symlink, submodule or directory, by the canonical mode (0: absent)."""
    canon = canon_mode(mode)
    if canon == MODE_LINK:
        return "symlink"
    if canon == MODE_GITLINK:
        return "submodule"
    if canon == MODE_TREE:
        return "directory"
    return "file"


class WalkedCommit(NamedTuple):
    """One commit of a history walk, as git printed it: its id, the parents git's own walk
    used, and the raw header lines (verbatim) and message (up to a NUL byte, if any; empty
    unless the walk was asked for messages).

    `headed` is False when git printed no blank line after the header: a commit without a
    message, or one whose header holds a NUL byte, where git stops printing (git fsck:
    nulInHeader). Such a commit is read again from its raw bytes.

    `shallow` is True for a commit the shallow list git read lists (the repository's `shallow`
    file, or the one receive-pack hands a hook for a push that brings new shallow roots): git
    walks it without parents, whatever parents it names.

    (A named tuple, not a frozen dataclass: one is made per walked commit, and a frozen
    dataclass takes eight times as long to make.)"""

    id: str
    git_parents: tuple[str, ...]
    header: bytes
    message: bytes
    headed: bool = True
    shallow: bool = False


@valueclass(frozen=True, slots=True)
class ShownCommit:
    """A commit as `git log` shows it to a person (`%an`, `%ae`, `%cn`, `%ce`, `%B`): for a
    commit whose `encoding` header names another encoding than UTF-8, git re-encodes the whole
    commit to UTF-8 through the system's iconv before it reads anything from it, and shows the
    raw bytes where iconv cannot convert them (`logmsg_reencode`)."""

    author: tuple[bytes, bytes]  # (name, email)
    committer: tuple[bytes, bytes]
    message: bytes


#: Decides, for a directory path (no trailing slash, b"" for the root), whether any path
#: below it could matter. Used to prune tree walks; `None` walks everything.
DescendFilter = Callable[[bytes], bool]


class GitReader(Protocol):
    """Read access to one repository (the pushed objects included, inside a hook)."""

    object_format: str  # "sha1" or "sha256" (a key of FORMATS)
    zero_id: str  # FORMATS[object_format].zero_id

    def header(self, oid: str) -> tuple[str, int]:
        """(type, size) of an object: 'commit', 'tree', 'blob' or 'tag'; GATE-GIT-UNREADABLE if absent."""
        ...

    def exists(self, oid: str) -> bool: ...

    def read(self, oid: str) -> tuple[str, bytes]:
        """(type, raw bytes) of an object, exactly as stored; GATE-GIT-UNREADABLE if absent."""
        ...

    def read_many(self, oids: Sequence[str]) -> Iterator[tuple[str, str, bytes]]:
        """(id, type, raw bytes) of each object, in order: one request for many objects,
        which a reader may stream (GATE-GIT-UNREADABLE if any is absent)."""
        ...

    def blob_sha256(self, oid: str) -> str:
        """SHA-256 of a blob's bytes (the reader may hash without copying)."""
        ...

    def blob_digests(self, oids: Iterable[str]) -> dict[str, str]:
        """`blob_sha256` of many blobs at once."""
        ...

    def walk(self, tips: Iterable[str], hide: Iterable[str] | None, deadline: float | None,
             messages: bool = False) -> Iterator[WalkedCommit]:
        """Commits reachable from `tips` and from none of `hide` (None: every branch and tag),
        as git's own walk finds them, with replacement objects and grafts ignored (their
        messages only when asked for)."""
        ...

    def shown_commits(self, oids: Sequence[str]) -> dict[str, ShownCommit]:
        """Each commit as `git log` shows it, re-encoded by git (one request for all of them)."""
        ...

    def quick_walk(self, tips: Sequence[str], hide: Sequence[str], limit: int, deadline: float | None
                   ) -> tuple[list[WalkedCommit], list[str]] | None:
        """`walk(tips, hide)` read whole, messages included, with its boundary: the hidden commits
        that are a parent of a walked one (`rev-list --boundary`); None if it finds more than
        `limit` commits (git stops there)."""
        ...

    def walk_ids(self, tips: Sequence[str], hide: Sequence[str], limit: int
                 ) -> list[tuple[str, tuple[str, ...]]] | None:
        """(id, parents) of the commits `walk(tips, hide)` finds, or None if there are more
        than `limit` (git stops listing there)."""
        ...

    def preexisting(self, oids: Sequence[str]) -> set[str] | None:
        """Which of `oids` the repository held before this push, outside git's quarantine
        (None: this reader cannot tell, e.g. no quarantine)."""
        ...

    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...

    def merge_base(self, a: str, b: str) -> str | None: ...

    def merge_bases(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
        """`merge_base` of many pairs at once (each the one `git merge-base A B` prints)."""
        ...

    def ref_target(self, name: str) -> str | None:
        """The id a direct ref points at, or None (absent or symbolic)."""
        ...

    def ref_values(self, names: Sequence[str]) -> dict[str, str]:
        """`ref_target` of several names at once (absent and symbolic refs left out)."""
        ...

    def symbolic_target(self, name: str) -> str | None:
        """The ref a symbolic ref points to, or None for a direct or absent ref."""
        ...

    def symbolic_targets(self, names: Sequence[str]) -> dict[str, str]:
        """`symbolic_target` of several names at once: the symbolic refs among them -> their targets."""
        ...

    def ref_targets(self, keep: Callable[[bytes], bool] | None = None) -> dict[bytes, str]:
        """Direct refs (name -> target id); symbolic refs are skipped."""
        ...
