"""Every attack on the attempt ledger, decided by the engine in process: who writes it,
append-only chains, sealed records in sequence, generation claims, the record commit's shape.

The cases are `support.cases.ledger`, collected here with an `EngineLab` (real objects;
`gatecore.reserved.check` decides). `tests/push/test_ledger.py` keeps one real push per family, and
the opens that race through git's ref transaction."""

from __future__ import annotations

from support.cases.ledger import (  # noqa: F401
    test_a_chain_that_does_not_start_with_opened_is_rejected,
    test_a_ledger_ref_name_that_is_not_an_attempt_id_is_rejected,
    test_a_receipt_pushed_as_a_ledger_record_is_rejected,
    test_a_review_pushed_with_an_invalid_ledger_update_is_rejected,
    test_forged_or_mis_sealed_ledger_records_are_rejected,
    test_generation_reuse_by_a_second_attempt_is_rejected,
    test_generation_reuse_within_one_push_is_rejected,
    test_ledger_commits_of_the_wrong_shape_are_rejected,
    test_ledger_deletion_is_rejected_even_for_the_runner,
    test_ledger_for_another_repository_is_rejected,
    test_ledger_record_for_another_attempt_id_is_rejected,
    test_ledger_record_with_a_bad_seal_is_rejected,
    test_ledger_rewrite_to_a_parallel_chain_is_rejected,
    test_ledger_rollback_is_rejected,
    test_nothing_follows_a_closed_record,
    test_out_of_sequence_ledger_records_are_rejected,
)
