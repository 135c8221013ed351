"""`gate-frozen-commit`: the pre-commit stage. Is the staged change a frozen-file write?

The staged tree (`git write-tree`, which honours the temporary index of `git commit -a`
and `git commit PATH`) is checked as the commit it will become: its parents are HEAD
(none on an unborn branch) and, while a merge is being concluded, every MERGE_HEAD; its
author and committer are the identities git will record (`git var GIT_AUTHOR_IDENT`,
`git var GIT_COMMITTER_IDENT`, so `--author`, `user.email` and the GIT_AUTHOR_* variables
all count); the pusher is `GATE_PUSHER` if set, else unknown. The engine is the server's
(`gatecore.frozen.commit_violations`): for a merge a path counts as written when it
differs from every parent. Rules scoped to refs apply if they match the checked-out
branch (all of them on a detached HEAD).

A handful of git calls whatever the size of the change; no per-file work outside the
tree comparison below directories a frozen pattern can match (git's processes read the
objects, as in the server's hook: no pygit2).

The message does not exist yet at this stage: rules that read trailers (`trailers`, and
`Co-authored-by` emails for `authors`) see the commit with its message at the commit-msg
stage (`hooks/frozen_message.py`, hook id `gate-frozen-files-msg`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from gatecore.adapters import environment, gitlayout
from gatecore.errors import GateError, unreadable
from gatecore.findings import Violation
from gatecore.frozen import FrozenChecker, commit_violations
from gatecore.ids import OID_RE
from gatecore.objects import Commit, Ident, Objects, parse_ident
from gatecore.policy import Policy
from gatecore.refs import display
from gatecore.signatures import SignatureChecker

from . import clientconfig
from .common import ClientRepo, current_branch, git, open_repo, rev_commit, verdict_lines

#: The commit id shown for the staged change (it has none yet).
STAGED = "(staged)"


def ident(var: str) -> Ident:
    """The identity git will record (`git var GIT_AUTHOR_IDENT`), read by the server's parser."""
    _, text = git("var", var)
    got = parse_ident(text.strip().encode("utf-8", "surrogateescape"))
    if isinstance(got, str):
        raise GateError("GATE-INPUT-ARGUMENT", f"git var {var}: {got} ({text.strip()!r})")
    return got


def commit_identities() -> tuple[Ident, Ident]:
    """(author, committer) that git will record for the commit being made."""
    return ident("GIT_AUTHOR_IDENT"), ident("GIT_COMMITTER_IDENT")


def staged_tree() -> str:
    """The tree the index holds (written to the object store, as `git commit` will)."""
    _, out = git("write-tree")
    tree = out.strip()
    if not OID_RE.fullmatch(tree):
        raise unreadable(f"git write-tree printed {tree!r}")
    return tree


def merge_heads(git_dir: str) -> list[str]:
    """The other parents of a merge being concluded (MERGE_HEAD: `gitlayout.merge_heads`), or none."""
    heads = gitlayout.merge_heads(git_dir)
    if heads is None:
        raise unreadable(f"{git_dir}/MERGE_HEAD cannot be read as object ids")
    return heads


def staged_violations(repo: ClientRepo, policy: Policy, tree: str, parents: Sequence[str], author: Ident,
                      committer: Ident, pusher: str, branch: str | None, message: bytes = b"") -> list[Violation]:
    """Every frozen path the commit-to-be writes, per rule that restricts one of its identities
    (`message`: its message, at the commit-msg stage; its trailers count as the server counts them).

    The same function the server applies to each pushed commit.
    """
    rules = [r for r in policy.rules if branch is None or r.applies_to_ref(branch)]
    staged = Commit(STAGED, tree, tuple(parents), (author, committer), "", message, b"")
    objects = Objects(repo)
    checker = FrozenChecker(objects, whole_change=policy.noncanonical_modes == "refuse")
    checker.signatures = SignatureChecker(objects, None)  # not signed yet: `signers` rules cannot see it here
    return commit_violations(checker, staged, rules, display(branch or "HEAD"), pusher, STAGED)


def check(policy_path: Path | None, pusher: str, message: bytes = b"") -> tuple[int, list[str]]:
    tree = staged_tree()  # first: fails on an unmerged index before anything else is read
    author, committer = commit_identities()
    head = rev_commit("HEAD")
    branch = current_branch()
    repo = open_repo()
    parents = ([head] if head else []) + merge_heads(repo.path)
    policy, origin = clientconfig.load_policy(repo, ["HEAD"], policy_path)
    violations = staged_violations(repo, policy, tree, parents, author, committer, pusher, branch, message)
    notes = [f"gate: note: policy {origin}; author {author.email}, committer {committer.email}, "
             f"pusher {pusher or '(unknown: set GATE_PUSHER)'}"]
    return verdict_lines(violations, policy, "commit", notes)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gate-frozen-commit", description=(
        "pre-commit stage: reject a staged change that writes a frozen path for the identity that will "
        "commit it (docs/client.md)."))
    p.add_argument("--policy", type=Path, default=None,
                   help=f"policy file (default: {clientconfig.POLICY_FILE} as committed in HEAD)")
    p.add_argument("filenames", nargs="*", help=argparse.SUPPRESS)  # ignored: the index is read whole
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from .common import run

    args = parser().parse_args(argv)
    pusher = environment.client_env().get("GATE_PUSHER", "").strip()
    return run(lambda: check(args.policy, pusher), "commit")


if __name__ == "__main__":
    raise SystemExit(main())
