"""The reserved stage, last: approvals, pushing them (`refs/gate/approvals/<id>`) and using them.

* **Pushing.** `refs/gate/approvals/<id>` is created by an approver (`[approvals]
  approvers`, never a pusher some rule restricts) and never moved; only `[trusted]
  pushers` may delete one. It points at a root commit whose tree holds one file,
  `approval.json`: the envelope (`gatecore.records.approvals`), verified when it is pushed and
  again whenever it is used. `<id>` must be the approval's own id.
* **Using.** For each ref update with restricted writes of frozen paths
  (`GATE-FROZEN-PATH`), the hook looks up the approval whose id that update's binding
  (repository, ref, old, new) gives. If it serves now - valid seal or signature, an
  approver, not expired, not used (`refs/gate/approval-uses/<id>`) - the writes at the
  paths it names are approved; every other path stays a violation.
* **Once.** When the push is then accepted, the hook records each approval it used by
  creating `refs/gate/approval-uses/<id>` (create-only, all of a push's in one ref
  transaction: two pushes racing for one approval cannot both record it; the loser is
  rejected, `GATE-APPROVAL-USED`, and spends none). Nobody can push these refs. A push the
  gate refuses after recording its uses (its audit line, its deadline) takes them back
  (`server/prereceive.py`). Should git refuse the push after the gate accepted it, the
  approval is spent all the same (fail closed): the agent commits anew, and a maintainer
  approves that update.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..configuration.policy import Policy
from ..errors import GateError
from ..findings import Failure, Violation, unique_in_order
from ..git.objects import Objects, single_file
from ..git.refs import GATE_PREFIX, RefUpdate, display, shell_word
from ..records import approvals
from ..signing import envelope
from ..signing.keys import Keyring
from ..valueclass import replace, valueclass

if TYPE_CHECKING:
    from ..signing.allowedsigners import AllowedSigners

APPROVALS_PREFIX = GATE_PREFIX + "approvals/"
USES_PREFIX = GATE_PREFIX + "approval-uses/"
_HEX64 = frozenset("0123456789abcdef")


def is_approval_ref(ref: str) -> bool:
    return ref.startswith((APPROVALS_PREFIX, USES_PREFIX))


@valueclass(frozen=True, slots=True)
class Used:
    """An approval a push relies on: recorded as used when the push is accepted."""

    id: str
    approver: str
    ref: str
    paths: tuple[str, ...]
    record: str  # the approval commit (what the use ref points at)

    def audit(self) -> dict[str, object]:
        return {"id": self.id, "approver": self.approver, "ref": self.ref, "paths": list(self.paths)}

    def words(self) -> str:
        """What the push that used it says (the server's line, the client's note)."""
        return f"approved by {self.approver}, approval {self.id[:16]}: {', '.join(self.paths)} on {self.ref}"


@valueclass
class ApprovalContext:
    objects: Objects
    policy: Policy
    repository_id: str
    now: int
    ref_target: Callable[[str], str | None]  # the server's refs (the client: its fetched copies)
    load_keyring: Callable[[], Keyring | None]
    load_signers: Callable[[], AllowedSigners | None]

    def verify(self, record: str) -> tuple[approvals.Approval | None, list[Failure]]:
        try:
            env = read_record(self.objects, record)
        except GateError as exc:
            return None, [Failure(exc.code, "record", exc.detail)]
        ssh = env.keyid.startswith(approvals.SSH_KEYID_PREFIX)
        return approvals.verify(env, self.policy, self.repository_id, self.now,
                                None if ssh else self.load_keyring(), self.load_signers() if ssh else None)


def read_record(objects: Objects, oid: str) -> envelope.Envelope:
    """The envelope an approval commit holds (GATE-APPROVAL-MALFORMED if it is not one)."""
    if objects.type_of(oid) != "commit":
        raise GateError("GATE-APPROVAL-MALFORMED", f"{oid[:12]} is not a commit")
    commit = objects.commit(oid)
    if commit.parent_ids:
        raise GateError("GATE-APPROVAL-MALFORMED", "an approval is a root commit (no parents)")
    try:
        return envelope.parse(single_file(objects, commit.tree_id, approvals.RECORD_FILE, "GATE-APPROVAL-MALFORMED"))
    except GateError as exc:
        raise GateError("GATE-APPROVAL-MALFORMED", exc.detail) from None


def _violation(code: str, u: RefUpdate, detail: str, fld: str | None = None) -> Violation:
    return Violation(code, display(u.raw_ref), detail, field=fld)


def check_pushes(ctx: ApprovalContext, pusher: str, updates: Sequence[RefUpdate]) -> list[Violation]:
    """Pushes of approval refs: created by approvers, valid, never moved; deleted by trusted pushers."""
    out: list[Violation] = []
    for u in updates:
        if u.ref.startswith(USES_PREFIX):
            out.append(_violation("GATE-APPROVAL-REF", u, "approval uses are recorded by the gate itself"))
            continue
        name = u.ref[len(APPROVALS_PREFIX):]
        if len(name) != 64 or not set(name) <= _HEX64:
            out.append(_violation("GATE-APPROVAL-REF", u, "approval refs are refs/gate/approvals/<64 hex digits>"))
            continue
        server = ctx.ref_target(u.ref)
        if u.is_delete:
            if not ctx.policy.pusher_trusted(pusher):
                out.append(_violation("GATE-APPROVAL-REF", u, "only [trusted] pushers delete approvals"))
            elif server != (None if u.is_create else u.old):
                out.append(_violation("GATE-REF-STALE", u, "the stated old value is not the server's"))
            continue
        if not u.is_create or server is not None:
            out.append(_violation("GATE-APPROVAL-REF", u, "an approval is created once and never rewritten"))
            continue
        if not ctx.policy.is_approver(pusher):
            out.append(_violation("GATE-APPROVAL-APPROVER", u, f"pushed by {pusher or '(unknown)'}, who is not an "
                                                             "approver ([approvals] approvers)"))
            continue
        approval, failures = ctx.verify(u.new)
        out += [_violation(f.code, u, f.detail, f.field) for f in failures]
        if approval is not None and approval.id != name:
            out.append(_violation("GATE-APPROVAL-MALFORMED", u, "the ref name is not the approval's id "
                                                                f"({approval.id[:16]}...)"))
    return out


def apply(ctx: ApprovalContext, updates: Sequence[RefUpdate],
          violations: Sequence[Violation]) -> tuple[list[Violation], list[Used], list[str]]:
    """(what remains violated, the approvals relied on, `gate approve` commands for the rest)."""
    by_ref = {display(u.raw_ref): u for u in updates}
    frozen: dict[str, list[Violation]] = {}
    for v in violations:
        if v.code == "GATE-FROZEN-PATH" and v.ref in by_ref and v.path is not None:
            frozen.setdefault(v.ref, []).append(v)
    # A violation names the first updated ref that reaches its commit; an approval is bound to
    # one ref update, so the same write reaching another ref of this push needs that update's
    # own approval: the write counts against every updated ref that reaches it.
    added = _also_reaching(ctx.objects, ctx.policy, updates, frozen)
    violations = [*violations, *added]
    for v in added:
        frozen.setdefault(v.ref, []).append(v)
    approved: set[int] = set()
    extra: list[Violation] = []
    used: list[Used] = []
    commands: list[str] = []
    for shown, found in frozen.items():
        u = by_ref[shown]
        aid = approvals.approval_id(ctx.repository_id, u.ref, u.old, u.new)
        record = ctx.ref_target(APPROVALS_PREFIX + aid)
        paths: tuple[str, ...] = ()
        if record is not None and ctx.ref_target(USES_PREFIX + aid) is not None:
            extra.append(_violation("GATE-APPROVAL-USED", u, f"approval {aid[:16]} was used by an earlier push"))
        elif record is not None:
            approval, failures = ctx.verify(record)
            extra += [_violation(f.code, u, f"approval {aid[:16]}: {f.detail}", f.field) for f in failures]
            if approval is not None and not failures and (approval.ref, approval.old, approval.new) == (u.ref, u.old,
                                                                                                        u.new):
                paths = approval.paths
                covered = [v for v in found if v.path in paths]
                approved.update(id(v) for v in covered)
                if covered:
                    done = tuple(unique_in_order(v.path or "" for v in covered))
                    used.append(Used(aid, approval.approver, u.ref, done, record))
        rest = unique_in_order(v.path for v in found if v.path not in paths)
        if rest:
            commands.append(approve_command(ctx.repository_id, u, [p for p in rest if p is not None]))
    remaining = [v for v in violations if id(v) not in approved] + extra
    return remaining, used, commands


def _also_reaching(objects: Objects, policy: Policy, updates: Sequence[RefUpdate],
                   frozen: dict[str, list[Violation]]) -> list[Violation]:
    """Copies of the frozen-path violations for the other updated refs, in the violated rule's
    scope, that reach their commits (asked of git only when a push updates several refs and
    has such violations)."""
    live = [u for u in updates if not u.is_delete]
    if len(live) < 2 or not frozen:
        return []
    rules = {r.label: r for r in policy.rules}
    tips = {display(u.raw_ref): (u.ref, objects.peel_to_commit(u.new)) for u in live}
    out: list[Violation] = []
    for shown, found in frozen.items():
        for other, (ref, tip) in tips.items():
            if other == shown or tip is None:
                continue
            for commit in unique_in_order(v.commit for v in found):
                if commit is None or not objects.reader.is_ancestor(commit, tip):
                    continue
                out += [replace(v, ref=other) for v in found if v.commit == commit
                        and (v.rule not in rules or rules[v.rule].applies_to_ref(ref))]
    return out


def approve_command(repository_id: str, u: RefUpdate, paths: Sequence[str]) -> str:
    """The exact `gate approve` a maintainer runs (approver and key from their git config, or flags)."""
    args = ["gate", "approve", "--repository-id", repository_id, "--ref", u.ref, "--old", u.old, "--new", u.new]
    for p in paths:
        args += ["--path", p]
    return " ".join(shell_word(a) for a in args)

