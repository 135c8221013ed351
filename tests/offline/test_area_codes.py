"""Codes name the area of what failed: an oversized approval or ledger record
is reported in its own area, not as a receipt; the command line's own crash is GATE-CLI-INTERNAL."""

from __future__ import annotations

import pytest
from support.cli import cli
from support.gitutil import WorkRepo, git

from gatecore.adapters.gitrepo import GitRepo
from gatecore.errors import GateError
from gatecore.git.objects import Objects
from gatecore.records import approvals
from gatecore.records.ledger import RECORD_FILE, read_entries


def _root_commit(work: WorkRepo, name: str, data: bytes, ref: str) -> str:
    repo = GitRepo.at(work.path)
    commit = repo.write_commit(repo.write_tree({name: data}), [], "big\n", "t", "t@example.com", 1_700_000_000)
    git(work.path, "update-ref", ref, commit)
    return commit


def test_an_oversized_approval_is_a_malformed_approval(work: WorkRepo) -> None:
    work.write("a", "a")
    work.commit("base")
    _root_commit(work, approvals.RECORD_FILE, b" " * 70000, "refs/gate/approvals/" + "a" * 64)
    out = cli("approvals", "list", "--repo", str(work.path))
    assert out.returncode == 0, out.stderr
    assert "malformed: GATE-APPROVAL-MALFORMED:" in out.stdout and "cap" in out.stdout, out.stdout
    assert "RECEIPT" not in out.stdout


def test_an_oversized_ledger_record_is_a_ledger_record_fault(work: WorkRepo) -> None:
    work.write("a", "a")
    work.commit("base")
    tip = _root_commit(work, RECORD_FILE, b" " * 70000, "refs/gate/attempts/a1")
    with pytest.raises(GateError) as exc:
        read_entries(Objects(GitRepo.at(work.path)), tip, None)
    assert exc.value.code == "GATE-LEDGER-RECORD" and "cap" in exc.value.detail


def test_the_command_lines_own_crash_is_its_own_code(monkeypatch: pytest.MonkeyPatch) -> None:
    import gatecore.selftest

    def crash() -> tuple[str, bool]:
        raise RuntimeError("boom")

    monkeypatch.setattr(gatecore.selftest, "run", crash)
    out = cli("selftest")
    assert out.returncode == 3
    assert "GATE-CLI-INTERNAL: RuntimeError: boom" in out.stderr and "Traceback" in out.stderr
    assert "GATE-HOOK-INTERNAL" not in out.stderr
