"""Updates of symbolic refs on the server, as git applies them (`refs.through_symbolic`): each
judged as the update of the ref it resolves to, resolved as git's refs_resolve_ref_unsafe does
(at most SYMREF_MAXDEPTH refs read). The pushes themselves: tests/push/test_git_accepts.py."""

from __future__ import annotations

from gatecore.git.refs import SYMREF_MAXDEPTH, RefUpdate, resolve_symbolic, through_symbolic

Z, A, B, C = "0" * 40, "a" * 40, "b" * 40, "c" * 40


def _u(old: str, new: str, ref: str) -> RefUpdate:
    return RefUpdate(old, new, ref.encode())


def test_resolution_reads_as_many_refs_as_git_does() -> None:
    chain = {f"refs/heads/s{i}": f"refs/heads/s{i + 1}" for i in range(SYMREF_MAXDEPTH)}
    # s0 -> s1 -> ... : git reads at most SYMREF_MAXDEPTH names, the last of which must be direct
    assert resolve_symbolic("refs/heads/main", chain) == "refs/heads/main"
    assert resolve_symbolic(f"refs/heads/s{SYMREF_MAXDEPTH - 1}", chain) == f"refs/heads/s{SYMREF_MAXDEPTH}"
    assert resolve_symbolic("refs/heads/s1", chain) == f"refs/heads/s{SYMREF_MAXDEPTH}"  # four levels
    assert resolve_symbolic("refs/heads/s0", chain) is None  # five: git gives up
    assert resolve_symbolic("refs/heads/x", {"refs/heads/x": "refs/heads/y", "refs/heads/y": "refs/heads/x"}) is None


def test_an_update_through_a_symbolic_ref_is_its_targets() -> None:
    applied, refused = through_symbolic([_u(A, B, "refs/heads/alias")], {"refs/heads/alias": "refs/heads/main"})
    assert applied == [_u(A, B, "refs/heads/main")] and refused == []


def test_agreeing_updates_of_a_symbolic_ref_and_its_target_are_one() -> None:
    targets = {"refs/remotes/origin/HEAD": "refs/remotes/origin/main"}
    both = [_u(A, B, "refs/remotes/origin/HEAD"), _u(A, B, "refs/remotes/origin/main")]
    assert through_symbolic(both, targets) == ([_u(A, B, "refs/remotes/origin/main")], [])
    # two symbolic refs to one target, agreeing: one write
    targets = {"refs/heads/x": "refs/heads/main", "refs/heads/y": "refs/heads/main"}
    applied, refused = through_symbolic([_u(A, B, "refs/heads/x"), _u(A, B, "refs/heads/y")], targets)
    assert applied == [_u(A, B, "refs/heads/main")] and refused == []


def test_disagreeing_updates_are_refused() -> None:
    targets = {"refs/heads/bar": "refs/heads/foo"}
    applied, refused = through_symbolic([_u(A, B, "refs/heads/foo"), _u(A, C, "refs/heads/bar")], targets)
    assert applied == [_u(A, B, "refs/heads/foo")]
    assert [(u.ref, code) for u, code, _ in refused] == [("refs/heads/bar", "GATE-REF-NAME")]
    assert "inconsistent aliased update" in refused[0][2]


def test_what_cannot_be_judged_as_a_target_is_refused() -> None:
    cases = {
        "refs/heads/loop": ({"refs/heads/loop": "refs/heads/loop"}, "GATE-REF-NAME"),
        "refs/heads/out": ({"refs/heads/out": "FETCH_HEAD"}, "GATE-REF-NAME"),
        "refs/heads/into": ({"refs/heads/into": "refs/gate/attempts/x"}, "GATE-REF-RESERVED"),
        "refs/heads/review": ({"refs/heads/review": "refs/heads/main"}, "GATE-REF-RESERVED"),
        "refs/gate/alias": ({"refs/gate/alias": "refs/heads/main"}, "GATE-REF-RESERVED"),
        "refs/heads/squat": ({"refs/heads/squat": "refs/heads/review/runner"}, "GATE-REF-RESERVED"),
    }
    for ref, (targets, code) in cases.items():
        applied, refused = through_symbolic([_u(A, B, ref)], targets)
        assert applied == [] and [c for _, c, _ in refused] == [code], ref


def test_a_dangling_symbolic_ref_creates_its_target() -> None:
    applied, _ = through_symbolic([_u(Z, B, "refs/heads/dangling")], {"refs/heads/dangling": "refs/heads/nowhere"})
    assert applied == [_u(Z, B, "refs/heads/nowhere")]
