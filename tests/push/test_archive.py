"""The ledger lifecycle through real pushes: close, archive, and what the archive keeps refused.

`gate ledger archive` folds closed attempts into `refs/gate/archive` and deletes their refs in
one atomic push; the gate lets the refs go only when the archive holds the attempt's id, its
generation and every receipt it ever accepted. Afterwards a reused generation, a re-opened
attempt id and a replayed receipt are still refused, and clients fetch no more refs than
before the attempts existed.

The gate's side of every rule (refs that go without their archive, archives that shrink, rewind,
fork or hold foreign trees, agents at the archive) runs in process in
`tests/engine/test_archive_attacks.py`; here the command itself, its retries and the pushes git
applies in part, and one real push of each family.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from support.cases import archive as cases
from support.cases.archive import refs_of, reviewed_and_closed
from support.cli import cli
from support.gitutil import git
from support.lab import RUNNER, Lab, now
from support.verdicts import refused

from gatecore.errors import GateError
from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, generation_ref
from gatecore.records import archive
from gatecore.trusted.attempts import ALREADY
from gatecore.trusted.ledgerarchive import archive_closed


@pytest.fixture(scope="module")
def alab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("archive"))


def test_archiving_folds_closed_attempts_away_and_keeps_them_refused(alab: Lab) -> None:
    attempt, head, receipt = reviewed_and_closed(alab)
    state = alab.state(attempt)
    assert state is not None
    open_one = alab.open()  # not closed: stays
    assert len(refs_of(alab, attempt)) == 4
    done = archive_closed(alab.work.path, alab.remote(), 0, now(), env=RUNNER)
    assert attempt in done.attempts and open_one not in done.attempts and not done.refused
    assert refs_of(alab, attempt) == set()
    assert alab.ledger_tip(open_one) is not None
    # The generation, the attempt id and the receipt stay refused.
    again = alab.fresh()
    alab.append(again, "opened", remote=False, **alab.open_fields(again, state.workspace_generation))
    out = alab.server.push(*alab.open_refspecs(again), pusher_env=RUNNER)
    assert refused(out, "GATE-LEDGER-GENERATION-REUSED"), out.stderr
    with pytest.raises(GateError, match="GATE-LEDGER-REWRITE"):  # this clone remembers the ledger: refused here
        alab.append(attempt, "opened", **alab.open_fields(attempt, f"g-new-{attempt}"))
    for held in (f"refs/gate-held/attempts/{attempt}", ATTEMPTS_PREFIX + attempt):  # a clone that never held it
        git(alab.work.path, "update-ref", "-d", held)
    reopened = alab.append(attempt, "opened", **alab.open_fields(attempt, f"g-new-{attempt}"))
    assert reopened is not None and refused(reopened, "GATE-LEDGER-SEQUENCE") and "archived" in reopened.output
    before = alab.snapshot()
    out2 = alab.push_receipt_bytes(attempt, receipt.read_bytes(), head)
    assert out2.returncode != 0 and alab.snapshot() == before


def test_a_replayed_receipt_is_refused_after_archiving_even_for_a_reused_attempt_id(tmp_path: Path) -> None:
    """The receipt's payload is in the archive: whatever ledger later carries its attempt id."""
    lab = Lab(tmp_path / "replay", key_ids=("orch-1", "runner-1"))
    attempt, _head, receipt = reviewed_and_closed(lab)
    assert archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER).attempts == [attempt]
    tip = lab.server.ref(archive.ARCHIVE_REF)
    assert tip is not None
    payload = json.loads(receipt.read_bytes())["payload"]
    import base64
    import hashlib

    digest = hashlib.sha256(base64.b64decode(payload)).hexdigest()
    listed = git(lab.server.bare, "ls-tree", "-r", "--name-only", tip).stdout.split()
    assert archive.entry_path("receipts", digest) in listed


def test_deleting_an_attempts_ledger_without_archiving_it_is_refused(alab: Lab) -> None:
    cases.test_deleting_an_attempts_refs_without_archiving_it_is_refused(alab, "ledger")


def _archive_commit(lab: Lab, entries: dict[str, bytes], parents: list[str] | None = None) -> str:
    """An archive commit on the server's archive holding `entries` more (or on `parents`)."""
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.git.objects import Objects

    repo = GitRepo.at(lab.work.path)
    git(lab.work.path, "fetch", "-q", lab.remote(), "+refs/gate/*:refs/gate/*")
    tip = lab.server.ref(archive.ARCHIVE_REF)
    base = None if tip is None else Objects(repo).commit(tip).tree_id
    tree = repo.write_nested_tree(base, entries)
    return repo.write_commit(tree, ([] if tip is None else [tip]) if parents is None else parents, "archive\n", "t",
                             "t@example.com", now())


def _deletions(lab: Lab, attempt: str) -> list[str]:
    return [f":{ref}" for ref in sorted(refs_of(lab, attempt))]


def _lock(lab: Lab, ref: str) -> Path:
    """A stale lock on `ref` in the server's repository, as a crashed git leaves it: git then
    refuses to update that ref, after the hook accepted the push."""
    lock = lab.server.bare / f"{ref}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    return lock


def _kept(lab: Lab, attempt: str, generation: str) -> None:
    """Nothing of the attempt is lost: its ledger is on the server or the archive holds it, and
    its id and generation cannot open an attempt again."""
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.git.objects import Objects

    tip = lab.server.ref(archive.ARCHIVE_REF)
    git(lab.work.path, "fetch", "-q", lab.remote(), "+refs/gate/*:refs/gate/*")
    held = archive.Archive(Objects(GitRepo.at(lab.work.path)), tip)
    assert lab.ledger_tip(attempt) is not None or (held.attempt(attempt) and held.generation(generation))
    tip = lab.ledger_tip(attempt)
    try:
        again = lab.append(attempt, "opened", **lab.open_fields(attempt, generation))
    except GateError as exc:  # the orchestrator sees the attempt (closed), or the claim, on the server, or (its
        # clone holding the ledger the archive removed from the server) refuses to write that ledger again
        assert exc.code in ("GATE-LEDGER-SEQUENCE", "GATE-LEDGER-GENERATION-REUSED", "GATE-LEDGER-CLOSED",
                            "GATE-LEDGER-REWRITE"), exc
        assert lab.ledger_tip(attempt) == tip
        return
    assert again is not None
    if tip is not None:  # the attempt is on the server as it was: the command says so, pushes nothing
        assert again.ok and again.output == ALREADY and lab.ledger_tip(attempt) == tip, again
    else:
        assert refused(again, "GATE-LEDGER-GENERATION-REUSED"), again


def test_a_non_atomic_archive_push_that_git_half_applies_loses_nothing(tmp_path: Path) -> None:
    """An archive update git did not apply: the archive ref is locked (or a rival archiver moved it): git refuses the
    archive update after the hook accepted the push, and applies the deletions. The gate judges
    every deletion against the archive the server already holds, so the push is refused, and the
    attempt's id and generation stay refused."""
    lab = Lab(tmp_path / "race", key_ids=("orch-1", "runner-1"))
    attempt, _head, receipt = reviewed_and_closed(lab)
    state = lab.state(attempt)
    assert state is not None
    digest = json.loads(receipt.read_bytes())["payload"]
    import base64
    import hashlib

    entries = archive.entries_for(attempt, state.workspace_generation,
                                  [hashlib.sha256(base64.b64decode(digest)).hexdigest()])
    commit = _archive_commit(lab, entries)
    lock = _lock(lab, archive.ARCHIVE_REF)
    out = lab.server.push(f"{commit}:{archive.ARCHIVE_REF}", *_deletions(lab, attempt), pusher_env=RUNNER)
    assert out.returncode != 0
    lock.unlink()
    _kept(lab, attempt, state.workspace_generation)


def test_archiving_under_a_locked_archive_deletes_nothing_and_the_next_run_finishes(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "locked", key_ids=("orch-1", "runner-1"))
    attempt, _head, _receipt = reviewed_and_closed(lab)
    state = lab.state(attempt)
    assert state is not None
    before = lab.snapshot()
    lock = _lock(lab, archive.ARCHIVE_REF)
    done = archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)
    assert not done.ok and not done.attempts and lab.snapshot() == before, done
    lock.unlink()
    # The deletions are refused next (a ledger ref locked): the archive has landed, the refs stay.
    lock = _lock(lab, ATTEMPTS_PREFIX + attempt)
    done = archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)
    assert not done.ok and attempt in " ".join(done.skipped) and lab.ledger_tip(attempt) is not None, done
    assert lab.server.ref(archive.ARCHIVE_REF) is not None
    _kept(lab, attempt, state.workspace_generation)
    lock.unlink()
    done = archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)
    assert done.ok and done.attempts == [attempt] and done.pushes == 1, done  # the archive held it: deletions only
    assert refs_of(lab, attempt) == set()
    again = archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)
    assert again.ok and not again.attempts and again.pushes == 0, again  # a re-run changes nothing


def test_refs_a_half_applied_deletion_left_behind_go_on_the_next_run(tmp_path: Path) -> None:
    """Deletions pushed without --atomic, the generation claim locked: the rest goes, the claim
    stays; the next run removes it (its generation is in the archive)."""
    lab = Lab(tmp_path / "leftover", key_ids=("orch-1", "runner-1"))
    attempt, _head, _receipt = reviewed_and_closed(lab)
    state = lab.state(attempt)
    assert state is not None
    claim = generation_ref(state.workspace_generation)
    lock = _lock(lab, ATTEMPTS_PREFIX + attempt)
    archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)  # archives; deletions refused
    lock.unlink()
    lock = _lock(lab, claim)
    out = lab.server.push(*_deletions(lab, attempt), pusher_env=RUNNER)
    assert out.returncode != 0 and refs_of(lab, attempt) == {claim}, out.stdout + out.stderr
    lock.unlink()
    done = archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)
    assert done.ok and refs_of(lab, attempt) == set() and lab.server.ref(claim) is None, done
    _kept(lab, attempt, state.workspace_generation)


def _rotate_attempt_key(lab: Lab) -> None:
    """docs/ci.md's rotation: a new attempt key is installed and the old one revoked."""
    from support.lab import key_material

    text, keys = key_material(lab.root / "keys2", ("orch-revoked",))
    new_entry = text.replace('id = "orch-revoked"', 'id = "orch-2"').replace("revoked = true", "revoked = false")
    keys["orch-2"] = replace(keys["orch-revoked"], id="orch-2")
    lab.keys.update(keys)
    blocks = lab.keyring_text.split("[[key]]")
    revoked = ["[[key]]" + b.replace("revoked = false", "revoked = true") if 'id = "orch-1"' in b
               else ("[[key]]" + b if b.strip() else b) for b in blocks]
    (lab.root / "keyring.toml").write_text("".join(revoked) + "\n" + new_entry)
    lab.server.install("--keyring", str(lab.root / "keyring.toml"))


def test_archiving_goes_on_after_the_attempt_key_is_rotated(tmp_path: Path) -> None:
    """A revoked key: attempts closed, then their key revoked, as docs/ci.md says: the archive
    folds them (their records were verified when pushed). An attempt still open when the key was
    revoked gives no more reviews, but can be closed with the new key, and archived."""
    lab = Lab(tmp_path / "rotate", key_ids=("orch-1", "runner-1"))
    closed, _head, _receipt = reviewed_and_closed(lab)
    still_open = lab.open(lab.fresh())
    _rotate_attempt_key(lab)
    head = lab.change(f"late-{still_open}")
    out = lab.push_review(still_open, lab.record(still_open, head))
    assert refused(out, "GATE-SEAL-KEY-REVOKED"), out.output
    closing = lab.append(still_open, "closed", key="orch-2", note="key rotated")
    assert closing is not None and closing.ok, closing
    done = archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER)
    assert done.ok and sorted(done.attempts) == sorted([closed, still_open]), done
    assert refs_of(lab, closed) == set() and refs_of(lab, still_open) == set()


def test_an_attempt_archiving_cannot_fold_is_reported_and_the_rest_goes_on(tmp_path: Path) -> None:
    """A malformed receipt chain: one that history left malformed (a merge, here written into
    the server's repository behind the gate's back, as before the gate checked every receipt
    commit) stops neither the batch nor the run: the attempt is skipped and named."""
    lab = Lab(tmp_path / "skip", key_ids=("orch-1", "runner-1"))
    good = [reviewed_and_closed(lab)[0] for _ in range(3)]
    bad, _head, _receipt = reviewed_and_closed(lab)
    tip = lab.server.ref(RECEIPTS_PREFIX + bad)
    assert tip is not None
    merge = git(lab.server.bare, "commit-tree", f"{tip}^{{tree}}", "-p", tip, "-p", lab.base, "-m", "merge").stdout
    git(lab.server.bare, "update-ref", RECEIPTS_PREFIX + bad, merge.strip())
    out = cli("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than", "0",
               "--batch", "2", env=RUNNER)
    assert out.returncode == 1 and f"skipped {bad}: GATE-REVIEW-RECEIPT-REF" in out.stderr, out.stdout + out.stderr
    assert "archived 3 attempt(s)" in out.stdout
    assert all(refs_of(lab, a) == set() for a in good) and lab.ledger_tip(bad) is not None


def test_the_archive_only_grows(alab: Lab) -> None:
    """An entry removed from the archive (a rewind, a new root: in process)."""
    reviewed_and_closed(alab)
    assert archive_closed(alab.work.path, alab.remote(), 0, now(), env=RUNNER).attempts
    tip = alab.server.ref(archive.ARCHIVE_REF)
    assert tip is not None
    git(alab.work.path, "fetch", "-q", alab.remote(), f"+{archive.ARCHIVE_REF}:{archive.ARCHIVE_REF}")
    entries = git(alab.work.path, "ls-tree", "-r", "--name-only", tip).stdout.split()
    git(alab.work.path, "read-tree", tip)
    git(alab.work.path, "rm", "-q", "--cached", entries[0])
    tree = git(alab.work.path, "write-tree").stdout.strip()
    git(alab.work.path, "read-tree", "HEAD")
    target = git(alab.work.path, "commit-tree", tree, "-p", tip, "-m", "drop").stdout.strip()
    before = alab.snapshot()
    out = alab.server.push(f"{target}:{archive.ARCHIVE_REF}", pusher_env=RUNNER)
    assert out.returncode != 0 and alab.snapshot() == before
    assert refused(out, "GATE-LEDGER-ARCHIVE") or refused(out, "GATE-LEDGER-REWRITE"), out.stderr


def test_the_cli_archives_by_age(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "cli", key_ids=("orch-1", "runner-1"))
    attempt, _head, _receipt = reviewed_and_closed(lab)
    out = cli("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than", "30d",
               env=RUNNER)
    assert out.returncode == 0 and "0 attempt" in out.stdout, out.stdout + out.stderr
    assert lab.ledger_tip(attempt) is not None
    out = cli("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than", "0",
               "--dry-run", env=RUNNER)
    assert out.returncode == 0 and out.stdout == "would archive 1 attempt(s); pushed nothing (--dry-run)\n", out.stdout
    assert lab.ledger_tip(attempt) is not None
    out = cli("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than", "0",
               env=RUNNER)
    assert out.returncode == 0 and "1 attempt" in out.stdout, out.stdout + out.stderr
    assert lab.ledger_tip(attempt) is None
    assert cli("ledger", "archive", "--repo", str(lab.work.path), "--remote", lab.remote(), "--older-than",
                "soon").returncode == 1


def test_the_refs_a_client_fetches_do_not_grow_with_archived_attempts(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "fetch", key_ids=("orch-1", "runner-1"))
    default = set(git(lab.work.path, "ls-remote", "--heads", "--tags", lab.remote()).stdout.split("\n"))
    for _ in range(3):
        reviewed_and_closed(lab)
    assert archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER).attempts
    after = set(git(lab.work.path, "ls-remote", "--heads", "--tags", lab.remote()).stdout.split("\n"))
    assert after == default  # review refs are gone with their attempts
    gate_refs = [r for r in git(lab.work.path, "ls-remote", lab.remote(), "refs/gate/*").stdout.splitlines()]
    assert len(gate_refs) == 1 and gate_refs[0].endswith(archive.ARCHIVE_REF)
