"""Trailers read as git reads them (`git interpret-trailers --parse` and `git log
--format=%(trailers)`), from the message the commit holds and the one `git log` re-encodes, and
identity globs whose brackets are literal. The catalogue: tests/unit/test_catalogue.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.encodings import iconv_and_python

from gatecore.configuration.policy import IdentityGlob
from gatecore.git import trailers

MESSAGES = [
    "title only",
    "title\n\nbody\n",
    "title\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "title\n\nbody\n\nCo-authored-by: A <a@x>\nCo-authored-by: B <b@x>\n",
    "title\n\nCo-authored-by: A <a@x>\n\nprose after the trailers\n",
    "title\n\nAssisted-by: Claude:claude-opus-4 coccinelle\nSigned-off-by: Dev <d@x>\n",
    "title\n\nsome prose line\nSigned-off-by: Dev <d@x>\n",
    "title\n\nline one\nline two\nline three\nline four\nSigned-off-by: Dev <d@x>\n",
    "title\n\nKey: value\n  folded onto\n  two lines\nOther: x\n",
    "title\n\nMade-with: Cursor\n# a comment\n",
    "title\n\nKey : spaced key\nBad Key: not a key\n",
    "title\n\nFixes: 123\n---\npatch text\nCo-authored-by: X <x@x>\n",
    "title\n\n(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)\n",
    "Co-authored-by: T <t@x>\n",
    "title\n\nco-authored-by: lower <l@x>\nCO-AUTHORED-BY: upper <u@x>\n",
    "title\n\n\n\nKey: after blank lines\n\n\n",
    "title\n\nURL: https://example.com/a:b\n",
    # git's whitespace is space, tab, CR, LF: not \f, \v or Unicode spaces (a review found these)
    "title\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\x0c\nSigned-off-by: x <x@x>\n",
    "title\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\u00a0\nSigned-off-by: x <x@x>\n",
    "title\n\nbody\n---\x0c\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "title\n\nbody\n---\u00a0x\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "title\n\nCo-authored-by: C <c@x>\n\x0ccontinued\n",
    "title\n \nCo-authored-by: C <c@x>\n",
    "title\n\t\nCo-authored-by: C <c@x>\n",
    "title\r\n\r\nCo-authored-by: C <c@x>\r\n",
    "\nCo-authored-by: C <c@x>\n",
    "title\n\nbody\n---",
    "title\n\nKey: v\n---\nCo-authored-by: C <c@x>",
    # what git ignores at the end of a message (ignored_log_message_bytes): an old Conflicts: block,
    # trailing comments, a scissors line (a review found the Conflicts: block hid a trailer)
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\nConflicts:\n\tci/deploy.yml\n",
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\nConflicts:\n\tci/a\n\tci/b\n# comment\n\n",
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\nConflicts:\n\tci/a\nprose\n",
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n# ------------------------ >8 ------------------------\n"
    "diff --git a/x b/x\n",
    "fix ci\n\nbody\n\nConflicts:",
    # git reads a message up to its first NUL (a review found trailers hidden by one)
    "fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\x00\nunrelated prose\n",
    "fix ci\n\nbody\x00\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    # a first line of spaces is a blank title (a review found the cheap test skipped these)
    " \nCo-authored-by: Claude <noreply@anthropic.com>\n",
    "\t\r\nCo-authored-by: Claude <noreply@anthropic.com>\n",
]


def _git_parse(message: str, tmp: Path) -> list[str]:
    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=message.encode(), capture_output=True,
                         check=True, cwd=tmp, timeout=600)
    return out.stdout.decode().split("\n")[:-1]  # lines end in \n only (a value may hold \r)


@pytest.mark.parametrize("message", MESSAGES)
def test_trailers_are_read_as_git_reads_them(message: str, tmp_path: Path) -> None:
    assert trailers.lines(message) == _git_parse(message, tmp_path)
    if not trailers.may_have(message.encode()):
        assert not trailers.lines(message)  # the cheap test never hides a trailer


def _git_log_trailers(message: str, tmp: Path) -> list[str]:
    """The trailers `git log --format=%(trailers)` shows for a commit with this exact message."""
    repo = tmp / "r"
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "PATH": "/usr/bin:/bin", "GIT_DIR": str(repo)}
    if not repo.exists():
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    empty_tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    commit = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], capture_output=True, check=True,
                            env=env, input=f"tree {empty_tree}\nauthor a <a@x> 0 +0000\ncommitter a <a@x> 0 +0000\n\n"
                            .encode() + message.encode()).stdout.decode().strip()
    out = subprocess.run(["git", "log", "-1", "--format=%(trailers:only,unfold)", commit],
                         capture_output=True, check=True, env=env).stdout.decode()
    return [line for line in out.split("\n") if line]


@pytest.mark.parametrize("message", MESSAGES)
def test_signals_are_what_either_of_gits_readings_finds(message: str, tmp_path: Path) -> None:
    """`signals` (what the policy matches) holds every trailer of `git interpret-trailers --parse`
    and of `git log --format=%(trailers)` (which reads past a `---` line)."""
    found = trailers.lines(message) + [f"{k}: {v}" for k, v in trailers.signals(message)]
    for line in _git_parse(message, tmp_path) + _git_log_trailers(message, tmp_path):
        assert line in found, (line, found)
    if not trailers.may_have(message.encode()):
        assert not trailers.signals(message)


_PIECES = st.sampled_from([
    "title", "", " ", "\t", "prose line", "Co-authored-by: Claude <noreply@anthropic.com>", "Assisted-by: X:y",
    "Signed-off-by: D <d@x>", "Key : v", "  folded", "\tci/deploy.yml", "Conflicts:", "# comment", "---", "--- x",
    "# ------------------------ >8 ------------------------", "Bad Key: v", "\r", "Made-with: Cursor\r",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, max_size=12), st.booleans())
def test_random_messages_are_read_as_git_reads_them(tmp_path: Path, pieces: list[str], newline: bool) -> None:
    """Messages made of the lines that matter to git's trailer reading, against git itself."""
    message = "\n".join(pieces) + ("\n" if newline else "")
    scissors = [i for i, p in enumerate(pieces) if p.startswith("# -----")]
    # git 2.39's interpret-trailers loops forever on a "---" line before a scissors line
    assume(not scissors or not any(p.startswith("---") for p in pieces[:scissors[-1]]))
    assert trailers.lines(message) == _git_parse(message, tmp_path)
    found = [f"{k}: {v}" for k, v in trailers.signals(message)]
    for line in _git_log_trailers(message, tmp_path):
        assert line in found, (line, found)
    if not trailers.may_have(message.encode()):
        assert not trailers.signals(message)


def test_coauthor_emails_come_from_coauthored_by_trailers_only() -> None:
    found = trailers.parse("t\n\nCo-authored-by: A <a@x>\nReviewed-by: R <r@x>\nco-authored-by: B < b@x >\n")
    assert trailers.coauthor_emails(found) == ["a@x", "b@x"]


def test_identity_globs_take_brackets_literally() -> None:
    g = IdentityGlob.compile("*claude[bot]@users.noreply.github.com")
    assert g.matches("41898282+Claude[bot]@users.noreply.github.com")
    assert not g.matches("claudeb@users.noreply.github.com")
    assert IdentityGlob.compile("agent-?").matches("agent-7") and not IdentityGlob.compile("agent-?").matches("agent-")
    assert IdentityGlob.compile("a.b").matches("A.B") and not IdentityGlob.compile("a.b").matches("axb")


# --- messages as the objects hold them ---------------------------------------------------------
# The hook walks history with `git rev-list --header`, which re-flows messages; trailers must
# still be read from the message the object holds, in both of git's readings, and from the
# message `git log` re-encodes from an `encoding` header. The gate's side below is the hook's
# own road: a real walk (`Objects.walk` over `GitStream`), then `trailers.found`.

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class Readings:
    """One bare repository; commits with exact messages; git's readings and the gate's."""

    def __init__(self, root: Path) -> None:
        from gatecore.adapters.gitstream import GitStream
        from gatecore.git.objects import Objects

        self.git_dir = root / "r.git"
        subprocess.run(["git", "init", "-q", "--bare", str(self.git_dir)], check=True)
        self.objects = Objects(GitStream(str(self.git_dir)))

    def commit(self, message: bytes, encoding: str | None = None, author: bytes = b"a <a@x>") -> str:
        header = (f"tree {EMPTY_TREE}\n".encode() + b"author " + author + b" 0 +0000\ncommitter a <a@x> 0 +0000\n"
                  + (f"encoding {encoding}\n".encode() if encoding else b""))
        return subprocess.run(["git", "--git-dir", str(self.git_dir), "hash-object", "-t", "commit", "-w",
                               "--literally", "--stdin"], input=header + b"\n" + message, capture_output=True,
                              check=True).stdout.decode().strip()

    def git_log(self, oids: list[str]) -> dict[str, list[str]]:
        """`git log --format=%(trailers:only,unfold)` of each commit (re-encoded to UTF-8 by git)."""
        out = subprocess.run(["git", "--git-dir", str(self.git_dir), "log", "--no-walk=unsorted",
                              "--format=%H%x01%(trailers:only,unfold)%x02", *oids], capture_output=True,
                             check=True).stdout.decode("utf-8", "replace")
        found = {}
        for record in out.split("\x02")[:-1]:
            oid, _, text = record.lstrip("\n").partition("\x01")
            found[oid] = [line for line in text.split("\n") if line]
        return found

    def interpret(self, message: bytes) -> list[str]:
        """`git interpret-trailers --parse` of the message bytes."""
        out = subprocess.run(["git", "interpret-trailers", "--parse"], input=message, capture_output=True,
                             check=True, cwd=self.git_dir, timeout=600).stdout
        return out.decode("utf-8", "replace").split("\n")[:-1]

    def gate(self, oids: list[str]) -> dict[str, list[str]]:
        """The trailers the gate matches, reading each commit as the hook's walk reads it."""
        walked = {c.id: c for c in self.objects.walk(oids, [], None, messages=True)}
        return {oid: [f"{k}: {v}" for k, v in trailers.found(walked[oid].message, walked[oid].shown)]
                for oid in oids}


@pytest.fixture(scope="module")
def readings(tmp_path_factory: pytest.TempPathFactory) -> Readings:
    return Readings(tmp_path_factory.mktemp("readings"))


RAW_MESSAGES = [
    # a blank first line: the title is empty and the trailer block is the first paragraph
    b"\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    b"\n\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    b" \t \nCo-authored-by: Claude <noreply@anthropic.com>\n",
    # a scissors line with a trailing blank is no scissors line for git
    b"fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n# ------------------------ >8 ------------------------ \n"
    b"x\n",
    b"fix ci\n\n# ------------------------ >8 ------------------------\t\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    # a `Conflicts:` title, a tab-only line, a tab-indented last line
    b"Conflicts:\n\t\n\tCo-authored-by: Claude <noreply@anthropic.com>\n",
    b"Conflicts:\t\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\tci/x\n",
    b"fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\nConflicts: \n\tci/deploy.yml\n",
    # whitespace-only lines, CRLF, tabs, NUL
    b"fix ci\n  \nCo-authored-by: Claude <noreply@anthropic.com>  \n",
    b"fix ci\r\n\r\nCo-authored-by: Claude <noreply@anthropic.com>\r\n\r\n",
    b"fix ci\n\nCo-authored-by:\tClaude <noreply@anthropic.com>\t\n\t\n",
    b"fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n\x00\nprose\n",
    b"fix ci\n\nprose\x00\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    b"fix ci\n\nCo-authored-by: Claude <noreply@anthropic.com>\n---  \nbody\n",
    b"fix ci\n\nbody\n---\nCo-authored-by: Claude <noreply@anthropic.com>",
]


@pytest.mark.parametrize("message", RAW_MESSAGES)
def test_trailers_come_from_the_message_the_object_holds(readings: Readings, message: bytes) -> None:
    """Every trailer git finds in the object's message, either reading, the gate finds on the
    hook's road (the walk re-flows these messages: before, it lost them)."""
    oid = readings.commit(message)
    ours = readings.gate([oid])[oid]
    for line in readings.interpret(message) + readings.git_log([oid])[oid]:
        assert line in ours, (line, ours)
    assert any(line.startswith("Co-authored-by:") for line in ours) or not any(
        line.startswith("Co-authored-by:") for line in readings.interpret(message) + readings.git_log([oid])[oid])


_RAW_PIECES = st.sampled_from([
    b"title", b"", b" ", b"\t", b" \t ", b"\r", b"prose line", b"Co-authored-by: Claude <noreply@anthropic.com>",
    b"Co-authored-by: C <c@x> ", b"Assisted-by: X:y\r", b"Signed-off-by: D <d@x>", b"Key : v", b"  folded",
    b"\tci/deploy.yml", b"\t", b"Conflicts:", b"Conflicts: ", b"# comment", b"---", b"--- ", b"---\t",
    b"# ------------------------ >8 ------------------------", b"# ------------------------ >8 ------------------------ ",
    b"Bad Key: v", b"Made-with: Cursor\r", b"x\x00y", b"\x00",
])


@settings(max_examples=int(os.environ.get("GATE_TRAILER_EXAMPLES", "200")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_RAW_PIECES, max_size=12), st.booleans())
def test_random_raw_messages_lose_no_trailer_git_shows(readings: Readings, pieces: list[bytes], newline: bool) -> None:
    """Random messages from the lines that matter (blank first lines, blank-only lines, CRLF,
    tabs, NUL, scissors and `---` with trailing blanks), committed as they are and walked as
    the hook walks them: no trailer of either of git's readings is missing from the gate's."""
    message = b"\n".join(pieces) + (b"\n" if newline else b"")
    text = message.split(b"\0")[0]
    lines = text.split(b"\n")
    scissors = [i for i, p in enumerate(lines) if p == b"# ------------------------ >8 ------------------------"]
    # git 2.39's interpret-trailers loops forever on a "---" line before a scissors line
    assume(not scissors or not any(p.startswith(b"---") for p in lines[:scissors[-1]]))
    oid = readings.commit(message)
    ours = readings.gate([oid])[oid]
    for line in readings.interpret(message) + readings.git_log([oid])[oid]:
        assert line in ours, (message, line, ours)


_SAMPLES = ("é", "Ж", "日本", "한국", "中文", "α", "ש", "ก", "ñ", "ž")


def test_every_encoding_python_and_iconv_know_is_read_as_git_log_reads_it(readings: Readings) -> None:
    """A commit whose `encoding` header names one of them: the gate finds every trailer
    `git log` shows (git re-encodes the message from that encoding), or refuses the commit
    as one it cannot read the way git does (GATE-GIT-MALFORMED). ISO-2022 escapes inside a
    trailer key hide it from the raw bytes, not from git log (where git's iconv can convert the
    commit: ISO-2022-KR's cannot, without its designator, and git shows the raw bytes).
    tests/unit/test_message_encodings.py draws hostile messages in these encodings."""
    from gatecore.errors import GateError

    encodings = {codec: name for name, codec in reversed(iconv_and_python().items())}
    assert len(encodings) > 50 or not encodings
    made: dict[str, tuple[str, bytes]] = {}
    for codec, iconv_name in encodings.items():
        sample = next((s for s in _SAMPLES if _encodes(s, codec)), "x")
        message = f"title {sample}\n\nbody {sample}\n\nCo-authored-by: {sample} <agent@x>\nMade-with: Cursor\n"
        try:
            raw = message.encode(codec)
        except (UnicodeEncodeError, LookupError):
            continue
        if codec.startswith("iso2022"):  # an escape back to ASCII, inside the key
            raw += b"Co-\x1b(Bauthored-by: Claude <noreply@anthropic.com>\n"
        made[readings.commit(raw, iconv_name)] = (codec, raw)
    shown = readings.git_log(list(made))
    for oid, (codec, _raw) in made.items():
        commit = readings.objects.commit(oid)
        try:
            commit.identities()
        except GateError as exc:
            assert exc.code == "GATE-GIT-MALFORMED", codec
            continue
        ours = [_ascii(f"{k}: {v}") for k, v in trailers.found(commit.message, commit.shown)]
        for line in shown[oid]:
            assert _ascii(line) in ours, (codec, line, ours)


def _ascii(line: str) -> str:
    """A trailer line with every non-ASCII character as `?`: Python's codecs and iconv map some
    bytes to different characters (Big5's private-use area, Shift_JIS's 0x5C as a yen sign), never
    to different ASCII, so keys, separators and ASCII values (every catalogue pattern) agree."""
    return "".join(c if c < "\x80" else "?" for c in line)


def _encodes(text: str, codec: str) -> bool:
    try:
        text.encode(codec)
    except (UnicodeEncodeError, LookupError):
        return False
    return True
