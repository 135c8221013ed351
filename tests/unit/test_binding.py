"""The seed's decision table, row by row, and each offline attack of the brief as its own test."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gatecore import selftest as scenarios
from gatecore.checks.binding import judge_receipt
from gatecore.selftest import ATTACKS, DECISION_TABLE, KEYRING_ATTACKS, NOW, Kit


@pytest.fixture(scope="module")
def kit() -> Kit:
    return Kit()


@pytest.mark.parametrize("row", DECISION_TABLE, ids=[r.observed for r in DECISION_TABLE])
def test_decision_table_row(kit: Kit, row: scenarios.TableRow) -> None:
    decision, naive = scenarios.run_row(kit, row)
    assert decision.accepted == (row.bound == "accept")
    assert set(decision.fields) == set(row.fields)
    if row.naive != "depends on script":
        assert naive == (row.naive == "accept")


def test_only_the_last_row_merges() -> None:
    assert [r.bound for r in DECISION_TABLE].count("accept") == 1
    assert DECISION_TABLE[-1].bound == "accept"


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_is_rejected_with_its_code(kit: Kit, attack: scenarios.Attack) -> None:
    data, expected = attack.build(kit)
    decision = judge_receipt(data, expected, kit.keyring, NOW)
    assert not decision.accepted
    assert set(attack.codes) <= set(decision.codes), decision.failures


@pytest.mark.parametrize("name,codes,build", KEYRING_ATTACKS, ids=[a[0] for a in KEYRING_ATTACKS])
def test_keyring_attack_is_rejected(kit: Kit, name: str, codes: tuple[str, ...], build) -> None:  # type: ignore[no-untyped-def]
    data, ring = build(kit)
    decision = judge_receipt(data, kit.expected, ring, NOW)
    assert not decision.accepted
    assert set(codes) <= set(decision.codes)


def test_fresh_receipt_accepted_with_hmac_key(kit: Kit) -> None:
    assert judge_receipt(kit.seal(kit.doc(), kit.hmac_key), kit.expected, kit.keyring, NOW).accepted


def test_every_failure_is_listed_not_just_the_first(kit: Kit) -> None:
    observed = replace(kit.expected, model_id="model-b", workspace_generation="gen-9", diff_sha256="9" * 64)
    decision = judge_receipt(kit.seal(kit.doc(verdict="fail")), observed, kit.keyring, NOW)
    assert set(decision.fields) == {"model_id", "workspace_generation", "diff_sha256", "verdict"}


def test_a_bad_seal_never_accepts_even_if_every_field_matches(kit: Kit) -> None:
    ring = {}  # no keys at all
    decision = judge_receipt(kit.fresh(), kit.expected, ring, NOW)
    assert not decision.accepted
    assert decision.codes == ["GATE-SEAL-UNKNOWN-KEY"]


def test_expected_fields_missing_from_receipt_are_named(kit: Kit) -> None:
    observed = replace(kit.expected, ledger_record="7" * 64)
    decision = judge_receipt(kit.fresh(), observed, kit.keyring, NOW)
    assert decision.fields == ["ledger_record"]


def test_selftest_passes() -> None:
    from gatecore.selftest import run

    text, ok = run()
    assert ok, text
    assert "PASS" in text
