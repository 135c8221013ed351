"""Every bound field is bound everywhere a review receipt is bound.

`receipt.BOUND` lists the fields a receipt must agree on with what the gate recomputed or
looked up. Three places bind a review receipt: the runner seals it, the hook judges it at
push time, and `gate attest export` judges it again. This test walks `BOUND` itself: for each
field, the runner's receipt carries it, and a validly sealed receipt that differs in that one
field is refused with the field's own code by the hook (a push to an `EngineServer`) and by the
export (the same receipt commit put on the server's receipt ref behind the gate's back). A field
added to `BOUND` fails here until it has a value below and every place checks it.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.engine import EngineLab
from support.lab import now

from gatecore.git.refs import RECEIPTS_PREFIX, REVIEW_PREFIX
from gatecore.records.receipt import BOUND
from gatecore.signing.keys import ephemeral_pair
from gatecore.trusted.attest import Sources, export

#: For each bound field, another value of the right form (what a wrong receipt says instead).
OTHER: dict[str, Any] = {
    "attempt_id": "someone-else",
    "model_id": "model-b",
    "workspace_generation": "g-other",
    "prompt_sha256": "e" * 64,
    "diff_sha256": "d" * 64,
    "diff_algorithm": "sha256-bytes",
    "repository": "other/repo",
    "ref": REVIEW_PREFIX + "someone-else",
    "old_commit": "c" * 40,
    "base_commit": "9" * 40,
    "new_commit": None,  # the lab's base commit, filled in below
    "new_tree": "f" * 40,
    "object_format": "sha256",
    "ledger_record": "7" * 64,
}


def test_every_bound_field_has_a_wrong_value_to_try() -> None:
    assert list(OTHER) == list(BOUND)


@pytest.mark.parametrize("field", list(BOUND))
def test_a_receipt_wrong_in_one_bound_field_is_refused_by_the_hook_and_by_the_export(lab: EngineLab,
                                                                                     field: str) -> None:
    attempt = lab.open()
    head = lab.change(f"bound-{attempt}")
    doc = lab.good_doc(attempt, head)
    assert set(BOUND) <= set(doc), "the runner seals every bound field"
    wrong = OTHER[field] if field != "new_commit" else lab.base
    assert doc[field] != wrong
    data = lab.seal({**doc, field: wrong})
    code = BOUND[field]

    by_hook = lab.push_receipt_bytes(attempt, data, head)
    assert not by_hook.ok and code in by_hook.codes, by_hook.output

    commit = lab.receipt_commit(attempt, data)
    server = lab.server
    server.set_ref(RECEIPTS_PREFIX + attempt, commit)
    server.set_ref(REVIEW_PREFIX + attempt, head)
    try:
        key, _ = ephemeral_pair("ed25519", "attest-1", "attestation")
        assert server.keyring is not None
        done = export(server.bare, Sources(server.keyring, server.repository_id), key, now())
    finally:
        server.set_ref(RECEIPTS_PREFIX + attempt, None)
        server.set_ref(REVIEW_PREFIX + attempt, None)
    refused = [r for r in done.refused if attempt in r.what]
    assert refused and code in {f.code for r in refused for f in r.failures}, refused
