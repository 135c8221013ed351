"""Every commit read as git shows it, in every encoding: a differential against `git log`.

A commit whose header says `encoding X` is shown by git re-encoded from X to UTF-8 through
the system's iconv (glibc), header and message together, or as its raw bytes where iconv
cannot convert it. Python's codecs are not glibc's iconv: an ISO-2022 escape cut short, a
lone ESC, a line of escapes that vanishes from git's text, read otherwise by each. So the
gate asks git for what it shows of every such commit (`Objects.walk`, `grammar.with_shown`)
and reads trailers from it and from the raw bytes.

The differential: messages and idents drawn from the pieces that matter in each encoding
(escapes whole, cut and alone, shift bytes, text encoded by the codec, UTF-7's `+...-`,
UTF-16 bytes), in every encoding that glibc's iconv and Python both name, with ISO-2022-*,
Shift_JIS, Big5, EUC-*, UTF-16 and UTF-7 drawn most. Each message is written as a commit
(byte for byte, as a hostile client can) in a SHA-1 and in a SHA-256 repository; `git log
--format=%(trailers:only,unfold)` and `%an %ae %cn %ce` say what git shows, and the gate,
reading the commits the hook's way (a walk with messages), must find every trailer git shows,
and read every author and committer as git shows them, or refuse the commit
(`GATE-GIT-MALFORMED`). The default run draws a fixed set; with GATE_LONG_TESTS=1 it draws
10,000 new messages per object format each run (the seed is in the failure message).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import subprocess
import zlib
from pathlib import Path

import pytest
from support.encodings import iconv_and_python

from gatecore.adapters.gitstream import GitStream
from gatecore.errors import GateError
from gatecore.git import trailers
from gatecore.git.gitmodel import FORMATS
from gatecore.git.grammar import Commit
from gatecore.git.objects import Objects

LONG = os.environ.get("GATE_LONG_TESTS") == "1"
COUNT = 10_000 if LONG else 300
SEED = random.SystemRandom().randrange(1 << 30) if LONG else 34

#: The encodings the issue names, as glibc spells them, drawn half the time.
FOCUS = ["ISO-2022-JP", "ISO-2022-JP-2", "ISO-2022-JP-3", "ISO-2022-KR", "ISO-2022-CN", "ISO-2022-CN-EXT",
         "SHIFT_JIS", "SJIS", "CP932", "BIG5", "BIG5-HKSCS", "EUC-JP", "EUC-KR", "EUC-CN", "EUC-TW",
         "EUC-JISX0213", "UTF-16", "UTF-16LE", "UTF-16BE", "UTF16", "UTF-7", "UTF7", "utf-16", "iso-2022-jp"]

AGENT_EMAIL = b"bot@agents.example.com"
_TRAILERS = [b"Co-authored-by: Bot <bot@agents.example.com>", b"Assisted-by: Claude:opus", b"Made-with: Cursor",
             b"Signed-off-by: Hana <hana@example.com>", b"Co-authored-by: Claude <noreply@anthropic.com>",
             b"Reviewed-by: R <r@example.com>"]
_LINES = [b"update ci", b"", b"", b" ", b"\t", b"prose line", b"---", b"# comment", b"Key : v", b"  folded",
          b"Conflicts:", b"\tci/deploy.yml"]
#: Escapes and shifts of the ISO-2022 family, whole, cut short and alone.
_ESCAPES = [b"\x1b(B", b"\x1b(J", b"\x1b(I", b"\x1b$B", b"\x1b$@", b"\x1b$(D", b"\x1b$(O", b"\x1b$(Q", b"\x1b$A",
            b"\x1b$(C", b"\x1b$)C", b"\x1b$)A", b"\x1b$)G", b"\x1b$*H", b"\x1b$+I", b"\x1b.A", b"\x1b.F", b"\x1bN",
            b"\x1bO", b"\x1bN\x41", b"\x0e", b"\x0f", b"\x0e\x21\x21\x0f", b"\x1b(", b"\x1b$", b"\x1b$(", b"\x1b$)",
            b"\x1b", b"\x1b\x1b", b"\x1b(\n", b"\x1b$B\x24\x22\x1b(B", b"\x1b$B\x30\x21"]
#: Bytes of the double-byte encodings: lead bytes alone, pairs whose second byte is ASCII.
_DOUBLE = [b"\x81", b"\x82\xa0", b"\x83\x40", b"\x88\x9f", b"\x95\x5c", b"\xa4\x40", b"\xa4\x3a", b"\xa1\x5c",
           b"\x8e", b"\x8f", b"\x8e\xa6", b"\x8f\xa2\xaf", b"\xa1\xa1", b"\xb0\xa1", b"\xfe", b"\xff", b"\x80",
           b"\xc8\x3a", b"\xe0\x40"]
#: UTF-7: base64 runs (`+AEM-` is C, `+ADw-` <, `+AD4-` >, `+ADo-` :), cut, alone.
_UTF7 = [b"+AEM-", b"+ADw-", b"+AD4-", b"+ADo-", b"+AAo-", b"+-", b"+", b"+AE", b"+ZeVnLA-", b"+AEMAbw-", b"-"]
_TEXT = ["日本", "한국어", "中文", "é", "ш", "ü", "…", "¥", "\\", "~"]


BOTH = iconv_and_python()


def _encoded(rng: random.Random, codec: str | None) -> bytes:
    text = rng.choice(_TEXT)
    try:
        return text.encode(codec or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return text.encode("utf-8")


def _hostile(rng: random.Random, line: bytes, codec: str | None) -> bytes:
    """`line` with the encoding's hostile pieces put in at random places."""
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        piece = rng.choice([rng.choice(_ESCAPES), rng.choice(_ESCAPES), rng.choice(_DOUBLE), rng.choice(_UTF7),
                            _encoded(rng, codec)])
        at = rng.randrange(len(line) + 1)
        line = line[:at] + piece + line[at:]
    return line


def _message(rng: random.Random, codec: str | None) -> bytes:
    lines = [rng.choice(_LINES[:1] + _LINES)]
    for _ in range(rng.randrange(6)):
        lines.append(rng.choice([*_LINES, *_TRAILERS, *_TRAILERS, rng.choice(_ESCAPES)]))
    lines += [b""] * rng.choice((0, 1)) + [rng.choice(_TRAILERS) for _ in range(rng.randrange(1, 4))]
    lines = [_hostile(rng, ln, codec) if rng.random() < 0.35 else ln for ln in lines]
    message = b"\n".join(lines) + rng.choice((b"\n", b"", b"\n\n", b"\x1b(B\n"))
    if codec is not None and codec.startswith("utf_16") and rng.random() < 0.5:
        message = message.decode("latin-1").encode(codec)  # the message itself in UTF-16
    return message


def _ident(rng: random.Random, codec: str | None) -> bytes:
    name = rng.choice([b"Bot", b"Hana Human", _encoded(rng, codec), b"A\x1b(B", b"\x1b$B", b"B\x1b(", b"C+AEM-"])
    email = rng.choice([AGENT_EMAIL, b"hana@example.com", b"bot@agents\x1b(B.example.com", b"bot\x1b$B@x",
                        b"+AGI-ot@agents.example.com", b"bot@agents.example.com\x1b(B", b"h\x81@example.com"])
    if rng.random() < 0.3:
        name = _hostile(rng, name, codec)
    return (name + b" <" + email + b"> 1700000000 +0000").replace(b"\0", b"")  # (a NUL ends git's header)


class Repo:
    """A bare repository of one object format, commits written into it byte for byte."""

    def __init__(self, path: Path, object_format: str) -> None:
        subprocess.run(["git", "init", "-q", "--bare", f"--object-format={object_format}", str(path)], check=True)
        self.path = path
        self.format = object_format
        self.empty_tree = self.write("tree", b"")

    def write(self, kind: str, body: bytes) -> str:
        data = kind.encode() + b" %d\0" % len(body) + body
        oid = hashlib.new(self.format, data).hexdigest()
        obj = self.path / "objects" / oid[:2] / oid[2:]
        obj.parent.mkdir(exist_ok=True)
        obj.write_bytes(zlib.compress(data))
        return oid

    def chain(self, commits: list[tuple[bytes, bytes, bytes, str]]) -> list[str]:
        """One commit per (author, committer, message, encoding), each the parent of the next."""
        out: list[str] = []
        for author, committer, message, encoding in commits:
            head = b"tree " + self.empty_tree.encode() + b"\n" + (b"parent %s\n" % out[-1].encode() if out else b"")
            out.append(self.write("commit", head + b"author " + author + b"\ncommitter " + committer + b"\n"
                                  + b"encoding " + encoding.encode() + b"\n\n" + message))
        return out

    def git_shows(self, oids: list[str]) -> dict[str, tuple[list[bytes], list[bytes]]]:
        """(trailer lines, [an, ae, cn, ce]) of each commit, as `git log` shows them."""
        fmt = "format:%H%x00%an%x00%ae%x00%cn%x00%ce%x00%(trailers:only,unfold)%x00"
        out = subprocess.run(["git", "--git-dir", str(self.path), "log", "--no-walk=unsorted", "--stdin", "-z",
                              f"--format={fmt}"], input="".join(f"{o}\n" for o in oids).encode(),
                             capture_output=True, check=True).stdout
        fields = out.split(b"\0")
        shown = {}
        for i in range(len(oids)):
            oid, an, ae, cn, ce, found = fields[7 * i:7 * i + 6]
            shown[oid.decode()] = ([ln for ln in found.split(b"\n") if ln], [an, ae, cn, ce])
        assert set(shown) == set(oids)
        return shown


def _draw(rng: random.Random, count: int) -> list[tuple[bytes, bytes, bytes, str]]:
    names = sorted(BOTH)
    drawn = []
    for _ in range(count):
        encoding = rng.choice(FOCUS) if rng.random() < 0.5 or not names else rng.choice(names)
        codec = BOTH.get(encoding.upper()) or BOTH.get(encoding)
        drawn.append((_ident(rng, codec) if rng.random() < 0.3 else b"Hana Human <hana@example.com> 1700000000 +0000",
                      _ident(rng, codec) if rng.random() < 0.15 else b"Hana Human <hana@example.com> 1700000000 +0000",
                      _message(rng, codec), encoding))
    return drawn


#: The issue's messages: a line of escapes alone between title and trailer (git's text loses it,
#: leaving a blank line), escapes cut short inside and after the key, a lone ESC.
KNOWN = [
    (b"update ci\n\x1b(B\nCo-authored-by: Bot <bot@agents.example.com>\n", "ISO-2022-JP"),
    (b"update ci\n\x1b(B\nCo-authored-by: Bot <bot@agents.example.com>\n", "ISO-2022-JP-2"),
    (b"update ci\n\nCo-auth\x1b(Bored-by: Bot <bot@agents.example.com>\n", "ISO-2022-JP"),
    (b"update ci\n\x1b(\nCo-authored-by: Bot <bot@agents.example.com>\n", "ISO-2022-JP"),
    (b"update ci\n\nCo-authored-by: Bot <bot@agents.example.com>\x1b(\n", "ISO-2022-JP"),
    (b"update ci\n\x1b\nCo-authored-by: Bot <bot@agents.example.com>\n", "ISO-2022-JP-2"),
    (b"update ci\n\x1b$B\x1b(B\nCo-authored-by: Bot <bot@agents.example.com>\n", "ISO-2022-JP-3"),
    (b"update ci\n\x0e\x0f\nCo-authored-by: Bot <bot@agents.example.com>\n", "ISO-2022-KR"),
    (b"update ci\n+AAo-Co-authored-by: Bot <bot@agents.example.com>\n", "UTF-7"),
    (b"update ci\n\n+AEM-o-authored-by: Bot <bot@agents.example.com>\n", "UTF-7"),
    # where Python's codec (strict, then with replacement) and glibc part: an escape cut short in
    # the title, a shift before the trailer block, an escape set mid-trailer
    (b"update ci\x1b(\nline\n\nCo-authored-by: Bot <bot@agents.example.com>\x1b(B\n", "ISO-2022-JP"),
    (b"update ci\n\x1b$)\n\nMade-with: \x0eCursor\nCo-authored-by: Bot <bot@agents.example.com>\x1b(B\n", "ISO-2022-JP"),
    (b"update ci\n\nSigned-off-by: H\x1b$)~G <h@example.com>\nCo-authored-by: Bot <bot@agents.example.com>\x1b(B\n",
     "ISO-2022-JP"),
]


def _differential(repo: Repo, commits: list[tuple[bytes, bytes, bytes, str]], seed: int) -> dict[str, int]:
    oids = repo.chain(commits)
    shown = repo.git_shows(oids)
    reader = GitStream(str(repo.path))
    tally = {"refused": 0, "read": 0, "git trailers": 0, "agent trailers": 0}
    try:
        walked = {c.id: c for c in Objects(reader).walk([oids[-1]], [], None, messages=True)}
    finally:
        reader.close()
    assert set(walked) == set(oids)
    for oid, (author, committer, message, encoding) in zip(oids, commits, strict=True):
        lines, idents = shown[oid]
        where = f"seed {seed}, {encoding}: {author!r} / {committer!r} / {message!r}"
        commit = walked[oid]
        tally["git trailers"] += len(lines)
        tally["agent trailers"] += sum(AGENT_EMAIL in ln for ln in lines)
        try:
            ours_author, ours_committer = commit.identities()
        except GateError as exc:
            assert exc.code == "GATE-GIT-MALFORMED", where
            tally["refused"] += 1
            continue
        tally["read"] += 1
        an, ae, cn, ce = (f.decode("utf-8", "surrogateescape") for f in idents)
        assert (ours_author.email, ours_committer.email) == (ae, ce), where
        for ours, git_name in ((ours_author, an), (ours_committer, cn)):
            try:
                assert ours.name == git_name, where
            except GateError as exc:  # refused where a rule reads names
                assert exc.code == "GATE-GIT-MALFORMED", where
        found = [f"{k}: {v}" for k, v in trailers.found(commit.message, commit.shown)]
        for line in lines:
            assert line.decode("utf-8", "replace") in found, (where, line, found)
    return tally


@pytest.mark.skipif(not BOTH, reason="no iconv program to list glibc's encodings")
@pytest.mark.parametrize("object_format", sorted(FORMATS))
def test_every_trailer_and_ident_git_shows_is_read_or_refused(tmp_path: Path, object_format: str) -> None:
    rng = random.Random(SEED)
    human = b"Hana Human <hana@example.com> 1700000000 +0000"
    commits = [(human, human, m, e) for m, e in KNOWN] + _draw(rng, COUNT)
    tally = _differential(Repo(tmp_path / "r.git", object_format), commits, SEED)
    # not vacuous: git shows agents' trailers, most commits are read, some are refused
    assert tally["agent trailers"] > COUNT // 20 and tally["read"] > COUNT // 2 and tally["refused"], tally


def test_the_issues_messages_show_their_trailer_through_git(tmp_path: Path) -> None:
    """The false accept of the issue: git shows the agent's co-author, so the gate must."""
    repo = Repo(tmp_path / "r.git", "sha1")
    human = b"Hana Human <hana@example.com> 1700000000 +0000"
    oids = repo.chain([(human, human, m, e) for m, e in KNOWN[:2]])
    reader = GitStream(str(repo.path))
    try:
        for commit in Objects(reader).walk([oids[-1]], [], None, messages=True):
            assert trailers.coauthor_emails(trailers.found(commit.message, commit.shown)) == ["bot@agents.example.com"]
    finally:
        reader.close()


def _walked(repo: Repo, oid: str, messages: bool = True) -> dict[str, Commit]:
    reader = GitStream(str(repo.path))
    try:
        return {c.id: c for c in Objects(reader).walk([oid], [], None, messages=messages)}
    finally:
        reader.close()


@pytest.mark.parametrize("messages", [True, False])
def test_idents_are_held_to_what_git_shows(tmp_path: Path, messages: bool) -> None:
    """glibc's Shift_JIS reads 0x5C as a yen sign and 0x7E as an overline, Python's as `\\` and
    `~`: an email git shows otherwise refuses the commit, a name only where a rule reads names.
    (The walk without messages, for policies that read no trailer, holds idents all the same.)"""
    repo = Repo(tmp_path / "r.git", "sha1")
    human = b"Hana Human <hana@example.com> 1700000000 +0000"
    name, email, plain = repo.chain([
        (b"Hana\\Human <hana@example.com> 1700000000 +0000", human, b"named\n", "SHIFT_JIS"),
        (b"Hana Human <h~a@example.com> 1700000000 +0000", human, b"emailed\n", "SHIFT_JIS"),
        (human, human, b"plain\n", "CP932"),  # (CP932 is Python's reading of both bytes too)
    ])
    walked = _walked(repo, plain, messages)
    author, _ = walked[name].identities()
    assert author.email == "hana@example.com"
    with pytest.raises(GateError, match="git shows the name as 'Hana\u00a5Human'"):
        author.name  # noqa: B018
    emailed = walked[email]
    with pytest.raises(GateError, match=re.escape("git shows the email as 'h\u203ea@example.com'")) as got:
        emailed.identities()
    assert got.value.code == "GATE-GIT-MALFORMED"
    assert walked[plain].identities()[0].name == "Hana Human"


def test_a_commit_that_names_an_encoding_and_has_no_message_is_refused(tmp_path: Path) -> None:
    """git re-encodes it, then reads its message from past the end of it: undefined."""
    repo = Repo(tmp_path / "r.git", "sha1")
    oid = repo.write("commit", b"tree " + repo.empty_tree.encode() + b"\nauthor Hana <h@example.com> 1700000000 +0000\n"
                     b"committer Hana <h@example.com> 1700000000 +0000\nencoding ISO-8859-1\n")
    commit = _walked(repo, oid)[oid]
    with pytest.raises(GateError, match="has no message") as got:
        commit.identities()
    assert got.value.code == "GATE-GIT-MALFORMED"


def test_a_commit_not_read_as_git_shows_it_is_never_decided(tmp_path: Path) -> None:
    """A commit parsed outside `Objects` (that never asked git) cannot be decided on."""
    from gatecore.git.grammar import parse_commit

    commit = parse_commit("1" * 40, b"tree " + b"2" * 40 + b"\nauthor A <a@x> 0 +0000\ncommitter A <a@x> 0 +0000\n"
                          b"encoding ISO-2022-JP", b"m\n")
    with pytest.raises(GateError) as got:
        commit.identities()
    assert got.value.code == "GATE-HOOK-INTERNAL"
