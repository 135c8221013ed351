"""One change judged: the push rules, the reserved stage, the verdict (pure; the one composition).

`judge(inp, change, stages=...)` is what every caller of the engine runs. The change comes in one
of three shapes (docs/architecture.md, "One question, three callers"):

* `Push(updates)`: ref updates, as pre-receive reads them. The pre-receive hook
  (`server/prereceive.py`), after it has read its installation, its input and its configuration,
  with every stage; the in-process test tier (`tests/support/engine.py`), the same call on the
  same code; the client's pre-push hooks: `hooks/frozen_push.py` with `RULES_AND_APPROVALS` (the
  reserved namespaces are the receipt hook's), `hooks/receipt_check.py` with `RESERVED`
  (approvals are the server's to judge: signed by the maintainer pushing them, with keys the
  client lacks).
* `Range(ref, base, head)`: a proposed change on a hosted forge (`gate check`): judged as the
  push of `ref` from `base` to `head` into a repository whose only ref is `ref` at `base`, so
  that exactly the commits `head` adds to `base` are judged, whatever else the clone holds.
* `Writes(ref, writes, writer)`: a tool call inside an agent (`gate agents check`): paths a
  commit-to-be would write, no commit yet. Only the frozen rule applies (there are no objects,
  refs or signatures to judge); it runs the rule's own matching (`frozen.proposal_violations`).

Stages, in this order:

1. **rules** (`pushcheck.PushChecker`): `[limits]`, ref rules, frozen files, signatures;
2. **reserved** (`reserved.check`): namespace rights, archive, ledger, receipts, review refs;
   and approval refs pushed;
3. **approvals** (`reserved.approvalrefs`): approvals applied to the rules' `GATE-FROZEN-PATH`
   violations;

then the verdict under the policy's mode (`verdict.verdict_on`). Everything a stage needs comes
in one `PushInput` of plain values: the objects (read through the `GitReader` port), the policy,
the pusher, the clock read once, the keyring loaded once, the server's refs. Nothing here reads
the machine; a `GateError` propagates to the caller's one error boundary. What a process adds
around this call - the quarantine, the transport, chained hooks, the audit line, recording the
approvals used - stays in the process (`tests/push/test_engine_parity.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from .checks.verdict import Verdict, verdict_on
from .errors import GateError
from .findings import Violation
from .git.refs import RefUpdate, ServerRefs, display, is_reserved, object_format_problem
from .valueclass import field, replace, valueclass

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from .checks.frozen import ProposedWrite, Writer
    from .checks.frozenbatch import PairScan
    from .configuration.policy import Policy
    from .git.limits import Progress
    from .git.objects import Objects
    from .reserved.approvalrefs import Used
    from .signing.allowedsigners import AllowedSigners
    from .signing.keys import Keyring
    from .signing.signatures import TrustedKeys

RULES, RESERVED, APPROVALS = "rules", "reserved", "approvals"
ALL = frozenset({RULES, RESERVED, APPROVALS})
RULES_AND_APPROVALS = frozenset({RULES, APPROVALS})
RESERVED_ONLY = frozenset({RESERVED})

def _no_signers() -> AllowedSigners | None:
    return None


def _no_head() -> str | None:
    return None


@valueclass(frozen=True)
class PushInput:
    """Everything a push is judged on, as plain values, read once by the caller."""

    objects: Objects  # the pushed objects and the repository's (the server: through the quarantine)
    policy: Policy
    pusher: str  # the authenticated pusher ('' unknown)
    now: int  # the clock, read once: every check of the push judges at this time
    repository_id: str
    server: ServerRefs  # the server's refs (the client: the remote's, as it knows them)
    keyring: Keyring | None = None  # loaded once; None: none installed (`keyring_problem` says why)
    keyring_problem: str | None = None  # why there is none (None: none is installed on the server)
    head_branch: Callable[[], str | None] = _no_head  # the branch the server's HEAD names
    signers: TrustedKeys | None = None  # commit signatures' keys, when the policy reads signatures
    load_ssh_signers: Callable[[], AllowedSigners | None] = _no_signers  # SSH-signed approvals', when one is
    existing: dict[bytes, str] | None = None  # the refs already checked (None: the repository's own)
    deadline: float | None = None  # monotonic time the walks stop at (GATE-HOOK-DEADLINE)
    #: where the rules stage counts how far its walks went (a caller that audits a push refused
    #: half way passes its own, and reads it after the refusal)
    progress: Progress | None = None
    #: a second process that searches trees beside this one on a big push (`frozenbatch`; None:
    #: this process searches alone)
    scan: PairScan | None = None


@valueclass
class Judged:
    """What a push came to: its violations, the verdict, and what the caller records."""

    violations: list[Violation]
    verdict: Verdict
    mode: str
    attempt_ids: list[str] = field(default_factory=list)  # attempts whose review this push accepts
    approvals_relied: list[Used] = field(default_factory=list)  # approvals that lifted a violation
    commands: list[str] = field(default_factory=list)  # `gate approve` for the writes left unapproved
    commits_checked: int = 0
    walks: list[str] = field(default_factory=list)

    @property
    def approvals_used(self) -> list[Used]:
        """The approvals to record as used: those the push relied on, once it is accepted (and
        enforced: an evaluate-mode push relies on nothing)."""
        return self.approvals_relied if self.mode == "enforce" and self.verdict.exit_code == 0 else []

    def lines(self, *, cap: int, gitlab: bool, what: str = "push", git_dir: str | None = None) -> list[str]:
        """The report, as the pusher reads it (`report.render`: no lines for no violations, which a
        push the gate accepts does without importing it)."""
        if not self.violations:
            return []
        from .checks.report import render

        return render(self.violations, mode=self.verdict.shown_as, cap=cap, gitlab=gitlab, what=what,
                      commands=self.commands, git_dir=git_dir)

    def evidence(self, cap: int) -> list[dict[str, str]]:
        """Why each restricted commit that violated a rule was restricted, once each (the audit line)."""
        seen = {(v.commit, v.identity, v.evidence): {"commit": v.commit or "", "identity": v.identity or "",
                                                     "evidence": v.evidence}
                for v in self.violations if v.evidence}
        return list(seen.values())[:cap]


@valueclass(frozen=True)
class Push:
    """Ref updates as pre-receive reads them (no-ops included: they are skipped)."""

    updates: Sequence[RefUpdate]


@valueclass(frozen=True)
class Range:
    """A proposed change: `head` landing on `ref`, everything `base` reaches judged already (a pull
    request: the merge base with the target branch; a merge queue's group: the target's tip)."""

    ref: str
    base: str
    head: str

    def as_push(self) -> tuple[Push, dict[bytes, str]]:
        """The push this change is judged as, and the refs the repository is taken to hold: `ref`
        alone, at `base`."""
        raw = self.ref.encode("utf-8", "surrogateescape")
        return Push((RefUpdate(self.base, self.head, raw),)), {raw: self.base}


@valueclass(frozen=True)
class Writes:
    """A change that is not a commit yet: paths a tool call would write, on the branch checked out
    (`ref`; None on a detached HEAD: every rule applies, as in the commit hook), by `writer`."""

    ref: str | None
    writes: Sequence[ProposedWrite]
    writer: Writer


#: The stages each shape of change can go through (`judge` runs those of them the caller asks for).
STAGES_OF: dict[type, frozenset[str]] = {Push: ALL, Range: ALL, Writes: frozenset({RULES})}

#: How a tool call's change is named where a commit's id would stand.
PROPOSED = "(proposed)"


def judge(inp: PushInput, change: Push | Range | Writes, *, stages: Collection[str] = ALL) -> Judged:
    """`change` through those of `stages` that apply to its shape (`STAGES_OF`), then the verdict."""
    stages = STAGES_OF[type(change)] & frozenset(stages)
    if isinstance(change, Writes):
        return _judge_writes(inp.policy, change, stages)
    standing = isinstance(change, Range)
    if isinstance(change, Range):
        change, existing = change.as_push()
        inp = replace(inp, existing=existing)
    return _judge_push(inp, change.updates, stages, standing)


def _judge_writes(policy: Policy, change: Writes, stages: Collection[str]) -> Judged:
    """The frozen rule over the paths a tool call would write (the rules scoped to its branch)."""
    violations: list[Violation] = []
    if RULES in stages:
        from .checks.frozen import proposal_violations

        rules = [r for r in policy.rules if change.ref is None or r.applies_to_ref(change.ref)]
        violations = proposal_violations(change.writer, change.writes, rules, display(change.ref or "HEAD"), PROPOSED)
    return Judged(violations, verdict_on(violations, policy.mode), policy.mode)


def _deletions_stating_nothing(inp: PushInput, updates: Sequence[RefUpdate]) -> list[Violation]:
    """`<zero> <zero> <ref>` is a no-op only where the ref does not exist: git's receive-pack
    deletes a ref whose stated old value is no object it can read (the zero id among them)
    without comparing it with the ref's value ("allowing deletion of corrupt ref"), through a
    symbolic ref to its target. So such a line for a ref the repository holds (or a symbolic
    ref) is refused, `GATE-REF-STALE`: nothing else judges it (`RefUpdate.is_noop`)."""
    noops = [u for u in updates if u.is_noop]
    if not noops:
        return []  # (a range's one update, `Range.as_push`, is never one)
    names = [u.ref for u in noops]
    reader = inp.objects.reader
    held = set(reader.ref_values(names)) | set(reader.symbolic_targets(names))
    return [Violation("GATE-REF-STALE", display(u.raw_ref), "the push deletes this ref stating the zero id as its "
                                                            "old value, but the ref exists: git would delete it "
                                                            "whatever it holds")
            for u in noops if u.ref in held]


def _judge_push(inp: PushInput, updates: Sequence[RefUpdate], stages: Collection[str], standing: bool = False
                ) -> Judged:
    """The push's `updates` through `stages`, then the verdict (`standing`: a range's, whose review
    ref is judged as it stands: `reserved.check`)."""
    policy = inp.policy
    live = [u for u in updates if not u.is_noop]
    if live and (problem := object_format_problem(live, inp.objects.reader.object_format)) is not None:
        raise GateError("GATE-GIT-OBJECT-FORMAT", problem)
    violations: list[Violation] = []
    if RULES in stages or RESERVED in stages:
        violations += _deletions_stating_nothing(inp, updates)
    commits_checked, walks = 0, []
    if RULES in stages and live:
        from .checks.pushcheck import PushChecker

        rules = PushChecker(inp.objects, policy, inp.pusher, inp.existing, inp.deadline,
                            inp.signers, inp.scan).check(live, inp.progress)
        violations, commits_checked, walks = violations + rules.violations, rules.commits_checked, rules.walks
    judged = Judged(violations, verdict_on(violations, policy.mode), policy.mode, commits_checked=commits_checked,
                    walks=walks)
    reserved = RESERVED in stages and any(is_reserved(u.ref) for u in live)
    approvals = APPROVALS in stages and policy.approvals_enabled
    if reserved or approvals:
        from . import reserved as stage

        ctx = stage.ReservedContext(
            objects=inp.objects, policy=policy, pusher=inp.pusher, repository_id=inp.repository_id, now=inp.now,
            push={u.ref: u for u in live}, server=inp.server, keyring=inp.keyring, head_branch=inp.head_branch,
            rule_violations=violations, load_signers=inp.load_ssh_signers,
            **({} if inp.keyring_problem is None else {"keyring_problem": inp.keyring_problem}))
        found = stage.check(ctx, live, namespaces=reserved, approvals=approvals, standing=standing)
        judged.violations, judged.attempt_ids = found.violations, found.attempt_ids
        judged.approvals_relied, judged.commands = found.approvals_used, found.approve_commands
        judged.verdict = verdict_on(judged.violations, policy.mode)
    return judged
