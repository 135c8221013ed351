"""The per-ref rules asked of git once per push (`PushChecker._ref_violations`): which updated
refs are symbolic on the server, and which updates are fast-forwards. A push of many refs is
judged ref by ref exactly as a push of one: each verdict here is the one a push of that ref
alone gets."""

from __future__ import annotations

from pathlib import Path

from support.engine import EngineServer
from support.gitutil import HUMAN, git
from support.server import POLICY, seeded

FORCE_DENIED = POLICY + '[refs]\nforce = "deny"\n'


def _server(tmp_path: Path) -> EngineServer:
    server: EngineServer = seeded(tmp_path, FORCE_DENIED, make=EngineServer)
    return server


def test_many_refs_in_one_push_are_judged_each_as_alone(tmp_path: Path) -> None:
    server = _server(tmp_path)
    work = server.work
    base = work.head()
    work.write("README", "two\n")
    second = work.commit("second", identity=HUMAN)
    git(work.path, "tag", "-a", "-m", "annotated", "t-second", second)
    branches = [f"refs/heads/b{i:03d}" for i in range(40)]
    setup = server.raw([(server.zero, base, b) for b in [*branches, "refs/heads/ahead"]]
                       + [(server.zero, second, "refs/heads/rewound")])
    assert setup.ok, setup.output
    git(server.bare, "symbolic-ref", "refs/heads/alias", "refs/heads/b000")
    git(server.bare, "symbolic-ref", "refs/heads/dangling", "refs/heads/nowhere")
    tag = work.head("t-second")

    updates = [(base, second, b) for b in branches]  # fast-forwards
    updates += [(base, tag, "refs/heads/ahead")]  # a fast-forward to an annotated tag: refused as no commit
    updates += [(second, base, "refs/heads/rewound")]  # not a fast-forward
    # symbolic refs: judged as their targets (alias agrees with b000's update; dangling creates refs/heads/nowhere)
    updates += [(base, second, "refs/heads/alias"), (server.zero, second, "refs/heads/dangling")]
    decided = server.raw(updates)
    found = {(v.code, v.ref) for v in decided.violations}
    assert found == {("GATE-REF-TARGET", "refs/heads/ahead"), ("GATE-REF-FORCE", "refs/heads/rewound")}, found
    assert all(server.ref(b) == base for b in branches)  # the rejected push moved nothing
    # the same verdict, ref by ref, pushed alone (the accepted ones land); the symbolic refs are left out:
    # alone, alias would state b000's old value after b000 moved (git refuses that: tests/push/test_git_accepts.py)
    for old, new, ref in updates[:-2]:
        alone = server.raw([(old, new, ref)])
        assert {(v.code, v.ref) for v in alone.violations} == {f for f in found if f[1] == ref}, (ref, alone.output)
    assert all(server.ref(b) == second for b in branches)
