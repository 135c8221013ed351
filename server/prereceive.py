"""The pre-receive hook: `python -I server/launch.py server.prereceive --gate-dir DIR` (`gate server install`).

`main` is the pipeline, top to bottom, and its only error boundary:

1. the installation record and the environment (platform, pusher),
2. stdin, capped, parsed into ref updates (`gatecore.refs`),
3. the policy and keyring, from their validated caches (`gatecore.adapters.config`),
4. ref rules and frozen files over the new commits (`gatecore.pushcheck`),
5. the reserved namespaces: ledger, generation claims, receipts, review refs
   (`gatecore.ledgerrefs`, `gatecore.reviewrefs`), against the server's own ref values,
6. the verdict under the policy's mode (`gatecore.verdict`),
7. the report the pusher sees (`gatecore.report`), chained hooks,
8. one audit line (`server.audit`).

Exit codes: 0 accept, 1 policy reject, 2 configuration error, 3 internal error or
deadline. Anything but 0 rejects every ref of the push. Every path that is not a proven
accept ends in a rejection with a documented code, an audit line, and the code on stderr
(which git shows the pusher prefixed `remote: `).

Start-up is kept light on purpose: no typer, no pydantic, no pygit2 (the policy and
keyring come from their validated caches; receipts and ledger records are read by
`gatecore.schema`, and only when a push touches the reserved namespaces).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatecore.adapters import config, environment
from gatecore.errors import GateError
from gatecore.findings import Violation
from gatecore.gitmodel import GitReader
from gatecore.policy import Policy
from gatecore.refs import GATE_PREFIX, MAX_INPUT_BYTES, RefUpdate, display, is_reserved, parse_pre_receive
from gatecore.report import error_lines, render
from gatecore.verdict import decide

from . import audit, installation
from .deadline import Deadline

#: Until the policy (and its deadline: limits.deadline_seconds, or the platform's default) is read, the watchdog only
#: guards against a start-up that hangs: a loaded machine may take seconds to start Python.
STARTUP_DEADLINE_SECONDS = 30.0
GATE_APPROVALS = GATE_PREFIX + "approval"  # refs/gate/approvals/* and refs/gate/approval-uses/*


@dataclass
class Outcome:
    exit_code: int
    decision: str  # accept | reject | evaluate-reject
    lines: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    attempt_ids: list[str] = field(default_factory=list)
    commits_checked: int = 0
    mode: str | None = None
    walks: list[str] = field(default_factory=list)
    catalogue: str | None = None  # the agent catalogue version the policy's named sets came from
    approvals: list[Any] = field(default_factory=list)  # approvalrefs.Used: recorded once the push is accepted
    #: why each restricted commit that violated a rule was restricted (docs/agents.md, evidence)
    evidence: list[dict[str, str]] = field(default_factory=list)


def read_stdin() -> bytes:
    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise GateError("GATE-INPUT-TOO-LARGE", f"more than {MAX_INPUT_BYTES} bytes of input")
    return data


def load_keyring(inst: installation.Installation) -> Any:
    if not inst.has_keyring:
        raise GateError("GATE-CONFIG-KEYRING", "no keyring is installed for this repository, and this push needs "
                                               "one (refs/gate/*, review refs): install one with gate server install "
                                               "GIT_DIR --keyring FILE (docs/ci.md)")
    return config.load_keyring(inst.keyring)


def approval_context(inst: installation.Installation, policy: Policy, objects: Any, repo: GitReader) -> Any:
    """How this installation verifies approvals (`approvalrefs.ApprovalContext`): its keyring
    and allowed-signers file, loaded when a record needs them."""
    from gatecore import approvalrefs

    return approvalrefs.ApprovalContext(
        objects, policy, inst.repository_id, int(time.time()), repo.ref_target,
        lambda: load_keyring(inst) if inst.has_keyring else None,
        lambda: config.load_allowed_signers(inst.allowed_signers) if os.path.lexists(inst.allowed_signers)
        else None)


def check_push(inst: installation.Installation, hook_env: environment.HookEnv, updates: Sequence[RefUpdate],
               policy: Policy, deadline: Deadline) -> Outcome:
    """Stages 4-7: ref rules and frozen files, the reserved namespaces, the verdict, the report."""
    from gatecore.adapters.gitstream import GitStream
    from gatecore.refs import object_format_problem

    live = [u for u in updates if not u.is_noop]
    if not live:
        return Outcome(0, "accept", mode=policy.mode, catalogue=policy.catalogue_version)
    repo = GitStream(hook_env.git_dir, hook_env.quarantine)
    try:
        if (problem := object_format_problem(live, repo.object_format)) is not None:
            raise GateError("GATE-GIT-OBJECT-FORMAT", problem)
        return _checked(inst, hook_env, live, policy, deadline, repo)
    finally:
        repo.close()


def _checked(inst: installation.Installation, hook_env: environment.HookEnv, live: Sequence[RefUpdate],
             policy: Policy, deadline: Deadline, repo: GitReader) -> Outcome:
    from gatecore.objects import Objects
    from gatecore.pushcheck import PushChecker

    objects = Objects(repo)
    signers = None
    if policy.needs_signers:
        signers = config.load_trusted_keys(*(p if os.path.lexists(p) else None
                                             for p in (inst.allowed_signers, inst.openpgp_keys)))
    report = PushChecker(objects, policy, hook_env.pusher, None, deadline.at, signers).check(live)
    violations: list[Violation] = report.violations
    attempt_ids: list[str] = []
    reserved = [u for u in live if is_reserved(u.ref)]
    used: list[Any] = []
    commands: list[str] = []
    if policy.approvals_enabled or any(u.ref.startswith(GATE_APPROVALS) for u in reserved):
        from gatecore import approvalrefs

        actx = approval_context(inst, policy, objects, repo)
        pushed = [u for u in reserved if approvalrefs.is_approval_ref(u.ref)]
        reserved = [u for u in reserved if not approvalrefs.is_approval_ref(u.ref)]
        if policy.approvals_enabled:
            violations, used, commands = approvalrefs.apply(actx, live, violations)
        violations += approvalrefs.check_pushes(actx, hook_env.pusher, pushed)
    if reserved:
        from gatecore import reviewrefs
        from gatecore.ledgerrefs import ReservedContext, ServerRefs

        ctx = ReservedContext(objects, policy, hook_env.pusher, inst.repository_id, int(time.time()),
                              {u.ref: u for u in live}, ServerRefs(repo.ref_target), lambda: load_keyring(inst),
                              lambda: repo.symbolic_target("HEAD"))
        found = reviewrefs.check(ctx, reserved)
        violations += found.violations
        attempt_ids = found.attempt_ids
    verdict = decide(violations, policy.mode)
    lines = render(violations, mode=verdict.shown_as, cap=policy.max_violations_shown, gitlab=hook_env.gitlab,
                   commands=commands, git_dir=str(inst.gate_dir.parent))
    evidence = list({(v.commit, v.identity, v.evidence): {"commit": v.commit or "", "identity": v.identity or "",
                                                          "evidence": v.evidence}
                     for v in violations if v.evidence}.values())[:policy.max_violations_shown]
    return Outcome(verdict.exit_code, verdict.decision, lines, list(verdict.codes), attempt_ids,
                   report.commits_checked, policy.mode, report.walks, policy.catalogue_version,
                   used if policy.mode == "enforce" and verdict.exit_code == 0 else [], evidence=evidence)


def run_chain(inst: installation.Installation, data: bytes, argv: Sequence[str]) -> list[Violation]:
    """Run the hooks the gate was chained in front of, in order, with the same input. Each sits in
    `hooks/gate-chained/` under its own name (a hook may look at its `$0`). One that is gone is a
    configuration error (re-running the installer drops it), never a silent pass."""
    import subprocess

    for hook in inst.chain:
        if not os.access(hook, os.X_OK):
            raise GateError("GATE-CONFIG-INSTALL", f"the chained hook {hook} is missing or not executable: "
                                                   "restore it, or re-run gate server install to drop it")
        proc = subprocess.run([str(hook), *argv], input=data, check=False)
        if proc.returncode != 0:
            return [Violation("GATE-HOOK-CHAINED", "-", f"{hook.name} exited {proc.returncode}")]
    return []


def record_uses(hook_env: environment.HookEnv, used: Sequence[Any]) -> None:
    """Spend each approval the accepted push relied on: create refs/gate/approval-uses/<id>,
    create-only, in the repository proper (outside the quarantine, which forbids ref updates;
    the approval commit it points at is already there). A use that cannot be recorded
    rejects the push: GATE-APPROVAL-USED."""
    from gatecore.adapters.gitcmd import run_git
    from gatecore.approvalrefs import USES_PREFIX

    for u in used:
        got = run_git([f"--git-dir={hook_env.git_dir}", "update-ref", "-m", "gate: approval used", USES_PREFIX + u.id,
                       u.record, "0" * len(u.record)], ok=None,
                      unset=("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"))
        if not got.ok:
            raise GateError("GATE-APPROVAL-USED", f"approval {u.id[:16]} could not be recorded as used "
                                                  f"(another push used it first?): {got.last_error()}")


def audit_record(hook_env: environment.HookEnv | None, updates: Sequence[RefUpdate], outcome: Outcome,
                 started: float) -> dict[str, Any]:
    return {
        "event": "decision",
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pusher": None if hook_env is None else hook_env.pusher,
        "pusher_source": None if hook_env is None else hook_env.pusher_source,
        "platform": None if hook_env is None else hook_env.platform,
        "via": None if hook_env is None else hook_env.via,
        # informational only (environment.py): never used for a decision
        "transport": None if hook_env is None else hook_env.transport,
        "client_address": None if hook_env is None else hook_env.client_address,
        "push_cert": None if hook_env is None or hook_env.push_cert is None else hook_env.push_cert.audit(),
        "refs": [{"ref": display(u.raw_ref), "old": u.old, "new": u.new} for u in updates],
        "decision": outcome.decision,
        "exit": outcome.exit_code,
        "codes": outcome.codes,
        "attempt_ids": outcome.attempt_ids,
        "mode": outcome.mode,
        "commits_checked": outcome.commits_checked,
        "walks": outcome.walks,
        "catalogue": outcome.catalogue,
        "evidence": outcome.evidence,
        "approvals": [u.audit() for u in outcome.approvals],
        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
        "pid": os.getpid(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    started = time.monotonic()
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] != "--gate-dir":
        sys.stderr.write("usage: python -m server.prereceive --gate-dir DIR\n")
        return 2
    gate_dir = Path(args[1])
    where = str(gate_dir.parent)  # the repository, in the admin's commands
    gitlab_guess = environment.detect_platform(os.environ) == "gitlab"
    hook_env: environment.HookEnv | None = None
    updates: list[RefUpdate] = []
    sink: str | None = None  # the installation's syslog socket, once read

    def on_expire() -> None:  # runs in the watchdog thread, just before it ends the process
        audit.append(gate_dir / installation.AUDIT_FILE,
                     audit_record(hook_env, updates, Outcome(3, "reject", [], ["GATE-HOOK-DEADLINE"]), started),
                     wait=0.2, syslog=sink)

    deadline = Deadline(STARTUP_DEADLINE_SECONDS, "GL-HOOK-ERR: " if gitlab_guess else "", on_expire)
    try:
        inst = installation.read(gate_dir)
        sink = inst.syslog
        # A plain-git installation may sit behind GitHub Enterprise, gitolite or a web server:
        # its identity comes from whichever platform variables are present.
        hook_env = environment.read_hook_env("auto" if inst.platform == "git" else inst.platform)
        data = read_stdin()
        updates = parse_pre_receive(data)
        policy = config.load_policy(inst.policy)
        deadline.reset(policy.deadline_for(hook_env.platform), started)
        if inst.has_keyring:
            load_keyring(inst)  # a broken keyring rejects every push, not only review pushes
        outcome = check_push(inst, hook_env, updates, policy, deadline)
        if outcome.exit_code == 0 and inst.chain:
            chained = run_chain(inst, data, args[2:])
            if chained:
                outcome = Outcome(1, "reject", render(chained, mode="enforce", cap=10, gitlab=hook_env.gitlab),
                                  ["GATE-HOOK-CHAINED"], outcome.attempt_ids, outcome.commits_checked, policy.mode,
                                  outcome.walks, outcome.catalogue)
        if outcome.exit_code == 0 and outcome.approvals:
            record_uses(hook_env, outcome.approvals)
    except GateError as exc:
        outcome = Outcome(exc.exit_code, "reject", error_lines(exc.code, exc.detail, gitlab=gitlab_guess,
                                                               git_dir=where), [exc.code])
    except Exception as exc:  # the boundary: an unexpected error is a rejection, never a pass
        import traceback

        sys.stderr.write(traceback.format_exc(limit=8))
        outcome = Outcome(3, "reject", error_lines("GATE-HOOK-INTERNAL", f"{type(exc).__name__}: {exc}",
                                                   gitlab=gitlab_guess, git_dir=where), ["GATE-HOOK-INTERNAL"])
    try:
        if outcome.exit_code == 0 or gate_dir.is_dir():  # no installation: nowhere to audit a rejection
            audit.append(gate_dir / installation.AUDIT_FILE, audit_record(hook_env, updates, outcome, started),
                         syslog=sink)
    except GateError as exc:
        outcome = Outcome(exc.exit_code, "reject",
                          outcome.lines + error_lines(exc.code, exc.detail, gitlab=gitlab_guess, git_dir=where),
                          [exc.code])
    deadline.cancel()
    if outcome.lines:
        sys.stderr.write("\n".join(outcome.lines) + "\n")
    sys.stderr.flush()
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
