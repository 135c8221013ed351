"""`gate ledger archive`: fold closed attempts into `refs/gate/archive` and remove their refs.

A team that runs agents all day opens thousands of attempts a week; each leaves its ledger
ref, its generation claim, its receipt ref and its review ref behind. This trusted command
takes the attempts that are closed and older than a cutoff, adds their id, generation and
every receipt's sealed payload to the archive (`gatecore.archive`), and deletes their refs
in the same atomic push; the gate checks the archive holds all of it before it lets a
single ref go (`gatecore.reserved.archive`). Batches keep each push well inside the hook's
deadline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import archive, ledger
from ..adapters import gitcmd
from ..adapters.gitrepo import GitRepo
from ..envelope import payload_digest
from ..errors import GateError
from ..objects import Objects, single_file
from ..refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
from .attempts import LEDGER_EMAIL, LEDGER_NAME

BATCH = 200


@dataclass
class Archived:
    attempts: list[str] = field(default_factory=list)
    pushes: int = 0
    refused: list[str] = field(default_factory=list)  # the server's output of a refused batch


def _receipt_payloads(objects: Objects, tip: str | None) -> list[str]:
    out = []
    current = tip
    while current is not None:
        info = objects.commit(current)
        data = single_file(objects, info.tree_id, ledger.RECEIPT_FILE, "GATE-REVIEW-RECEIPT-REF")
        d = payload_digest(data)
        if d is None:
            raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt commit {current[:12]} holds no envelope")
        out.append(d)
        current = info.parent_ids[0] if info.parent_ids else None
        if len(out) > ledger.MAX_CHAIN:
            raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt history longer than {ledger.MAX_CHAIN}")
    return out


def archive_closed(repo_path: Path, remote: str, older_than: int, now: int, env: gitcmd.Env = None,
                   batch: int = BATCH, dry_run: bool = False) -> Archived:
    """Archive every attempt closed at least `older_than` seconds ago, `batch` attempts per push."""
    if batch < 1:
        raise GateError("GATE-INPUT-ARGUMENT", "the batch size is at least 1")
    remote_refs = gitcmd.ls_remote(repo_path, remote, "refs/gate/*", f"{REVIEW_PREFIX}*", env=env)
    gitcmd.run_git(["fetch", "--quiet", "--no-tags", remote, "+refs/gate/*:refs/gate/*"], cwd=repo_path,
                   code="GATE-LEDGER-UNREADABLE", env=env)
    repo = GitRepo.at(repo_path)
    objects = Objects(repo)
    cutoff = now - older_than
    due: list[tuple[str, ledger.AttemptState]] = []
    for name, tip in sorted(remote_refs.items()):
        if not name.startswith(ATTEMPTS_PREFIX):
            continue
        attempt = name[len(ATTEMPTS_PREFIX):]
        state = ledger.read_state(objects, tip, None, now, attempt)
        if state.closed and state.updated <= cutoff:
            due.append((attempt, state))
    result = Archived()
    archive_tip = remote_refs.get(archive.ARCHIVE_REF)
    for start in range(0, len(due), batch):
        group = due[start:start + batch]
        entries: dict[str, bytes] = {}
        deletions: list[str] = []
        for attempt, state in group:
            receipts = _receipt_payloads(objects, remote_refs.get(RECEIPTS_PREFIX + attempt))
            entries.update(archive.entries_for(attempt, state.workspace_generation, receipts))
            for ref in (ATTEMPTS_PREFIX + attempt, generation_ref(state.workspace_generation),
                        RECEIPTS_PREFIX + attempt, REVIEW_PREFIX + attempt):
                if ref in remote_refs:
                    deletions.append(ref)
        base_tree = None if archive_tip is None else objects.commit(archive_tip).tree_id
        tree = repo.write_nested_tree(base_tree, entries)
        message = f"gate ledger archive: {len(group)} closed attempt(s)\n"
        commit = repo.write_commit(tree, [] if archive_tip is None else [archive_tip], message, LEDGER_NAME,
                                   LEDGER_EMAIL, now)
        if dry_run:
            result.attempts += [a for a, _ in group]
            continue
        out = gitcmd.push(repo_path, remote, f"{commit}:{archive.ARCHIVE_REF}", *(f":{ref}" for ref in deletions),
                          atomic=True, env=env)
        result.pushes += 1
        if not out.ok:
            result.refused.append(out.output)
            break
        archive_tip = commit
        result.attempts += [a for a, _ in group]
        for ref in deletions:
            if ref.startswith("refs/gate/"):
                gitcmd.delete_ref(repo_path, ref)
    return result
