"""The pre-receive hook: `python -I server/launch.py server.prereceive --gate-dir DIR` (`gate server install`).

`main` is the pipeline, top to bottom, and its only error boundary:

1. **installation and environment**: the installation record, the platform and the pusher
   (`server.installation`, `gatecore.adapters.environment`);
2. **input**: stdin, capped, parsed into ref updates (`gatecore.git.refs`);
3. **configuration**: the policy, the keyring and the signers, each loaded once from its
   validated cache (`gatecore.adapters.config`), with the clock read once: every check of
   the push judges at the same `now`;
4. **judgement**: the push rules, the reserved stage and the verdict, in one call of the
   engine's one composition (`gatecore.pipeline.judge`, which the client hooks and the
   in-process test tier call too), over the objects as the quarantine shows them;
5. **report**: what the pusher sees (`gatecore.checks.report`), then chained hooks, then the
   approvals the push used are recorded as spent, and a line for each says whose it was;
6. **audit**: one line (`server.audit`), with how far the walks went even when a limit or
   the deadline stopped them.

Exit codes: 0 accept, 1 policy reject, 2 configuration error, 3 internal error or
deadline. Anything but 0 rejects every ref of the push. Every path that is not a proven
accept ends in a rejection with a documented code, an audit line, and the code on stderr
(which git shows the pusher prefixed `remote: `).

Start-up is kept light on purpose: no typer, no pydantic, no pygit2 (the policy and
keyring come from their validated caches; receipts and ledger records are read by
`gatecore.records.schema`, and only when a push touches the reserved namespaces).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence

from gatecore import __version__
from gatecore.adapters import config, environment
from gatecore.configuration.policy import Policy
from gatecore.errors import GateError
from gatecore.findings import Violation
from gatecore.git.gitmodel import FORMATS, GitReader
from gatecore.git.limits import Progress
from gatecore.git.refs import MAX_INPUT_BYTES, RefUpdate, ServerRefs, display, parse_pre_receive
from gatecore.pipeline import Push, PushInput, judge
from gatecore.signing.keys import Keyring
from gatecore.valueclass import field, replace, valueclass

from . import audit, installation
from .deadline import Deadline

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Any

    from gatecore.adapters.gitcmd import GitResult
    from gatecore.adapters.treescan import TreeScanner
    from gatecore.checks.frozenbatch import PairScan
    from gatecore.checks.verdict import Decision
    from gatecore.configuration.policy import Mode
    from gatecore.reserved.approvalrefs import Used
    from gatecore.signing.allowedsigners import AllowedSigners
    from gatecore.signing.signatures import TrustedKeys

#: The object format whose ids have this many hex digits.
FORMAT_OF_WIDTH = {f.hexsz: name for name, f in FORMATS.items()}

#: Until the policy (and its deadline: limits.deadline_seconds, or the platform's default) is read, the watchdog only
#: guards against a start-up that hangs: a loaded machine may take seconds to start Python.
STARTUP_DEADLINE_SECONDS = 30.0


@valueclass(frozen=True)
class Outcome:
    exit_code: int
    decision: Decision
    lines: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    attempt_ids: list[str] = field(default_factory=list)
    commits_checked: int = 0
    mode: Mode | None = None
    walks: list[str] = field(default_factory=list)
    catalogue: str | None = None  # the agent catalogue version the policy's named sets came from
    approvals: list[Used] = field(default_factory=list)  # recorded as used once the push is accepted
    #: why each restricted commit that violated a rule was restricted (docs/agents.md, evidence)
    evidence: list[dict[str, str]] = field(default_factory=list)
    commits_read: int | None = None  # a limit stopped the walk: how many new commits it had read


def rejection(exit_code: int, code: str, lines: list[str], progress: Progress | None = None) -> Outcome:
    """A push the gate refused without judging it through (`progress`: how far its walks went)."""
    if progress is None:
        return Outcome(exit_code=exit_code, decision="reject", lines=lines, codes=[code])
    return Outcome(exit_code=exit_code, decision="reject", lines=lines, codes=[code],
                   commits_checked=progress.commits_checked, walks=list(progress.walks),
                   commits_read=progress.commits_read)


@valueclass(frozen=True)
class Configuration:
    """Stage 3: what the installation configures, each file loaded once per push."""

    policy: Policy
    keyring: Keyring | None  # None: no keyring installed
    signers: TrustedKeys | None  # commit signatures' keys, when the policy reads signatures
    load_ssh_signers: Callable[[], AllowedSigners | None]  # SSH-signed approvals' keys, read when one is
    now: int  # the clock, read once: every check of the push judges at this time


def error_lines(code: str, detail: str, *, gitlab: bool, git_dir: str | None) -> list[str]:
    """`report.error_lines` (the report's module is imported by a push that has something to report)."""
    from gatecore.checks import report

    return report.error_lines(code, detail, gitlab=gitlab, git_dir=git_dir)


def read_stdin() -> bytes:
    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise GateError("GATE-INPUT-TOO-LARGE", f"more than {MAX_INPUT_BYTES} bytes of input")
    return data


def load_keyring(inst: installation.Installation) -> Keyring | None:
    """The installed keyring (None: none installed); a broken one is a configuration error."""
    return config.load_keyring(inst.keyring) if inst.has_keyring else None


def ssh_signers(inst: installation.Installation) -> Callable[[], AllowedSigners | None]:
    return lambda: (config.load_allowed_signers(inst.allowed_signers) if os.path.lexists(inst.allowed_signers)
                    else None)


def configuration(inst: installation.Installation, policy: Policy, now: int) -> Configuration:
    """Stage 3, after the policy: a broken keyring or signers file rejects every push, not only
    the pushes that need it."""
    signers = None
    if policy.needs_signers:
        signers = config.load_trusted_keys(*(p if os.path.lexists(p) else None
                                             for p in (inst.allowed_signers, inst.openpgp_keys)))
    return Configuration(policy, load_keyring(inst), signers, ssh_signers(inst), now)


def check_push(inst: installation.Installation, hook_env: environment.HookEnv, updates: Sequence[RefUpdate],
               conf: Configuration, deadline: Deadline, progress: Progress) -> Outcome:
    """Stages 4 and 5 (but chained hooks): the judgement and the report."""
    from gatecore.adapters.gitstream import GitStream
    from gatecore.checks.frozenbatch import ScanOnDemand

    if hook_env.namespace is not None:
        # receive-pack hands the hook the names the client sent, and writes them under
        # refs/namespaces/<ns>/: every ref the gate reads (a ref's value, the ledger) would be another
        raise GateError("GATE-CONFIG-NAMESPACE", f"GIT_NAMESPACE={hook_env.namespace!r}: this push goes to "
                                                 "refs/namespaces/, which the gate does not read")
    policy = conf.policy
    if not updates:
        return Outcome(exit_code=0, decision="accept", mode=policy.mode, catalogue=policy.catalogue_version)
    # (no-ops, both ids zero, are judged too: one for a ref that exists deletes it, `pipeline`)
    first = next((u for u in updates if not u.is_noop), updates[0])
    # The object format, as the width of the ids receive-pack handed the hook says it (it writes them in
    # the repository's): confirmed by the first full id git prints, or asked of git before a verdict.
    stated = FORMAT_OF_WIDTH.get(len(first.old))
    if stated is None:
        raise GateError("GATE-GIT-OBJECT-FORMAT", f"object ids of {len(first.old)} hex digits belong to no object "
                                                  "format git knows")
    repo = GitStream(hook_env.git_dir, hook_env.quarantine, object_format=stated, stated=True)
    scan = ScanOnDemand(lambda: tree_scanner(hook_env.git_dir))  # (most pushes never start it)
    try:
        try:
            outcome = _checked(inst, hook_env, updates, conf, deadline, repo, progress, scan)
        except GateError as exc:
            if exc.code != "GATE-HOOK-DEADLINE":
                repo.confirm_format()  # ids of the other format are refused as such, not as unreadable
            raise
        repo.confirm_format()
        return outcome
    finally:
        scan.close()
        repo.close()


def tree_scanner(git_dir: str) -> TreeScanner:
    """The second process a big push's tree search starts: by file path, bound as this hook is
    (gatecore/adapters/treescan.py)."""
    from gatecore.adapters.treescan import TreeScanner
    from server import launch

    return TreeScanner(launch.helper_argv(launch.TREE_WORKER, git_dir), launch.identity)


def push_input(inst: installation.Installation, hook_env: environment.HookEnv, conf: Configuration,
               deadline: Deadline, repo: GitReader, progress: Progress, scan: PairScan | None = None) -> PushInput:
    """What the engine judges this push on: the objects through `repo` (the quarantine), the
    configuration read once, the server's own refs, the second process a big push's tree search
    may start (`scan`)."""
    from gatecore.git.objects import Objects

    return PushInput(objects=Objects(repo), policy=conf.policy, pusher=hook_env.pusher, now=conf.now,
                     repository_id=inst.repository_id, server=ServerRefs(repo.ref_target), keyring=conf.keyring,
                     head_branch=lambda: repo.symbolic_target("HEAD"), signers=conf.signers,
                     load_ssh_signers=conf.load_ssh_signers, deadline=deadline.at, progress=progress, scan=scan)


def _checked(inst: installation.Installation, hook_env: environment.HookEnv, updates: Sequence[RefUpdate],
             conf: Configuration, deadline: Deadline, repo: GitReader, progress: Progress,
             scan: PairScan | None = None) -> Outcome:
    policy = conf.policy
    # 4. judgement (gatecore.pipeline: push rules, the reserved stage, the verdict)
    judged = judge(push_input(inst, hook_env, conf, deadline, repo, progress, scan), Push(updates))
    # 5. report (chained hooks and spent approvals follow in `main`)
    lines = judged.lines(cap=policy.max_violations_shown, gitlab=hook_env.gitlab,
                         git_dir=installation.repository_of(inst.gate_dir))
    verdict = judged.verdict
    return Outcome(exit_code=verdict.exit_code, decision=verdict.decision, lines=lines, codes=list(verdict.codes),
                   attempt_ids=judged.attempt_ids, commits_checked=judged.commits_checked, mode=policy.mode,
                   walks=judged.walks, catalogue=policy.catalogue_version, approvals=judged.approvals_used,
                   evidence=judged.evidence(policy.max_violations_shown))


#: What a chained hook's stderr may say (its stdout is passed on whole).
CHAIN_STDERR_BYTES = 1 << 20


def run_chain(inst: installation.Installation, data: bytes, argv: Sequence[str], deadline: Deadline) -> list[Violation]:
    """Run the hooks the gate was chained in front of, in order, with the same input. Each sits in
    `hooks/gate-chained/` under its own name (a hook may look at its `$0`). One that is gone is a
    configuration error (re-running the installer drops it), never a silent pass.

    Each runs in a session of its own, its output read by the gate and passed on once it exits
    (`childproc`): it never holds git's own pipes, so a process it leaves behind (a `setsid`
    child) keeps no push waiting, and its group is the deadline's while it runs (`Deadline.groups`),
    for the watchdog to kill with the gate. A chain still running at the deadline is the watchdog's to end
    (GATE-HOOK-DEADLINE, audited); `childproc` ends it and what it started a moment later, if the
    watchdog has not."""
    from gatecore.adapters import childproc

    from .deadline import GRACE_SECONDS

    for hook in inst.chain:
        if not os.access(hook, os.X_OK):
            raise GateError("GATE-CONFIG-INSTALL", f"the chained hook {hook} is missing or not executable: "
                                                   "restore it, or re-run gate server install to drop it")
        left = max(0.0, deadline.at - time.monotonic()) + 2 * GRACE_SECONDS
        try:
            ran = childproc.run([str(hook), *argv], data, env=os.environ, timeout=left,
                                stderr_tail=CHAIN_STDERR_BYTES, on_start=deadline.groups.append)
        except OSError as exc:
            raise GateError("GATE-CONFIG-INSTALL", f"the chained hook {hook} cannot run: {exc.strerror}") from None
        finally:
            deadline.groups.clear()
        sys.stdout.buffer.write(ran.stdout)
        sys.stdout.flush()
        sys.stderr.buffer.write(ran.stderr_tail)
        sys.stderr.flush()
        if ran.timed_out:
            raise GateError("GATE-HOOK-DEADLINE", f"the chained hook {os.path.basename(hook)} ran past the deadline "
                                                  "and was ended")
        if ran.status != 0:
            return [Violation("GATE-HOOK-CHAINED", "-", f"{os.path.basename(hook)} exited {ran.status}")]
    return []


def chain_refused(outcome: Outcome, chained: list[Violation], gitlab: bool) -> Outcome:
    """The push a chained hook refused (its report: the only module of the report's a push imports then)."""
    from gatecore.checks.report import render

    return replace(outcome, exit_code=1, decision="reject", codes=["GATE-HOOK-CHAINED"], approvals=[],
                   lines=render(chained, mode="enforce", cap=10, gitlab=gitlab))


def after_chain(inst: installation.Installation, hook_env: environment.HookEnv, data: bytes, argv: Sequence[str],
                outcome: Outcome, deadline: Deadline) -> Outcome:
    """The outcome once the hooks the gate was chained in front of have run (on a push it accepts)."""
    if outcome.exit_code != 0 or not inst.chain:
        return outcome
    chained = run_chain(inst, data, argv, deadline)
    return chain_refused(outcome, chained, hook_env.gitlab) if chained else outcome


def record_uses(hook_env: environment.HookEnv, used: Sequence[Used]) -> None:
    """Spend each approval the accepted push relied on: create refs/gate/approval-uses/<id>,
    create-only, all of them in one ref transaction (all or none: a push refused because one
    cannot be recorded spends none), in the repository proper (outside the quarantine, which
    forbids ref updates; the approval commit it points at is already there). Uses that cannot
    be recorded reject the push: GATE-APPROVAL-USED."""
    from gatecore.reserved.approvalrefs import USES_PREFIX

    got = _uses_transaction(hook_env, [f"create {USES_PREFIX}{u.id} {u.record}" for u in used], "gate: approval used")
    if not got.ok:
        ids = ", ".join(u.id[:16] for u in used)
        raise GateError("GATE-APPROVAL-USED", f"approval {ids} could not be recorded as used (another push used it "
                                              f"first?), so none was: {got.last_error()}")


def spend(hook_env: environment.HookEnv, outcome: Outcome, spent: list[Used]) -> Outcome:
    """An accepted push's approvals recorded as used (`record_uses`) and added to `spent` (taken
    back should the push be refused after all: `take_back`); the pusher is told whose they were."""
    if outcome.exit_code != 0 or not outcome.approvals:
        return outcome
    record_uses(hook_env, outcome.approvals)
    spent.extend(outcome.approvals)
    return replace(outcome, lines=[*outcome.lines, *(f"gate: {u.words()} (used: it serves once)"
                                                     for u in outcome.approvals)])


def take_back(hook_env: environment.HookEnv | None, spent: Sequence[Used]) -> None:
    """Take back the uses `spend` recorded for a push the gate then refused after all (its audit
    line could not be written, the deadline passed): each is deleted only while it still names
    the record this push wrote. Should that fail, the approvals stay spent (fail closed)."""
    if hook_env is None or not spent:
        return  # (before any import: every refused push comes here)
    import contextlib

    from gatecore.reserved.approvalrefs import USES_PREFIX

    with contextlib.suppress(GateError):  # (git could not even start: the push is refused all the same)
        _uses_transaction(hook_env, [f"delete {USES_PREFIX}{u.id} {u.record}" for u in spent],
                          "gate: approval use taken back (push refused)")


def _uses_transaction(hook_env: environment.HookEnv, commands: Sequence[str], message: str) -> GitResult:
    """`git update-ref --stdin` of `commands`, one transaction, in the repository proper."""
    from gatecore.adapters.gitcmd import run_git

    return run_git([f"--git-dir={hook_env.git_dir}", "update-ref", "-m", message, "--stdin"],
                   input="".join(f"{c}\n" for c in commands).encode("ascii"), ok=None,
                   unset=("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"))


def audit_record(hook_env: environment.HookEnv | None, updates: Sequence[RefUpdate], outcome: Outcome,
                 now: int, started: float) -> dict[str, Any]:
    return {
        "event": "decision",
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "version": __version__,  # the push-gate that decided (docs/upgrading.md, "Versions")
        "pusher": None if hook_env is None else hook_env.pusher,
        "pusher_source": None if hook_env is None else hook_env.pusher_source,
        "platform": None if hook_env is None else hook_env.platform,
        "via": None if hook_env is None else hook_env.via,
        # informational only (environment.py): never used for a decision
        "transport": None if hook_env is None else hook_env.transport,
        "client_address": None if hook_env is None else hook_env.client_address,
        "push_cert": None if hook_env is None or hook_env.push_cert is None else hook_env.push_cert.audit(),
        "refs": [{"ref": display(u.raw_ref), "old": u.old, "new": u.new} for u in updates],
        # gate server doctor's probe push (always refused): `gate server audit` leaves it out unless asked
        "probe": audit.probe_push([display(u.raw_ref) for u in updates]),
        "decision": outcome.decision,
        "exit": outcome.exit_code,
        "codes": outcome.codes,
        "attempt_ids": outcome.attempt_ids,
        "mode": outcome.mode,
        "commits_checked": outcome.commits_checked,
        **({} if outcome.commits_read is None else {"commits_read": outcome.commits_read}),
        "walks": outcome.walks,
        "catalogue": outcome.catalogue,
        "evidence": outcome.evidence,
        "approvals": [u.audit() for u in outcome.approvals],
        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
        "pid": os.getpid(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    started = time.monotonic()
    now = int(time.time())  # the one reading of the clock for this push
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] != "--gate-dir":
        sys.stderr.write("usage: python -m server.prereceive --gate-dir DIR\n")
        return 2
    gate_dir = args[1]
    where = installation.repository_of(gate_dir)  # the repository, in the admin's commands
    audit_log = os.path.join(gate_dir, installation.AUDIT_FILE)
    gitlab_guess = environment.detect_platform(os.environ) == "gitlab"
    hook_env: environment.HookEnv | None = None
    updates: list[RefUpdate] = []
    sink: str | None = None  # the installation's syslog socket, once read
    progress = Progress()  # how far the walks went, whatever stops them
    spent: list[Used] = []  # the uses this push recorded: taken back if it is refused after all

    def on_expire() -> None:  # runs in the watchdog thread, just before it ends the process
        take_back(hook_env, spent)
        audit.append(audit_log,
                     audit_record(hook_env, updates, rejection(3, "GATE-HOOK-DEADLINE", [], progress), now, started),
                     wait=0.2, syslog=sink)

    deadline = Deadline(STARTUP_DEADLINE_SECONDS, "GL-HOOK-ERR: " if gitlab_guess else "", on_expire)
    try:
        # 1. installation and environment (a plain-git installation may sit behind GitHub
        # Enterprise, gitolite or a web server: its identity comes from whichever platform
        # variables are present)
        inst = installation.read(gate_dir)
        sink = inst.syslog
        hook_env = environment.read_hook_env("auto" if inst.platform == "git" else inst.platform)
        # 2. input
        data = read_stdin()
        updates = parse_pre_receive(data)
        # 3. configuration
        policy = config.load_policy(inst.policy)
        deadline.reset(policy.deadline_for(hook_env.platform), started)
        conf = configuration(inst, policy, now)
        outcome = check_push(inst, hook_env, updates, conf, deadline, progress)  # stages 4 and 5
        outcome = after_chain(inst, hook_env, data, args[2:], outcome, deadline)
        # the approvals it used are spent, and the pusher sees whose they were
        outcome = spend(hook_env, outcome, spent)
    except GateError as exc:
        progress.stopped(exc)
        outcome = rejection(exc.exit_code, exc.code, error_lines(exc.code, exc.detail, gitlab=gitlab_guess,
                                                                 git_dir=where), progress)
    except Exception as exc:  # the boundary: an unexpected error is a rejection, never a pass
        import traceback

        sys.stderr.write(traceback.format_exc(limit=8))
        outcome = rejection(3, "GATE-HOOK-INTERNAL", error_lines("GATE-HOOK-INTERNAL", f"{type(exc).__name__}: {exc}",
                                                                 gitlab=gitlab_guess, git_dir=where), progress)
    # 6. audit
    try:
        if outcome.exit_code == 0 or os.path.isdir(gate_dir):  # no installation: nowhere to audit a rejection
            audit.append(audit_log, audit_record(hook_env, updates, outcome, now, started),
                         syslog=sink)
    except GateError as exc:
        outcome = rejection(exc.exit_code, exc.code,
                            outcome.lines + error_lines(exc.code, exc.detail, gitlab=gitlab_guess, git_dir=where))
    take_back(hook_env, spent if outcome.exit_code != 0 else [])  # refused after all: no approval is spent
    deadline.cancel()
    if outcome.lines:
        sys.stderr.write("\n".join(outcome.lines) + "\n")
    sys.stderr.flush()
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
