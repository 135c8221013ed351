"""Many long ref names in one push, within `[limits] max_ref_updates`.

The hook asks git about the pushed names on its command line (`for-each-ref NAME...` for the
symbolic refs among them, the values of the refs a check consults). A ref name may be 1,024
bytes, and an admin raises `max_ref_updates` for a planned import (docs/policy.md, "Limits"):
a few thousand such names pass the system's limit on a command line (`E2BIG`), and the hook
answered `GATE-GIT-REPOSITORY` ("cannot run git: Argument list too long", exit 2: the
admin is told the repository is broken) instead of judging the push. The names now go to
git in runs (`gitstream.FOR_EACH_REF_ARGV`)."""

from __future__ import annotations

from pathlib import Path

from support.rawpush import raw_push
from support.server import POLICY, seeded

ZERO = "0" * 40
SEGMENT = "x" * 200  # (a file system takes 255 bytes per name: long refs are deep ones)


def _long_name(i: int) -> str:
    return f"refs/tags/import/{i:05d}/" + "/".join([SEGMENT] * 4)


def test_a_push_of_many_long_ref_names_within_the_limit_is_judged(tmp_path: Path) -> None:
    server = seeded(tmp_path, POLICY + "[limits]\nmax_ref_updates = 5000\n")
    head = server.work.head()
    names = [_long_name(i) for i in range(3000)]  # about 2.5 MB of names
    out = raw_push(server.work.path, server.bare, [(ZERO, head, n) for n in names], {"REMOTE_USER": "hana"})
    decision = server.audit()[-1]
    assert "GATE-GIT-REPOSITORY" not in decision["codes"], out.stderr[-500:]
    assert decision["decision"] == "accept", decision["codes"]
    assert out.ok(names[0]) and out.ok(names[-1])
