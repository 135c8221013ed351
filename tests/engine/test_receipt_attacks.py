"""Every attack on review refs and their receipts, decided by the engine in process.

The same attacks as `tests/push/test_review_refs.py` and `test_review_state.py`, each one: stale,
swapped and mis-bound receipts, replays, verdicts and reasons, JSON traps, seals and validity,
receipt commits of the wrong shape, missing pieces and ledger states, who may push, stated old
values, the base the server chooses. The cases are `support.cases.receipts`, collected here with
an `EngineLab` (real objects; `gatecore.reserved.check` and `PushChecker` decide the push), plus
those only a raw push can state. One real push per family stays in `tests/push/`, proving that a
refusal reaches the pusher with its code and moves nothing.
"""

from __future__ import annotations

import pytest
from support.cases.receipts import (  # noqa: F401
    test_a_fail_verdict_from_the_runner_is_rejected,
    test_a_fresh_bound_receipt_is_accepted,
    test_a_huge_receipt_blob_is_rejected_by_size_before_reading,
    test_a_receipt_commit_that_is_a_merge_with_a_foreign_first_parent_is_rejected,
    test_a_receipt_for_part_of_the_change_is_refused,
    test_a_receipt_re_encoded_is_still_the_same_receipt,
    test_a_receipt_ref_moved_by_two_commits_is_rejected,
    test_a_review_and_a_ledger_record_of_one_attempt_in_one_push_are_refused,
    test_agent_pushes_to_the_reserved_namespaces_are_rejected,
    test_an_attempt_record_pushed_as_a_receipt_is_rejected,
    test_an_empty_diff_receipt_is_refused,
    test_diff_changed_after_scoring_is_rejected,
    test_json_traps_in_a_sealed_payload_are_rejected,
    test_only_the_runner_may_push_a_review_even_with_a_valid_receipt,
    test_receipt_commit_of_the_wrong_shape_is_rejected,
    test_receipt_content_attacks_are_rejected,
    test_receipt_for_an_old_commit_of_the_ref_is_rejected,
    test_receipt_for_another_repository_issued_by_its_runner_is_rejected,
    test_receipt_of_a_superseded_attempt_is_rejected,
    test_receipt_ref_without_its_review_ref_is_rejected,
    test_receipt_replayed_after_the_ref_moved_is_rejected,
    test_receipt_replayed_after_the_review_ref_was_deleted_is_rejected,
    test_review_before_a_model_is_on_record_is_rejected,
    test_review_for_an_attempt_without_a_ledger_is_rejected,
    test_review_of_a_closed_attempt_is_rejected,
    test_review_ref_without_a_receipt_is_rejected,
    test_runner_cannot_launder_an_agent_frozen_write_through_a_review_ref,
    test_seal_and_validity_attacks_are_rejected,
    test_the_bare_crafted_receipt_path_accepts_a_good_receipt,
    test_the_incident_stale_receipt_after_failover_is_rejected,
    test_the_target_branch_named_when_the_attempt_opened_decides_the_base,
    test_validly_sealed_receipt_with_one_field_off_is_rejected,
)
from support.engine import EngineLab
from support.gitutil import git
from support.lab import RUNNER
from support.verdicts import assert_refused, codes_of

from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX

ZERO = "0" * 40


# --- stated old values, and a review judged against the ledger the server already holds -------

def _stale_receipt(lab: EngineLab, close: bool = False) -> tuple[str, str, str, list[str]]:
    """An attempt scored by model-a, then failed over to model-b (and closed) on the server:
    (attempt, reviewed head, receipt commit with model-a's receipt, ledger commits oldest first)."""
    attempt = lab.open()
    head = lab.change(f"stated-{attempt}")
    receipt = lab.record(attempt, head)
    assert lab.append(attempt, "failover", model_id="model-b").ok  # type: ignore[union-attr]
    if close:
        assert lab.append(attempt, "closed").ok  # type: ignore[union-attr]
    tip = lab.ledger_tip(attempt)
    assert tip is not None
    chain = list(reversed(git(lab.work.path, "rev-list", tip).stdout.split()))
    return attempt, head, lab.receipt_commit(attempt, receipt.read_bytes()), chain


@pytest.mark.parametrize("claim", ["ledger-as-new", "ledger-from-an-older-record", "closed-attempt"])
def test_the_incident_through_stated_old_values_is_refused(lab: EngineLab, claim: str) -> None:
    attempt, head, receipt_commit, chain = _stale_receipt(lab, close=claim == "closed-attempt")
    opened, selected = chain[0], chain[1]  # model-a was on record at `selected`
    ledger = {"ledger-as-new": (ZERO, selected), "ledger-from-an-older-record": (opened, selected),
              "closed-attempt": (opened, selected)}[claim]
    before = lab.snapshot()
    out = lab.server.raw([(*ledger, ATTEMPTS_PREFIX + attempt), (ZERO, head, REVIEW_PREFIX + attempt),
                          (ZERO, receipt_commit, RECEIPTS_PREFIX + attempt)], RUNNER)
    assert_refused(lab, before, out, "GATE-REF-STALE")


def test_a_stale_old_value_of_the_review_ref_is_refused(lab: EngineLab) -> None:
    attempt = lab.open()
    first = lab.change(f"first-{attempt}")
    assert lab.push_review(attempt, lab.record(attempt, first)).ok
    second = lab.change(f"second-{attempt}", {"src/second.py": "2\n"}, start=first)
    receipt = lab.record(attempt, second, old=ZERO)  # sealed for a create, as a stale runner would
    commit = lab.receipt_commit(attempt, receipt.read_bytes())
    before = lab.snapshot()
    out = lab.server.raw([(ZERO, second, REVIEW_PREFIX + attempt),
                          (before[RECEIPTS_PREFIX + attempt], commit, RECEIPTS_PREFIX + attempt)], RUNNER)
    assert_refused(lab, before, out, "GATE-REF-STALE")


def test_a_receipt_for_an_unrecorded_review_ref_position_is_refused(lab: EngineLab) -> None:
    """The state a half-applied push leaves (the review ref moved, its receipt ref not: made here
    on the server directly, as git leaves it): the ref never moves from there again."""
    attempt = lab.open()
    head = lab.change(f"unrecorded-{attempt}")
    receipt = lab.record(attempt, head)
    lab.server.set_ref(REVIEW_PREFIX + attempt, head)
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f":{REVIEW_PREFIX}{attempt}", pusher_env=RUNNER),
                   "GATE-REVIEW-UNRECORDED")
    out = lab.push_receipt_bytes(attempt, receipt.read_bytes(), head)
    assert not out.ok and codes_of(out) and lab.snapshot() == before
    later = lab.change(f"unrecorded-2-{attempt}", start=head)
    assert_refused(lab, before, lab.push_review(attempt, lab.record(attempt, later)), "GATE-REVIEW-UNRECORDED")
