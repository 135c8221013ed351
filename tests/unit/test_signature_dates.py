"""The time a signature is judged at is the committer date as git reads it."""

from __future__ import annotations

import pytest

from gatecore.errors import GateError
from gatecore.signing.signatures import _committer_time


@pytest.mark.parametrize(("line", "when"), [
    (b"committer A <a@x> 1700000000 +0000", 1700000000),
    (b"committer A <a@x> 1_700_000_000 +0000", 1),  # git's strspn over digits stops at '_'
    (b"committer A <a> b <c@x> 42 +0000", 42),       # the date follows the last '>'
])
def test_the_committer_date_is_read_as_git_reads_it(line: bytes, when: int) -> None:
    assert _committer_time(b"tree " + b"0" * 40 + b"\nauthor A <a@x> 1 +0000\n" + line + b"\n\nmsg\n") == when


@pytest.mark.parametrize("date", [b"+5", b"-5", b"", b"x1"])
def test_a_date_git_cannot_read_is_malformed(date: bytes) -> None:
    with pytest.raises(GateError) as exc:
        _committer_time(b"tree " + b"0" * 40 + b"\ncommitter A <a@x> " + date + b" +0000\n\nmsg\n")
    assert exc.value.code == "GATE-GIT-MALFORMED"
