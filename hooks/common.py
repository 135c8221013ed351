"""What the three client hooks share: git plumbing calls, the error boundary, the output.

Exit codes are the server's: 0 accept (or evaluate mode), 1 policy reject, 2
configuration error, 3 internal error or unreadable repository. `run` is the one error
boundary: a `GateError` ends with its code and exit code, anything else with
GATE-HOOK-INTERNAL and 3, never with 0. Lines are gatecore.report's, so a client
rejection reads like the server's (without the `remote: ` prefix).
"""

from __future__ import annotations

import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence

from gatecore.errors import GateError, GitReadError
from gatecore.failure import Violation
from gatecore.policy import Policy
from gatecore.report import error_lines, rejects, render

#: Printed with every rejection: the client check is advice, the server decides.
ADVICE = "gate: note: this is the client check (advice); the server's pre-receive hook is the enforcement point"


def git(*args: str, ok_codes: tuple[int, ...] = (0,)) -> tuple[int, str]:
    """Run one git plumbing command in the hook's environment (GIT_INDEX_FILE and all).

    Returns (exit code, stdout). An exit code outside `ok_codes` is a GitReadError.
    """
    try:
        proc = subprocess.run(["git", *args], capture_output=True, check=False)
    except OSError as exc:
        raise GitReadError(f"cannot run git: {exc.strerror}", "GATE-GIT-REPOSITORY") from None
    if proc.returncode not in ok_codes:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitReadError(f"git {' '.join(args)} failed: {err[-1] if err else f'exit {proc.returncode}'}")
    return proc.returncode, proc.stdout.decode("utf-8", "surrogateescape")


def rev_commit(rev: str) -> str | None:
    """The commit `rev` names, or None if it names nothing (an unborn HEAD, a missing ref)."""
    if rev.startswith("-"):
        return None
    code, out = git("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", ok_codes=(0, 1))
    oid = out.strip()
    return oid if code == 0 and oid else None


def verdict_lines(violations: Sequence[Violation], policy: Policy, what: str,
                  notes: Sequence[str] = ()) -> tuple[int, list[str]]:
    """Exit code and lines for a finished check: 1 with the server's lines if anything is violated."""
    if not violations:
        return 0, []
    rejected = rejects(violations, policy.mode)
    lines = render(violations, mode="enforce" if rejected else "evaluate", cap=policy.max_violations_shown,
                   gitlab=False, what=what)
    lines += [*notes, ADVICE]
    return (1 if rejected else 0), lines


def run(check: Callable[[], tuple[int, list[str]]], what: str) -> int:
    """The one error boundary of a client hook: run `check`, print its lines, return its exit code."""
    try:
        code, lines = check()
    except GateError as exc:
        code = exc.exit_code
        lines = [*error_lines(exc.code, exc.detail, gitlab=False, what=what), ADVICE]
    except Exception as exc:  # the boundary: an unexpected error rejects, never passes
        sys.stderr.write(traceback.format_exc(limit=8))
        code = 3
        lines = error_lines("GATE-HOOK-INTERNAL", f"{type(exc).__name__}: {exc}", gitlab=False, what=what)
    if code == 0 and not lines:
        return 0
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    return code
