"""The attempt ledger through real pushes: one attack of each family (a rewrite, a forged record,
a record out of sequence, a record commit of the wrong shape, a reused generation, a review with
a ledger update) and the opens that race for one generation through git's ref transaction.
Every attack of every family runs in process in `tests/engine/test_ledger_attacks.py`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.gitutil import HUMAN, gate, git, git_env
from support.lab import RUNNER, Lab
from support.verdicts import assert_refused, refused

from gatecore import envelope
from gatecore.errors import GateError
from gatecore.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref

# --- the attempt ledger ---------------------------------------------------------------------


def _push_ledger(lab: Lab, commit: str, attempt: str, force: bool = False,
                 pusher: dict[str, str] = RUNNER) -> subprocess.CompletedProcess[str]:
    return lab.server.push(f"{'+' if force else ''}{commit}:{ATTEMPTS_PREFIX}{attempt}", pusher_env=pusher)


def _appendraw_json(lab: Lab, attempt: str, doc: dict[str, Any], key: str = "orch-1",
                payload_type: str = envelope.PAYLOAD_ATTEMPT) -> subprocess.CompletedProcess[str]:
    return _push_ledger(lab, lab.ledger_commit(lab.seal(doc, key, payload_type), lab.ledger_tip(attempt)), attempt)


def test_ledger_rollback_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    first = git(lab.work.path, "rev-parse", f"{lab.ledger_tip(attempt)}~1").stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, first, attempt, force=True), "GATE-LEDGER-REWRITE")


def test_a_ledger_record_forged_with_a_receipt_key_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    before = lab.snapshot()
    out = _appendraw_json(lab, attempt, lab.record_doc(attempt, "failover"), "runner-1", envelope.PAYLOAD_ATTEMPT)
    assert_refused(lab, before, out, "GATE-SEAL-KEY-PURPOSE")


def test_generation_reuse_by_a_second_attempt_is_rejected(lab: Lab) -> None:
    first = lab.open(lab.fresh(), generation=None)
    gen = lab.state(first).workspace_generation
    before = lab.snapshot()
    second = lab.fresh()
    with pytest.raises(GateError) as refused_locally:  # the orchestrator asks the server first
        lab.append(second, "opened", **lab.open_fields(second, gen))
    assert refused_locally.value.code == "GATE-LEDGER-GENERATION-REUSED"
    # Pushed anyway (forced past git's own fast-forward check), the gate refuses it.
    lab.append(second, "opened", remote=False, **lab.open_fields(second, gen))
    out = lab.server.push(*(f"+{spec}" for spec in lab.open_refspecs(second)), pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-LEDGER-GENERATION-REUSED")


def test_nothing_follows_a_closed_record(lab: Lab) -> None:
    attempt = lab.open()
    assert lab.append(attempt, "closed").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    assert_refused(lab, before, _appendraw_json(lab, attempt, lab.record_doc(attempt, "failover")),
                   "GATE-LEDGER-SEQUENCE")


def test_a_ledger_commit_of_the_wrong_shape_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    tip = lab.ledger_tip(attempt)
    assert tip is not None
    data = lab.seal(lab.record_doc(attempt, "failover"), "orch-1", envelope.PAYLOAD_ATTEMPT)
    commit = lab.ledger_commit(data, tip, {"record.json": (0o100644, data), "extra": (0o100644, b"x")})
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, commit, attempt), "GATE-LEDGER-RECORD")


def test_a_review_pushed_with_an_invalid_ledger_update_is_rejected(lab: Lab) -> None:
    """One push: a forged failover to model-b, and a model-b receipt that would match it."""
    attempt = lab.open()
    head = lab.change(f"with-ledger-{attempt}")
    forged = lab.ledger_commit(lab.seal(lab.record_doc(attempt, "failover"), "runner-1",
                                          envelope.PAYLOAD_ATTEMPT), lab.ledger_tip(attempt))
    doc = lab.good_doc(attempt, head)
    receipt = lab.receipt_commit(attempt, lab.seal({**doc, "model_id": "model-b"}))
    before = lab.snapshot()
    out = lab.server.push(f"{forged}:{ATTEMPTS_PREFIX}{attempt}", f"{head}:{REVIEW_PREFIX}{attempt}",
                          f"{receipt}:{RECEIPTS_PREFIX}{attempt}", pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-SEAL-KEY-PURPOSE", "GATE-REVIEW-SAME-PUSH")


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
