"""Attacks on the attempt ledger, as test functions both tiers collect: who writes it, append-only
chains, sealed records in sequence, generation claims, the record commit's shape. Every case runs
in process (`tests/engine/test_ledger_attacks.py`, on an `EngineLab`), one of each family through a
real push (`tests/push/test_ledger.py`, on a `Lab`). A rejection must leave every ref as it was."""

from __future__ import annotations

import base64
import os
import time
from typing import Any

import pytest

from gatecore import strictjson
from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from gatecore.signing import envelope

from ..gitutil import git
from ..lab import PROMPT_SHA, RUNNER, Lab, envelope_doc, raw_json
from ..verdicts import Outcome, assert_refused

# --- the attempt ledger ---------------------------------------------------------------------


def _push_ledger(lab: Lab, commit: str, attempt: str, force: bool = False,
                 pusher: dict[str, str] = RUNNER) -> Outcome:
    return lab.server.push(f"{'+' if force else ''}{commit}:{ATTEMPTS_PREFIX}{attempt}", pusher_env=pusher)


def _appendraw_json(lab: Lab, attempt: str, doc: dict[str, Any], key: str = "orch-1",
                payload_type: str = envelope.PAYLOAD_ATTEMPT) -> Outcome:
    return _push_ledger(lab, lab.ledger_commit(lab.seal(doc, key, payload_type), lab.ledger_tip(attempt)), attempt)


def test_ledger_rollback_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    first = git(lab.work.path, "rev-parse", f"{lab.ledger_tip(attempt)}~1").stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, first, attempt, force=True), "GATE-LEDGER-REWRITE")


def test_ledger_rewrite_to_a_parallel_chain_is_rejected(lab: Lab) -> None:
    """A sealed chain of its own (same attempt id) replacing the server's chain."""
    attempt = lab.open()
    doc = lab.record_doc(attempt, "opened", seq=0, prev=None)
    root = lab.ledger_commit(lab.seal(doc, "orch-1", envelope.PAYLOAD_ATTEMPT), None)
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, root, attempt, force=True), "GATE-LEDGER-REWRITE")


def test_ledger_deletion_is_rejected_even_for_the_runner(lab: Lab) -> None:
    attempt = lab.open()
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f":{ATTEMPTS_PREFIX}{attempt}", pusher_env=RUNNER),
                   "GATE-LEDGER-DELETE")


def test_ledger_record_for_another_attempt_id_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    # An append whose payload names another attempt.
    doc = lab.record_doc(attempt, "failover", attempt_id="someone-else")
    before = lab.snapshot()
    assert_refused(lab, before, _appendraw_json(lab, attempt, doc), "GATE-LEDGER-ATTEMPT")
    # A whole chain opened for attempt X, pushed to attempt Y's ref.
    other = lab.fresh("x")
    lab.append(other, "opened", remote=False, repository="demo/repo", workspace="ws", workspace_generation=f"g-{other}",
               prompt_sha256=PROMPT_SHA)
    tip = git(lab.work.path, "rev-parse", ATTEMPTS_PREFIX + other).stdout.strip()
    assert_refused(lab, before, _push_ledger(lab, tip, "y" + other), "GATE-LEDGER-ATTEMPT")


def test_ledger_for_another_repository_is_rejected(lab: Lab) -> None:
    attempt = lab.fresh()
    before = lab.snapshot()
    out = lab.append(attempt, "opened", repository="other/repo", workspace="ws", workspace_generation=f"g-{attempt}",
                     prompt_sha256=PROMPT_SHA)
    assert out is not None
    assert_refused(lab, before, out, "GATE-LEDGER-ATTEMPT")


@pytest.mark.parametrize("key,payload_type,code", [
    ("runner-1", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-PURPOSE"),  # forged with a receipt-purpose key
    ("runner-hmac", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-PURPOSE"),
    ("orch-1", envelope.PAYLOAD_RECEIPT, "GATE-SEAL-PAYLOAD-TYPE"),  # a receipt-typed envelope as a record
    ("orch-expired", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-EXPIRED"),
    ("orch-revoked", envelope.PAYLOAD_ATTEMPT, "GATE-SEAL-KEY-REVOKED"),
])
def test_forged_or_mis_sealed_ledger_records_are_rejected(lab: Lab, key: str, payload_type: str, code: str) -> None:
    attempt = lab.open()
    before = lab.snapshot()
    assert_refused(lab, before, _appendraw_json(lab, attempt, lab.record_doc(attempt, "failover"), key, payload_type),
                   code)


def test_a_receipt_pushed_as_a_ledger_record_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """Payload type confusion the other way: a validly sealed receipt as record.json."""
    attempt = lab.open()
    before = lab.snapshot()
    commit = lab.ledger_commit(lab.seal(victim["doc"]), lab.ledger_tip(attempt))
    out = _push_ledger(lab, commit, attempt)
    assert_refused(lab, before, out, "GATE-SEAL-PAYLOAD-TYPE", "GATE-SEAL-KEY-PURPOSE")


def test_ledger_record_with_a_bad_seal_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    env = envelope_doc(lab.seal(lab.record_doc(attempt, "failover"), "orch-1", envelope.PAYLOAD_ATTEMPT))
    env["payload"] = base64.b64encode(strictjson.dumps(lab.record_doc(attempt, "closed"))).decode()
    before = lab.snapshot()
    out = _push_ledger(lab, lab.ledger_commit(raw_json(env), lab.ledger_tip(attempt)), attempt)
    assert_refused(lab, before, out, "GATE-SEAL-BAD-SIGNATURE")


def test_generation_reuse_by_a_second_attempt_is_rejected(lab: Lab) -> None:
    """Pushed past the orchestrator's own check (which asks the server first: tests/push), the gate
    refuses a second attempt claiming a generation."""
    first = lab.open(lab.fresh(), generation=None)
    gen = lab.state(first).workspace_generation
    before = lab.snapshot()
    second = lab.fresh()
    lab.append(second, "opened", remote=False, **lab.open_fields(second, gen))
    out = lab.server.push(*(f"+{spec}" for spec in lab.open_refspecs(second)), pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-LEDGER-GENERATION-REUSED")


def test_generation_reuse_within_one_push_is_rejected(lab: Lab) -> None:
    gen = f"g-twice-{os.urandom(3).hex()}"
    made = [lab.fresh("twin") for _ in range(2)]
    for attempt in made:
        lab.append(attempt, "opened", remote=False, repository="demo/repo", workspace="ws", workspace_generation=gen,
                   prompt_sha256=PROMPT_SHA)
    before = lab.snapshot()
    refspecs = {spec.split(":")[1]: spec for a in made for spec in lab.open_refspecs(a)}  # one claim: the last
    out = lab.server.push(*refspecs.values(), pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-LEDGER-GENERATION-REUSED")


@pytest.mark.parametrize("kind,fields", [
    ("model-selected", {}),  # the model is already selected: must be a failover
    ("failover", {"model_id": "model-a"}),  # a failover to the model on record
    ("closed", {"seq": 5}),  # out of order
    ("closed", {"prev": "0" * 64}),  # does not name its predecessor (re-parented)
])
def test_out_of_sequence_ledger_records_are_rejected(lab: Lab, kind: str, fields: dict[str, Any]) -> None:
    attempt = lab.open()
    doc = lab.record_doc(attempt, kind, **fields)
    if kind == "opened":
        doc.update(prev=lab.state(attempt).head)
    before = lab.snapshot()
    out = _appendraw_json(lab, attempt, doc)
    assert_refused(lab, before, out, "GATE-LEDGER-SEQUENCE" if kind != "opened" else "GATE-LEDGER-RECORD")


def test_nothing_follows_a_closed_record(lab: Lab) -> None:
    attempt = lab.open()
    assert lab.append(attempt, "closed").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    assert_refused(lab, before, _appendraw_json(lab, attempt, lab.record_doc(attempt, "failover")),
                   "GATE-LEDGER-SEQUENCE")


def test_a_chain_that_does_not_start_with_opened_is_rejected(lab: Lab) -> None:
    attempt = lab.fresh()
    doc = {"version": 1, "attempt_id": attempt, "seq": 1, "kind": "model-selected", "prev": "a" * 64,
           "repository": "demo/repo", "time": int(time.time()), "model_id": "model-a"}
    before = lab.snapshot()
    out = _push_ledger(lab, lab.ledger_commit(lab.seal(doc, "orch-1", envelope.PAYLOAD_ATTEMPT), None), attempt)
    assert_refused(lab, before, out, "GATE-LEDGER-SEQUENCE")


@pytest.mark.parametrize("shape", ["two-files", "symlink", "wrong-name", "merge", "tree-target", "oversize"])
def test_ledger_commits_of_the_wrong_shape_are_rejected(lab: Lab, shape: str) -> None:
    attempt = lab.open()
    tip = lab.ledger_tip(attempt)
    assert tip is not None
    data = lab.seal(lab.record_doc(attempt, "failover"), "orch-1", envelope.PAYLOAD_ATTEMPT)
    code = "GATE-LEDGER-RECORD"
    if shape == "two-files":
        commit = lab.ledger_commit(data, tip, {"record.json": (0o100644, data), "extra": (0o100644, b"x")})
    elif shape == "symlink":
        commit = lab.ledger_commit(data, tip, {"record.json": (0o120000, b"../../etc/passwd")})
    elif shape == "wrong-name":
        commit = lab.ledger_commit(data, tip, {"RECORD.json": (0o100644, data)})
    elif shape == "merge":
        commit = lab.ledger_commit(data, tip, parents=[tip, lab.base])
    elif shape == "oversize":
        commit = lab.ledger_commit(data + b" " * 70000, tip)  # a record's own area names it

    else:
        commit = git(lab.work.path, "rev-parse", f"{lab.base}^{{tree}}").stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, commit, attempt, force=shape == "tree-target"), code)


def test_a_ledger_ref_name_that_is_not_an_attempt_id_is_rejected(lab: Lab) -> None:
    attempt = lab.fresh()
    lab.append(attempt, "opened", remote=False, repository="demo/repo", workspace="ws",
               workspace_generation=f"g-{attempt}", prompt_sha256=PROMPT_SHA)
    tip = git(lab.work.path, "rev-parse", ATTEMPTS_PREFIX + attempt).stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, _push_ledger(lab, tip, f"nested/{attempt}"), "GATE-LEDGER-ATTEMPT")


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
