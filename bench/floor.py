"""The least a hook in Python does for a push under a read-all policy, no tree read: the new commits
listed by git (`rev-list --header NEW... --not --all`) and each parsed by the gate's own reader
(`gatecore.git.grammar.parse_commit`, which every commit of a push goes through). `python -m
bench.profile SCENARIO --floor` times it beside the careful peer: what no gate in Python can go below.

    python -I bench/floor.py NEW [NEW ...]     (in the server repository, as the hook runs)
"""

from __future__ import annotations

import os
import sys

from gatecore.adapters import spawn
from gatecore.git.grammar import parse_commit


def main(news: list[str]) -> int:
    """Each commit parsed as soon as git has written it (git goes on listing meanwhile, as the gate's
    walk reads it): Python's share of the time is what it adds past git's own listing."""
    child = spawn.Child(["git", "rev-list", "--header", *news, "--not", "--all"])
    count, rest = 0, b""
    while chunk := os.read(child.stdout.fileno(), 1 << 16):
        *records, rest = (rest + chunk).split(b"\0")
        for record in records:
            oid, _, body = record.partition(b"\n")
            header, _, message = body.partition(b"\n\n")
            parse_commit(oid.decode(), header, message)
            count += 1
    if child.wait() != 0 or rest:
        return 2
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
