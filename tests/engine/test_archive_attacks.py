"""The archive's side of the gate, decided in process: an attempt's refs go only once the archive on
the server holds its id, its generation and every receipt it accepted; the archive only grows,
one line of commits, no foreign trees; only trusted pushers write it; and what it holds stays
refused (a reused generation, a re-opened attempt id, a replayed receipt).

The archive is built here as `gate ledger archive` builds it (`gatecore.records.archive.entries_for`,
`ledgerarchive.receipt_payloads`) and pushed to the engine in the command's two pushes.
`tests/push/test_archive.py` runs the command itself through real pushes (its retries, locks and
pushes git applies in part), with one real push of each family below.
"""

from __future__ import annotations

import pytest
from support.cases.archive import (  # noqa: F401
    refs_of,
    reviewed_and_closed,
    test_deleting_an_attempts_refs_without_archiving_it_is_refused,
)
from support.engine import EngineLab
from support.gitutil import git
from support.lab import AGENT_PUSH, RUNNER, now
from support.verdicts import assert_refused, refused

from gatecore.adapters.gitrepo import GitRepo
from gatecore.git.objects import Objects
from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from gatecore.records import archive
from gatecore.trusted.ledgerarchive import receipt_payloads


def _entries(lab: EngineLab, attempt: str, receipts: bool = True) -> dict[str, bytes]:
    state = lab.state(attempt)
    assert state is not None
    objects = Objects(GitRepo.at(lab.work.path))
    payloads = receipt_payloads(objects, lab.server.ref(RECEIPTS_PREFIX + attempt)) if receipts else ()
    return archive.entries_for(attempt, state.workspace_generation, payloads)


def _archive_commit(lab: EngineLab, entries: dict[str, bytes], parents: list[str] | None = None) -> str:
    """An archive commit on the server's archive holding `entries` more (or on `parents`)."""
    repo = GitRepo.at(lab.work.path)
    tip = lab.server.ref(archive.ARCHIVE_REF)
    base = None if tip is None else Objects(repo).commit(tip).tree_id
    tree = repo.write_nested_tree(base, entries)
    return repo.write_commit(tree, ([] if tip is None else [tip]) if parents is None else parents, "archive\n", "t",
                             "t@example.com", now())


def _fold(lab: EngineLab, attempt: str) -> None:
    """`gate ledger archive` for one attempt: the archive, then the deletions."""
    assert lab.server.push(f"{_archive_commit(lab, _entries(lab, attempt))}:{archive.ARCHIVE_REF}",
                           pusher_env=RUNNER).ok
    out = lab.server.push(*(f":{ref}" for ref in sorted(refs_of(lab, attempt))), pusher_env=RUNNER, extra=("--atomic",))
    assert out.ok, out.output


def test_a_folded_attempt_stays_refused(lab: EngineLab) -> None:
    """Its generation, its id and its receipt, whatever ledger later carries the id."""
    attempt, head, receipt_file = reviewed_and_closed(lab)
    receipt = receipt_file.read_bytes()
    state = lab.state(attempt)
    assert state is not None
    open_one = lab.open()  # not closed: stays
    _fold(lab, attempt)
    assert not refs_of(lab, attempt) and lab.ledger_tip(open_one) is not None
    before = lab.snapshot()
    again = lab.fresh()
    lab.append(again, "opened", remote=False, **lab.open_fields(again, state.workspace_generation))
    assert_refused(lab, before, lab.server.push(*lab.open_refspecs(again), pusher_env=RUNNER),
                   "GATE-LEDGER-GENERATION-REUSED")
    reopened = lab.append(attempt, "opened", **lab.open_fields(attempt, f"g-new-{attempt}"))
    assert reopened is not None and refused(reopened, "GATE-LEDGER-SEQUENCE") and "archived" in reopened.output
    assert lab.snapshot() == before
    out = lab.push_receipt_bytes(attempt, receipt, head)
    assert not out.ok and lab.snapshot() == before


def test_refs_go_only_once_the_archive_on_the_server_holds_every_receipt(lab: EngineLab) -> None:
    """An archive that leaves out a receipt may land (an entry only refuses more); the attempt's
    refs may not go with it, nor after it."""
    attempt, _head, _receipt = reviewed_and_closed(lab)
    commit = _archive_commit(lab, _entries(lab, attempt, receipts=False))
    deletions = [f":{ref}" for ref in sorted(refs_of(lab, attempt))]
    before = lab.snapshot()
    out = lab.server.push(f"{commit}:{archive.ARCHIVE_REF}", *deletions, pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-LEDGER-DELETE")
    assert lab.server.push(f"{commit}:{archive.ARCHIVE_REF}", pusher_env=RUNNER).ok
    before = lab.snapshot()
    out = lab.server.push(*deletions, pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-LEDGER-DELETE", "GATE-REVIEW-RECEIPT-REF")
    assert "every receipt" in out.output


def test_an_open_attempt_cannot_be_archived(lab: EngineLab) -> None:
    attempt = lab.open()
    assert lab.server.push(f"{_archive_commit(lab, _entries(lab, attempt))}:{archive.ARCHIVE_REF}",
                           pusher_env=RUNNER).ok
    before = lab.snapshot()
    out = lab.server.push(f":{ATTEMPTS_PREFIX}{attempt}", pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-LEDGER-DELETE")
    assert "only closed" in out.output


def _archived_tip(lab: EngineLab) -> str:
    """The server's archive, holding at least one folded attempt."""
    if lab.server.ref(archive.ARCHIVE_REF) is None:
        _fold(lab, reviewed_and_closed(lab)[0])
    tip = lab.server.ref(archive.ARCHIVE_REF)
    assert tip is not None
    return tip


@pytest.mark.parametrize("change", ["remove-an-entry", "rewind", "replace-with-a-new-root"])
def test_the_archive_only_grows(lab: EngineLab, change: str) -> None:
    _fold(lab, reviewed_and_closed(lab)[0])  # two commits at least
    tip = _archived_tip(lab)
    if change == "rewind":
        target = git(lab.work.path, "rev-parse", f"{tip}~1").stdout.strip()
    elif change == "replace-with-a-new-root":
        target = git(lab.work.path, "commit-tree", f"{tip}^{{tree}}", "-m", "same entries, no history").stdout.strip()
    else:
        entries = git(lab.work.path, "ls-tree", "-r", "--name-only", tip).stdout.split()
        index = {"GIT_INDEX_FILE": str(lab.root / "archive-index")}
        git(lab.work.path, "read-tree", tip, env=index)
        git(lab.work.path, "rm", "-q", "--cached", entries[0], env=index)
        tree = git(lab.work.path, "write-tree", env=index).stdout.strip()
        target = git(lab.work.path, "commit-tree", tree, "-p", tip, "-m", "drop").stdout.strip()
    before = lab.snapshot()
    out = lab.server.push(f"+{target}:{archive.ARCHIVE_REF}", pusher_env=RUNNER)
    assert not out.ok and lab.snapshot() == before
    assert refused(out, "GATE-LEDGER-ARCHIVE") or refused(out, "GATE-LEDGER-REWRITE"), out.output


def test_an_archive_commit_with_a_second_parent_is_refused(lab: EngineLab) -> None:
    tip = _archived_tip(lab)
    commit = _archive_commit(lab, archive.entries_for("a-merge", "g-merge", []), parents=[tip, lab.base])
    before = lab.snapshot()
    out = lab.server.push(f"{commit}:{archive.ARCHIVE_REF}", pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-LEDGER-ARCHIVE")
    assert "only parent" in out.output


@pytest.mark.parametrize("where", ["root", "shard"])
def test_an_archive_tree_with_an_empty_foreign_directory_is_refused(lab: EngineLab, where: str) -> None:
    tip = _archived_tip(lab)
    empty = git(lab.work.path, "mktree", input=b"").stdout.strip()
    root = git(lab.work.path, "ls-tree", f"{tip}^{{tree}}").stdout
    if where == "root":
        listing = root + f"040000 tree {empty}\tforeign\n"
    else:
        line = next(x for x in root.splitlines() if x.endswith("\tattempts"))
        shards = git(lab.work.path, "ls-tree", line.split()[2]).stdout
        free = next(f"{i:02x}" for i in range(256) if f"\t{i:02x}\n" not in shards)
        sub = shards + f"040000 tree {empty}\t{free}\n"
        new_sub = git(lab.work.path, "mktree", input=sub.encode()).stdout.strip()
        listing = root.replace(line, f"040000 tree {new_sub}\tattempts")
    tree = git(lab.work.path, "mktree", input=listing.encode()).stdout.strip()
    commit = git(lab.work.path, "commit-tree", tree, "-p", tip, "-m", "foreign").stdout.strip()
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(f"{commit}:{archive.ARCHIVE_REF}", pusher_env=RUNNER),
                   "GATE-LEDGER-ARCHIVE")


def test_an_agent_pushing_the_archive_is_told_the_ledgers_code(lab: EngineLab) -> None:
    commit = _archive_commit(lab, archive.entries_for("a-agent", "g-agent", []))
    before = lab.snapshot()
    out = lab.server.push(f"{commit}:{archive.ARCHIVE_REF}", pusher_env=AGENT_PUSH)
    assert_refused(lab, before, out, "GATE-LEDGER-PUSHER")
    assert not refused(out, "GATE-REVIEW-PUSHER")


def test_an_archived_attempts_review_ref_goes_whatever_it_holds(lab: EngineLab) -> None:
    """Once the archive holds the attempt, its review ref may be deleted even where no receipt put
    it (a push git applied in part left it there)."""
    attempt, head, _receipt = reviewed_and_closed(lab)
    assert lab.server.push(f"{_archive_commit(lab, _entries(lab, attempt))}:{archive.ARCHIVE_REF}",
                           pusher_env=RUNNER).ok
    lab.server.set_ref(REVIEW_PREFIX + attempt, lab.change(f"moved-{attempt}", start=head))
    out = lab.server.push(*(f":{ref}" for ref in sorted(refs_of(lab, attempt))), pusher_env=RUNNER, extra=("--atomic",))
    assert out.ok, out.output
    assert not refs_of(lab, attempt)
