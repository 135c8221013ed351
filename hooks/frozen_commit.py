"""`gate-frozen-commit`: the pre-commit stage. Is the staged change a frozen-file write?

The staged tree (`git write-tree`, which honours the temporary index of `git commit -a`
and `git commit PATH`) is checked as the commit it will become: its parents are HEAD
(none on an unborn branch) and, while a merge is being concluded, every MERGE_HEAD; its
author and committer are the identities git will record (`git var GIT_AUTHOR_IDENT`,
`git var GIT_COMMITTER_IDENT`, so `--author`, `user.email` and the GIT_AUTHOR_* variables
all count); the pusher is `GATE_PUSHER` if set, else unknown. The engine is the server's
(`gatecore.checks.frozen.commit_violations`): for a merge a path counts as written when it
differs from every parent. Rules scoped to refs apply if they match the checked-out
branch (all of them on a detached HEAD).

Under `i18n.commitEncoding` (other than UTF-8) the commit is read as git will show it,
re-encoded from that encoding by git itself (`as_git_shows`), as the server reads it.

A handful of git calls whatever the size of the change; no per-file work outside the
tree comparison below directories a frozen pattern can match (git's processes read the
objects, as in the server's hook: no pygit2).

The message does not exist yet at this stage: rules that read trailers (`trailers`, and
`Co-authored-by` emails for `authors`) see the commit with its message at the commit-msg
stage (`hooks/frozen_message.py`, hook id `gate-frozen-files-msg`).
"""

from __future__ import annotations

from collections.abc import Sequence

from gatecore.adapters import environment, gitlayout
from gatecore.adapters.gitcmd import run_git, shown_commits
from gatecore.checks.frozen import FrozenChecker, commit_violations
from gatecore.configuration.policy import Policy
from gatecore.errors import GateError, unreadable
from gatecore.findings import Violation
from gatecore.git.grammar import Commit, Ident, parse_commit, parse_ident, reencoded_header, split_commit, with_shown
from gatecore.git.objects import Objects
from gatecore.git.refs import display
from gatecore.ids import OID_RE
from gatecore.signing.signatures import SignatureChecker

from . import clientconfig
from .common import ClientRepo, at_head, git, verdict_lines

TYPE_CHECKING = False  # (typing's, as mypy reads it)
if TYPE_CHECKING:
    import argparse

#: The commit id shown for the staged change (it has none yet).
STAGED = "(staged)"


def ident(var: str) -> tuple[Ident, bytes]:
    """The identity git will record (`git var GIT_AUTHOR_IDENT`), read by the server's parser,
    and its line as git will write it."""
    _, text = git("var", var)
    line = text.strip().encode("utf-8", "surrogateescape")
    got = parse_ident(line)
    if isinstance(got, str):
        raise GateError("GATE-INPUT-ARGUMENT", f"git var {var}: {got} ({text.strip()!r})")
    return got, line


def commit_identities() -> tuple[tuple[Ident, bytes], tuple[Ident, bytes]]:
    """(author, committer) that git will record for the commit being made, each with its line."""
    return ident("GIT_AUTHOR_IDENT"), ident("GIT_COMMITTER_IDENT")


def commit_encoding() -> bytes | None:
    """The encoding `git commit` will name in the commit's header (`i18n.commitEncoding`, as it
    is spelled), or None: UTF-8, which git names nowhere."""
    _, text = git("config", "--get", "i18n.commitEncoding", ok_codes=(0, 1))
    value = text.removesuffix("\n").encode("utf-8", "surrogateescape")
    return value if value and reencoded_header([value]) else None


def as_git_shows(repo: ClientRepo, staged: Commit, lines: tuple[bytes, bytes], encoding: bytes) -> Commit:
    """The commit-to-be as `git commit` will write it under `i18n.commitEncoding` (its header
    naming the encoding) and as `git log` will show it, re-encoded by git (`grammar.with_shown`):
    the object is written to a temporary object directory and read back through git, so that the
    client reads it as the server will (the repository's own objects are not touched)."""
    import tempfile

    raw = (b"tree " + staged.tree_id.encode("ascii") + b"\n"
           + b"".join(b"parent " + p.encode("ascii") + b"\n" for p in staged.parent_ids)
           + b"author " + lines[0] + b"\ncommitter " + lines[1] + b"\nencoding " + encoding + b"\n\n" + staged.message)
    with tempfile.TemporaryDirectory(prefix="gate-commit-") as tmp:
        env = {"GIT_OBJECT_DIRECTORY": tmp}
        written = run_git(["hash-object", "-t", "commit", "-w", "--literally", "--stdin"], input=raw, env=env)
        oid = written.stdout.decode("ascii", "replace").strip()
        shown = shown_commits(repo.path, [oid], env=env)
    header, message = split_commit(raw)
    return with_shown(parse_commit(oid, header, message), shown[oid])._replace(id=STAGED)


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


def staged_violations(repo: ClientRepo, policy: Policy, tree: str, parents: Sequence[str],
                      author: tuple[Ident, bytes], committer: tuple[Ident, bytes], pusher: str, branch: str | None,
                      message: bytes = b"", encoding: bytes | None = None) -> list[Violation]:
    """Every frozen path the commit-to-be writes, per rule that restricts one of its identities
    (`message`: its message, at the commit-msg stage; its trailers count as the server counts them;
    `encoding`: the one its header will name, which git shows it re-encoded from: `as_git_shows`).

    The same function the server applies to each pushed commit.
    """
    rules = [r for r in policy.rules if branch is None or r.applies_to_ref(branch)]
    staged = Commit(STAGED, tree, tuple(parents), (author[0], committer[0]), "", message, b"")
    if encoding is not None:
        staged = as_git_shows(repo, staged, (author[1], committer[1]), encoding)
    objects = Objects(repo)
    checker = FrozenChecker(objects, whole_change=policy.noncanonical_modes == "refuse")
    checker.signatures = SignatureChecker(objects, None)  # not signed yet: `signers` rules cannot see it here
    return commit_violations(checker, staged, rules, display(branch or "HEAD"), pusher, STAGED)


def check(policy_path: str | None, pusher: str, message: bytes = b"") -> tuple[int, list[str]]:
    tree = staged_tree()  # first: fails on an unmerged index before anything else is read
    author, committer = commit_identities()
    repo, head, branch = at_head()
    parents = ([head] if head else []) + merge_heads(repo.path)
    policy, origin = clientconfig.load_policy(repo, ["HEAD"], policy_path)
    violations = staged_violations(repo, policy, tree, parents, author, committer, pusher, branch, message,
                                   commit_encoding())
    notes = [f"gate: note: policy {origin}; author {author[0].email}, committer {committer[0].email}, "
             f"pusher {pusher or '(unknown: set GATE_PUSHER)'}"]
    return verdict_lines(violations, policy, "commit", notes)


def parser() -> argparse.ArgumentParser:
    import argparse  # (here: an agent's check imports this module for `commit_identities`, and not argparse)

    p = argparse.ArgumentParser(prog="gate-frozen-commit", description=(
        "pre-commit stage: reject a staged change that writes a frozen path for the identity that will "
        "commit it (docs/client.md)."))
    p.add_argument("--policy", default=None,
                   help=f"policy file (default: {clientconfig.POLICY_FILE} as committed in HEAD)")
    p.add_argument("filenames", nargs="*", help=argparse.SUPPRESS)  # ignored: the index is read whole
    return p


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    from .argv import options_and_files
    from .common import run

    options, _files = options_and_files(sys.argv[1:] if argv is None else argv, parser, ("--policy",))
    pusher = environment.client_env().get("GATE_PUSHER", "").strip()
    return run(lambda: check(options["--policy"], pusher), "commit")


if __name__ == "__main__":
    raise SystemExit(main())
