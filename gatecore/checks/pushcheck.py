"""Checking a push's ref rules and frozen files: every update against the policy (server and client).

The caller supplies the object store, the updates, the policy, the pusher and the refs that
already exist; the result lists every violation (never only the first). Errors reading
the repository propagate as `GateError` and end in a rejection at the entry point. The
reserved namespaces (ledger, receipts, review refs) are the next stage's
(`gatecore.reserved`); here they only get the frozen-file check like any ref.

Which commits are checked (docs/policy.md):

* for each freeze rule scope (a rule's `refs`, default every ref), the commits newly
  reachable from the updated refs in that scope: `rev-list NEW... --not EXISTING`, where
  EXISTING are the branches and tags already in that scope. So a commit that landed on an
  unprotected branch is checked again when a protected branch is fast-forwarded to it,
  and commits reachable only from platform-internal refs (refs/pull/, refs/merge-requests/,
  keep-around refs) are never taken as already checked.
* each commit is walked once per scope, attributed to the first updated ref that reaches it.

Walking only what is new, cheaply (the server): excluding every branch and tag costs git
one commit lookup per ref (about 120 ms at 50,000 refs), on every push. Most pushes bring
their new commits with them, and then a narrower exclusion gives the same set: first the
commits reachable from the updated refs' new values and not from their current values on
the server (C, read whole, at most `QUICK_WALK_LIMIT`). C holds every commit the full
exclusion would find, and maybe more. Those it holds in excess (already reachable from some
branch or tag) are, with their ancestors, in the repository's own object store; so if
they exist, one of C's roots (a commit none of whose parents is in C) is among them. If no
root of C is outside git's quarantine (all are objects this push brought), C is exactly
the new set and it is walked with the narrow exclusion; otherwise the full one. Either way
the set is the same; a reader that cannot tell (no quarantine) always takes the full one,
and so does a push that only creates refs (there is nothing narrower to exclude: C is all
the new refs reach).

C is read once per push (`QuickWalk`: `rev-list --parents --header --boundary`, the commits
with their headers and messages, then the boundary: the hidden commits that are a parent of
one in C), and it answers two more questions the ref rules ask, which git was asked one by
one before: every id git printed is a commit (the type check of a branch's new value, the
peeling of old and new values), and an old value that is a parent of a commit of C which the
new value reaches through C is an ancestor of it (a fast-forward). Only what it proves is
taken from it; a pair it does not prove is asked of git (`merge_bases`), an id it did not
print too (`cat-file`). C as read is also the scope's walk with the narrow exclusion (the
same tips, the same exclusion, the same order: `--boundary` only adds the boundary after the
rest), so when the roots prove it exact, git does not walk again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..configuration.policy import FreezeRule, Policy, RefGlob
from ..errors import GateError
from ..findings import Violation
from ..git.gitmodel import GitReader, WalkedCommit
from ..git.grammar import Commit
from ..git.limits import Progress, check_ref_updates
from ..git.objects import Objects
from ..git.refs import (
    DOCTOR_PREFIX,
    GATE_PREFIX,
    REPLACE_PREFIX,
    RESERVED_PARENTS,
    REVIEW_PREFIX,
    REVIEW_SHADOWS,
    SYMREF_MAXDEPTH,
    RefUpdate,
    display,
    through_symbolic,
)
from ..valueclass import field, replace, valueclass
from .frozen import FrozenChecker, discarded_violations
from .frozenbatch import Batches, PairScan, walk_violations

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from ..signing.signatures import SignatureChecker, TrustedKeys

#: Existing refs under these prefixes count as already checked (they came in through the gate).
CHECKED_PREFIXES = (b"refs/heads/", b"refs/tags/")

#: The narrow exclusion is tried for pushes of at most this many new commits and refs
#: (larger pushes amortise the full exclusion).
QUICK_WALK_LIMIT = 2_000
QUICK_WALK_REFS = 64


@valueclass
class PushReport:
    violations: list[Violation] = field(default_factory=list)
    progress: Progress = field(default_factory=Progress)

    @property
    def commits_checked(self) -> int:
        return self.progress.commits_checked

    @property
    def walks(self) -> list[str]:
        """Per rule scope walked: "pushed" (the narrow exclusion was proven exact) or "all-refs"."""
        return self.progress.walks


def _scope_key(rule: FreezeRule) -> tuple[str, ...] | None:
    return None if rule.refs is None else tuple(g.pattern for g in rule.refs)


def _in_scope(scope: tuple[RefGlob, ...] | None, ref: str) -> bool:
    return scope is None or any(g.matches(ref) for g in scope)


class QuickWalk:
    """One walk of a push's new commits that answers three questions for the price of one git
    process (module docstring): `rev-list --parents --header --boundary TIPS --not HIDE`, TIPS the
    updated refs' new values, HIDE the current values of those that are branches or tags, read
    whole up to `QUICK_WALK_LIMIT` commits.

    * **Which ids are commits**: every id git printed, walked or boundary (`ids`).
    * **Which old values are ancestors of their new ones** (`ancestor`): an old value that is a
      parent of a walked commit which the new value reaches through walked commits is its ancestor.
      Nothing else is concluded from it: a pair it does not prove is asked of git.
    * **Which commits are new** (`exact`): the walked ones, when no root of them (a walked commit
      none of whose parents was walked) is outside git's quarantine; then they are the scope's
      walk, already read, and git is not asked to walk again."""

    def __init__(self, tips: list[str], hide: list[str], walked: list[WalkedCommit] | None,
                 boundary: list[str]) -> None:
        self.tips = tips
        self.hide = hide
        self.walked = walked  # None: more than QUICK_WALK_LIMIT commits (git was stopped)
        self.ids = {w.id for w in walked or ()} | set(boundary)
        self._parents = {w.id: w.git_parents for w in walked or ()}
        self._exact: bool | None = None

    def serves(self, tips: Sequence[str], hide: Sequence[str]) -> bool:
        """This is the walk of `tips` not reaching `hide` (the same ids, in any order)."""
        return set(tips) == set(self.tips) and set(hide) == set(self.hide)

    def ancestor(self, old: str, new: str) -> bool:
        """`old` is proven an ancestor of `new` (False: not proven either way)."""
        if new not in self._parents:
            return False
        seen = {new}
        level = [new]
        while level:
            following = []
            for oid in level:
                for parent in self._parents[oid]:
                    if parent == old:
                        return True
                    if parent in self._parents and parent not in seen:
                        seen.add(parent)
                        following.append(parent)
            level = following
        return False

    def exact(self, reader: GitReader) -> bool:
        """The walked commits are exactly the new ones (asked of git once: whether their roots
        are outside the quarantine)."""
        if self._exact is None:
            walked = self.walked or []
            roots = [w.id for w in walked if not any(p in self._parents for p in w.git_parents)]
            present = reader.preexisting(roots) if self.walked is not None else None
            self._exact = present is not None and not present
        return self._exact


class PushChecker:
    def __init__(self, objects: Objects, policy: Policy, pusher: str,
                 existing: dict[bytes, str] | None, deadline: float | None = None,
                 signers: TrustedKeys | None = None, scan: PairScan | None = None) -> None:
        """`existing` None: the refs of the repository itself (the server). They are then listed
        only for rules scoped to refs; for the others git enumerates them (`--not --branches
        --tags`), which with many refs is far cheaper than listing them through libgit2.
        `scan`: a second process that searches trees beside this one on a big push (`frozenbatch`)."""
        self.objects = objects
        self.reader = objects.reader
        self.policy = policy
        self.pusher = pusher
        self._existing = existing
        self.deadline = deadline
        self.frozen = FrozenChecker(objects, whole_change=policy.noncanonical_modes == "refuse")
        self.batches = Batches(self.frozen, scan)
        self.signatures: SignatureChecker | None = None
        if signers is not None:  # (a policy that reads no signature imports nothing of them)
            from ..signing.signatures import SignatureChecker

            self.signatures = SignatureChecker(objects, signers)
        self.frozen.signatures = self.signatures
        self.quick: QuickWalk | None = None

    @property
    def existing(self) -> dict[bytes, str]:
        if self._existing is None:
            self._existing = self.reader.ref_targets()
        return self._existing

    # --- per-ref rules -----------------------------------------------------------------
    def _as_applied(self, updates: Sequence[RefUpdate]) -> tuple[list[RefUpdate], list[Violation]]:
        """The updates as git applies them (`refs.through_symbolic`: an update of a symbolic ref
        on the server is its target's), and the refusals of those that cannot be judged so.
        git is asked once for the symbolic refs among the names, then once per further level
        of a chain of them."""
        targets = self.reader.symbolic_targets([u.ref for u in updates if u.ref not in RESERVED_PARENTS])
        asked = {u.ref for u in updates}
        for _ in range(SYMREF_MAXDEPTH):
            ask = sorted({t for t in targets.values() if t not in asked})
            if not ask:
                break
            asked.update(ask)
            targets.update(self.reader.symbolic_targets(ask))
        applied, refused = through_symbolic(updates, targets)
        return applied, [Violation(code, display(u.raw_ref), reason) for u, code, reason in refused]

    def _ref_violations(self, updates: Sequence[RefUpdate]) -> list[Violation]:
        """The per-ref rules of every update (as applied: no symbolic refs among them): git asked
        once for the ancestry of every update that is neither a create nor a delete."""
        plain = [u for u in updates if u.ref not in RESERVED_PARENTS]
        peeled: dict[str, str | None] = {}
        absent: set[str] = set()
        for u in plain:
            if not (u.is_create or u.is_delete):
                for oid in (u.new, u.old):
                    if oid not in peeled and oid not in absent:
                        try:
                            peeled[oid] = self.objects.peel_to_commit(oid)
                        except GateError as exc:  # an absent old value is the push's (below), not the machine's
                            if oid != u.old or exc.code != "GATE-GIT-UNREADABLE" or self.reader.exists(oid):
                                raise
                            absent.add(oid)
        self._refuse_lost(plain, absent)
        pairs = {(a, b) for u in plain if not (u.is_create or u.is_delete or u.old in absent)
                 if (a := peeled[u.old]) is not None and (b := peeled[u.new]) is not None and a != b}
        quick = self.quick
        proven = {(a, b): a for a, b in pairs if quick is not None and quick.ancestor(a, b)}
        bases = {**self.reader.merge_bases(sorted(pairs - proven.keys())), **proven}
        out: list[Violation] = []
        for u in updates:
            if u.old in absent and not u.is_delete:
                out.append(Violation("GATE-GIT-INCOMPLETE", display(u.raw_ref), f"its old value {u.old} is in neither "
                                     "the push nor the repository, so the update cannot be judged (the ref is not at "
                                     "that value here: git refuses the update too)", commit=u.new))
                continue
            out += self._ref_update_violations(u, peeled, bases)
        return out

    def _refuse_lost(self, updates: Sequence[RefUpdate], absent: set[str]) -> None:
        """An old value the repository does not hold is a replayed or forged update (git refuses it
        too: the ref is elsewhere), but one the ref itself holds is a repository that lost an
        object: GATE-GIT-UNREADABLE."""
        stated = [u for u in updates if u.old in absent and not (u.is_create or u.is_delete)]
        if stated:
            current = self.reader.ref_values([u.ref for u in stated])
            for u in stated:
                if current.get(u.ref) == u.old:
                    raise GateError("GATE-GIT-UNREADABLE", f"object {u.old}, the value of {display(u.raw_ref)}, is "
                                                           "not in the repository")

    def _ref_update_violations(self, u: RefUpdate, peeled: dict[str, str | None],
                               bases: dict[tuple[str, str], str | None]) -> list[Violation]:
        out: list[Violation] = []
        ref = display(u.raw_ref)
        if u.ref in RESERVED_PARENTS:
            return [Violation("GATE-REF-RESERVED", ref, "this ref would shadow a reserved namespace")]
        if u.ref.startswith(REVIEW_SHADOWS) and not u.is_delete:
            return [Violation("GATE-REF-RESERVED", ref, "this ref would shadow a review ref's short name (git reads "
                                                        "refs/NAME and refs/tags/NAME before refs/heads/NAME)")]
        if u.ref.startswith(REPLACE_PREFIX):
            out += self._replace_violations(u, ref)
        restricted = self.policy.pusher_restricted(self.pusher, u.ref)
        if u.is_delete:
            if self.policy.delete == "deny" or (self.policy.delete == "deny-restricted" and restricted):
                out.append(Violation("GATE-REF-DELETE", ref, f"deleting refs is {self.policy.delete} here",
                                     identity=f"pusher:{self.pusher}"))
            return out
        kind = self.objects.type_of(u.new)  # reads the pushed object: fails closed if invisible
        if u.ref.startswith("refs/heads/") and kind != "commit":
            out.append(Violation("GATE-REF-TARGET", ref, f"a branch must point at a commit, not a {kind}",
                                 commit=u.new))
        if u.is_create:
            return out
        old_commit, new_commit = peeled[u.old], peeled[u.new]
        # (old is an ancestor of new exactly when it is their merge base)
        fast_forward = (old_commit is not None and new_commit is not None
                        and (old_commit == new_commit or bases[(old_commit, new_commit)] == old_commit))
        if not fast_forward and (self.policy.force == "deny" or (self.policy.force == "deny-restricted"
                                                                 and restricted)):
            out.append(Violation("GATE-REF-FORCE", ref, f"non-fast-forward updates are {self.policy.force} here",
                                 commit=u.new, identity=f"pusher:{self.pusher}"))
        if not fast_forward and old_commit is not None and new_commit is not None:
            rules = [r for r in self.policy.rules if r.applies_to_ref(u.ref) and r.restricts_pusher(self.pusher)]
            if rules:
                out += discarded_violations(self.frozen, old_commit, new_commit, rules, ref, self.pusher)
        return out

    def _replace_violations(self, u: RefUpdate, ref: str) -> list[Violation]:
        """refs/replace/*: git serves the replacement wherever the original is read."""
        action = self.policy.replace
        if action == "allow" or (action == "trusted" and self.policy.pusher_trusted(self.pusher)):
            return []
        who = "nobody" if action == "deny" else "trusted pushers only"
        return [Violation("GATE-REF-REPLACE", ref, f"replacement refs are written by {who} (refs.replace = "
                                                   f"{action!r})", identity=f"pusher:{self.pusher}")]

    # --- frozen files ------------------------------------------------------------------
    def _first_ref(self, in_scope: Sequence[RefUpdate], commit: str | None) -> str:
        """The first updated ref that reaches `commit` (violations are attributed to it)."""
        if len(in_scope) == 1:
            return display(in_scope[0].raw_ref)  # nothing to ask git: every walked commit is its
        for u in in_scope:
            tip = self.objects.peel_to_commit(u.new)
            if tip is not None and commit is not None and self.reader.is_ancestor(commit, tip):
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
            # One walk for all the scope's updates (walking ref by ref re-walks shared history).
            hide, how = self._hide(scope, in_scope)
            report.walks.append(how)
            # (rules that each restrict every commit read no message: `walk_violations`)
            messages = any(r.reads_messages for r in rules) and not all(r.any_author for r in rules)
            commits = self.objects.walk([u.new for u in in_scope], hide, self.deadline, messages=messages,
                                        limit=self._limit(scope),
                                        walked=self._walked(in_scope, hide))
            found = walk_violations(self.batches, self._counted(commits, report), rules, "", self.pusher)
            out += [replace(v, ref=self._first_ref(in_scope, v.commit)) for v in found]
        return out

    def _hide(self, scope: tuple[RefGlob, ...] | None, in_scope: Sequence[RefUpdate]
              ) -> tuple[list[str] | None, str]:
        """What the scope's walk excludes as already checked (None: every branch and tag of
        the repository, enumerated by git), and which exclusion it is."""
        narrow = self._narrow_hide(in_scope)
        if narrow is not None:
            return narrow, "pushed"
        if scope is None and self._existing is None:
            return None, "all-refs"
        checked = [oid for name, oid in self.existing.items()
                   if name.startswith(CHECKED_PREFIXES) and _in_scope(scope, name.decode("utf-8", "surrogateescape"))]
        return checked, "all-refs"

    def _narrowable(self, in_scope: Sequence[RefUpdate]) -> bool:
        """Whether excluding only the updated refs' current values can be tried (module docstring)."""
        if self._existing is not None or len(in_scope) > QUICK_WALK_REFS or self.reader.preexisting(()) is None:
            return False
        # All creates: nothing to exclude but every branch and tag: the narrow set is all the new refs
        # reach, their whole history unless it is all new (a first push, where git's full
        # exclusion costs nothing either). Listing up to QUICK_WALK_LIMIT of it to find out
        # would only cost a walk.
        return not all(u.is_create for u in in_scope)

    def _current(self, in_scope: Sequence[RefUpdate]) -> list[str]:
        """The current values of the updated refs that count as checked (branches and tags)."""
        names = [u.ref for u in in_scope
                 if u.raw_ref.startswith(CHECKED_PREFIXES) and not u.ref.startswith(REVIEW_PREFIX)]
        return list(self.reader.ref_values(names).values()) if names else []

    def _quick_walk(self, updates: Sequence[RefUpdate]) -> QuickWalk | None:
        """The push's quick walk (`QuickWalk`), over the updates a rule walks (the plain refs' creates
        and updates), when the narrow exclusion can be tried for them; None when it cannot, or when
        git cannot walk them (a non-commit tip, a missing object: the questions are then asked one
        by one, as the walk would have asked them, and fail as they fail)."""
        tips_of = [u for u in updates if not (u.is_delete or u.ref in RESERVED_PARENTS
                                               or u.ref.startswith(GATE_PREFIX))]
        if not tips_of or not self._narrowable(tips_of):
            return None
        tips, hide = [u.new for u in tips_of], self._current(tips_of)
        try:
            found = self.reader.quick_walk(tips, hide, QUICK_WALK_LIMIT, self.deadline)
        except GateError as exc:
            if exc.code == "GATE-HOOK-DEADLINE":
                raise
            return None
        walked, boundary = found if found is not None else (None, [])
        quick = QuickWalk(tips, hide, walked, boundary)
        self.objects.note_commits(quick.ids)
        return quick

    def _walked(self, in_scope: Sequence[RefUpdate], hide: list[str] | None) -> list[WalkedCommit] | None:
        """The quick walk's commits when it is this walk (the same tips, the same exclusion), else
        None (git walks)."""
        quick = self.quick
        if quick is None or quick.walked is None or hide is None or not quick.serves([u.new for u in in_scope], hide):
            return None
        return quick.walked

    def _narrow_hide(self, in_scope: Sequence[RefUpdate]) -> list[str] | None:
        """The updated refs' current values, when excluding only them is proven to find the same
        commits as excluding every branch and tag (module docstring); else None."""
        if not self._narrowable(in_scope):
            return None
        hide = self._current(in_scope)
        quick = self.quick
        if quick is not None and quick.serves([u.new for u in in_scope], hide):
            return hide if quick.exact(self.reader) else None  # (more than the limit: not exact)
        tips = [c for c in (self.objects.peel_to_commit(u.new) for u in in_scope) if c is not None]
        listed = self.reader.walk_ids(tips, hide, QUICK_WALK_LIMIT) if tips else []
        if listed is None:
            return None
        inside = {oid for oid, _ in listed}
        roots = [oid for oid, parents in listed if not any(p in inside for p in parents)]
        present = self.reader.preexisting(roots)
        return hide if present is not None and not present else None

    def _limit(self, scope: tuple[RefGlob, ...] | None) -> tuple[int, str]:
        """`[limits] max_new_commits` for one walk: past it the walk stops (GATE-LIMIT-COMMITS)."""
        return self.policy.max_new_commits, "" if scope is None else " to " + ", ".join(g.pattern for g in scope)

    @staticmethod
    def _counted(commits: Iterator[Commit], report: PushReport) -> Iterator[Commit]:
        for c in commits:
            report.progress.commits_checked += 1
            yield c

    def check(self, updates: Sequence[RefUpdate], progress: Progress | None = None) -> PushReport:
        """Doctor probes, ref rules and frozen files for every update of the push (`progress`: where
        to count, for a caller that reads how far the walks went when they stop half way)."""
        report = PushReport(progress=Progress() if progress is None else progress)
        live = [u for u in updates if not u.is_noop]
        check_ref_updates(len(live), self.policy.max_ref_updates)  # before any ref is judged
        normal = [u for u in live if not u.ref.startswith(DOCTOR_PREFIX)]
        for u in live:
            if u.ref.startswith(DOCTOR_PREFIX):
                if not u.is_delete:
                    self.objects.type_of(u.new)  # proves the quarantined objects are visible
                report.violations.append(Violation(
                    "GATE-DOCTOR-PROBE", display(u.raw_ref),
                    "probe objects are visible to the hook; the probe is never accepted", commit=u.new))
        applied, refused = self._as_applied(normal)
        report.violations += refused
        self.quick = self._quick_walk(applied)
        report.violations += self._ref_violations(applied)
        # Ledger and receipt refs hold sealed records, validated structurally instead.
        plain = [u for u in applied if not u.ref.startswith(GATE_PREFIX)]
        if self.policy.needs_signers and self.signatures is None and plain:
            raise GateError("GATE-CONFIG-SIGNERS", "the policy reads commit signatures but no allowed-signers "
                                                   "file is installed")
        report.violations += self._frozen_violations(plain, report)
        report.violations += self._signature_violations(plain)
        return report

    def _signature_violations(self, updates: Sequence[RefUpdate]) -> list[Violation]:
        """`[signatures] require`: every new commit reaching those refs is signed by a listed key."""
        scope = self.policy.require_signatures
        in_scope = [u for u in updates if not u.is_delete and _in_scope(scope, u.ref)] if scope else []
        if not in_scope or self.signatures is None:
            return []
        from ..signing.signatures import REQUIRED_CODES

        hide, _how = self._hide(scope, in_scope)
        commits = list(self.objects.walk([u.new for u in in_scope], hide, self.deadline, limit=self._limit(scope),
                                         walked=self._walked(in_scope, hide)))
        self.signatures.prefetch([c.id for c in commits])
        out = []
        for c in commits:
            state = self.signatures.state(c.id)
            code = REQUIRED_CODES[state.status]
            if code is not None:
                out.append(Violation(code, self._first_ref(in_scope, c.id), f"signatures.require: {state.reason}",
                                     commit=c.id, identity=c.author_email))
        return out
