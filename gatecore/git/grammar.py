"""The grammar of git objects: strict parsers for commits, trees and tags (pure).

git, libgit2 and the tools that later show or check out a tree do not agree on every
object, and wherever they disagree the gate must not believe the harmless reading. So
every fact a decision uses comes from the raw bytes of the object, parsed here the way
git itself parses them; what git accepts and every reader reads alike is decided, and
only what git, libgit2 or a forge could read two ways (or what git itself cannot read)
is refused as malformed (`GATE-GIT-MALFORMED`). docs/security.md has the table, one row
per `git fsck` message id.

* **commits**: `tree` first, then `parent` lines, then exactly one `author` and one
  `committer` line (git's log shows the last `author` line, libgit2 the first: a second
  one is refused; libgit2 reads nothing unless committer follows author). An ident is
  read as git reads it for `%an`/`%ae` (`split_ident_line`): the email between the first
  `<` and the first `>` after it, the name everything before the `<` less git's trailing
  blanks. Refused where readers part: a second `<`, or a `>` after the email (libgit2,
  go-git and Gitea take the last of each), an email starting or ending with whitespace
  (libgit2 trims it, git does not), no `<email>` at all. A name that starts or ends with
  whitespace git keeps (libgit2 and go-git trim it) is refused only if a rule reads names
  (`Ident.name`). The date and time zone decide nothing here and are tolerated as git
  tolerates them (`badTimezone`, `zeroPaddedDate`, a missing date...): `Commit.oddities`
  names what `git fsck` would say. An `encoding` header is honoured only for
  ASCII-compatible encodings Python knows (git re-encodes the whole commit with it: a
  UTF-16 header makes git's `%ae` empty), and then the commit is also read as `git log`
  shows it, re-encoded by git itself through iconv (`Objects` asks git: `with_shown`),
  its idents held to git's; no NUL byte in the header. The parents a walk
  used (`git rev-list --parents`) must equal the parents parsed here.
* **trees**: every entry `<octal mode> SP <name> NUL <raw id>`, names non-empty,
  without `/`, not `.` or `..`, sorted the way git sorts them, each name once. Modes are
  classified by git's `canon_mode` (`gitmodel.canon_mode`); a mode that is not one of the
  five canonical ones is kept as it is, for the caller to refuse (`GATE-GIT-MODE`).
* **tags**: `object`, then `type` naming the target's real type; chains of at most
  `MAX_TAG_DEPTH` tags.

Ids have the width of the object's format (`gitmodel.ObjectFormat`): 40 hex digits and
20-byte tree ids in a sha1 repository, 64 and 32 in a sha256 one, taken from the length
of the id the object was asked for by.

An object that is absent is unreadable (`GATE-GIT-UNREADABLE`, from the reader); one that
is present but does not parse is malformed.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from functools import cache

from ..errors import GateError, malformed
from ..valueclass import valueclass
from .gitmodel import MODE_TREE, ObjectFormat, ShownCommit, format_of

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ..valueclass import NamedTuple

MAX_TAG_DEPTH = 16

#: fsck's well-formed ident, for the fast road: a name without <>\n, " <", an email without <>\n,
#: "> ", seconds, " ", +-HHMM. Anything else takes the careful road (`parse_ident`).
_IDENT_RX = rb"([^<>\n]*) <([^<>\n]*)> (?:0|[1-9][0-9]{0,17}) [+-][0-9]{4}"
#: Anything in the other headers that sends a commit down the careful road.
_ODD = re.compile(rb"\n(?:author|committer|encoding|tree|parent) ")
_MODE_VALUES = {b"100644": 0o100644, b"100755": 0o100755, b"40000": 0o40000, b"120000": 0o120000,
                b"160000": 0o160000}
_UTF8 = ("utf-8", "utf8")
#: Whitespace as git's `isspace` knows it (sane_ctype: tab, LF, CR, space).
_GIT_SPACE = b" \t\n\r"
#: Whitespace libgit2 trims (`git__isspace`): git's, with VT and FF.
_LIBGIT2_SPACE = b" \t\n\r\x0b\x0c"
#: git's `date_overflows`: a timestamp that does not fit a signed 64-bit time_t.
_TIME_MAX = 1 << 63


@valueclass(frozen=True, slots=True)
class _Grammar:
    """The regular expressions of one object format (ids of `hexsz` digits, `rawsz` bytes in trees)."""

    hex_id: re.Pattern[bytes]
    fast: re.Pattern[bytes]
    entry: re.Pattern[bytes]
    tree: re.Pattern[bytes]
    hexsz: int


@cache
def _grammar(fmt: ObjectFormat) -> _Grammar:
    """Compiled once per format, when a first object of that format is read."""
    hexsz, raw = fmt.hexsz, fmt.rawsz
    hex_id = rb"[0-9a-f]{%d}" % hexsz
    # The common shape, read in one match: tree, parents, author, committer, then other headers.
    fast = re.compile(rb"tree (" + hex_id + rb")\n((?:parent " + hex_id + rb"\n)*)author " + _IDENT_RX
                      + rb"\ncommitter " + _IDENT_RX + rb"(\n.*)?", re.DOTALL)
    entry = re.compile(rb"([0-7]+) ([^\0/]+)\0(.{%d})" % raw, re.DOTALL)
    tree = re.compile(rb"(?:[0-7]+ [^\0/]+\0.{%d})*" % raw, re.DOTALL)
    return _Grammar(re.compile(hex_id), fast, entry, tree, hexsz)


_BY_WIDTH: dict[int, _Grammar] = {}


def _grammar_of(oid: str) -> _Grammar:
    """The grammar of the format `oid` belongs to (by its width; one dict lookup per object)."""
    got = _BY_WIDTH.get(len(oid))
    if got is None:
        try:
            got = _BY_WIDTH[len(oid)] = _grammar(format_of(oid))
        except ValueError:
            raise malformed(f"{oid[:80]!r} is not an object id of a format git knows") from None
    return got


@valueclass(frozen=True, slots=True)
class Ident:
    """An author or committer as git reads it for `%an` / `%ae`.

    `git_name` is git's name verbatim; `name_problem` says why another reader (libgit2,
    go-git, a forge) would read a different name: `name` then raises GATE-GIT-MALFORMED,
    so that only a decision that reads names (a rule's `names`) is refused.
    """

    git_name: str
    email: str
    name_problem: str = ""

    @property
    def name(self) -> str:
        if self.name_problem:
            raise malformed(self.name_problem)
        return self.git_name


class Commit(NamedTuple):
    """A commit as the gate reads it. (A named tuple, not a frozen dataclass: a walk makes one
    per commit, and a frozen dataclass takes eight times as long to make; `_replace` is its
    `dataclasses.replace`.)"""

    id: str
    tree_id: str
    parent_ids: tuple[str, ...]
    #: (author, committer), or None with `problem` saying why they cannot be read the way git does.
    idents: tuple[Ident, Ident] | None
    problem: str
    message: bytes
    extra: bytes  # the raw header lines after committer (gpgsig, mergetag, encoding, ...)
    #: What `git fsck` would say of the author and committer lines that is tolerated here
    #: (`author: badTimezone`, ...): git's default receive accepts it and every reader reads
    #: the same name and email. Empty for a well-formed commit.
    oddities: tuple[str, ...] = ()
    #: The header names an encoding other than UTF-8: `git log` re-encodes the commit through
    #: iconv before it reads anything from it (`reencoded_header`).
    reencoded: bool = False
    #: For a `reencoded` commit, once `Objects` asked git how it shows it (`with_shown`): its
    #: message as `git log` shows it (empty when its raw message was not read), and its idents
    #: held to git's. None before that, and for every other commit.
    shown: bytes | None = None

    def identities(self) -> tuple[Ident, Ident]:
        """(author, committer); GATE-GIT-MALFORMED if git would not read them as they are parsed here."""
        if self.idents is None:
            raise malformed(f"commit {self.id}: {self.problem}")
        if self.reencoded and self.shown is None:  # (read past `Objects`: never decided unseen)
            raise GateError("GATE-HOOK-INTERNAL", f"commit {self.id} names an encoding and was not read as git "
                                                  "shows it")
        return self.idents

    @property
    def author_email(self) -> str:
        return self.identities()[0].email

    @property
    def committer_email(self) -> str:
        return self.identities()[1].email


def reencoded_header(encodings: Sequence[bytes]) -> bool:
    """Whether `git log` re-encodes a commit whose `encoding` header values are `encodings`: git
    reads the first, and converts unless it is `UTF-8` or `utf8` in any case, as it stands
    (`logmsg_reencode`, `is_encoding_utf8`)."""
    return bool(encodings) and encodings[0].lower() not in (b"utf-8", b"utf8")


def with_shown(commit: Commit, shown: ShownCommit) -> Commit:
    """`commit` with what `git log` shows of it (`Commit.shown`): its message as git shows it,
    and its author and committer held to git's. An email git shows otherwise than the gate
    reads it refuses the commit's identities (GATE-GIT-MALFORMED when read); a name, only where a
    rule reads names (`Ident.name`)."""
    message = shown.message if commit.message else b""  # (no message read: nothing to show)
    if commit.idents is None:
        return commit._replace(shown=message)
    idents = []
    for role, ours, (name, email) in zip(("author", "committer"), commit.idents, (shown.author, shown.committer),
                                         strict=True):
        git_email = email.decode("utf-8", "surrogateescape")
        if git_email != ours.email:
            return commit._replace(shown=message, idents=None, problem=(
                f"{role}: git shows the email as {git_email!r} (the commit re-encoded by iconv from its encoding), "
                f"the gate reads {ours.email!r}"))
        git_name = name.decode("utf-8", "surrogateescape")
        if git_name != ours.git_name and not ours.name_problem:
            idents.append(Ident(ours.git_name, ours.email, f"commit {commit.id}: {role}: git shows the name as "
                                                           f"{git_name!r} (re-encoded by iconv), the gate reads "
                                                           f"{ours.git_name!r}"))
        else:
            idents.append(ours)
    return commit._replace(shown=message, idents=(idents[0], idents[1]))


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


def _first_of(value: bytes, start: int) -> int:
    """strcspn(value + start, "<>\\n"), as an index (len(value) when none)."""
    found = [i for i in (value.find(b"<", start), value.find(b">", start), value.find(b"\n", start)) if i >= 0]
    return min(found) if found else len(value)


def fsck_ident(value: bytes) -> str | None:
    """The message id `git fsck` (git 2.39's `fsck_ident`) reports for an ident line's value
    (after `author `, without its newline), or None when fsck accepts it."""
    if value.startswith(b"<"):
        return "missingNameBeforeEmail"
    p = _first_of(value, 0)
    if p < len(value) and value[p:p + 1] == b">":
        return "badName"
    if value[p:p + 1] != b"<":
        return "missingEmail"
    if value[p - 1:p] != b" ":
        return "missingSpaceBeforeEmail"
    p = _first_of(value, p + 1)
    if value[p:p + 1] != b">":
        return "badEmail"
    p += 1
    if value[p:p + 1] != b" ":
        return "missingSpaceBeforeDate"
    p += 1
    if value[p:p + 1] == b"0" and value[p + 1:p + 2] != b" ":
        return "zeroPaddedDate"
    end = p
    while value[end:end + 1].isdigit():
        end += 1
    if end > p and int(value[p:end]) >= _TIME_MAX:
        return "badDateOverflow"
    if end == p or value[end:end + 1] != b" ":
        return "badDate"
    zone = value[end + 1:]
    if len(zone) != 5 or zone[:1] not in (b"+", b"-") or not zone[1:].isdigit():
        return "badTimezone"
    return None


def _make_ident(before: bytes, email: bytes, decode: codecs.CodecInfo | None) -> Ident | str:
    """The Ident of a line whose `<` ends `before` and whose email is `email`, as git reads it,
    or why readers could read another email (a name they could read otherwise is
    recorded in `name_problem`)."""
    if email != email.strip(_LIBGIT2_SPACE):
        return "an email starts or ends with whitespace (libgit2 trims it, git does not)"
    name = before.rstrip(_GIT_SPACE)  # split_ident_line: the name ends at the last non-blank before '<'
    try:
        if decode is None:
            text, mail = name.decode("utf-8", "surrogateescape"), email.decode("utf-8", "surrogateescape")
        else:
            text, mail = decode.decode(name)[0], decode.decode(email)[0]
    except (UnicodeDecodeError, ValueError):
        return "an ident does not decode in the commit's encoding"
    problem = ""
    if text != text.strip():
        problem = (f"the name {text!r} starts or ends with whitespace that git keeps and libgit2, go-git and "
                   "forges trim")
    return Ident(text, mail, problem)


def parse_ident(value: bytes, decode: codecs.CodecInfo | None = None) -> Ident | str:
    """An Ident as git reads it (`split_ident_line`), or the reason git and other readers
    could disagree about the email.

    git takes the email between the first `<` and the first `>` after it; libgit2, go-git
    and Gitea between the last `<` and the last `>`. With one of each, in that order, they
    agree. Whatever follows the `>` (the date and time zone) is not read here."""
    lt = value.find(b"<")
    if lt < 0:
        return "an ident has no '<email>' (git fsck: missingEmail)"
    if value.find(b"<", lt + 1) >= 0:
        return "an ident holds a second '<' (git reads the email from the first, libgit2 from the last)"
    gt = value.find(b">", lt + 1)
    if gt < 0:
        return "an ident's email is not closed by '>' (git fsck: badEmail)"
    if value.find(b">", gt + 1) >= 0:
        return "an ident holds a '>' after its email (git ends the email at the first, libgit2 at the last)"
    return _make_ident(value[:lt], value[lt + 1:gt], decode)


def split_commit(raw: bytes) -> tuple[bytes, bytes]:
    """(header, message) of a raw commit object."""
    end = raw.find(b"\n\n")
    if end < 0:
        return (raw[:-1] if raw.endswith(b"\n") else raw), b""
    return raw[:end], raw[end + 2:]


#: The header a repository's commits carry their signature in, by object format (git's gpg_sig_headers).
SIGNATURE_HEADERS = {"sha1": b"gpgsig", "sha256": b"gpgsig-sha256"}


def split_signature(raw: bytes, object_format: str = "sha1") -> tuple[bytes, bytes] | None:
    """(payload, signature) of a raw commit as `git verify-commit` reads them, or None when
    git sees no signature. git's `parse_buffer_signed_by_header`, line for line:

    * the signature is the text of every header named for the repository's object format
      (`gpgsig` in a SHA-1 repository, `gpgsig-sha256` in a SHA-256 one) with its continuation
      lines (one leading space dropped), each line keeping its newline; two such headers are
      concatenated, as git concatenates them (whoever reads the armor then reads the first);
    * the payload is the commit without those lines, and without any other header whose name
      starts with `gpgsig` (the other object format's signature, which git's interop writes
      beside this one) or its continuation lines;
    * headers end at the first empty line: the message is never searched.
    """
    header = SIGNATURE_HEADERS[object_format]
    payload = bytearray()
    signature = bytearray()
    seen = in_signature = other = False
    pos, end = 0, len(raw)
    while pos < end:
        newline = raw.find(b"\n", pos)
        nxt = end if newline < 0 else newline + 1
        line = raw[pos:nxt]
        sig: bytes | None = None
        if in_signature and line.startswith(b" "):
            sig = line[1:]
        elif line.startswith(header + b" "):
            sig = line[len(header) + 1:]
            other = False
        elif line.startswith(b"gpgsig"):
            other = True
        elif other and not line.startswith(b" "):
            other = False
        if sig is not None:
            signature += sig
            seen = in_signature = True
        else:
            if line.startswith(b"\n"):
                nxt = end  # the message: the rest of the object, unread
            if not other:
                payload += raw[pos:nxt]
            in_signature = False
        pos = nxt
    return (bytes(payload), bytes(signature)) if seen else None


_IDENTS: dict[tuple[bytes, bytes], Ident | str] = {}
_IDENTS_KEPT = 4096
#: (author name, author email, committer name, committer email) -> the two Idents the fast road
#: reads there, or None where it reads no Ident (a history holds few distinct pairs: one lookup a commit).
_PAIRS: dict[tuple[bytes, bytes, bytes, bytes], tuple[Ident, Ident] | None] = {}


def _plain_ident(name: bytes, email: bytes) -> Ident | str:
    """The fast road's ident (memoised: a history holds few distinct people)."""
    key = (name, email)
    try:
        return _IDENTS[key]
    except KeyError:
        pass
    got = _make_ident(name, email, None)
    if len(_IDENTS) >= _IDENTS_KEPT:
        _IDENTS.clear()
    _IDENTS[key] = got
    return got


def _pair(key: tuple[bytes, bytes, bytes, bytes]) -> tuple[Ident, Ident] | None:
    """The fast road's (author, committer) of `key` (memoised in `_PAIRS`)."""
    author, committer = _plain_ident(key[0], key[1]), _plain_ident(key[2], key[3])
    got = (author, committer) if isinstance(author, Ident) and isinstance(committer, Ident) else None
    if len(_PAIRS) >= _IDENTS_KEPT:
        _PAIRS.clear()
    _PAIRS[key] = got
    return got


def _bound(oid: str, role: str, ident: Ident) -> Ident:
    """`ident` with its commit named in its name problem, if any (a memoised Ident is shared)."""
    if ident.name_problem:
        return Ident(ident.git_name, ident.email, f"commit {oid}: {role}: {ident.name_problem}")
    return ident


def parse_commit(oid: str, header: bytes, message: bytes = b"") -> Commit:
    """A commit from its raw header (everything before the first blank line) and message.

    Structural faults git itself cannot read past (no tree, a bad parent line, a NUL in
    the header, a tree or parent line out of place) raise GATE-GIT-MALFORMED at once;
    faults in the idents are recorded and raise when the identities are asked for (a
    parent's tree is still usable).

    (Every commit of a push is read here: the fast road is one match and one lookup.)
    """
    if b"\0" in header:
        raise malformed(f"commit {oid}: a NUL byte in the header (git fsck: nulInHeader; git stops reading there)")
    g = _BY_WIDTH.get(len(oid)) or _grammar_of(oid)
    fast = g.fast.fullmatch(header)
    if fast is not None:
        tree, listed, an, ae, cn, ce, extra = fast.groups(b"")
        key = (an, ae, cn, ce)
        pair = _PAIRS[key] if key in _PAIRS else _pair(key)
        if pair is not None and not (extra and _ODD.search(extra)):
            n = g.hexsz
            size = len(listed)
            listed_ids = (() if not size else (listed[7:7 + n].decode("ascii"),) if size == n + 8 else tuple(
                listed[i + 7:i + 7 + n].decode("ascii") for i in range(0, size, n + 8)))  # "parent <id>\n"
            author, committer = pair
            if author.name_problem or committer.name_problem:
                pair = (_bound(oid, "author", author), _bound(oid, "committer", committer))
            return Commit(oid, tree.decode("ascii"), listed_ids, pair, "", message, extra[1:])
    return _careful_commit(oid, g, header, message)


def _careful_commit(oid: str, g: _Grammar, header: bytes, message: bytes) -> Commit:  # noqa: PLR0912 - git's commit grammar, header by header
    """Every commit the fast road does not take: git's own reading, line by line."""
    lines = header.split(b"\n")
    first = lines[0]
    if not first.startswith(b"tree ") or not g.hex_id.fullmatch(first, 5):
        raise malformed(f"commit {oid}: the first line is not 'tree <id>' (git fsck: missingTree/badTreeSha1; "
                        "git cannot read the commit)")
    i = 1
    parents: list[str] = []
    while i < len(lines) and lines[i].startswith(b"parent "):
        if not g.hex_id.fullmatch(lines[i], 7):
            raise malformed(f"commit {oid}: a parent line is not 'parent <id>' (git fsck: badParentSha1; "
                            "git cannot read the commit)")
        parents.append(lines[i][7:].decode("ascii"))
        i += 1
    # The other header lines, each on its own: git reads `author ` and `committer ` lines whole
    # (a continuation line, starting with a space, belongs to a multi-line header such as gpgsig
    # and is never an ident).
    rest = lines[i:]
    for line in rest:
        if line.startswith((b"tree ", b"parent ")):
            raise malformed(f"commit {oid}: a {line.split(b' ')[0].decode()} line out of place (git ignores it, "
                            "go-git reads it)")
    authors = [n for n, line in enumerate(rest) if line.startswith(b"author ")]
    committers = [n for n, line in enumerate(rest) if line.startswith(b"committer ")]
    encodings = [line[9:] for line in rest if line.startswith(b"encoding ")]
    problem = ""
    idents: tuple[Ident, Ident] | None = None
    oddities: tuple[str, ...] = ()
    decode: codecs.CodecInfo | None = None
    if authors != [0] or committers != [1]:
        problem = ("not exactly one author line followed by one committer line (git fsck: missingAuthor, "
                   "multipleAuthors or missingCommitter; git shows the last author, libgit2 the first)")
    elif len(encodings) > 1:
        problem = "more than one encoding header (git reads the first, libgit2 the last)"
    elif encodings and encodings[0].strip().lower().decode("ascii", "replace") not in _UTF8:
        name = encodings[0].strip().decode("ascii", "replace")
        decode = _ascii_compatible(name)
        if decode is None:
            problem = (f"encoding {name!r} is not an ASCII-compatible one the gate knows: git reads the idents "
                       "through the server's iconv, libgit2 as raw bytes")
    if not problem:
        a_value, c_value = rest[0][7:], rest[1][10:]
        author, committer = parse_ident(a_value, decode), parse_ident(c_value, decode)
        if isinstance(author, str):
            problem = f"author: {author}"
        elif isinstance(committer, str):
            problem = f"committer: {committer}"
        else:
            idents = (_bound(oid, "author", author), _bound(oid, "committer", committer))
            oddities = tuple(f"{role}: {odd}" for role, odd in (("author", fsck_ident(a_value)),
                                                                 ("committer", fsck_ident(c_value))) if odd)
    after = rest[2:] if idents is not None else rest
    return Commit(oid, first[5:].decode("ascii"), tuple(parents), idents, problem, message, b"\n".join(after),
                  oddities, reencoded_header(encodings))


def mode_value(text: bytes) -> int:
    """A tree entry's mode as `parse_tree` reads it (octal, as git parses it into an unsigned int)."""
    mode = _MODE_VALUES.get(text)
    return int(text, 8) & 0xFFFFFFFF if mode is None else mode


def parse_tree(oid: str, data: bytes) -> dict[bytes, tuple[int, str]]:
    """The entries of a raw tree: name -> (raw mode, id), checked as git fsck checks them."""
    g = _grammar_of(oid)
    if not g.tree.fullmatch(data):
        raise malformed(f"tree {oid}: an entry is not '<octal mode> <name>\\0<id>' (or a name holds '/')")
    entries = g.entry.findall(data)
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
    """(target id, declared target type) of a raw tag object, read as git's `parse_tag_buffer`
    reads it: `object <id>`, `type <type>` and `tag <name>` lines (without the last, git cannot
    read the tag: git fsck's missingTagEntry); the tagger and any other header decide nothing."""
    g = _grammar_of(oid)
    lines = data.split(b"\n", 3)
    if (len(lines) < 4 or not lines[0].startswith(b"object ") or not g.hex_id.fullmatch(lines[0], 7)
            or lines[1] not in (b"type commit", b"type tree", b"type blob", b"type tag")
            or not lines[2].startswith(b"tag ")):
        raise malformed(f"tag {oid}: does not start with 'object <id>', 'type <type>' and 'tag <name>' lines "
                        "(git cannot read it)")
    return lines[0][7:].decode("ascii"), lines[1][5:].decode("ascii")
