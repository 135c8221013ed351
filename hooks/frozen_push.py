"""`gate-frozen-push`: the pre-push stage. Would the server reject these commits or ref moves?

The updates are built from the push (hooks/pushset.py: git's own lines when the hook has
them, else the ref pre-commit names plus every local branch and tag with commits the
remote lacks), the refs the remote already has from its remote-tracking refs, and then
checked by the server's own `gatecore.pushcheck.PushChecker`: frozen paths in every new
commit (per rule scope, merges, renames, modes, types, submodules), rewinds that discard
frozen changes, and the policy's deletion and force rules. Reserved refs
(`refs/gate/*`, `refs/heads/review/runner/*`) are left to `gate-receipt-push`.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gatecore.errors import GateError, unreadable
from gatecore.findings import Violation
from gatecore.objects import Objects
from gatecore.policy import Policy
from gatecore.pushcheck import PushChecker, PushReport
from gatecore.refs import RefUpdate, display

from . import clientconfig, pushset
from .common import ClientRepo, open_repo, verdict_lines

if TYPE_CHECKING:
    from gatecore.allowedsigners import AllowedSigners
    from gatecore.keys import Keyring


def existing_refs(tracking: Mapping[bytes, str], updates: Sequence[RefUpdate]) -> dict[bytes, str]:
    """The remote's refs as the check sees them: remote-tracking values, and each update's old value."""
    existing = dict(tracking)
    for u in updates:
        if not u.is_create:
            existing.setdefault(u.raw_ref, u.old)
    return existing


def require_local(repo: ClientRepo, updates: Sequence[RefUpdate], remote: str) -> None:
    """Fail closed, with the fix, when the remote's value of a ref is not in this repository."""
    for u in updates:
        if not u.is_create and not repo.exists(u.old):
            raise unreadable(f"{u.old} (what {remote} has at {display(u.raw_ref)}) is not in this repository; "
                               f"run git fetch {remote} and push again")


def _config_value(repo: ClientRepo, key: str, *, path: bool = False) -> str | None:
    from gatecore.adapters.gitcmd import run_git

    got = run_git([f"--git-dir={repo.path}", "config", *(["--path"] if path else []), key], ok=(0, 1))
    return got.stdout.decode("utf-8", "replace").strip() or None


def _config_path(repo: ClientRepo, key: str) -> Path | None:
    value = _config_value(repo, key, path=True)
    return Path(value) if value else None


def push_report(repo: ClientRepo, policy: Policy, pusher: str, updates: Sequence[RefUpdate],
                existing: dict[bytes, str]) -> PushReport:
    """The server's check of these updates, without the reserved namespaces (gate-receipt-push's).

    A policy that reads signatures verifies them with this repository's
    `gpg.ssh.allowedSignersFile` (the file git itself uses) and the OpenPGP keyring named by
    `gate.openpgpKeys` (the file the server has); with neither it is a configuration
    error (GATE-CONFIG-SIGNERS), as on the server."""
    signers = None
    if policy.needs_signers:
        from gatecore.adapters.config import load_trusted_keys

        ssh, openpgp = _config_path(repo, "gpg.ssh.allowedSignersFile"), _config_path(repo, "gate.openpgpKeys")
        signers = load_trusted_keys(ssh, openpgp)
    return PushChecker(Objects(repo), policy, pusher, existing, None, signers).check(updates)


def coverage_note(push: pushset.PushInput, extra: Sequence[RefUpdate]) -> list[str]:
    if push.exact:
        return [f"gate: note: checked every ref of the push to {push.remote} (git's pre-push input)"]
    named = ", ".join(display(u.raw_ref) for u in push.updates) or "nothing"
    text = f"gate: note: checked {named} (the ref pre-commit names)"
    if extra:
        text += (f" and {len(extra)} local ref(s) with commits {push.remote} does not have: "
                 + ", ".join(display(u.raw_ref) for u in extra))
    return [text + "; pre-commit passes hooks only the first ref of a push (docs/client.md)"]


def check(args: argparse.Namespace, env: Mapping[str, str], stdin: bytes) -> tuple[int, list[str]]:
    repo = open_repo()
    cache: dict[str, dict[bytes, str]] = {}
    push = pushset.read_push(repo, env, stdin, args.remote, args.url is not None, cache)
    tracking = cache[push.remote]
    extra: list[RefUpdate] = []
    if not push.exact and not args.named_ref_only:
        extra = pushset.pending_local(repo, tracking, push.updates, push.named_local)
    updates = [*push.updates, *extra]
    if not updates:
        return 0, []
    require_local(repo, updates, push.remote)
    policy, origin = clientconfig.load_policy(repo, pushset.config_revisions(push.remote, updates), args.policy)
    pusher = env.get("GATE_PUSHER", "").strip()
    report = push_report(repo, policy, pusher, updates, existing_refs(tracking, updates))
    notes = [*coverage_note(push, extra),
             f"gate: note: policy {origin}; pusher {pusher or '(unknown: set GATE_PUSHER)'}"]
    violations: list[Violation] = report.violations
    commands: list[str] = []
    approved: list[str] = []
    if policy.approvals_enabled:
        violations, commands, approved, note = with_approvals(repo, policy, args.repository_id, updates, violations,
                                                              pushset.config_revisions(push.remote, updates))
        notes += note
    return verdict_lines(violations, policy, "push", notes, commands, approved)


def with_approvals(repo: ClientRepo, policy: Policy, repository_id: str | None, updates: Sequence[RefUpdate],
                   violations: list[Violation], revisions: Sequence[str]
                   ) -> tuple[list[Violation], list[str], list[str], list[str]]:
    """The server's approvals as this repository has them (fetched: refs/gate/*), applied as the
    server applies them: (violations left, gate approve commands, 'approved' notes, notes)."""
    import time

    from gatecore.reserved.approvals import ApprovalContext, apply

    repository_id = repository_id or _config_value(repo, "gate.repositoryId")
    if not repository_id:
        return violations, [], [], ["gate: note: approvals not looked up: pass --repository-id ID "
                                    "(or git config gate.repositoryId ID)"]

    def keyring() -> Keyring | None:
        try:
            return clientconfig.load_keyring(repo, revisions, None)
        except GateError:
            return None  # no keyring here: a sealed approval reads as unverifiable, as it would be

    def signers() -> AllowedSigners | None:
        from gatecore.adapters.config import load_allowed_signers

        path = _config_path(repo, "gpg.ssh.allowedSignersFile")
        return None if path is None else load_allowed_signers(path)

    ctx = ApprovalContext(Objects(repo), policy, repository_id, int(time.time()), repo.ref_target, keyring, signers)
    left, used, commands = apply(ctx, updates, violations)
    approved = [f"gate: note: approved by {u.approver} (approval {u.id[:16]}): {', '.join(u.paths)} on {u.ref}"
                for u in used]
    return left, commands, approved, ["gate: note: approvals as fetched: git fetch REMOTE '+refs/gate/*:refs/gate/*'"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gate-frozen-push", description=(
        "pre-push stage: reject a push the server would reject for frozen files or ref rules (docs/client.md)."))
    p.add_argument("remote", nargs="?", default=None, help="the remote (git passes it to a pre-push hook)")
    p.add_argument("url", nargs="?", default=None, help=argparse.SUPPRESS)
    p.add_argument("--policy", type=Path, default=None,
                   help=f"policy file (default: {clientconfig.POLICY_FILE} as the remote has it, else in HEAD)")
    p.add_argument("--repository-id", default=None,
                   help="the id the server was installed with, to look up approvals (default: git config "
                        "gate.repositoryId)")
    p.add_argument("--named-ref-only", action="store_true",
                   help="under pre-commit, check only the ref pre-commit names, not other local refs the remote lacks")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return pushset.run_push_hook(parser(), check, argv)


if __name__ == "__main__":
    raise SystemExit(main())
