"""The strict schemas of receipts, ledger records and approvals (gatecore.records.schema): each record
type and its member list name the same fields, and no coercion gets a value through."""

from __future__ import annotations

import dataclasses
import re

import pytest

from gatecore.records import approvals, ledger, receipt, schema


@pytest.mark.parametrize("cls,members", [(receipt.Receipt, receipt.MEMBERS), (ledger.AttemptRecord, ledger.MEMBERS),
                                         (approvals.Approval, approvals.MEMBERS)])
def test_each_record_and_its_members_name_the_same_fields(cls: type, members: tuple[schema.Member, ...]) -> None:
    assert {f.name for f in dataclasses.fields(cls)} == {m.name for m in members}


@pytest.mark.parametrize("value,problem", [
    (True, "must be an integer"), (1.0, "must be an integer"), ("1", "must be an integer"), (2, "between"),
])
def test_integers_are_integers(value: object, problem: str) -> None:
    [(name, got)] = schema.read({"n": value}, [schema.Member("n", schema.integer(0, 1))])[1]
    assert name == "n" and problem in got


def test_patterns_match_whole_strings_and_null_is_absent() -> None:
    members = [schema.Member("h", schema.text(3, 3, pattern=re.compile("[a-f]+")))]
    assert schema.read({"h": "abc"}, members)[1] == []
    assert schema.read({"h": "ab\n"}, members)[1]  # a trailing newline is not matched away
    assert schema.read({"h": None}, members)[1] == [("h", "must not be null")]
    assert schema.read({}, members)[1] == [("h", "is required")]
    assert schema.read({"h": "abc", "x": 1}, members)[1] == [("x", "is not a known member")]
    assert schema.read([], members)[1] == [("(document)", "must be a JSON object")]
