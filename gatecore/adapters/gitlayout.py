"""Every reading of git's on-disk layout the gate does by hand, in one place, each held equal to
git's own answer by a differential test (tests/unit/test_gitlayout.py).

Git is the authority on where a repository keeps what, and the layouts multiply: a linked
worktree reads its config from the common directory; refs live in loose files and
`packed-refs`, in a reftable stack, or at a path of their own (`extensions.refStorage =
files://DIR`, `reftable://DIR`, `GIT_REFERENCE_BACKEND` in the environment); the object format
is a config key. Everywhere else the gate asks git, in a process it runs anyway where it can
(`rev-parse --show-object-format` beside `--absolute-git-dir`).

**The budget.** A by-hand reading on a hook's path must save at least 5 ms of that hook's time
(`./dev bench --scenario small` for the server's hook, `--scenario client` for a client hook),
about two git processes; below that, the gate asks git, whose answer is right in every layout
by definition. Measured against it (2 cores, docs/architecture.md has the figures), the three
readings the hooks made for milliseconds went: the object format read from the config (the hook
now asks `git rev-parse --show-object-format`: one process, 1.5-2 ms), the receipt hook's
repository discovery and loose/packed receipt refs (one `for-each-ref`, 1.6-2.5 ms), and
argparse's terminal width worked out without `shutil` (3.2 ms of imports). The reftable-or-files
guess from the directory went too: the symbolic-ref questions of a push are one batch in every
backend (`GitStream.unlisted_symbolic`).

What is left is read by hand because git offers no plumbing for it, not for speed:

* `merge_heads`: every commit of a merge being concluded (`MERGE_HEAD`, a file in the git
  directory in every ref backend; `git rev-parse MERGE_HEAD` names only the first of an
  octopus's), for `gate-frozen-commit`;
* `shallow_path`: where the repository's list of shallow commits lies (`shallow`, in the common
  directory of a linked worktree), for the walk's shallow boundaries (`gitcmd.shallow_commits`):
  no plumbing lists those commits, so the file is read by hand, and its place with it.

This module reads nothing but `os`, so a hook's quick path may import it.
"""

from __future__ import annotations

import os

_HEX = frozenset("0123456789abcdef")
_ID_WIDTHS = (40, 64)


def merge_heads(git_dir: str) -> list[str] | None:
    """The commits `MERGE_HEAD` names, one a line (several for an octopus merge), as git reads
    them when it concludes the merge; [] when there is no merge; None when the file cannot be
    read or holds anything but full object ids (the caller refuses: never "no merge")."""
    try:
        with open(os.path.join(git_dir, "MERGE_HEAD"), "rb") as f:
            text = f.read(1 << 20).decode("ascii")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError):
        return None
    heads = text.split()
    return heads if all(len(h) in _ID_WIDTHS and set(h) <= _HEX for h in heads) else None


def shallow_path(git_dir: str) -> str:
    """The repository's `shallow` file as git finds it (`git rev-parse --git-path shallow`): in
    the common directory a linked worktree's `commondir` names (relative to the git directory,
    or absolute), else in the git directory. It may not exist: a repository that is not shallow."""
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), "rb") as f:
            named = f.read(4096).decode("utf-8", "surrogateescape").strip()
        if named:
            common = os.path.join(git_dir, named)  # (an absolute path replaces git_dir)
    except OSError:
        pass
    return os.path.join(common, "shallow")
