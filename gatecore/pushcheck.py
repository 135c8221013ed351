"""Checking a whole push: every ref update against the policy. Server and client share it.

The caller supplies the repository, the updates, the policy, the pusher and the refs that
already exist; the result lists every violation (never only the first). Errors reading
the repository propagate as `GitReadError` and end in a rejection at the entry point.

Which commits are checked (docs/policy.md):

* for each freeze rule scope (a rule's `refs`, default every ref), the commits newly
  reachable from the updated refs in that scope: `rev-list NEW... --not EXISTING`, where
  EXISTING are the branches and tags already in that scope. So a commit that landed on an
  unprotected branch is checked again when a protected branch is fast-forwarded to it,
  and commits reachable only from platform-internal refs (refs/pull/, refs/merge-requests/,
  keep-around refs) are never taken as already checked.
* each commit is walked once per scope, attributed to the first updated ref that reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from .failure import Violation
from .frozen import FrozenChecker, commit_violations, discarded_violations
from .gitrepo import GitRepo
from .namespaces import DOCTOR_PREFIX, GATE_PREFIX, RESERVED_PARENTS, REVIEW_PREFIX
from .policy import FreezeRule, Policy, RefGlob
from .refupdates import RefUpdate, display

#: Existing refs under these prefixes count as already checked (they came in through the gate).
CHECKED_PREFIXES = (b"refs/heads/", b"refs/tags/")

#: A checker for the reserved namespaces (ledger and review refs), plugged in by the caller.
ReservedCheck = Callable[[Sequence[RefUpdate], "PushReport"], list[Violation]]


@dataclass
class PushReport:
    violations: list[Violation] = field(default_factory=list)
    attempt_ids: list[str] = field(default_factory=list)
    commits_checked: int = 0


def is_reserved(ref: str) -> bool:
    return ref.startswith((GATE_PREFIX, REVIEW_PREFIX))


def _scope_key(rule: FreezeRule) -> tuple[str, ...] | None:
    return None if rule.refs is None else tuple(g.pattern for g in rule.refs)


def _in_scope(scope: tuple[RefGlob, ...] | None, ref: str) -> bool:
    return scope is None or any(g.matches(ref) for g in scope)


class PushChecker:
    def __init__(self, repo: GitRepo, policy: Policy, pusher: str,
                 existing: dict[bytes, str] | None, deadline: float | None = None) -> None:
        """`existing` None: the refs of `repo` itself (the server). They are then listed only
        for rules scoped to refs; for the others git enumerates them (`--not --branches --tags`),
        which with many refs is far cheaper than listing them through libgit2."""
        self.repo = repo
        self.policy = policy
        self.pusher = pusher
        self._existing = existing
        self.deadline = deadline
        self.frozen = FrozenChecker(repo)

    @property
    def existing(self) -> dict[bytes, str]:
        if self._existing is None:
            self._existing = self.repo.ref_targets()
        return self._existing

    # --- per-ref rules -----------------------------------------------------------------
    def _ref_violations(self, u: RefUpdate) -> list[Violation]:
        out: list[Violation] = []
        ref = display(u.raw_ref)
        if u.ref in RESERVED_PARENTS:
            return [Violation("GATE-REF-RESERVED", ref, "this ref would shadow a reserved namespace")]
        symbolic = self.repo.symbolic_target(u.ref)
        if symbolic is not None:
            return [Violation("GATE-REF-NAME", ref, f"a symbolic ref on the server (to {display(symbolic)}); "
                                                    "push to its target")]
        restricted = self.policy.pusher_restricted(self.pusher, u.ref)
        if u.is_delete:
            if self.policy.delete == "deny" or (self.policy.delete == "deny-restricted" and restricted):
                out.append(Violation("GATE-REF-DELETE", ref, f"deleting refs is {self.policy.delete} here",
                                     identity=f"pusher:{self.pusher}"))
            return out
        kind = self.repo.object_type(u.new)  # reads the pushed object: fails closed if invisible
        if u.ref.startswith("refs/heads/") and kind != "commit":
            out.append(Violation("GATE-REF-TARGET", ref, f"a branch must point at a commit, not a {kind}",
                                 commit=u.new))
        if u.is_create:
            return out
        old_commit = self.repo.peel_to_commit(u.old)
        new_commit = self.repo.peel_to_commit(u.new)
        fast_forward = (old_commit is not None and new_commit is not None
                        and self.repo.is_ancestor(old_commit, new_commit))
        if not fast_forward and (self.policy.force == "deny" or (self.policy.force == "deny-restricted"
                                                                 and restricted)):
            out.append(Violation("GATE-REF-FORCE", ref, f"non-fast-forward updates are {self.policy.force} here",
                                 commit=u.new, identity=f"pusher:{self.pusher}"))
        if not fast_forward and old_commit is not None and new_commit is not None:
            rules = [r for r in self.policy.rules if r.applies_to_ref(u.ref) and r.restricts_pusher(self.pusher)]
            if rules:
                out += discarded_violations(self.frozen, old_commit, new_commit, rules, ref, self.pusher)
        return out

    # --- frozen files ------------------------------------------------------------------
    def _first_ref(self, in_scope: Sequence[RefUpdate], commit: str | None) -> str:
        """The first updated ref that reaches `commit` (violations are attributed to it)."""
        for u in in_scope:
            tip = self.repo.peel_to_commit(u.new)
            if tip is not None and commit is not None and self.repo.is_ancestor(commit, tip):
                return display(u.raw_ref)
        return display(in_scope[0].raw_ref)

    def _frozen_violations(self, updates: Sequence[RefUpdate], report: PushReport) -> list[Violation]:
        groups: dict[tuple[str, ...] | None, list[FreezeRule]] = {}
        for rule in self.policy.rules:
            groups.setdefault(_scope_key(rule), []).append(rule)
        out: list[Violation] = []
        for rules in groups.values():
            scope = rules[0].refs
            in_scope = [u for u in updates if not u.is_delete and _in_scope(scope, u.ref)]
            if not in_scope:
                continue
            hide: list[str] | None = None  # None: every branch and tag of the repository, enumerated by git
            if scope is not None or self._existing is not None:
                hide = [oid for name, oid in self.existing.items()
                        if name.startswith(CHECKED_PREFIXES)
                        and _in_scope(scope, name.decode("utf-8", "surrogateescape"))]
            # One walk for all the scope's updates (walking ref by ref re-walks shared history).
            infos = self.repo.new_commit_infos([u.new for u in in_scope], hide, self.deadline)
            report.commits_checked += len(infos)
            self.frozen.remember(infos)
            found = commit_violations(self.frozen, [i.id for i in infos], rules, "", self.pusher)
            out += [replace(v, ref=self._first_ref(in_scope, v.commit)) for v in found]
        return out

    def check(self, updates: Sequence[RefUpdate], reserved: ReservedCheck | None = None) -> PushReport:
        report = PushReport()
        normal = [u for u in updates if not u.ref.startswith(DOCTOR_PREFIX)]
        for u in updates:
            if u.ref.startswith(DOCTOR_PREFIX):
                if not u.is_delete:
                    self.repo.object_type(u.new)  # proves the quarantined objects are visible
                report.violations.append(Violation(
                    "GATE-DOCTOR-PROBE", display(u.raw_ref),
                    "probe objects are visible to the hook; the probe is never accepted", commit=u.new))
        for u in normal:
            report.violations += self._ref_violations(u)
        # Ledger and receipt refs hold sealed records, validated structurally instead.
        report.violations += self._frozen_violations([u for u in normal if not u.ref.startswith(GATE_PREFIX)],
                                                     report)
        special = [u for u in normal if is_reserved(u.ref)]
        if special and reserved is None:
            report.violations += [Violation("GATE-REF-RESERVED", display(u.raw_ref),
                                            "this namespace is written by the trusted side only")
                                  for u in special]
        elif special and reserved is not None:
            report.violations += reserved(special, report)
        return report
