"""The attempt ledger through real pushes: one attack of each family (a rewrite, a forged record,
a record out of sequence, a record commit of the wrong shape, a reused generation, a review with
a ledger update) and the opens that race for one generation through git's ref transaction.
Every attack of every family runs in process in `tests/engine/test_ledger_attacks.py`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.cases import ledger as cases
from support.cases.ledger import (  # noqa: F401
    test_a_review_pushed_with_an_invalid_ledger_update_is_rejected,
    test_ledger_rollback_is_rejected,
    test_nothing_follows_a_closed_record,
)
from support.gitutil import HUMAN, gate, git_env
from support.lab import RUNNER, Lab
from support.verdicts import refused

from gatecore.errors import GateError
from gatecore.git.refs import generation_ref
from gatecore.signing import envelope

# --- the attempt ledger ---------------------------------------------------------------------


def test_generation_reuse_by_a_second_attempt_is_rejected(lab: Lab) -> None:
    """The orchestrator asks the server first and refuses; pushed anyway, the gate refuses."""
    first = lab.open(lab.fresh(), generation=None)
    gen = lab.state(first).workspace_generation  # type: ignore[union-attr]
    second = lab.fresh()
    with pytest.raises(GateError) as refused_locally:
        lab.append(second, "opened", **lab.open_fields(second, gen))
    assert refused_locally.value.code == "GATE-LEDGER-GENERATION-REUSED"
    cases.test_generation_reuse_by_a_second_attempt_is_rejected(lab)


def test_a_ledger_record_forged_with_a_receipt_key_is_rejected(lab: Lab) -> None:
    cases.test_forged_or_mis_sealed_ledger_records_are_rejected(lab, "runner-1", envelope.PAYLOAD_ATTEMPT,
                                                                "GATE-SEAL-KEY-PURPOSE")


def test_a_ledger_commit_holding_two_files_is_rejected(lab: Lab) -> None:
    cases.test_ledger_commits_of_the_wrong_shape_are_rejected(lab, "two-files")


def _barrier_hook(lab: Lab, parties: int) -> Path:
    """Chain a pre-receive hook that waits until `parties` pushes reach it: every one of them
    has then been decided by the gate, and none has updated a ref yet."""
    bar = lab.root / f"barrier-{os.urandom(3).hex()}"
    bar.mkdir()
    hook = lab.server.bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\ntouch {bar}/$$\ni=0\n"
                    f"while [ $(ls {bar} | wc -l) -lt {parties} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
                    "exit 0\n")
    hook.chmod(0o755)
    out = gate("server", "install", str(lab.server.bare), "--chain")
    assert out.returncode == 0, out.stderr
    return bar


@pytest.mark.parametrize("atomic", [True, False], ids=["atomic", "non-atomic"])
def test_concurrent_attempts_cannot_share_a_generation(tmp_path: Path, atomic: bool) -> None:
    """Two opens with one generation, decided by the gate at the same time (a barrier holds both
    past the hook): git's ref transaction lets one claim the generation. Atomic pushes land one
    attempt; non-atomic ones may land both ledger refs, but only the claimant gets a review."""
    lab = Lab(tmp_path / "race")
    _barrier_hook(lab, 2)
    made = ["race-1", "race-2"]
    for attempt in made:
        lab.append(attempt, "opened", remote=False, **lab.open_fields(attempt, "g-shared"))
        lab.append(attempt, "model-selected", remote=False, model_id="model-a")
    env = git_env(HUMAN, **RUNNER)
    procs = [subprocess.Popen(["git", "push", "--porcelain", *(["--atomic"] if atomic else []), lab.remote(),
                               *lab.open_refspecs(a)], cwd=lab.work.path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for a in made]
    for p in procs:
        p.communicate(timeout=120)
    claim = lab.server.ref(generation_ref("g-shared"))
    owners = [a for a in made if lab.state(a) is not None and lab.state(a).root == claim]  # type: ignore[union-attr]
    assert len(owners) == 1, f"generation g-shared claimed by {owners}"
    landed = [a for a in made if lab.ledger_tip(a) is not None]
    if atomic:
        assert landed == owners
    for attempt in landed:
        head = lab.change(f"race-review-{attempt}")
        receipt = lab.record(attempt, head)
        result = lab.push_review(attempt, receipt)
        if attempt in owners:
            assert result.ok, result.output
        else:
            assert refused(result, "GATE-LEDGER-GENERATION-REUSED"), result.output
