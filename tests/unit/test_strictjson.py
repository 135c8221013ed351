"""Strict JSON: the traps json.loads lets through are rejected."""

from __future__ import annotations

import pytest

from gatecore import strictjson
from gatecore.errors import GateError


@pytest.mark.parametrize("text", [
    b'{"a":1,"a":2}',
    b'{"a":NaN}', b'{"a":Infinity}', b'{"a":-Infinity}',
    b'{"a":1.5}', b'{"a":1e3}', b'{"a":1e400}',
    b'{"a":123456789012345678901234567890}',
    b'\xef\xbb\xbf{"a":1}',
    b'{"a":"\xff"}',
    b'{"a":"\\ud800"}',
    b"[" * 40 + b"]" * 40,
    b"[" * 100000,
    b"",
    b"{",
])
def test_rejected(text: bytes) -> None:
    with pytest.raises(GateError):
        strictjson.loads(text)


def test_oversize_names_the_callers_area() -> None:
    big = b" " * (strictjson.MAX_DOCUMENT_BYTES + 1)
    for kwargs, code in (({"code": "GATE-LEDGER-RECORD"}, "GATE-LEDGER-RECORD"),
                         ({"code": "GATE-APPROVAL-MALFORMED"}, "GATE-APPROVAL-MALFORMED"),
                         ({"too_large": "GATE-RECEIPT-TOO-LARGE"}, "GATE-RECEIPT-TOO-LARGE")):
        with pytest.raises(GateError) as exc:
            strictjson.loads(big, **kwargs)
        assert exc.value.code == code and "cap" in exc.value.detail


def test_accepted() -> None:
    assert strictjson.loads(b'{"a":[1,"x",true,null,{"b":-3}]}') == {"a": [1, "x", True, None, {"b": -3}]}


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    assert strictjson.loads(b'{"a":"' + b"[" * 100 + b'"}') == {"a": "[" * 100}


def test_dumps_is_deterministic() -> None:
    assert strictjson.dumps({"b": 1, "a": "\u00e9"}) == '{"a":"\u00e9","b":1}'.encode()
