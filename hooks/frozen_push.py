"""`gate-frozen-push`: the pre-push stage. Would the server reject these commits or ref moves?

The updates are built from the push (hooks/pushset.py: git's own lines when the hook has
them, else the ref pre-commit names plus every local branch and tag with commits the
remote lacks), the refs the remote already has from its remote-tracking refs, and then
judged by the server's own composition (`gatecore.pipeline.judge`, the rules stage and, with a
repository id, approvals as this repository has fetched them): frozen paths in every new
commit (per rule scope, merges, renames, modes, types, submodules), rewinds that discard
frozen changes, and the policy's deletion and force rules. Reserved refs
(`refs/gate/*`, `refs/heads/review/runner/*`) are left to `gate-receipt-push`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from gatecore.configuration.policy import Policy
from gatecore.errors import GateError, unreadable
from gatecore.git.objects import Objects
from gatecore.git.refs import RefUpdate, ServerRefs, display
from gatecore.pipeline import RULES, RULES_AND_APPROVALS, Push, PushInput, judge

from . import clientconfig, pushset
from .common import ClientRepo, open_repo, verdict_lines

TYPE_CHECKING = False  # (typing's, as mypy reads it)
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    from gatecore.signing.allowedsigners import AllowedSigners
    from gatecore.signing.keys import Keyring
    from gatecore.signing.signatures import TrustedKeys

RULES_ONLY = frozenset({RULES})


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


def _config_path(repo: ClientRepo, key: str) -> str | None:
    return _config_value(repo, key, path=True)


def trusted_keys(repo: ClientRepo, policy: Policy) -> TrustedKeys | None:
    """The keys commit signatures are verified with, when the policy reads them: this repository's
    `gpg.ssh.allowedSignersFile` (the file git itself uses) and the OpenPGP keyring named by
    `gate.openpgpKeys` (the file the server has); with neither it is a configuration error
    (GATE-CONFIG-SIGNERS), as on the server."""
    if not policy.needs_signers:
        return None
    from gatecore.adapters.config import load_trusted_keys

    return load_trusted_keys(_config_path(repo, "gpg.ssh.allowedSignersFile"), _config_path(repo, "gate.openpgpKeys"))


def coverage_note(push: pushset.PushInput, extra: Sequence[RefUpdate]) -> list[str]:
    if push.exact:
        return [f"gate: note: checked every ref of the push to {push.remote} (git's pre-push input)"]
    named = ", ".join(display(u.raw_ref) for u in push.updates) or "nothing"
    text = f"gate: note: checked {named} (the ref pre-commit names)"
    if extra:
        text += (f" and {len(extra)} local ref(s) with commits {push.remote} does not have: "
                 + ", ".join(display(u.raw_ref) for u in extra))
    return [text + "; pre-commit passes hooks only the first ref of a push (docs/client.md)"]


def check(args: SimpleNamespace, env: Mapping[str, str], stdin: bytes) -> tuple[int, list[str]]:
    now = int(time.time())  # the one reading of the clock for this check
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
    revisions = pushset.config_revisions(push.remote, updates)
    policy, origin = clientconfig.load_policy(repo, revisions, args.policy)
    pusher = env.get("GATE_PUSHER", "").strip()
    notes = [*coverage_note(push, extra),
             f"gate: note: policy {origin}; pusher {pusher or '(unknown: set GATE_PUSHER)'}"]
    stages = RULES_ONLY
    repository_id = ""
    keyring = None
    if policy.approvals_enabled:
        repository_id = args.repository_id or _config_value(repo, "gate.repositoryId") or ""
        if repository_id:
            stages = RULES_AND_APPROVALS
            keyring = _keyring(repo, revisions)
            notes.append("gate: note: approvals as fetched: git fetch REMOTE '+refs/gate/*:refs/gate/*'")
        else:
            notes.append("gate: note: approvals not looked up: pass --repository-id ID (or git config "
                         "gate.repositoryId ID)")
    inp = PushInput(objects=Objects(repo), policy=policy, pusher=pusher, now=now, repository_id=repository_id,
                    server=ServerRefs(repo.ref_target), keyring=keyring, signers=trusted_keys(repo, policy),
                    load_ssh_signers=lambda: _ssh_signers(repo), existing=existing_refs(tracking, updates))
    judged = judge(inp, Push(updates), stages=stages)
    approved = [f"gate: note: {u.words()}" for u in judged.approvals_relied]
    return verdict_lines(judged.violations, policy, "push", notes, judged.commands, approved)


def _keyring(repo: ClientRepo, revisions: Sequence[str]) -> Keyring | None:
    """The server's keyring as this repository has it; none here: a sealed approval reads as
    unverifiable, as it would be."""
    try:
        return clientconfig.load_keyring(repo, revisions, None)
    except GateError:
        return None


def _ssh_signers(repo: ClientRepo) -> AllowedSigners | None:
    from gatecore.adapters.config import load_allowed_signers

    path = _config_path(repo, "gpg.ssh.allowedSignersFile")
    return None if path is None else load_allowed_signers(path)


def parser() -> argparse.ArgumentParser:
    import argparse

    p = argparse.ArgumentParser(prog="gate-frozen-push", description=(
        "pre-push stage: reject a push the server would reject for frozen files or ref rules (docs/client.md)."))
    p.add_argument("remote", nargs="?", default=None, help="the remote (git passes it to a pre-push hook)")
    p.add_argument("url", nargs="?", default=None, help=argparse.SUPPRESS)
    p.add_argument("--policy", default=None,
                   help=f"policy file (default: {clientconfig.POLICY_FILE} as the remote has it, else in HEAD)")
    p.add_argument("--repository-id", default=None,
                   help="the id the server was installed with, to look up approvals (default: git config "
                        "gate.repositoryId)")
    p.add_argument("--named-ref-only", action="store_true",
                   help="under pre-commit, check only the ref pre-commit names, not other local refs the remote lacks")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return pushset.run_push_hook(parser, check, argv, options=("--policy", "--repository-id"),
                                 flags=("--named-ref-only",))


if __name__ == "__main__":
    raise SystemExit(main())
