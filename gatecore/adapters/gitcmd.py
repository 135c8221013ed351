"""The one wrapper around the `git` command, and the history walk the hook runs through it.

Every git command the gate runs gets the same environment: replacement objects off
(`GIT_NO_REPLACE_OBJECTS`), grafts off (`GIT_GRAFT_FILE` pointing where no file can be), and
no lazy fetching; inside a hook it inherits `GIT_DIR` and the quarantine's object
directories, so it sees the pushed objects. A command that cannot run, or exits with an
unexpected status, is a `GateError`, never an empty answer.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import select
import threading
import time
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence

from ..errors import GateError, malformed, unreadable
from ..git.gitmodel import ShownCommit, WalkedCommit
from ..git.refs import REVIEW_PREFIX
from ..valueclass import valueclass
from . import gitlayout, spawn
from .environment import shallow_file

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    from typing import IO

#: What every git command the gate runs reads the repository without.
HARDENED = {
    "GIT_NO_REPLACE_OBJECTS": "1",  # `refs/replace/*` would make git read other objects
    "GIT_GRAFT_FILE": os.devnull + "/no-grafts",  # so would `info/grafts` (a path that cannot exist)
    "GIT_NO_LAZY_FETCH": "1",  # a partial clone must not fetch while we read
}

_READ_CHUNK = 1 << 20
_SHALLOW_LINE = rb"[0-9a-f]{40}|[0-9a-f]{64}"  # (compiled where used: a shallow repository's list)


@valueclass(frozen=True, slots=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def text(self) -> str:
        return (self.stdout + self.stderr).decode("utf-8", "replace").strip()

    def last_error(self) -> str:
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit {self.returncode}"

    def all_errors(self) -> str:
        """Every line git wrote to stderr, on one line (a remote's refusal spans several)."""
        lines = [x.strip() for x in self.stderr.decode("utf-8", "replace").splitlines() if x.strip()]
        return " ".join(lines)[:1000] if lines else f"exit {self.returncode}"


def environment(extra: Mapping[str, str] | None = None, unset: Sequence[str] = ()) -> dict[str, str]:
    """The process environment with the hardening, `extra` on top, and `unset` removed."""
    env = {**os.environ, **HARDENED, **(extra or {})}
    for name in unset:
        env.pop(name, None)
    return env


def _spawn(args: Sequence[str], cwd: str | os.PathLike[str] | None, input: bytes | None, env: Mapping[str, str],
           timeout: float | None) -> GitResult:
    """git's status and output. Not starting git at all, or running past the hook's deadline
    (`timeout`), is the machine's fault whoever asked: those codes are fixed here. (git is started
    by `spawn`, the hooks' way, without `subprocess`; one that must start in another directory,
    `cwd`, which `posix_spawn` cannot give it, is told so by `git -C`, once that directory is known
    to be one it can enter: a missing or closed one is the same `OSError` a `chdir` would have raised.)"""
    try:
        argv = ["git", *args]
        if cwd is not None:
            where = os.fspath(cwd)
            if not os.path.isdir(where):
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), where)
            if not os.access(where, os.X_OK):  # (one git could not enter: git's error would read as "no repository")
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), where)
            argv = ["git", "-C", where, *args]
        status, out, err = spawn.run(argv, input, env, timeout)
        return GitResult(status, out, err)
    except spawn.TimedOut:
        raise GateError("GATE-HOOK-DEADLINE", f"git {args[0]} ran out of time") from None
    except OSError as exc:
        raise GateError("GATE-GIT-REPOSITORY", f"cannot run git: {exc.strerror}") from None


#: What the end of a transport's stderr keeps (`transport`): a refusal's lines, the server's included.
TRANSPORT_STDERR = 1 << 20


def _transport(args: Sequence[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str]) -> GitResult:
    """git talking to a remote (fetch, push, ls-remote): its status and output once git exits, not
    once its pipes end. The transport's helpers may outlive git holding them (an ssh control master
    keeps stderr), so reading stops at git's exit plus a grace (`childproc`); what they leave is
    not the gate's to end (it may serve other sessions) and is never waited for. git keeps this
    process's group and terminal (an ssh passphrase is asked there)."""
    from . import childproc

    try:
        ran = childproc.run(["git", *args], None, env=env, timeout=None, stderr_tail=TRANSPORT_STDERR,
                            own_session=False, cwd=cwd)
    except OSError as exc:
        raise GateError("GATE-GIT-REPOSITORY", f"cannot run git: {exc.strerror}") from None
    assert ran.status is not None  # (no timeout)
    return GitResult(ran.status, ran.stdout, ran.stderr_tail)


def run_git(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None, input: bytes | None = None,
            env: Mapping[str, str] | None = None, unset: Sequence[str] = (), timeout: float | None = None,
            ok: tuple[int, ...] | None = (0,), code: str = "GATE-GIT-UNREADABLE", transport: bool = False) -> GitResult:
    """Run `git ARGS`; a status outside `ok` (None: any) raises GateError(code) with git's last line.
    `transport`: git talks to a remote (`_transport`; no input, no timeout)."""
    assert not transport or (input is None and timeout is None)
    result = _transport(args, cwd, environment(env, unset)) if transport else _spawn(
        args, cwd, input, environment(env, unset), timeout)
    if ok is not None and result.returncode not in ok:
        raise GateError(code, f"git {' '.join(args[:2])} failed: {result.last_error()}")
    return result


#: How far git may write ahead of the reader (Linux; a pipe holds 64 KiB by default).
PIPE_BYTES = 1 << 20


def helper(argv: Sequence[str], what: str, bufsize: int = -1) -> tuple[spawn.Child, IO[bytes], IO[bytes]]:
    """A helper process the hook talks to through pipes (git cat-file, the tree search): the
    process, its stdin and its stdout. GATE-GIT-UNREADABLE if it cannot start (`what`: 'run git
    cat-file', ...); `killed_saying` reports one that broke off."""
    try:
        proc = spawn.Child(argv, environment(), bufsize)
    except OSError as exc:
        raise unreadable(f"cannot {what}: {exc.strerror}") from None
    return proc, proc.stdin, proc.stdout


class Written:
    """A request written whole already (`start_writer`'s for one the pipe takes at once): nothing to join."""

    def join(self) -> None:
        return None


def start_writer(pipe: IO[bytes], data: bytes, name: str,
                 close: bool = False) -> tuple[threading.Thread | Written, list[BaseException]]:
    """A started thread writing `data` to a helper's stdin whole (the helper answers while it is
    read), and where it puts the error if the helper stops reading (the reader sees it end too).
    `close`: close the pipe after it (the helper reads to the end of its input).

    A request of at most `select.PIPE_BUF` bytes is written here instead, without a thread (about
    0.1 ms each): the helpers answer every request before the next is written, so the pipe is
    empty, and such a write into it never blocks."""
    failed: list[BaseException] = []
    if len(data) <= select.PIPE_BUF and not close:
        try:
            pipe.write(data)
            pipe.flush()
        except OSError as exc:
            failed.append(exc)
        return Written(), failed

    def write() -> None:
        try:
            pipe.write(data)
            pipe.flush()
        except OSError as exc:
            failed.append(exc)
        finally:
            if close:
                with contextlib.suppress(OSError):
                    pipe.close()

    writer = threading.Thread(target=write, name=name, daemon=True)
    writer.start()
    return writer, failed


def killed_saying(proc: spawn.Child) -> str:
    """Kill a helper process that broke off its answers and return the last line of what it
    wrote to stderr, as ': LINE' (or '' if it wrote nothing), for the GATE-GIT-UNREADABLE reason."""
    proc.kill()
    try:
        _, err = proc.communicate(timeout=2)
    except (spawn.TimedOut, ValueError, OSError):
        err = b""
    lines = (err or b"").decode("utf-8", "replace").strip().splitlines()
    return f": {lines[-1]}" if lines else ""


def widen(pipe: IO[bytes]) -> None:
    """Let git write up to `PIPE_BYTES` ahead of the reader, so that it goes on walking or
    reading objects while Python works on what it wrote (F_SETPIPE_SZ, Linux)."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (OSError, ImportError, ValueError):
        pass  # an older kernel or another system: the default pipe works, only slower


def _records(stream: int, proc: spawn.Child, deadline: float | None) -> Iterator[list[bytes]]:
    """NUL-terminated records from a pipe, read in chunks, under the deadline: each chunk's."""
    pending = b""
    while True:
        if deadline is not None and time.monotonic() > deadline:
            proc.kill()
            raise GateError("GATE-HOOK-DEADLINE", "walking history: git rev-list ran out of time")
        chunk = os.read(stream, _READ_CHUNK)
        if not chunk:
            break
        done = (pending + chunk).split(b"\0")
        pending = done.pop()
        yield done
    if pending:
        raise malformed(f"git rev-list ended in the middle of a record ({pending[:60]!r})")


#: The most of a shallow list the gate reads (a million boundary commits).
MAX_SHALLOW_BYTES = 65 << 20


def shallow_commits(git_dir: str) -> frozenset[str]:
    """The commits git walks without parents here, read where git reads them: the file
    `GIT_SHALLOW_FILE` names (receive-pack's list for a push with new shallow roots: the
    repository's own and the push's), else the repository's `shallow` file
    (`gitlayout.shallow_path`). No file, or an empty name: none. A line git would not take makes
    git's own walk fail; it is left out here."""
    path = shallow_file()
    if path is None:
        path = gitlayout.shallow_path(git_dir)
    if not path:
        return frozenset()
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SHALLOW_BYTES)
    except OSError:
        return frozenset()
    return frozenset(line.decode("ascii") for line in data.split(b"\n") if re.fullmatch(_SHALLOW_LINE, line))


def walk(git_dir: str, tips: Sequence[str], hide: Iterable[str] | None, deadline: float | None,
         messages: bool = False) -> Iterator[WalkedCommit]:
    """`git rev-list --parents --header TIPS --not HIDE` (None: every branch and tag but the
    review refs), streamed.

    git prints each commit as `<id> <parents>`, its raw header lines verbatim, a blank
    line and the message indented by four spaces, NUL-terminated; it stops printing a
    commit at a NUL byte, so no record can hold a forged one. Run by git itself: it walks
    past many hidden refs far faster than libgit2's revwalk, and a missing object is an
    error, never "nothing new".
    """
    args = ["--parents", "--header", *tips]
    data = b""
    if hide is None:
        # Review refs (one per attempt, many) never count as checked: excluding them keeps the
        # walk's cost independent of how many attempts are open, and can only check more.
        # (--exclude before --branches matches names without refs/heads/, as git documents.)
        args += ["--not", f"--exclude={REVIEW_PREFIX.removeprefix('refs/heads/')}*", "--branches", "--tags"]
    else:
        args.append("--stdin")
        data = "".join(f"^{oid}\n" for oid in hide).encode("ascii")
    shallow = shallow_commits(git_dir)
    for record in _rev_list(git_dir, args, data, deadline):
        yield _walked(record, messages, shallow)


def quick_walk(git_dir: str, tips: Sequence[str], hide: Sequence[str], limit: int, deadline: float | None
               ) -> tuple[list[WalkedCommit], list[str]] | None:
    """`git rev-list --parents --header --boundary TIPS --not HIDE`, read whole: the commits (as
    `walk` yields them, their messages kept) and the boundary (the hidden commits that are a
    parent of one of them, which git prints after all the others, each marked `-`); None, and git
    stopped, past `limit` commits."""
    data = "".join([*(f"{t}\n" for t in tips), *(f"^{h}\n" for h in hide)]).encode("ascii")
    shallow = shallow_commits(git_dir)
    walked: list[WalkedCommit] = []
    boundary: list[str] = []
    records = _rev_list(git_dir, ["--parents", "--header", "--boundary", "--stdin"], data, deadline)
    try:
        for record in records:
            if record[:1] == b"-":
                boundary.append(record[1:].partition(b"\n")[0].partition(b" ")[0].decode("ascii", "replace"))
            elif boundary:
                raise malformed(f"git rev-list printed a commit after the boundary ({record[:60]!r})")
            elif len(walked) == limit:
                return None
            else:
                walked.append(_walked(record, True, shallow))
    finally:
        records.close()  # (past the limit: git is stopped)
    return walked, boundary


def _rev_list(git_dir: str, args: Sequence[str], data: bytes, deadline: float | None) -> Generator[bytes, None, None]:
    """The NUL-terminated records of `git rev-list ARGS` (`data` on its stdin), streamed under
    the deadline; git's failure is GATE-GIT-UNREADABLE with its last line. Closing the iterator
    early stops git."""
    if deadline is not None and deadline - time.monotonic() <= 0:
        raise GateError("GATE-HOOK-DEADLINE", "out of time before walking history")
    argv = ["git", f"--git-dir={git_dir}", "-c", "i18n.logOutputEncoding=", "rev-list", *args]
    try:
        proc = spawn.Child(argv, environment())
    except OSError as exc:
        raise GateError("GATE-GIT-REPOSITORY", f"cannot run git rev-list: {exc.strerror}") from None
    widen(proc.stdout)
    errors: list[bytes] = []
    # stderr is drained on the side: a git that warns a lot must not block on a full pipe.
    drain = threading.Thread(target=lambda: errors.append(proc.stderr.read() if proc.stderr else b""),
                             name="gate-rev-list-stderr", daemon=True)
    drain.start()
    try:
        try:
            proc.stdin.write(data)  # git reads all of --stdin before it prints anything
            proc.stdin.close()
        except BrokenPipeError:
            pass  # git exited early; its status says why
        for records in _records(proc.stdout.fileno(), proc, deadline):
            yield from records
    finally:
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()
        status = proc.wait()
        drain.join()
        proc.stderr.close()
    if status != 0:
        lines = b"".join(errors).decode("utf-8", "replace").strip().splitlines()
        raise unreadable(f"cannot walk history: {lines[-1] if lines else f'git exit {status}'}")


def _walked(record: bytes, messages: bool, shallow: frozenset[str] = frozenset()) -> WalkedCommit:
    ids, _, rest = record.partition(b"\n")
    header, sep, body = rest.partition(b"\n\n")
    try:
        listed = ids.decode("ascii").split(" ")
    except UnicodeDecodeError:
        raise malformed(f"git rev-list printed an unexpected line {ids[:80]!r}") from None
    if not sep:
        return WalkedCommit(listed[0], tuple(listed[1:]), header.removesuffix(b"\n"), b"", False, listed[0] in shallow)
    # git indents every message line by four spaces: one replace undoes it (no per-line loop)
    message = (body[4:] if body[:4] == b"    " else body).replace(b"\n    ", b"\n") if body and messages else b""
    oid = listed[0]
    return WalkedCommit(oid, tuple(listed[1:]), header, message, True, oid in shallow)


def object_format(git_dir: str) -> str:
    """The repository's object format, as git says it (`git rev-parse --show-object-format`: the
    common directory's `extensions.objectFormat`, "sha1" when absent). GATE-GIT-REPOSITORY when git
    cannot open the repository (an unknown format included: git refuses it too). One process
    (about 2 ms) rather than the config read by hand: below gitlayout's budget."""
    out = run_git([f"--git-dir={git_dir}", "rev-parse", "--show-object-format"], ok=None)
    fmt = out.stdout.decode("utf-8", "replace").strip()
    if not out.ok or not fmt:
        raise GateError("GATE-GIT-REPOSITORY", f"cannot open repository {git_dir}: {out.last_error()}")
    return fmt


def walk_ids(git_dir: str, tips: Sequence[str], hide: Sequence[str], limit: int, deadline: float | None
             ) -> list[tuple[str, tuple[str, ...]]] | None:
    """`git rev-list --parents TIPS --not HIDE`, at most `limit` commits (None: more)."""
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0:
        raise GateError("GATE-HOOK-DEADLINE", "out of time before walking history")
    data = "".join([*(f"{t}\n" for t in tips), *(f"^{h}\n" for h in hide)]).encode("ascii")
    out = run_git([f"--git-dir={git_dir}", "rev-list", "--parents", f"--max-count={limit + 1}", "--stdin"],
                  input=data, timeout=left)
    rows = []
    for line in out.stdout.decode("ascii", "replace").splitlines():
        oid, *parents = line.split(" ")
        rows.append((oid, tuple(parents)))
    return None if len(rows) > limit else rows


#: Fields of a commit as `git log` shows it (`shown_commits`), each ended by a NUL; `-z` ends a
#: commit with one more. git converts the commit from its `encoding` to UTF-8 (`--encoding`,
#: whatever the repository's `i18n.logOutputEncoding`), and reads the fields as C strings: none
#: can hold a NUL.
_FULL_ID = "[0-9a-f]{40}|[0-9a-f]{64}"  # (compiled where used)
_SHOWN_FORMAT = "format:%H%x00%an%x00%ae%x00%cn%x00%ce%x00%B"


def shown_commits(git_dir: str, oids: Sequence[str], env: Mapping[str, str] | None = None
                  ) -> dict[str, ShownCommit]:
    """Each commit as `git log` shows it to a person (`ShownCommit`): one `git log --no-walk
    --stdin` for all of them. (Of a commit without a blank line after its header, git's `%B` is
    not its message: read that one from the object.)"""
    if not oids:
        return {}
    for oid in oids:
        if re.fullmatch(_FULL_ID, oid) is None:  # (anything else, git would read as a revision expression)
            raise unreadable(f"{oid[:80]!r} is not a full object id")
    args = [f"--git-dir={git_dir}", "log", "--no-walk=unsorted", "--stdin", "--encoding=UTF-8",
            "--no-show-signature", "-z", f"--format={_SHOWN_FORMAT}"]
    wanted = list(dict.fromkeys(oids))
    out = run_git(args, input="".join(f"{o}\n" for o in wanted).encode("ascii"), env=env).stdout
    fields = out.split(b"\0")
    if len(fields) != 6 * len(wanted):
        raise unreadable(f"git log showed {len(fields)} fields for {len(wanted)} commits")
    shown: dict[str, ShownCommit] = {}
    for i, oid in enumerate(wanted):
        got, an, ae, cn, ce, message = fields[6 * i:6 * i + 6]
        if got != oid.encode("ascii"):
            raise unreadable(f"git log showed {got[:80]!r} where {oid} was asked for")
        shown[oid] = ShownCommit((an, ae), (cn, ce), message)
    return shown


#: What git sets in a pre-receive hook's environment to show it the pushed objects.
QUARANTINE_VARS = ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH")


def outside_quarantine(git_dir: str, oids: Sequence[str]) -> set[str]:
    """Which of `oids` the repository's own object store holds (its alternates included,
    the push's quarantine left out)."""
    if not oids:
        return set()
    data = "".join(f"{o}\n" for o in oids).encode("ascii")
    out = run_git([f"--git-dir={git_dir}", "cat-file", "--batch-check=%(objectname) %(objecttype)"],
                  input=data, unset=QUARANTINE_VARS)
    found = set()
    for line in out.stdout.decode("ascii", "replace").splitlines():
        oid, _, kind = line.partition(" ")
        if kind != "missing":
            found.add(oid)
    return found


def is_ancestor(git_dir: str, ancestor: str, descendant: str) -> bool:
    out = run_git([f"--git-dir={git_dir}", "merge-base", "--is-ancestor", ancestor, descendant], ok=(0, 1))
    return out.returncode == 0


def merge_base(git_dir: str, a: str, b: str) -> str | None:
    out = run_git([f"--git-dir={git_dir}", "merge-base", a, b], ok=(0, 1))
    text = out.stdout.decode("ascii", "replace").strip()
    return text or None


#: Pairs asked of one `git rev-parse` (its arguments stay far below the system's limit).
MERGE_BASE_CHUNK = 512


def merge_bases(git_dir: str, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """`merge_base` of many pairs of commits from one `git rev-parse A...B ...` per 512 pairs
    (one `merge-base` process each costs a few milliseconds; a big history's merges need
    hundreds). rev-parse prints each `A...B` as B, A and `^BASE` for every merge base; a
    pair with several (criss-cross merges) is asked of `git merge-base` itself, which picks
    one. An answer out of step with the question is GATE-GIT-UNREADABLE."""
    out: dict[tuple[str, str], str | None] = {}
    for start in range(0, len(pairs), MERGE_BASE_CHUNK):
        chunk = [p for p in pairs[start:start + MERGE_BASE_CHUNK] if p[0] != p[1]]
        out.update({p: p[0] for p in pairs[start:start + MERGE_BASE_CHUNK] if p[0] == p[1]})
        if not chunk:
            continue
        got = run_git([f"--git-dir={git_dir}", "rev-parse", *(f"{a}...{b}" for a, b in chunk)])
        lines = got.stdout.decode("ascii", "replace").split("\n")
        at = 0
        for a, b in chunk:
            if sorted(lines[at:at + 2]) != sorted((a, b)):
                raise unreadable(f"git rev-parse answered {lines[at:at + 2]} for {a}...{b}")
            at += 2
            bases = []
            while at < len(lines) and lines[at].startswith("^"):
                bases.append(lines[at][1:])
                at += 1
            out[(a, b)] = bases[0] if len(bases) == 1 else None if not bases else merge_base(git_dir, a, b)
        if any(lines[at:]):
            raise unreadable(f"git rev-parse printed more than it was asked: {lines[at][:80]!r}")
    return out


# --- the trusted side's transport ------------------------------------------------------

Env = Mapping[str, str] | None  # extra variables for the trusted side's git (e.g. the server's REMOTE_USER)


def ls_remote(repo: str | os.PathLike[str], remote: str, *patterns: str, env: Env = None) -> dict[str, str]:
    """The remote's refs matching `patterns`: name -> id."""
    out = run_git(["ls-remote", "--refs", remote, *patterns], cwd=repo, env=env, ok=None, transport=True)
    if not out.ok:  # the trusted commands' first word with the remote: show all git said
        raise GateError("GATE-GIT-REPOSITORY", f"cannot reach {remote}: {out.all_errors()}")
    found: dict[str, str] = {}
    for line in out.stdout.decode("utf-8", "surrogateescape").splitlines():
        oid, _, name = line.partition("\t")
        found[name] = oid
    return found


def fetch_ref(repo: str | os.PathLike[str], remote: str, ref: str, code: str, env: Env = None) -> None:
    """Make the local `ref` equal the remote's (forced)."""
    run_git(["fetch", "--quiet", "--no-tags", remote, f"+{ref}:{ref}"], cwd=repo, code=code, env=env, transport=True)


def delete_ref(repo: str | os.PathLike[str], ref: str, old: str | None = None) -> None:
    run_git(["update-ref", "-d", ref, *([old] if old else [])], cwd=repo, ok=None)


@valueclass(frozen=True, slots=True)
class PushResult:
    ok: bool
    output: str


def push(repo: str | os.PathLike[str], remote: str, *refspecs: str, atomic: bool = False,
         lease: str | None = None, env: Env = None) -> PushResult:
    args = ["push", "--porcelain"]
    if atomic:
        args.append("--atomic")
    if lease is not None:
        args.append(f"--force-with-lease={lease}")
    out = run_git([*args, remote, *refspecs], cwd=repo, ok=None, env=env, transport=True)
    return PushResult(out.ok, out.text())


def remote_head(repo: str | os.PathLike[str], remote: str, env: Env = None) -> str | None:
    """The branch the remote's HEAD names (`ls-remote --symref`), or None."""
    out = run_git(["ls-remote", "--symref", remote, "HEAD"], cwd=repo, code="GATE-GIT-REPOSITORY", env=env,
                  transport=True)
    for line in out.stdout.decode("utf-8", "surrogateescape").splitlines():
        head, _, name = line.partition("\t")
        if name == "HEAD" and head.startswith("ref: "):
            return head[5:]
    return None


def sync_ref(repo: str | os.PathLike[str], remote: str, ref: str, code: str = "GATE-LEDGER-UNREADABLE",
             env: Env = None) -> str | None:
    """Make the local `ref` equal the remote's (or absent); returns the value it took: what the
    fetch installed, which is the remote's when it fetched (not when `ls-remote` asked before it:
    a ref moved in between is judged as fetched)."""
    oid = ls_remote(repo, remote, ref, env=env).get(ref)
    if oid is None:
        delete_ref(repo, ref)
        return None
    fetch_ref(repo, remote, ref, code, env)
    got = run_git(["rev-parse", "--verify", "--quiet", ref], cwd=repo, ok=None)  # (a ref: refs/...)
    return got.stdout.decode("ascii", "replace").strip() if got.ok else None


def cannot_read(repo: str | os.PathLike[str], result: GitResult) -> str:
    """Why git cannot read a repository, in git's words, and the fix: another account's
    repository is read as its owner (or, trusted, named in safe.directory)."""
    reason = result.all_errors()
    if "dubious ownership" not in reason:
        return f"git cannot read {repo}: {reason}"
    import pwd
    import shlex

    try:
        owner = pwd.getpwuid(os.stat(repo).st_uid).pw_name
    except (OSError, KeyError):
        owner = "its owner"
    path = shlex.quote(os.path.abspath(repo))
    return (f"git cannot read {repo}: it belongs to {owner} (git: detected dubious ownership): run this as {owner} "
            f"(runuser -u {owner} -- gate ...), or, if you trust the repository, "
            f"git config --global --add safe.directory {path}")


def default_branch_paths(repo: str | os.PathLike[str]) -> tuple[str, list[str]] | None:
    """(the branch HEAD names, every path in its tree) of a repository, bare or not; None when
    HEAD names no commit yet (an empty repository). A repository git cannot read is a
    GATE-GIT-REPOSITORY with git's reason and the fix, never taken for an empty one."""
    if not os.path.isdir(repo):
        raise GateError("GATE-GIT-REPOSITORY", f"{repo} is not a directory")
    head = run_git(["symbolic-ref", "-q", "HEAD"], cwd=repo, ok=None, code="GATE-GIT-REPOSITORY")
    if head.returncode not in (0, 1):  # 1: HEAD is detached; anything else: git cannot read the repository
        raise GateError("GATE-GIT-REPOSITORY", cannot_read(repo, head))
    branch = head.stdout.decode("utf-8", "replace").strip() or "HEAD"
    if run_git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=repo, ok=None).returncode != 0:
        return None
    listed = run_git(["ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD"], cwd=repo,
                     code="GATE-GIT-REPOSITORY")
    return branch, [p.decode("utf-8", "surrogateescape") for p in listed.stdout.split(b"\0") if p]
