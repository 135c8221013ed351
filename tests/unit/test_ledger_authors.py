"""Who wrote an attempt's change, on record: the opened record's `author_model`, `author_vendor` and
`initiator` (the evidence reviewer independence reads), read by `gatecore.records.schema` like every
record member."""

from __future__ import annotations

from typing import Any

import pytest

from gatecore.errors import GateError
from gatecore.records.ledger import apply, make_record, open_record, parse_record, record_digest
from gatecore.signing.keys import ephemeral_pair

OPENED = {"version": 1, "attempt_id": "a1", "seq": 0, "kind": "opened", "repository": "demo/repo", "time": 1,
          "workspace": "ws", "workspace_generation": "g1", "prompt_sha256": "2" * 64}
NEXT = {"version": 1, "attempt_id": "a1", "seq": 1, "kind": "model-selected", "repository": "demo/repo", "time": 2,
        "prev": "3" * 64, "model_id": "gpt-5"}


def problems(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return parse_record(doc)[1]


def test_the_opened_record_carries_the_author_and_the_state_keeps_it() -> None:
    rec, found = parse_record({**OPENED, "author_model": "anthropic/claude-sonnet-4.5", "author_vendor": "anthropic",
                               "initiator": "Hana Ito <hana@example.com>"})
    assert rec is not None and not found
    state, failures = apply(None, rec, "4" * 64)
    assert state is not None and not failures
    assert (state.author_model, state.author_vendor, state.initiator) == (
        "anthropic/claude-sonnet-4.5", "anthropic", "Hana Ito <hana@example.com>")
    old, _ = parse_record(OPENED)  # a record from before: no author, still a record
    assert old is not None and apply(None, old, "4" * 64)[0].author_model is None  # type: ignore[union-attr]


@pytest.mark.parametrize("doc,member", [
    ({**OPENED, "author_vendor": "anthropic"}, "record"),  # a vendor of no model
    ({**OPENED, "author_model": "claude sonnet"}, "author_model"),
    ({**OPENED, "author_model": "x", "author_vendor": "Anthropic"}, "author_vendor"),
    ({**OPENED, "author_model": "x", "author_vendor": ""}, "author_vendor"),
    ({**OPENED, "initiator": "hana\nroot"}, "initiator"),
    ({**OPENED, "initiator": "\u200b"}, "initiator"),
    ({**OPENED, "initiator": ["hana"]}, "initiator"),
    ({**NEXT, "author_model": "gpt-5"}, "record"),  # only the opened record says who wrote the change
    ({**NEXT, "initiator": "hana"}, "record"),
])
def test_a_malformed_author_is_refused_by_member(doc: dict[str, Any], member: str) -> None:
    assert member in [m for m, _ in problems(doc)], problems(doc)


def test_the_orchestrator_seals_what_the_gate_will_read() -> None:
    key, pub = ephemeral_pair("ed25519", "orch-1", "attempt")
    data = make_record(key, None, attempt_id="a1", kind="opened", repository="demo/repo", now=1, workspace="ws",
                       workspace_generation="g1", prompt_sha256="2" * 64, author_model="gpt-5",
                       author_vendor="openai", initiator="hana")
    rec, failures = open_record(data, {pub.id: pub}, 2)
    assert rec is not None and not failures and (rec.author_model, rec.initiator) == ("gpt-5", "hana")
    assert record_digest(data)
    with pytest.raises(GateError) as err:
        make_record(key, None, attempt_id="a1", kind="opened", repository="demo/repo", now=1, workspace="ws",
                    workspace_generation="g1", prompt_sha256="2" * 64, author_vendor="openai")
    assert err.value.code == "GATE-INPUT-ARGUMENT" and "author_vendor goes with the author_model" in err.value.detail
