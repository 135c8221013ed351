"""Property tests: no mutation of a valid receipt envelope is ever accepted unless it is,
byte for byte in everything the seal covers, the valid receipt itself."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatecore.checks.binding import judge_receipt
from gatecore.errors import GateError
from gatecore.records.receipt import BOUND
from gatecore.selftest import NOW, Kit
from gatecore.signing import envelope

KIT = Kit()
GOOD = KIT.fresh()
GOOD_ENV = envelope.parse(GOOD)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _same_sealed_content(data: bytes) -> bool:
    try:
        env = envelope.parse(data)
    except GateError:
        return False
    return env == GOOD_ENV


@SETTINGS
@given(st.integers(0, len(GOOD) - 1), st.integers(0, 255))
def test_any_byte_change_is_rejected_unless_only_formatting_changed(pos: int, value: int) -> None:
    data = bytearray(GOOD)
    data[pos] = value
    decision = judge_receipt(bytes(data), KIT.expected, KIT.keyring, NOW)
    if decision.accepted:
        assert _same_sealed_content(bytes(data))


@SETTINGS
@given(st.integers(0, len(GOOD)), st.binary(min_size=1, max_size=8))
def test_insertions_are_rejected_unless_only_formatting_changed(pos: int, extra: bytes) -> None:
    data = GOOD[:pos] + extra + GOOD[pos:]
    decision = judge_receipt(data, KIT.expected, KIT.keyring, NOW)
    if decision.accepted:
        assert _same_sealed_content(data)


@SETTINGS
@given(st.integers(1, len(GOOD)))
def test_truncations_are_rejected(cut: int) -> None:
    decision = judge_receipt(GOOD[:-cut], KIT.expected, KIT.keyring, NOW)
    if decision.accepted:  # only the trailing newline is formatting
        assert _same_sealed_content(GOOD[:-cut])


@SETTINGS
@given(st.sampled_from(sorted(set(BOUND) - {"ledger_record"})), json_values)
def test_resealed_bound_field_change_is_rejected(field: str, value: Any) -> None:
    doc = KIT.doc()
    if doc.get(field) == value and type(doc.get(field)) is type(value):
        return
    doc[field] = value
    try:
        data = KIT.seal(doc)
    except ValueError:  # NaN and friends cannot even be serialised by the gate's writer
        data = KIT.seal_bytes(json.dumps(doc).encode())
    assert not judge_receipt(data, KIT.expected, KIT.keyring, NOW).accepted


@SETTINGS
@given(st.sampled_from(["verdict", "reasons", "issued_at", "expires_at", "version"]), json_values)
def test_resealed_other_field_change_accepts_only_valid_values(field: str, value: Any) -> None:
    doc = KIT.doc()
    doc[field] = value
    try:
        data = KIT.seal(doc)
    except ValueError:
        data = KIT.seal_bytes(json.dumps(doc).encode())
    decision = judge_receipt(data, KIT.expected, KIT.keyring, NOW)
    if decision.accepted:
        if field == "verdict":
            assert value == "pass"
        elif field == "reasons":
            assert isinstance(value, list) and value and all(isinstance(r, str) and r.strip() for r in value)
        elif field == "version":
            assert value == 1 and type(value) is int
        else:
            assert type(value) is int


@SETTINGS
@given(st.dictionaries(st.text(max_size=12), json_values, max_size=12))
def test_arbitrary_payloads_are_rejected(doc: dict[str, Any]) -> None:
    data = KIT.seal_bytes(json.dumps(doc).encode())
    assert not judge_receipt(data, KIT.expected, KIT.keyring, NOW).accepted


@SETTINGS
@given(st.binary(max_size=512))
def test_arbitrary_bytes_are_rejected(data: bytes) -> None:
    assert not judge_receipt(data, KIT.expected, KIT.keyring, NOW).accepted
