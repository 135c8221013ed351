"""`gate ledger archive`: fold closed attempts into `refs/gate/archive` and remove their refs.

A team that runs agents all day opens thousands of attempts a week; each leaves its ledger
ref, its generation claim, its receipt ref and its review ref behind. This trusted command
takes the attempts that are closed and older than a cutoff and, batch by batch:

1. adds their id, generation and every receipt's sealed payload to the archive
   (`gatecore.records.archive`): one push of `refs/gate/archive`, one new commit on the server's;
2. once the server holds that archive, deletes their refs in a second push.

The gate lets a ref go only when the archive *on the server* already holds what it kept
refused (`gatecore.reserved.archiverefs`), so whatever git applies of either push - a ref locked,
a rival archiver, a network error - nothing is lost: at worst refs stay until the next run.
Every step is idempotent: a run after a run that landed (in full or in part) adds no entry
twice, deletes what is left, and exits 0 when there is nothing more to do. Refs an earlier
run left behind (a receipt, review or claim ref of an attempt already archived) go too.

An attempt the command cannot fold (an unreadable chain, a receipt history it cannot read,
deletions the server refuses) is skipped and reported, and the rest goes on. Closed chains
are read without their seals: the server verified each record when it was pushed, and a key
retired since must not keep an attempt's refs forever. (Where the forge holds the ledger no hook
verified anything: an agent's unsealed "closed" record gets an open attempt archived, which the
check still refuses for its seal; the clone that archives keeps its memory of each ledger,
`refs/gate-held/attempts/<id>`, so that no ledger put back afterwards is taken for its own.)
Batches keep each push well inside the hook's deadline; a rival archiver's push is answered by
rebuilding on its archive.

With a ledger remote (`--ledger-remote`, a hosted forge's ledger repository: docs/forges.md)
every `refs/gate/*` ref is read from and pushed to it, and only the review refs
(`refs/heads/review/runner/*`) are read from and deleted on the remote, after the ledger's refs
of the same attempts: a review ref left without its receipts fails the forge's check.
"""

from __future__ import annotations

from pathlib import Path

from ..adapters import gitcmd
from ..adapters.gitrepo import GitRepo
from ..checks.binding import open_commit, receipt_chain
from ..errors import GateError
from ..git.objects import Objects
from ..git.refs import ATTEMPTS_PREFIX, GENERATIONS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
from ..records import archive, ledger
from ..valueclass import field, valueclass
from .attempts import LEDGER_EMAIL, LEDGER_NAME, ledger_of, open_clone

BATCH = 200
MAX_BATCH = 5000
RIVAL_RETRIES = 8  # rebuilds of one batch on a rival archiver's archive before reporting it


@valueclass
class Archived:
    attempts: list[str] = field(default_factory=list)  # archived and removed (or, dry run: would be)
    pushes: int = 0
    skipped: list[str] = field(default_factory=list)  # "attempt: code: why" for each attempt left as it was
    #: (what the refused push was for, git's output of it) for each push the server refused
    refused: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.skipped and not self.refused


@valueclass(frozen=True)
class Due:
    attempt: str
    generation: str
    receipts: tuple[str, ...]  # sealed-payload digests of its receipt history

    def entries(self) -> dict[str, bytes]:
        return archive.entries_for(self.attempt, self.generation, self.receipts)

    def refs(self) -> tuple[str, ...]:
        return (ATTEMPTS_PREFIX + self.attempt, generation_ref(self.generation), RECEIPTS_PREFIX + self.attempt,
                REVIEW_PREFIX + self.attempt)


def receipt_payloads(objects: Objects, tip: str | None) -> tuple[str, ...]:
    """The sealed-payload digests of a receipt chain, newest first (`binding.receipt_chain`)."""
    out = []
    for commit in receipt_chain(objects, tip):
        d = open_commit(objects, commit).payload_digest
        if d is None:
            raise GateError("GATE-REVIEW-RECEIPT-REF", f"receipt commit {commit[:12]} holds no envelope")
        out.append(d)
    return tuple(out)


class _Run:
    """One `gate ledger archive` run against one remote (`ledger`: the ledger's, where it is another)."""

    def __init__(self, repo_path: Path, remote: str, now: int, env: gitcmd.Env, result: Archived,
                 ledger: str | None = None) -> None:
        self.path, self.remote, self.now, self.env, self.result = repo_path, remote, now, env, result
        self.ledger = ledger or remote
        self.refs: dict[str, str] = {}

    def fetch(self) -> None:
        """The reserved refs now (names from ls-remote; objects fetched into the clone): `refs/gate/*`
        from the ledger's remote, the review refs from the remote."""
        if self.ledger == self.remote:
            self.refs = gitcmd.ls_remote(self.path, self.remote, "refs/gate/*", f"{REVIEW_PREFIX}*", env=self.env)
        else:
            self.refs = {**gitcmd.ls_remote(self.path, self.ledger, "refs/gate/*", env=self.env),
                         **gitcmd.ls_remote(self.path, self.remote, f"{REVIEW_PREFIX}*", env=self.env)}
        gitcmd.run_git(["fetch", "--quiet", "--no-tags", self.ledger, "+refs/gate/*:refs/gate/*"], cwd=self.path,
                       code="GATE-LEDGER-UNREADABLE", env=self.env, transport=True)
        self.repo = GitRepo.at(self.path)
        self.objects = Objects(self.repo)

    def archive(self) -> archive.Archive:
        return archive.Archive(self.objects, self.refs.get(archive.ARCHIVE_REF))

    def skip(self, attempt: str, code: str, detail: str) -> None:
        self.result.skipped.append(f"{attempt}: {code}: {detail}")

    def due(self, cutoff: int) -> list[Due]:
        out = []
        for name, tip in sorted(self.refs.items()):
            if not name.startswith(ATTEMPTS_PREFIX):
                continue
            attempt = name[len(ATTEMPTS_PREFIX):]
            try:
                state = ledger.read_state(self.objects, tip, None, self.now, attempt)
                if not state.closed or state.updated > cutoff:
                    continue
                receipts = receipt_payloads(self.objects, self.refs.get(RECEIPTS_PREFIX + attempt))
            except GateError as exc:
                self.skip(attempt, exc.code, exc.detail)
                continue
            out.append(Due(attempt, state.workspace_generation, receipts))
        return out

    def push_archive(self, group: list[Due]) -> bool:
        """Make the server's archive hold every entry of `group` (True: it does)."""
        for _ in range(RIVAL_RETRIES):
            held = self.archive()
            missing = {path: data for d in group for path, data in d.entries().items()
                       if not held.holds(*_kind_and_digest(path))}
            if not missing:
                return True
            tip = self.refs.get(archive.ARCHIVE_REF)
            base_tree = None if tip is None else self.objects.commit(tip).tree_id
            tree = self.repo.write_nested_tree(base_tree, missing)
            commit = self.repo.write_commit(tree, [] if tip is None else [tip],
                                            f"gate ledger archive: {len(group)} closed attempt(s)\n", LEDGER_NAME,
                                            LEDGER_EMAIL, self.now)
            out = gitcmd.push(self.path, self.ledger, f"{commit}:{archive.ARCHIVE_REF}",
                              lease=f"{archive.ARCHIVE_REF}:{tip or ''}", env=self.env)
            self.result.pushes += 1
            self.fetch()
            if out.ok or self.refs.get(archive.ARCHIVE_REF) == commit:
                continue  # landed (even if the answer was lost): the loop finds nothing missing
            if self.refs.get(archive.ARCHIVE_REF) == tip:
                # refused, and not because a rival moved it
                self.result.refused.append((f"the archive of {len(group)} attempt(s) on {archive.ARCHIVE_REF}",
                                            out.output))
                return False
        self.result.refused.append((f"the archive of {len(group)} attempt(s) on {archive.ARCHIVE_REF}",
                                    f"{archive.ARCHIVE_REF} kept moving under {RIVAL_RETRIES} rebuilds; run again"))
        return False

    def leftovers(self, group: list[Due]) -> list[str]:
        """Refs the server still has of `group`, and of attempts archived before whose ledger is gone."""
        names = [r for d in group for r in d.refs() if r in self.refs]
        held = self.archive()
        for name in sorted(self.refs):
            if name.startswith((RECEIPTS_PREFIX, REVIEW_PREFIX)):
                attempt = name[len(RECEIPTS_PREFIX if name.startswith(RECEIPTS_PREFIX) else REVIEW_PREFIX):]
                orphan = ATTEMPTS_PREFIX + attempt not in self.refs and held.attempt(attempt)
            elif name.startswith(GENERATIONS_PREFIX):
                orphan = held.holds("generations", archive.claim_digest(name))
            else:
                continue
            if orphan and name not in names:
                names.append(name)
        return names

    def delete(self, names: list[str], owner: str) -> bool:
        """Delete `names` (refs of `owner`, for the report); True when none of them is left. With a
        ledger remote, the ledger's refs there first, then the review refs on the remote."""
        for _ in range(2):  # once more after a rival's deletions changed what is there
            left = [n for n in names if n in self.refs]
            if not left:
                return True
            ok, outputs = True, []
            for where, these in self._where(left):
                out = gitcmd.push(self.path, where, *(f":{n}" for n in these), atomic=True, env=self.env)
                self.result.pushes += 1
                outputs.append(out.output)
                if not out.ok:
                    ok = False
                    break
                for n in these:  # (the clone's memory of each ledger, refs/gate-held/, stays: `sync_ledger`)
                    if n.startswith("refs/gate/"):
                        gitcmd.delete_ref(self.path, n)
            self.fetch()
            if ok:
                return True
            last = outputs[-1]
        self.result.refused.append((f"the deletion of the refs of {owner}", last))
        return False


    def _where(self, names: list[str]) -> list[tuple[str, list[str]]]:
        """(the remote, the refs of `names` deleted there), in the order deleted: one remote, or the
        ledger's refs on its remote first, then the review refs."""
        if self.ledger == self.remote:
            return [(self.remote, names)]
        ledger = [n for n in names if n.startswith("refs/gate/")]
        review = [n for n in names if not n.startswith("refs/gate/")]
        return [(where, these) for where, these in ((self.ledger, ledger), (self.remote, review)) if these]


def _kind_and_digest(path: str) -> tuple[str, str]:
    kind, aa, bb, rest = path.split("/")
    return kind, aa + bb + rest


def archive_closed(repo_path: Path, remote: str, older_than: int, now: int, env: gitcmd.Env = None,
                   batch: int = BATCH, dry_run: bool = False, ledger_remote: str | None = None) -> Archived:
    """Archive every attempt closed at least `older_than` seconds ago, `batch` attempts per push (the
    ledger on `ledger_remote` where one is named, the review refs on `remote`)."""
    if not 1 <= batch <= MAX_BATCH:
        raise GateError("GATE-INPUT-ARGUMENT", f"--batch {batch}: the batch size is 1 to {MAX_BATCH}")
    if older_than < 0:
        raise GateError("GATE-INPUT-ARGUMENT", "--older-than is not negative")
    open_clone(repo_path)
    result = Archived()
    run = _Run(repo_path, remote, now, env, result, ledger_of(remote, ledger_remote, "--remote", repo_path))
    run.fetch()
    due = run.due(now - older_than)
    if dry_run:
        result.attempts = [d.attempt for d in due]
        return result
    for start in range(0, len(due), batch):
        group = due[start:start + batch]
        if not run.push_archive(group):
            result.skipped += [f"{d.attempt}: GATE-LEDGER-ARCHIVE: its archive push was refused" for d in group]
            continue
        if run.delete(run.leftovers(group), f"{len(group)} attempt(s)"):
            result.attempts += [d.attempt for d in group]
            continue
        result.refused.pop()  # the batch's deletions were refused: find the attempts that were, one by one
        for d in group:
            if run.delete([r for r in d.refs() if r in run.refs], d.attempt):
                result.attempts.append(d.attempt)
            else:
                result.skipped.append(f"{d.attempt}: GATE-LEDGER-DELETE: the server refused its deletions "
                                      "(see its output)")
    if not due:
        run.delete(run.leftovers([]), "refs left by an earlier run")
    return result
