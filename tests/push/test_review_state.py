"""Review refs that cannot be fooled: the server's own ref state, the base the server chooses,
replay by content.

A push states an old value for every ref it updates; `git push` states what the server
advertised, a hostile client states what it likes (`support.rawpush` speaks the protocol to
the real `git receive-pack`). The gate judges every reserved ref by the server's own value,
refuses a stated old value that differs (`GATE-REF-STALE`), judges a review against the
ledger the server already holds, and requires the reviewed diff to start where the server's
target branch meets the change.

Here, one real push of each family (a stale stated old value, atomic and not; a receipt for part
of the change) and what needs git itself: the runner's own choice of base, a push git applies in
part. Every other attack (stated values of each ref, a review with a ledger record in one push,
replays by re-encoding, empty diffs, the target branch) runs in process in
`tests/engine/test_receipt_attacks.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cases.receipts import test_a_receipt_for_part_of_the_change_is_refused  # noqa: F401
from support.gitutil import git
from support.lab import RUNNER, Lab
from support.rawpush import raw_push
from support.verdicts import refused

from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX

ZERO = "0" * 40


def _chain(lab: Lab, attempt: str) -> list[str]:
    """The attempt's ledger commits on the server, oldest first."""
    tip = lab.ledger_tip(attempt)
    assert tip is not None
    return list(reversed(git(lab.work.path, "rev-list", tip).stdout.split()))


def _stale_receipt(lab: Lab) -> tuple[str, str, str, list[str]]:
    """An attempt scored by model-a, then failed over to model-b on the server:
    (attempt, reviewed head, receipt commit with model-a's receipt, ledger commits)."""
    attempt = lab.open()
    head = lab.change(f"stated-{attempt}")
    receipt = lab.record(attempt, head)
    assert lab.append(attempt, "failover", model_id="model-b").ok  # type: ignore[union-attr]
    git(lab.work.path, "fetch", "-q", lab.remote(), f"+{ATTEMPTS_PREFIX}{attempt}:{ATTEMPTS_PREFIX}{attempt}")
    return attempt, head, lab.receipt_commit(attempt, receipt.read_bytes()), _chain(lab, attempt)


# --- stated old values ---------------------------------------------------------------------------

@pytest.mark.parametrize("atomic", [False, True], ids=["non-atomic", "atomic"])
def test_the_incident_through_stated_old_values_is_refused(lab: Lab, atomic: bool) -> None:
    """The ledger stated as new, where model-a was on record (every stated claim: in process)."""
    attempt, head, receipt_commit, chain = _stale_receipt(lab)
    ledger = (ZERO, chain[1])  # model-a was on record at chain[1]
    before = lab.snapshot()
    out = raw_push(lab.work.path, lab.server.bare, [
        (*ledger, ATTEMPTS_PREFIX + attempt),
        (ZERO, head, REVIEW_PREFIX + attempt),
        (ZERO, receipt_commit, RECEIPTS_PREFIX + attempt),
    ], RUNNER, atomic=atomic)
    assert not out.ok(REVIEW_PREFIX + attempt), out.status
    assert "GATE-REF-STALE" in out.stderr, out.stderr
    assert lab.snapshot() == before


# --- the base the server chooses -----------------------------------------------------------------

def test_the_runner_takes_the_base_from_the_server_not_from_the_clone(lab: Lab) -> None:
    """Without --base the runner reviews from the merge base with the server's target branch:
    moving the clone's main changes nothing."""
    from support.lab import VERDICT, now

    from gatecore.trusted.runner import record_review

    attempt = lab.open()
    first = lab.change(f"auto1-{attempt}", {"src/a1.py": "1\n"})
    second = lab.change(f"auto2-{attempt}", {"src/a2.py": "2\n"}, start=first)
    lab.work.git("update-ref", "refs/heads/main", first)  # the agent's move
    try:
        path = record_review(lab.work.path, attempt, None, second, VERDICT, lab.keys["runner-1"],
                             lab.receipts / f"auto-{attempt}.json", lab.remote(), None, 3600, now(), env=RUNNER)
    finally:
        lab.work.git("update-ref", "refs/heads/main", lab.base)
    assert lab.receipt_doc(path)["base_commit"] == lab.base
    result = lab.push_review(attempt, path)
    assert result.ok, result.output


def test_the_docs_no_longer_call_an_empty_diff_receipt_valid() -> None:
    from support.gitutil import ROOT

    for doc in ("security.md", "ci.md"):
        text = (ROOT / "docs" / doc).read_text()
        assert "empty-diff receipt is valid" not in text and "is a valid receipt" not in text, doc


def test_a_push_file_for_review_push_must_exist(tmp_path: Path, lab: Lab) -> None:
    from support.gitutil import gate

    out = gate("review", "push", "--repo", str(lab.work.path), "--attempt", lab.fresh(), "--receipt",
               str(tmp_path / "absent.json"), "--remote", lab.remote(), env=RUNNER)
    assert out.returncode == 1 and "GATE-RECEIPT-MISSING" in out.stderr


# --- a push git applies in part -----------------------------------------------------------------

def test_a_review_ref_that_landed_without_its_receipt_never_takes_that_receipt_again(tmp_path: Path) -> None:
    """A receipt used twice through a ref update git did not apply: the receipt ref is locked (a
    stale .lock) and the push has no --atomic: the hook accepts both refs, git lands the review ref
    only, and the receipt's use is recorded nowhere. The review ref then stays where it is
    (GATE-REVIEW-UNRECORDED): deleting it and pushing the same receipt again, the way to use it
    twice, is refused; closing and archiving the attempt is the way out."""
    from support.lab import now

    from gatecore.trusted.ledgerarchive import archive_closed

    lab = Lab(tmp_path / "unrecorded", key_ids=("orch-1", "runner-1"))
    attempt = lab.open()
    head = lab.change(f"unrecorded-{attempt}")
    receipt = lab.record(attempt, head)
    commit = lab.receipt_commit(attempt, receipt.read_bytes())
    lock = lab.server.bare / f"{RECEIPTS_PREFIX}{attempt}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    out = lab.server.push(f"{head}:{REVIEW_PREFIX}{attempt}", f"{commit}:{RECEIPTS_PREFIX}{attempt}",
                          pusher_env=RUNNER)
    lock.unlink()
    assert out.returncode != 0 and lab.server.ref(REVIEW_PREFIX + attempt) == head, out.stdout + out.stderr
    assert lab.server.ref(RECEIPTS_PREFIX + attempt) is None
    before = lab.snapshot()
    out = lab.server.push(f":{REVIEW_PREFIX}{attempt}", pusher_env=RUNNER)
    assert refused(out, "GATE-REVIEW-UNRECORDED") and lab.snapshot() == before, out.stderr
    out = lab.push_receipt_bytes(attempt, receipt.read_bytes(), head)
    assert out.returncode != 0 and lab.snapshot() == before
    later = lab.change(f"unrecorded-2-{attempt}", start=head)
    result = lab.push_review(attempt, lab.record(attempt, later))
    assert refused(result, "GATE-REVIEW-UNRECORDED") and lab.snapshot() == before, result.output
    assert lab.append(attempt, "closed").ok  # type: ignore[union-attr]
    done = archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)
    assert done.ok and done.attempts == [attempt] and lab.server.ref(REVIEW_PREFIX + attempt) is None, done
