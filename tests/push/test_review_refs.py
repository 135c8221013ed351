"""Review refs through real pushes: one attack of each family on refs/heads/review/runner/* and its
receipt, and the flow that makes every rejection meaningful.

Each test pushes into a bare repository with the gate installed (`support.lab.Lab`), expects
its specific GATE- code (from the gate's own gate-json lines), and checks that a rejection
changed no ref, the ledger included: a refusal reaches the pusher with its code and moves
nothing. The tests are `support.cases.receipts`, whose every case (the fields of the binding,
replays, contents, JSON traps, seals and validity, the receipt commit's shape, missing pieces and
ledger states, who may push) runs in process in `tests/engine/test_receipt_attacks.py`. One lab is
shared by the module; every test uses attempt ids and branches of its own.
"""

from __future__ import annotations

from typing import Any

from support.cases import receipts as cases
from support.cases.receipts import (  # noqa: F401
    test_a_fail_verdict_from_the_runner_is_rejected,
    test_a_fresh_bound_receipt_is_accepted,
    test_receipt_replayed_after_the_ref_moved_is_rejected,
    test_review_ref_without_a_receipt_is_rejected,
    test_runner_cannot_launder_an_agent_frozen_write_through_a_review_ref,
    test_the_bare_crafted_receipt_path_accepts_a_good_receipt,
    test_the_incident_stale_receipt_after_failover_is_rejected,
)
from support.lab import AGENT_USER, Lab


def test_a_substituted_payload_under_a_valid_seal_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    cases.test_seal_and_validity_attacks_are_rejected(lab, victim, "substitution")


def test_a_receipt_commit_holding_a_symlink_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    cases.test_receipt_commit_of_the_wrong_shape_is_rejected(lab, victim, "120000", "receipt.json")


def test_an_agent_may_not_push_a_review_even_with_a_valid_receipt(lab: Lab, victim: dict[str, Any]) -> None:
    cases.test_only_the_runner_may_push_a_review_even_with_a_valid_receipt(lab, victim, AGENT_USER)
