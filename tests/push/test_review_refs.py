"""Review refs through real pushes: one attack of each family on refs/heads/review/runner/* and its
receipt, and the flow that makes every rejection meaningful.

Each test pushes into a bare repository with the gate installed (`support.lab.Lab`), expects
its specific GATE- code (from the gate's own gate-json lines), and checks that a rejection
changed no ref, the ledger included: a refusal reaches the pusher with its code and moves
nothing. Every attack of every family (the fields of the binding, replays, contents, JSON traps,
seals and validity, the receipt commit's shape, missing pieces and ledger states, who may push)
runs in process in `tests/engine/test_receipt_attacks.py`. One lab is shared by the module; every
test uses attempt ids and branches of its own.
"""

from __future__ import annotations

import json
from typing import Any

from support.attacks import SEAL_ATTACKS
from support.lab import AGENT_USER, RUNNER, Lab
from support.verdicts import assert_refused

from gatecore.refs import REVIEW_PREFIX

# --- the flow works (so that every rejection below is meaningful) ------------------------

def test_a_fresh_bound_receipt_is_accepted(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"fresh-{attempt}")
    result = lab.push_review(attempt, lab.record(attempt, head))
    assert result.ok, result.output
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head
    assert lab.server.audit()[-1]["attempt_ids"] == [attempt]


def test_the_bare_crafted_receipt_path_accepts_a_good_receipt(lab: Lab) -> None:
    """push_receipt_bytes (used for malformed receipts below) accepts what the runner seals."""
    attempt = lab.open()
    head = lab.change(f"crafted-{attempt}")
    out = lab.push_receipt_bytes(attempt, lab.seal(lab.good_doc(attempt, head)), head)
    assert out.returncode == 0, out.stderr
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head


# --- stale, swapped and mis-bound receipts -----------------------------------------------

def test_the_incident_stale_receipt_after_failover_is_rejected(lab: Lab) -> None:
    """Model A scores, the attempt fails over to model B, the retry pushes A's receipt."""
    attempt = lab.open(model="model-a")
    head = lab.change(f"incident-{attempt}")
    stale = lab.record(attempt, head)
    assert lab.append(attempt, "failover", model_id="model-b", note="model-a offline").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    out = lab.push_review(attempt, stale)
    assert_refused(lab, before, out, "GATE-BIND-MODEL", "GATE-BIND-LEDGER")
    assert "field=model_id" in out.output
    fresh = lab.push_review(attempt, lab.record(attempt, head))
    assert fresh.ok, fresh.output


# --- replays ----------------------------------------------------------------------------

def test_receipt_replayed_after_the_ref_moved_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    one = lab.change(f"replay1-{attempt}")
    two = lab.change(f"replay2-{attempt}", {"src/two.py": "2\n"}, start=one)
    r1 = lab.record(attempt, one)
    assert lab.push_review(attempt, r1).ok
    assert lab.push_review(attempt, lab.record(attempt, two)).ok
    before = lab.snapshot()
    # The client's own lease refuses to send it; a raw push reaches the gate.
    assert not lab.push_review(attempt, r1).ok
    out = lab.push_receipt_bytes(attempt, r1.read_bytes(), one)
    assert_refused(lab, before, out, "GATE-BIND-OLD-COMMIT")


# --- verdicts and reasons through a push ----------------------------------------------

def test_a_fail_verdict_from_the_runner_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    path = lab.record(victim["attempt"], victim["head"],
                      output=json.dumps({"verdict": "fail", "reasons": ["breaks the build"]}).encode())
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(victim["attempt"], path), "GATE-VERDICT-FAIL")


# --- seals, and the receipt commit's shape -----------------------------------------------

def test_a_substituted_payload_under_a_valid_seal_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    build, codes = SEAL_ATTACKS["substitution"]
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], build(lab, victim["doc"]), victim["head"]),
                   *codes)


def test_receipt_commit_of_the_wrong_shape_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], mode="120000")
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


# --- missing pieces and ledger states -------------------------------------------------------

def test_review_ref_without_a_receipt_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    out = lab.server.push(f"{victim['head']}:{REVIEW_PREFIX}{victim['attempt']}", pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-RECEIPT-MISSING")


# --- who may push the reserved namespaces ---------------------------------------------------

def test_only_the_runner_may_push_a_review_even_with_a_valid_receipt(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], pusher=AGENT_USER)
    assert_refused(lab, before, out, "GATE-REVIEW-PUSHER")


def test_runner_cannot_launder_an_agent_frozen_write_through_a_review_ref(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"launder-{attempt}", {"ci/deploy.yml": "deploy: skip-review\n"})
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert_refused(lab, before, out, "GATE-FROZEN-PATH")


