"""The pre-receive hook: `python -m server.prereceive --gate-dir DIR` (installed by `gate server install`).

Exit codes: 0 accept, 1 policy reject, 2 configuration error, 3 internal error or
deadline. Anything but 0 rejects every ref of the push. This is the only error boundary;
every path that is not a proven accept ends in a rejection with a documented code, an
audit line, and the code on stderr (which git shows the pusher prefixed `remote: `).

Start-up is kept light on purpose: no typer, no pydantic on the common path (the
policy and keyring come from their validated caches; receipts and ledger records, which
need pydantic, are only parsed when a push touches the reserved namespaces).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatecore import configcache, environment
from gatecore.errors import ConfigError, GateError, InputError
from gatecore.failure import Violation
from gatecore.policy import Policy
from gatecore.refupdates import RefUpdate, display, parse_pre_receive
from gatecore.report import error_lines, rejects, render

from . import audit, installation
from .deadline import Deadline

#: Until the policy (and its limits.deadline_seconds, default 4 s) is read, the watchdog only
#: guards against a start-up that hangs: a loaded machine may take seconds to start Python.
STARTUP_DEADLINE_SECONDS = 30.0


@dataclass
class Outcome:
    exit_code: int
    decision: str  # accept | reject | evaluate-reject
    lines: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    attempt_ids: list[str] = field(default_factory=list)
    commits_checked: int = 0


def _load_policy(inst: installation.Installation) -> Policy:
    from gatecore.policy import MAX_POLICY_BYTES

    def read(path: Path) -> bytes:
        return configcache.read_capped(path, "GATE-CONFIG-POLICY", "policy", MAX_POLICY_BYTES)

    def validate(data: bytes, origin: str) -> Any:
        from gatecore.policyfile import validate_bytes

        return validate_bytes(data, origin)

    plain = configcache.load(inst.policy, read, validate)
    try:
        return Policy.from_plain(plain)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GATE-CONFIG-POLICY", f"{inst.policy}: validated form unusable: {exc}") from None


def load_keyring(inst: installation.Installation) -> Any:
    from gatecore.keys import MAX_KEYRING_BYTES, keyring_from_plain

    if not inst.has_keyring:
        raise ConfigError("GATE-CONFIG-KEYRING", "no keyring is installed for this repository")

    def read(path: Path) -> bytes:
        return configcache.read_capped(path, "GATE-CONFIG-KEYRING", "keyring", MAX_KEYRING_BYTES)

    def validate(data: bytes, origin: str) -> Any:
        from gatecore.keyfiles import validate_keyring_bytes

        return validate_keyring_bytes(data, origin)

    plain = configcache.load(inst.keyring, read, validate)
    try:
        return keyring_from_plain(plain)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GATE-CONFIG-KEYRING", f"{inst.keyring}: validated form unusable: {exc}") from None


def _read_stdin() -> bytes:
    from gatecore.refupdates import MAX_INPUT_BYTES

    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise InputError("GATE-INPUT-TOO-LARGE", f"more than {MAX_INPUT_BYTES} bytes of input")
    return data


def _run_chain(inst: installation.Installation, data: bytes, argv: Sequence[str]) -> list[Violation]:
    out = []
    for hook in inst.chain:
        proc = subprocess.run([str(hook), *argv], input=data, check=False)
        if proc.returncode != 0:
            out.append(Violation("GATE-HOOK-CHAINED", "-", f"{hook.name} exited {proc.returncode}"))
            break
    return out


def decide(inst: installation.Installation, hook_env: environment.HookEnv, updates: list[RefUpdate],
           deadline: Deadline, started: float) -> tuple[Outcome, Policy]:
    from gatecore.gitrepo import GitRepo
    from gatecore.pushcheck import PushChecker, PushReport

    policy = _load_policy(inst)
    deadline.reset(policy.deadline_seconds, started)
    if inst.has_keyring:
        load_keyring(inst)  # a broken keyring rejects every push, not only review pushes
    if not updates:
        return Outcome(0, "accept"), policy
    if len(updates[0].old) != 40:
        raise ConfigError("GATE-GIT-OBJECT-FORMAT", "sha256 object ids: SHA-256 repositories are not supported")
    repo = GitRepo.from_env()
    checker = PushChecker(repo, policy, hook_env.pusher, None, deadline.at)

    def reserved(special: Sequence[RefUpdate], report: PushReport) -> list[Violation]:
        from gatecore.reserved import ReservedChecker

        from .reservations import reserve

        return ReservedChecker(repo, policy, hook_env.pusher, lambda: load_keyring(inst),
                               inst.repository_id, int(time.time()), updates,
                               lambda gen, attempt: reserve(inst.gate_dir, gen, attempt)).check(special, report)

    report = checker.check(updates, reserved)
    codes: list[str] = []
    for v in report.violations:
        if v.code not in codes:
            codes.append(v.code)
    if report.violations and not rejects(report.violations, policy.mode):
        lines = render(report.violations, mode="evaluate", cap=policy.max_violations_shown, gitlab=hook_env.gitlab)
        return Outcome(0, "evaluate-reject", lines, codes, report.attempt_ids, report.commits_checked), policy
    if report.violations:
        lines = render(report.violations, mode="enforce", cap=policy.max_violations_shown, gitlab=hook_env.gitlab)
        return Outcome(1, "reject", lines, codes, report.attempt_ids, report.commits_checked), policy
    return Outcome(0, "accept", [], [], report.attempt_ids, report.commits_checked), policy


def _audit_record(hook_env: environment.HookEnv | None, updates: list[RefUpdate], outcome: Outcome,
                  started: float, mode: str | None) -> dict[str, Any]:
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pusher": None if hook_env is None else hook_env.pusher,
        "pusher_source": None if hook_env is None else hook_env.pusher_source,
        "platform": None if hook_env is None else hook_env.platform,
        "via": None if hook_env is None else hook_env.via,
        "refs": [{"ref": display(u.raw_ref), "old": u.old, "new": u.new} for u in updates],
        "decision": outcome.decision,
        "exit": outcome.exit_code,
        "codes": outcome.codes,
        "attempt_ids": outcome.attempt_ids,
        "mode": mode,
        "commits_checked": outcome.commits_checked,
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
    gitlab_guess = environment.detect_platform(os.environ) == "gitlab"
    hook_env: environment.HookEnv | None = None
    updates: list[RefUpdate] = []
    mode: str | None = None

    def on_expire() -> None:  # runs in the watchdog thread, just before it ends the process
        audit.append(gate_dir / installation.AUDIT_FILE,
                     _audit_record(hook_env, updates, Outcome(3, "reject", [], ["GATE-HOOK-DEADLINE"]), started,
                                   mode), wait=0.2)

    deadline = Deadline(STARTUP_DEADLINE_SECONDS, "GL-HOOK-ERR: " if gitlab_guess else "", on_expire)
    data = b""
    try:
        inst = installation.read(gate_dir)
        # A plain-git installation may sit behind GitHub Enterprise, gitolite or a web server:
        # its identity comes from whichever platform variables are present.
        hook_env = environment.read_hook_env("auto" if inst.platform == "git" else inst.platform)
        data = _read_stdin()
        updates = parse_pre_receive(data)
        outcome, policy = decide(inst, hook_env, updates, deadline, started)
        mode = policy.mode
        if outcome.exit_code == 0 and inst.chain:
            chained = _run_chain(inst, data, args[2:])
            if chained:
                outcome = Outcome(1, "reject", render(chained, mode="enforce", cap=10, gitlab=hook_env.gitlab),
                                  ["GATE-HOOK-CHAINED"], outcome.attempt_ids, outcome.commits_checked)
    except GateError as exc:
        outcome = Outcome(exc.exit_code, "reject", error_lines(exc.code, exc.detail, gitlab=gitlab_guess), [exc.code])
    except Exception as exc:  # the boundary: an unexpected error is a rejection, never a pass
        detail = f"{type(exc).__name__}: {exc}"
        import traceback

        tb = traceback.format_exc(limit=8)
        outcome = Outcome(3, "reject", error_lines("GATE-HOOK-INTERNAL", detail, gitlab=gitlab_guess),
                          ["GATE-HOOK-INTERNAL"])
        sys.stderr.write(tb)
    try:
        audit.append(gate_dir / installation.AUDIT_FILE,
                     _audit_record(hook_env, updates, outcome, started, mode))
    except GateError as exc:
        outcome = Outcome(exc.exit_code, "reject",
                          outcome.lines + error_lines(exc.code, exc.detail, gitlab=gitlab_guess), [exc.code])
    deadline.cancel()
    if outcome.lines:
        sys.stderr.write("\n".join(outcome.lines) + "\n")
    sys.stderr.flush()
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
