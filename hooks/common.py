"""What the three client hooks share: git plumbing calls, the repository, the error boundary, the output.

The repository is read as the server's hook reads it, through git's own processes
(`gatecore.adapters.gitstream.GitStream`: `cat-file`, `for-each-ref`, `rev-list`), never
pygit2, whose import alone costs a hook about 100 ms.

Exit codes are the server's: 0 accept (or evaluate mode), 1 policy reject, 2
configuration error, 3 internal error or unreadable repository. `run` is the one error
boundary: a `GateError` ends with its code's exit status, anything else with
GATE-HOOK-INTERNAL and 3, never with 0. The verdict is the server's (`gatecore.checks.verdict`)
and the lines are `gatecore.checks.report`'s, so a client rejection reads like the server's
(without the `remote: ` prefix).
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Callable, Sequence

from gatecore.adapters.gitcmd import run_git
from gatecore.adapters.gitstream import GitStream
from gatecore.checks.report import error_lines, render
from gatecore.checks.verdict import verdict_on
from gatecore.configuration.policy import Policy
from gatecore.errors import GateError
from gatecore.findings import Violation
from gatecore.ids import OID_RE

#: Printed with every rejection: the client check is advice, the server decides.
ADVICE = "gate: note: this is the client check (advice); the server's pre-receive hook is the enforcement point"


def git(*args: str, ok_codes: tuple[int, ...] = (0,)) -> tuple[int, str]:
    """Run one git plumbing command in the hook's environment (GIT_INDEX_FILE and all).

    Returns (exit code, stdout). An exit code outside `ok_codes` is GATE-GIT-UNREADABLE.
    """
    out = run_git(args, ok=ok_codes)
    return out.returncode, out.stdout.decode("utf-8", "surrogateescape")


class ClientRepo(GitStream):
    """The repository a client hook runs in, read as the server's hook reads one; its refs are
    listed once (one `git for-each-ref`: a hook moves none), and full ref names resolve to
    commits from that listing instead of one `git rev-parse` each."""

    def __init__(self, git_dir: str, workdir: str | None, object_format: str | None = None) -> None:
        super().__init__(git_dir, workdir=workdir, object_format=object_format)
        self._rows: dict[bytes, tuple[bytes, bytes]] | None = None
        #: What `rev_commit` answered already (`at_head` asks for HEAD with the repository's layout).
        self.known_commits: dict[str, str | None] = {}

    def _listing(self) -> dict[bytes, tuple[bytes, bytes]]:
        """name -> (id, symref target or b""); a symbolic ref's id is its target's."""
        if self._rows is None:
            self._rows = {name: (oid, symref) for name, oid, symref in self._for_each_ref()}
        return self._rows

    def ref_targets(self, keep: Callable[[bytes], bool] | None = None) -> dict[bytes, str]:
        return {name: oid.decode("ascii") for name, (oid, symref) in self._listing().items()
                if not symref and (keep is None or keep(name))}

    def symbolic_target(self, name: str) -> str | None:
        """From the listing for a ref it holds (one process fewer per pushed ref); a name it
        does not hold (absent, or a symbolic ref whose target is missing, which for-each-ref
        passes over) is asked of `git symbolic-ref` itself."""
        row = self._listing().get(name.encode("utf-8", "surrogateescape"))
        if row is None:
            return super().symbolic_target(name)
        return row[1].decode("utf-8", "surrogateescape") or None

    def symbolic_targets(self, names: Sequence[str]) -> dict[str, str]:
        """From the listing for the refs it holds; the others in one batch (`unlisted_symbolic`)."""
        listing = self._listing()
        out = {}
        for name in names:
            row = listing.get(name.encode("utf-8", "surrogateescape"))
            if row is not None and row[1]:
                out[name] = row[1].decode("utf-8", "surrogateescape")
        out.update(self.unlisted_symbolic([n for n in names if n.encode("utf-8", "surrogateescape") not in listing]))
        return out

    def commit_of(self, rev: str) -> str | None:
        """`rev_commit(rev)`, from the listing for a full ref name (a symbolic one included)."""
        if not rev.startswith("refs/"):
            if rev not in self.known_commits:
                self.known_commits[rev] = rev_commit(rev)
            return self.known_commits[rev]
        row = self._listing().get(rev.encode("utf-8", "surrogateescape"))
        if row is None:
            return None
        from gatecore.git.objects import Objects

        return Objects(self).peel_to_commit(row[0].decode("ascii"))


#: What `open_repo` asks `git rev-parse`: the git directory, the object format, and the work tree.
_LAYOUT = ("rev-parse", "--absolute-git-dir", "--show-object-format", "--is-inside-work-tree", "--show-cdup")


def _opened(lines: Sequence[str]) -> tuple[ClientRepo, int]:
    """The repository `_LAYOUT`'s answer names, and how many of its lines that answer took
    (`--show-cdup` prints no line outside a work tree)."""
    inside = len(lines) > 3 and lines[2] == "true"
    repo = ClientRepo(lines[0], os.path.abspath(lines[3] or ".") if inside else None, lines[1])
    atexit.register(repo.close)
    return repo, 4 if inside else 3


def open_repo() -> ClientRepo:
    """The repository the hook runs in (GIT_DIR, else found from the current directory, as git
    finds it), with its work tree if it has one; its git processes end with the hook."""
    _, out = git(*_LAYOUT)
    return _opened(out.split("\n"))[0]


def at_head() -> tuple[ClientRepo, str | None, str | None]:
    """`open_repo()`, HEAD's commit (`rev_commit("HEAD")`, None on an unborn branch) and the checked-out
    branch (`current_branch()`, None on a detached HEAD): one `git rev-parse` when HEAD is a commit,
    the common case; the questions one by one otherwise (an unborn branch)."""
    got = run_git([*_LAYOUT, "HEAD^{commit}", "--symbolic-full-name", "HEAD"], ok=None)
    lines = got.stdout.decode("utf-8", "surrogateescape").split("\n")
    if got.returncode == 0 and len(lines) > 3:
        repo, used = _opened(lines)
        answers = lines[used:]
        if len(answers) == 3 and OID_RE.fullmatch(answers[0]):
            repo.known_commits["HEAD"] = answers[0]
            return repo, answers[0], answers[1] if answers[1].startswith("refs/") else None
        repo.close()
    head, branch = rev_commit("HEAD"), current_branch()
    repo = open_repo()
    repo.known_commits["HEAD"] = head
    return repo, head, branch


def current_branch() -> str | None:
    """The checked-out branch (a full ref name), or None on a detached HEAD."""
    code, out = git("symbolic-ref", "-q", "HEAD", ok_codes=(0, 1))
    name = out.strip()
    return name if code == 0 and name else None


def rev_commit(rev: str) -> str | None:
    """The commit `rev` names, or None if it names nothing (an unborn HEAD, a missing ref)."""
    if rev.startswith("-"):
        return None
    code, out = git("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", ok_codes=(0, 1))
    oid = out.strip()
    return oid if code == 0 and oid else None


def verdict_lines(violations: Sequence[Violation], policy: Policy, what: str,
                  notes: Sequence[str] = (), commands: Sequence[str] = (),
                  approved: Sequence[str] = ()) -> tuple[int, list[str]]:
    """Exit code and lines for a finished check: 1 with the server's lines if anything is violated;
    `approved`: notes on approvals the push relies on, shown whatever the verdict."""
    verdict = verdict_on(violations, policy.mode)
    if not violations:
        return 0, list(approved)
    lines = render(violations, mode=verdict.shown_as, cap=policy.max_violations_shown, gitlab=False, what=what,
                   commands=commands)
    return verdict.exit_code, [*lines, *approved, *notes, ADVICE]


def run(check: Callable[[], tuple[int, list[str]]], what: str) -> int:
    """The one error boundary of a client hook: run `check`, print its lines, return its exit code."""
    try:
        code, lines = check()
    except GateError as exc:
        code = exc.exit_code
        lines = [*error_lines(exc.code, exc.detail, gitlab=False, what=what), ADVICE]
    except Exception as exc:  # the boundary: an unexpected error rejects, never passes
        import traceback

        sys.stderr.write(traceback.format_exc(limit=8))
        code = 3
        lines = error_lines("GATE-HOOK-INTERNAL", f"{type(exc).__name__}: {exc}", gitlab=False, what=what)
    if code == 0 and not lines:
        return 0
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    return code
