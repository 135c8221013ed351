"""The ledger lifecycle through real pushes: close, archive, and what the archive keeps refused.

`gate ledger archive` folds closed attempts into `refs/gate/archive` and deletes their refs in
one atomic push; the gate lets the refs go only when the archive holds the attempt's id, its
generation and every receipt it ever accepted. Afterwards a reused generation, a re-opened
attempt id and a replayed receipt are still refused, and clients fetch no more refs than
before the attempts existed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.gitutil import gate, git
from support.lab import RUNNER, Lab, now
from support.verdicts import refused

from gatecore import archive
from gatecore.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
from gatecore.trusted.ledgerarchive import archive_closed


@pytest.fixture(scope="module")
def alab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("archive"))


def _reviewed_and_closed(lab: Lab) -> tuple[str, str, Path]:
    """An attempt with an accepted review, then closed: (attempt, head, its receipt file)."""
    attempt = lab.open(lab.fresh())
    head = lab.change(f"arch-{attempt}")
    receipt = lab.record(attempt, head)
    assert lab.push_review(attempt, receipt).ok
    assert lab.append(attempt, "closed", note="merged").ok  # type: ignore[union-attr]
    return attempt, head, receipt


def _refs_of(lab: Lab, attempt: str) -> set[str]:
    state = lab.state(attempt)
    names = {ATTEMPTS_PREFIX + attempt, RECEIPTS_PREFIX + attempt, REVIEW_PREFIX + attempt}
    if state is not None:
        names.add(generation_ref(state.workspace_generation))
    return names & set(lab.snapshot())


def test_archiving_folds_closed_attempts_away_and_keeps_them_refused(alab: Lab) -> None:
    attempt, head, receipt = _reviewed_and_closed(alab)
    state = alab.state(attempt)
    assert state is not None
    open_one = alab.open()  # not closed: stays
    assert len(_refs_of(alab, attempt)) == 4
    done = archive_closed(alab.work.path, alab.remote(), 0, now(), env=RUNNER)
    assert attempt in done.attempts and open_one not in done.attempts and not done.refused
    assert _refs_of(alab, attempt) == set()
    assert alab.ledger_tip(open_one) is not None
    # The generation, the attempt id and the receipt stay refused.
    again = alab.fresh()
    alab.append(again, "opened", remote=False, **alab.open_fields(again, state.workspace_generation))
    out = alab.server.push(*alab.open_refspecs(again), pusher_env=RUNNER)
    assert refused(out, "GATE-LEDGER-GENERATION-REUSED"), out.stderr
    reopened = alab.append(attempt, "opened", **alab.open_fields(attempt, f"g-new-{attempt}"))
    assert reopened is not None and refused(reopened, "GATE-LEDGER-SEQUENCE") and "archived" in reopened.output
    before = alab.snapshot()
    out2 = alab.push_receipt_bytes(attempt, receipt.read_bytes(), head)
    assert out2.returncode != 0 and alab.snapshot() == before


def test_a_replayed_receipt_is_refused_after_archiving_even_for_a_reused_attempt_id(tmp_path: Path) -> None:
    """The receipt's payload is in the archive: whatever ledger later carries its attempt id."""
    lab = Lab(tmp_path / "replay", key_ids=("orch-1", "runner-1"))
    attempt, _head, receipt = _reviewed_and_closed(lab)
    assert archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER).attempts == [attempt]
    tip = lab.server.ref(archive.ARCHIVE_REF)
    assert tip is not None
    payload = json.loads(receipt.read_bytes())["payload"]
    import base64
    import hashlib

    digest = hashlib.sha256(base64.b64decode(payload)).hexdigest()
    listed = git(lab.server.bare, "ls-tree", "-r", "--name-only", tip).stdout.split()
    assert archive.entry_path("receipts", digest) in listed


@pytest.mark.parametrize("what", ["ledger", "claim", "receipts"])
def test_deleting_an_attempts_refs_without_archiving_it_is_refused(alab: Lab, what: str) -> None:
    attempt, _head, _receipt = _reviewed_and_closed(alab)
    state = alab.state(attempt)
    assert state is not None
    ref = {"ledger": ATTEMPTS_PREFIX + attempt, "claim": generation_ref(state.workspace_generation),
           "receipts": RECEIPTS_PREFIX + attempt}[what]
    before = alab.snapshot()
    out = alab.server.push(f":{ref}", pusher_env=RUNNER)
    assert out.returncode != 0 and alab.snapshot() == before
    assert refused(out, "GATE-LEDGER-DELETE") or refused(out, "GATE-REVIEW-RECEIPT-REF"), out.stderr


def test_an_archive_that_leaves_out_a_receipt_is_refused(alab: Lab) -> None:
    attempt, _head, _receipt = _reviewed_and_closed(alab)
    state = alab.state(attempt)
    assert state is not None
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.objects import Objects

    repo = GitRepo.at(alab.work.path)
    git(alab.work.path, "fetch", "-q", alab.remote(), "+refs/gate/*:refs/gate/*")
    tip = alab.server.ref(archive.ARCHIVE_REF)
    base = None if tip is None else Objects(repo).commit(tip).tree_id
    tree = repo.write_nested_tree(base, archive.entries_for(attempt, state.workspace_generation, []))
    commit = repo.write_commit(tree, [] if tip is None else [tip], "partial\n", "t", "t@example.com", now())
    before = alab.snapshot()
    out = alab.server.push(f"{commit}:{archive.ARCHIVE_REF}", f":{ATTEMPTS_PREFIX}{attempt}",
                           f":{RECEIPTS_PREFIX}{attempt}", f":{generation_ref(state.workspace_generation)}",
                           pusher_env=RUNNER, extra=("--atomic",))
    assert refused(out, "GATE-LEDGER-ARCHIVE") and "every receipt" in out.stderr, out.stderr
    assert alab.snapshot() == before


def test_an_open_attempt_cannot_be_archived(alab: Lab) -> None:
    attempt = alab.open()
    state = alab.state(attempt)
    assert state is not None
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.objects import Objects

    repo = GitRepo.at(alab.work.path)
    tip = alab.server.ref(archive.ARCHIVE_REF)
    git(alab.work.path, "fetch", "-q", alab.remote(), "+refs/gate/*:refs/gate/*")
    base = None if tip is None else Objects(repo).commit(tip).tree_id
    tree = repo.write_nested_tree(base, archive.entries_for(attempt, state.workspace_generation, []))
    commit = repo.write_commit(tree, [] if tip is None else [tip], "open\n", "t", "t@example.com", now())
    before = alab.snapshot()
    out = alab.server.push(f"{commit}:{archive.ARCHIVE_REF}", f":{ATTEMPTS_PREFIX}{attempt}",
                           f":{generation_ref(state.workspace_generation)}", pusher_env=RUNNER, extra=("--atomic",))
    assert refused(out, "GATE-LEDGER-ARCHIVE") and "only closed" in out.stderr, out.stderr
    assert alab.snapshot() == before


@pytest.mark.parametrize("change", ["remove-an-entry", "rewind"])
def test_the_archive_only_grows(alab: Lab, change: str) -> None:
    _reviewed_and_closed(alab)
    assert archive_closed(alab.work.path, alab.remote(), 0, now(), env=RUNNER).attempts
    tip = alab.server.ref(archive.ARCHIVE_REF)
    assert tip is not None
    git(alab.work.path, "fetch", "-q", alab.remote(), f"+{archive.ARCHIVE_REF}:{archive.ARCHIVE_REF}")
    if change == "rewind":
        target, force = git(alab.work.path, "rev-parse", f"{tip}~1").stdout.strip(), "+"
        if not target:
            pytest.skip("one archive commit only")
    else:
        entries = git(alab.work.path, "ls-tree", "-r", "--name-only", tip).stdout.split()
        git(alab.work.path, "read-tree", tip)
        git(alab.work.path, "rm", "-q", "--cached", entries[0])
        tree = git(alab.work.path, "write-tree").stdout.strip()
        git(alab.work.path, "read-tree", "HEAD")
        target = git(alab.work.path, "commit-tree", tree, "-p", tip, "-m", "drop").stdout.strip()
        force = ""
    before = alab.snapshot()
    out = alab.server.push(f"{force}{target}:{archive.ARCHIVE_REF}", pusher_env=RUNNER)
    assert out.returncode != 0 and alab.snapshot() == before
    assert refused(out, "GATE-LEDGER-ARCHIVE") or refused(out, "GATE-LEDGER-REWRITE"), out.stderr


def test_the_cli_archives_by_age(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "cli", key_ids=("orch-1", "runner-1"))
    attempt, _head, _receipt = _reviewed_and_closed(lab)
    out = gate("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than", "30d",
               env=RUNNER)
    assert out.returncode == 0 and "0 attempt" in out.stdout, out.stdout + out.stderr
    assert lab.ledger_tip(attempt) is not None
    out = gate("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than", "0",
               env=RUNNER)
    assert out.returncode == 0 and "1 attempt" in out.stdout, out.stdout + out.stderr
    assert lab.ledger_tip(attempt) is None
    assert gate("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than",
                "soon").returncode == 1


def test_the_refs_a_client_fetches_do_not_grow_with_archived_attempts(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "fetch", key_ids=("orch-1", "runner-1"))
    default = set(git(lab.work.path, "ls-remote", "--heads", "--tags", lab.remote()).stdout.split("\n"))
    for _ in range(3):
        _reviewed_and_closed(lab)
    assert archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER).attempts
    after = set(git(lab.work.path, "ls-remote", "--heads", "--tags", lab.remote()).stdout.split("\n"))
    assert after == default  # review refs are gone with their attempts
    gate_refs = [r for r in git(lab.work.path, "ls-remote", lab.remote(), "refs/gate/*").stdout.splitlines()]
    assert len(gate_refs) == 1 and gate_refs[0].endswith(archive.ARCHIVE_REF)
