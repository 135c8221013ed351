"""The receipt hook (`gate-review-receipt`) in the trusted side's clone, through the pre-commit
framework and a real push: the runner's own push of a good receipt (pre-commit names one ref, the
hook finds the other) and the incident; the client and the server give the same verdict. Every
other case (a failing verdict, refs pushed by hand, an unknown pusher, a ledger not fetched, a
committed HMAC keyring) runs on git's input against the engine in
`tests/engine/test_receipt_hook_parity.py`."""

from __future__ import annotations

from support.precommit import (
    RECEIPTS,
    REVIEW,
    Review,
    Verdict,
)


def test_parity_review_good_receipt_is_accepted_by_both(fmt_review: Review) -> None:
    """In every repository format: the ledger, the receipt and the review ref carry the
    repository's ids (64 hex digits in SHA-256), written and checked through git."""
    review = fmt_review
    review.open("att-1")  # the ledger pushes go through the receipt hook too
    assert review.server.push("feature", url="origin").returncode == 0
    receipt = review.record("att-1", "receipt.json")
    client, server, output = review.push_review("att-1", receipt)
    assert client == server == Verdict(0, frozenset()), output
    assert review.server.ref(REVIEW + "att-1") == review.head
    # pre-commit named the receipt ref only (the reviewed commit is on the remote already); the hook
    # found the review ref from the receipt and checked both.
    assert f"checked {RECEIPTS}att-1, {REVIEW}att-1;" in output, output
    assert "nothing the server would reject" in output


def test_parity_review_stale_receipt_after_failover_the_incident(review: Review) -> None:
    review.open("att-1", model="model-a")
    stale = review.record("att-1", "receipt.json")
    review.failover("att-1", "model-b")
    client, server, output = review.push_review("att-1", stale)
    assert client == server == Verdict(1, frozenset({"GATE-BIND-MODEL", "GATE-BIND-LEDGER"})), output
    assert "field=model_id" in output
    fresh = review.record("att-1", "receipt-b.json")
    client, server, output = review.push_review("att-1", fresh)
    assert client == server == Verdict(0, frozenset()), output
