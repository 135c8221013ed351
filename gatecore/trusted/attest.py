"""`gate attest export`: what the gate accepted, verified again, as sealed in-toto statements.

Reads a repository the gate protects (the server's bare repository, or a clone that fetched
`+refs/gate/*:refs/gate/*`):

* every receipt on `refs/gate/receipts/<attempt>`: the gate accepts a receipt ref only in the
  push that moves the attempt's review ref, with that receipt, so each receipt commit stands
  for one accepted update of `refs/heads/review/runner/<attempt>`;
* every used approval: `refs/gate/approval-uses/<id>`, which the hook creates, pointing at the
  approval's record, when it accepts the push the approval served.

Each is verified again as the gate verified it before a statement is made
(`gatecore.records.attestation`): the seal with the keyring (purpose, revocation), the strict schema,
and for a receipt every bound field against what the repository holds: the ledger record it
names and the chain up to it, the generation claim (or the archive, for an archived attempt
whose refs a clone still holds), the tree-delta digest recomputed from its base, the base an
ancestor of the reviewed commit, the review ref's previous value, the repository id, and a
sealed payload used once; with a policy (the server's, or `--policy`), also the reviewer's
independence of the change's authors (the ledger's and those the reviewed commits show) and
how the runner got the answer (`[review] model_run`), the settings named in the statement. The
judgement is the hook's own, `binding.judge_review`. Checks that depend on the time are judged at the time the record
says it was made (a receipt's `issued_at`, an approval's `created_at`): a receipt expires a
day after it served, its review does not. A revoked key is revoked for everything it sealed:
such records are refused. A record that fails any check is refused with the gate's code and
never exported.

Not checked again, because the state they were judged on has moved: that the base covered the
target branch as the server had it at the push, and that no failover or close had landed
before the push (the gate checked both at push time). Nor can the repository tell a receipt
commit that a push carried below another (the runner pushes one per update, and the gate
judges the tip): such a receipt is exported only if it passes every check above.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec

from .. import __version__, ids
from ..adapters.gitrepo import GitRepo
from ..checks.authorship import review_question
from ..checks.binding import Opened, Update, generation_claim, judge_review, open_commit, receipt_chain
from ..configuration.policy import Policy, RefGlob
from ..errors import GateError
from ..findings import Failure
from ..git.objects import Objects, single_file
from ..git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX, generation_ref
from ..records import approvals, ledger
from ..records.archive import ARCHIVE_REF, Archive
from ..records.attestation import (
    Accepted,
    Record,
    approval_annotations,
    check_key,
    model_annotations,
    opened_annotations,
    receipt_annotations,
    resource_uri,
    review_policy,
    seal_line,
    statement,
)
from ..reserved.approvalrefs import APPROVALS_PREFIX, USES_PREFIX, read_record
from ..signing import envelope
from ..signing.allowedsigners import AllowedSigners
from ..signing.keys import Keyring, SigningKey
from ..valueclass import field, valueclass

_P = ParamSpec("_P")
CONFIG_CODE = "GATE-ATTEST-CONFIG"  # what verifies is missing: the whole export stops, nothing is written


@valueclass(frozen=True, slots=True)
class Sources:
    """What the records are verified with: the server's keyring and repository id, and, for
    approvals, its policy and allowed-signers file."""

    keyring: Keyring | None
    repository_id: str
    policy: Policy | None = None
    signers: AllowedSigners | None = None

    def need_keyring(self) -> Keyring:
        if self.keyring is None:
            raise GateError("GATE-ATTEST-CONFIG", "no keyring to verify receipts with: run the export on the "
                                                  "server's repository, or pass --keyring")
        return self.keyring

    def need_policy(self) -> Policy:
        if self.policy is None:
            raise GateError("GATE-ATTEST-CONFIG", "no policy to verify approvals with ([approvals] approvers, "
                                                  "max_hours): run the export on the server's repository, or pass "
                                                  "--policy")
        return self.policy


@valueclass(frozen=True, slots=True)
class Refusal:
    """A record the gate would refuse today: never exported."""

    what: str
    failures: tuple[Failure, ...]


@valueclass
class Exported:
    lines: list[bytes] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    reviews: int = 0
    approvals: int = 0


def export(repo_path: Path, sources: Sources, key: SigningKey, now: int, ref: RefGlob | None = None,
           since: int | None = None, resource: str | None = None) -> Exported:
    """Every accepted review-ref update and used approval of the repository (those of `ref` and
    made at or after `since`), verified again, as bundle lines sealed with `key`."""
    check_key(key)
    repo = GitRepo.at(repo_path)
    reader = _Reader(repo, Objects(repo), sources, now, ref, since)
    accepted, refused = reader.reviews()
    more, refused_more = reader.approvals()
    accepted += more
    done = Exported(refused=refused + refused_more)
    uri = resource_uri(sources.repository_id, resource)
    for acc in sorted(accepted, key=lambda a: a.time):  # stable: an attempt's receipts stay in chain order
        done.lines.append(seal_line(key, statement(acc, uri, now, __version__)))
        done.reviews += acc.kind == "review"
        done.approvals += acc.kind == "approval"
    return done


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _keyid(data: bytes) -> str:
    return envelope.parse(data).keyid


def _or_failure(kind: str, judge: Callable[_P, Accepted | list[Failure]], *args: _P.args,
                **kwargs: _P.kwargs) -> Accepted | list[Failure]:
    """`judge(...)`, a refusal it raises being this item's failure; a configuration error stops the export."""
    try:
        return judge(*args, **kwargs)
    except GateError as exc:
        if exc.code == CONFIG_CODE:
            raise
        return [Failure(exc.code, kind, exc.detail)]


class _Reader:
    def __init__(self, repo: GitRepo, objects: Objects, sources: Sources, now: int, ref: RefGlob | None,
                 since: int | None) -> None:
        self.repo, self.objects, self.sources, self.now = repo, objects, sources, now
        self.ref, self.since = ref, since
        self.archive = Archive(objects, repo.ref_target(ARCHIVE_REF))

    def _wanted(self, ref: str, when: int | None) -> bool:
        return (self.ref is None or self.ref.matches(ref)) and (self.since is None or when is None
                                                                 or when >= self.since)

    def _refs_under(self, prefix: str) -> list[tuple[str, str]]:
        """(the name after `prefix`, the object it points at) for each ref under `prefix`, by name."""
        tips = self.repo.ref_targets(lambda name: name.startswith(prefix.encode()))
        return [(name.decode("utf-8", "surrogateescape")[len(prefix):], tip) for name, tip in sorted(tips.items())]

    # --- review refs ------------------------------------------------------------------------
    def reviews(self) -> tuple[list[Accepted], list[Refusal]]:
        accepted: list[Accepted] = []
        refused: list[Refusal] = []
        for attempt, tip in self._refs_under(RECEIPTS_PREFIX):
            if not ids.is_attempt_id(attempt):
                refused.append(Refusal(f"receipt ref {attempt!r}", (Failure("GATE-REF-NAME", "ref", "not "
                                                                           "refs/gate/receipts/<attempt-id>"),)))
            elif self._wanted(REVIEW_PREFIX + attempt, None):
                found, bad = self._attempt(attempt, tip)
                accepted += found
                refused += bad
        return accepted, refused

    def _attempt(self, attempt: str, tip: str) -> tuple[list[Accepted], list[Refusal]]:
        try:
            chain = [(commit, open_commit(self.objects, commit)) for commit in receipt_chain(self.objects, tip)]
            chain.reverse()  # oldest first
            ledger_tip = self.repo.ref_target(ATTEMPTS_PREFIX + attempt)
            if ledger_tip is None:
                raise GateError("GATE-LEDGER-MISSING", f"no {ATTEMPTS_PREFIX}{attempt} in this repository (fetch "
                                                       "+refs/gate/*:refs/gate/*)")
            entries = ledger.read_entries(self.objects, ledger_tip, None)
        except GateError as exc:
            return [], [Refusal(f"receipts of attempt {attempt}", (Failure(exc.code, "ref", exc.detail),))]
        accepted: list[Accepted] = []
        refused: list[Refusal] = []
        previous: str | None = None  # the review ref's value after the previous receipt's update
        used: set[str] = set()
        for n, (commit, opened) in enumerate(chain):
            peeked = opened.receipt  # not yet verified: for its time and what it names
            if peeked is None or self._wanted(REVIEW_PREFIX + attempt, peeked.issued_at):
                result = _or_failure("receipt", self._receipt, attempt, commit, opened, entries, previous, used,
                                     last=n == len(chain) - 1)
                if isinstance(result, Accepted):
                    accepted.append(result)
                else:
                    refused.append(Refusal(f"receipt {commit[:12]} of attempt {attempt}", tuple(result)))
            previous = None if peeked is None else peeked.new_commit
            used.add(opened.payload_digest or commit)
        return accepted, refused

    def _receipt(self, attempt: str, commit: str, opened: Opened, entries: list[ledger.ChainEntry],
                 previous: str | None, used: set[str], last: bool) -> Accepted | list[Failure]:
        keyring = self.sources.need_keyring()
        rec = opened.receipt
        at = self.now if rec is None else rec.issued_at  # time-dependent checks: when it was sealed
        failures, sealed = opened.verify(keyring, at)
        if rec is None or not sealed:
            return failures  # what it names is not to be trusted: judged no further
        # The ledger as it stood when the model the receipt names was put on record.
        digests = [ledger.record_digest(e.envelope) for e in entries]
        if rec.ledger_record not in digests:
            return [*failures, Failure("GATE-BIND-LEDGER", "ledger_record", "names no record of the attempt's "
                                                                            "ledger")]
        upto = digests.index(rec.ledger_record)
        state, bad = ledger.fold(entries[:upto + 1], keyring, at, attempt)
        if state is None:
            return [*failures, *bad]
        if state.model_record != rec.ledger_record:
            return [*failures, Failure("GATE-BIND-LEDGER", "ledger_record", "names a record that put no model "
                                                                            "on record")]
        failures = []  # judge_review judges the seal and the times again, with everything else
        if state.repository != self.sources.repository_id:
            failures.append(Failure("GATE-LEDGER-ATTEMPT", "repository", f"the ledger names repository "
                                                                          f"{state.repository!r}"))
        payload = opened.payload_digest
        assert payload is not None  # sealed: an envelope
        failures += self._claim(attempt, state, payload)
        new = rec.new_commit
        if new is None or not self.repo.exists(new) or self.objects.type_of(new) != "commit":
            return [*failures, Failure("GATE-GIT-UNREADABLE", "new_commit", "the reviewed commit is not in this "
                                                                            "repository (not fetched, or pruned "
                                                                            "after its review ref was deleted)")]
        zero = self.objects.zero_id
        allowed = {zero} if previous is None else {zero, previous}  # created, deleted and re-created, or moved
        old = rec.old_commit if rec.old_commit in allowed else (previous or zero)
        assert old is not None
        policy = self.sources.policy
        failures += judge_review(self.objects, opened, state,
                                 Update(self.sources.repository_id, REVIEW_PREFIX + attempt, old, new),
                                 keyring=keyring, at=at, used_before=used.__contains__,
                                 independence=None if policy is None else review_question(policy, state, self.objects,
                                                                                          new),
                                 model_run="any" if policy is None else policy.model_run)
        review = self.repo.ref_target(REVIEW_PREFIX + attempt)
        if last and review is not None and review != new:
            failures.append(Failure("GATE-BIND-NEW-COMMIT", "new_commit", f"the review ref is at {review[:12]}, "
                                                                          "not at its last receipt's commit"))
        if failures:
            return failures
        opened_record, model = entries[0], entries[upto]
        kind = "model-selected" if len(state.models) == 1 else "failover"
        tree = self.objects.commit(new).tree_id
        assert opened.data is not None and opened.envelope is not None
        return Accepted("review", REVIEW_PREFIX + attempt, new, tree, rec.issued_at, policy=review_policy(policy),
                        records=(
            Record("receipt", envelope.PAYLOAD_RECEIPT, _sha256(opened.data), commit, ledger.RECEIPT_FILE,
                   receipt_annotations(rec, opened.envelope.keyid, payload)),
            Record("ledger-opened", envelope.PAYLOAD_ATTEMPT, digests[0], opened_record.commit, ledger.RECORD_FILE,
                   opened_annotations(state, _keyid(opened_record.envelope))),
            Record("ledger-model", envelope.PAYLOAD_ATTEMPT, digests[upto], model.commit, ledger.RECORD_FILE,
                   model_annotations(state, kind, _keyid(model.envelope))),
        ))

    def _claim(self, attempt: str, state: ledger.AttemptState, payload: str) -> list[Failure]:
        """The attempt's generation claim points at its first record; for an attempt archived since
        (a clone may still hold its refs), the archive holds its generation and this receipt."""
        if self.archive.attempt(attempt):
            if self.archive.generation(state.workspace_generation) and self.archive.receipt(payload):
                return []
            return [Failure("GATE-LEDGER-ARCHIVE", "archive", "the attempt is archived, but the archive does not "
                                                              "hold its generation and this receipt")]
        return generation_claim(state, self.repo.ref_target(generation_ref(state.workspace_generation)))

    # --- approvals --------------------------------------------------------------------------
    def approvals(self) -> tuple[list[Accepted], list[Refusal]]:
        accepted: list[Accepted] = []
        refused: list[Refusal] = []
        for aid, record in self._refs_under(USES_PREFIX):
            result = _or_failure("approval", self._approval, aid, record)
            if isinstance(result, Accepted):
                accepted.append(result)
            elif result:
                refused.append(Refusal(f"approval {aid[:16]}", tuple(result)))
        return accepted, refused

    def _approval(self, aid: str, record: str) -> Accepted | list[Failure]:
        """A used approval (empty list: not wanted by --ref/--since)."""
        env = read_record(self.objects, record)
        approval = approvals.parse_payload(env.payload)
        if not self._wanted(approval.ref, approval.created_at):
            return []
        ssh = env.keyid.startswith(approvals.SSH_KEYID_PREFIX)
        policy = self.sources.need_policy()
        _, failures = approvals.verify(env, policy, self.sources.repository_id, approval.created_at,
                                       None if ssh else self.sources.need_keyring(),
                                       self.sources.signers if ssh else None)
        if approval.id != aid:
            failures.append(Failure("GATE-APPROVAL-MALFORMED", "id", "the use ref does not name the approval's id"))
        current = self.repo.ref_target(APPROVALS_PREFIX + aid)
        if current is not None and current != record:
            failures.append(Failure("GATE-APPROVAL-REF", "record", "the approval ref and its use record name "
                                                                   "different records"))
        if not self.repo.exists(approval.new) or self.objects.type_of(approval.new) != "commit":
            failures.append(Failure("GATE-GIT-UNREADABLE", "new", "the approved commit is not in this repository: "
                                                                  "the push that used the approval may not have "
                                                                  "landed"))
        if failures:
            return failures
        data = single_file(self.objects, self.objects.commit(record).tree_id, approvals.RECORD_FILE,
                           "GATE-APPROVAL-MALFORMED")
        tree = self.objects.commit(approval.new).tree_id
        return Accepted("approval", approval.ref, approval.new, tree, approval.created_at,
                        (Record("approval", envelope.PAYLOAD_APPROVAL, _sha256(data), record, approvals.RECORD_FILE,
                                approval_annotations(approval, env.keyid)),))
