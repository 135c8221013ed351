"""A commit that names an encoding is decided as git shows it, through real pushes.

A human's commit whose header says `encoding ISO-2022-JP`, writing `ci/deploy.yml`, whose
message names an agent as co-author behind escape sequences: `git log` re-encodes the message
through iconv and shows the trailer, so the push is refused (`GATE-FROZEN-PATH`). Before, the
walk read a commit's signals only when its raw bytes could hold a trailer (a line of escapes
alone hides the blank line before the trailer block from the raw bytes), and read the message
through Python's codecs, which read escapes cut short otherwise than glibc's iconv. The
differential over generated messages is tests/unit/test_message_encodings.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitutil import HUMAN
from support.server import POLICY, Server
from support.verdicts import refused

HIDDEN = b"update ci\n\x1b(B\nCo-authored-by: Bot <bot@agents.example.com>\n"
#: Escapes Python's codec reads otherwise than iconv: an escape cut short in the title, one set
#: at the end of the trailer (git shows `Made-with: Cursor`).
CUT = b"update ci\x1b(\nline\n\nMade-with: Cursor\x1b(B\n"
TRAILER_POLICY = POLICY.replace('authors = ["*@agents.example.com"]',
                                'authors = ["*@agents.example.com"]\ntrailers = ["Made-with: Cursor"]')


def _encoded_commit(server: Server, message: bytes, encoding: str) -> str:
    """A human's commit writing ci/deploy.yml, its header naming `encoding`, its message these bytes."""
    w = server.work
    w.write("ci/deploy.yml", "deploy: agent\n")
    w.git("add", "-A")
    w.git("-c", f"i18n.commitEncoding={encoding}", "commit", "-q", "--cleanup=verbatim", "-F", "-", identity=HUMAN,
          input=message)
    return w.head()


@pytest.mark.parametrize(("encoding", "object_format"), [("ISO-2022-JP", "sha1"), ("ISO-2022-JP-2", "sha1"),
                                                         ("ISO-2022-JP", "sha256")])
def test_a_co_author_behind_an_escape_line_is_read_as_git_shows_it(tmp_path: Path, encoding: str,
                                                                    object_format: str) -> None:
    server = Server(tmp_path, object_format=object_format)
    server.work.write("README", "hello\n")
    server.work.commit("base")
    assert server.push("main").returncode == 0
    head = _encoded_commit(server, HIDDEN, encoding)
    assert b"encoding " + encoding.encode() in server.work.git("cat-file", "commit", head).stdout.encode()
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stdout + out.stderr
    assert "co-author email bot@agents.example.com" in out.stderr, out.stderr


def test_a_trailer_behind_escapes_pythons_codec_reads_otherwise_is_read_as_git_shows_it(tmp_path: Path) -> None:
    server = Server(tmp_path, policy=TRAILER_POLICY)
    server.work.write("README", "hello\n")
    server.work.commit("base")
    assert server.push("main").returncode == 0
    _encoded_commit(server, CUT, "ISO-2022-JP")
    out = server.push("main")
    assert refused(out, "GATE-FROZEN-PATH"), out.stdout + out.stderr
    assert "trailer Made-with: Cursor matched" in out.stderr, out.stderr


def test_a_commit_without_agents_that_names_an_encoding_is_accepted(tmp_path: Path) -> None:
    server = Server(tmp_path)
    server.work.write("README", "hello\n")
    server.work.commit("base")
    assert server.push("main").returncode == 0
    _encoded_commit(server, "update ci\n\n\u65e5\u672c\n\nReviewed-by: R <r@example.com>\n".encode("iso2022_jp"),
                    "ISO-2022-JP")
    out = server.push("main")
    assert out.returncode == 0, out.stdout + out.stderr
