"""The archive's cases both tiers share: an attempt reviewed and closed, the refs it holds on the
server, and its refs deleted without an archive (in process: `tests/engine/test_archive_attacks.py`;
through a real push, with `gate ledger archive` itself: `tests/push/test_archive.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref

from ..lab import RUNNER, Lab
from ..verdicts import refused


def reviewed_and_closed(lab: Lab) -> tuple[str, str, Path]:
    """An attempt with an accepted review, then closed: (attempt, head, its receipt file)."""
    attempt = lab.open(lab.fresh())
    head = lab.change(f"arch-{attempt}")
    receipt = lab.record(attempt, head)
    assert lab.push_review(attempt, receipt).ok
    assert lab.append(attempt, "closed", note="merged").ok  # type: ignore[union-attr]
    return attempt, head, receipt


def refs_of(lab: Lab, attempt: str) -> set[str]:
    """The attempt's ledger, claim, receipt and review refs the server holds."""
    state = lab.state(attempt)
    names = {ATTEMPTS_PREFIX + attempt, RECEIPTS_PREFIX + attempt, REVIEW_PREFIX + attempt}
    if state is not None:
        names.add(generation_ref(state.workspace_generation))
    return names & set(lab.snapshot())


@pytest.mark.parametrize("what", ["ledger", "claim", "receipts"])
def test_deleting_an_attempts_refs_without_archiving_it_is_refused(lab: Lab, what: str) -> None:
    attempt, _head, _receipt = reviewed_and_closed(lab)
    state = lab.state(attempt)
    assert state is not None
    ref = {"ledger": ATTEMPTS_PREFIX + attempt, "claim": generation_ref(state.workspace_generation),
           "receipts": RECEIPTS_PREFIX + attempt}[what]
    before = lab.snapshot()
    out = lab.server.push(f":{ref}", pusher_env=RUNNER)
    assert out.returncode != 0 and lab.snapshot() == before
    assert refused(out, "GATE-LEDGER-DELETE") or refused(out, "GATE-REVIEW-RECEIPT-REF"), out.stderr
