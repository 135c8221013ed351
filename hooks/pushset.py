"""Which ref updates a pre-push hook checks, and what the remote already has.

git gives a pre-push hook every ref of the push on stdin
(`<local ref> SP <local id> SP <remote ref> SP <remote id> LF`). The pre-commit
framework reads that input itself and hands its hooks only the first ref that has
commits to push, as `PRE_COMMIT_LOCAL_BRANCH`, `PRE_COMMIT_REMOTE_BRANCH`,
`PRE_COMMIT_FROM_REF`, `PRE_COMMIT_TO_REF` and `PRE_COMMIT_REMOTE_NAME`; deletions are
dropped and the hook's stdin is empty. So:

* when the hook's stdin holds git's lines (the hook runs as git's own pre-push hook),
  those are the updates, exactly;
* otherwise the update pre-commit names is taken from its variables, and each hook adds
  what it can find locally (see `pending_local` and hooks/receipt_push.py); docs/client.md
  says what that covers.

What the server already has is approximated by the remote-tracking refs of the remote
(`refs/remotes/<remote>/*`, mapped back through `remote.<remote>.fetch`): fetch first for
an exact answer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence

from gatecore.errors import GateError
from gatecore.git.objects import Objects
from gatecore.git.refs import MAX_INPUT_BYTES, RefUpdate, display, parse_pre_push, ref_name_problem
from gatecore.ids import OID_RE
from gatecore.valueclass import valueclass

from .common import ClientRepo, current_branch, git, rev_commit, run

TYPE_CHECKING = False  # (typing's, as mypy reads it)
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

#: Local refs that `pending_local` treats as possibly pushed.
LOCAL_PREFIXES = (b"refs/heads/", b"refs/tags/")


@valueclass(frozen=True, slots=True)
class PushInput:
    remote: str  # the remote's name, or its URL when the push names no remote
    updates: tuple[RefUpdate, ...]
    exact: bool  # True: git's own input, every ref of the push
    named_local: str | None = None  # the local ref pre-commit named


def read_stdin() -> bytes:
    """git's pre-push lines if the hook's stdin carries them (empty under pre-commit or a terminal)."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return b""
    data = stream.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise GateError("GATE-INPUT-TOO-LARGE", f"more than {MAX_INPUT_BYTES} bytes of pre-push input")
    return data


_REFSPECS: dict[str, list[tuple[str, str]]] = {}


def fetch_refspecs(remote: str) -> list[tuple[str, str]]:
    """(remote side, local side) of each positive fetch refspec of a configured remote (read once)."""
    got = _REFSPECS.get(remote)
    if got is None:
        got = _REFSPECS[remote] = _read_refspecs(remote)
    return list(got)


def _read_refspecs(remote: str) -> list[tuple[str, str]]:
    _code, out = git("config", "--get-all", f"remote.{remote}.fetch", ok_codes=(0, 1))
    specs = []
    for line in out.splitlines():
        spec = line.strip().removeprefix("+")
        if not spec or spec.startswith("^") or ":" not in spec:
            continue
        src, dst = spec.split(":", 1)
        if src.count("*") == dst.count("*") <= 1:
            specs.append((src, dst))
    return specs


def _map(name: str, pairs: Sequence[tuple[str, str]]) -> str | None:
    """`name` matched against the first side of each (pattern, replacement) refspec pair."""
    for pattern, replacement in pairs:
        if "*" not in pattern:
            if name == pattern:
                return replacement
            continue
        head, tail = pattern.split("*")
        if name.startswith(head) and name.endswith(tail) and len(name) > len(head) + len(tail):
            return replacement.replace("*", name[len(head):len(name) - len(tail)])
    return None


def map_back(local: str, specs: Sequence[tuple[str, str]]) -> str | None:
    """The remote's name for a local remote-tracking ref, through the fetch refspecs."""
    return _map(local, [(dst, src) for src, dst in specs])


def map_forward(theirs: str, specs: Sequence[tuple[str, str]]) -> str | None:
    """The local remote-tracking ref that holds the remote's `theirs`, through the fetch refspecs."""
    return _map(theirs, specs)


def config_revisions(remote: str, updates: Sequence[RefUpdate]) -> list[str]:
    """Where a pre-push hook reads the committed policy: what the remote accepted first, then HEAD."""
    specs = fetch_refspecs(remote)
    revs = [f"refs/remotes/{remote}/HEAD"] if specs else []
    for u in updates:
        local = map_forward(u.ref, specs)
        if local is not None and local not in revs:
            revs.append(local)
    revs.append("HEAD")
    return revs


def tracking_refs(repo: ClientRepo, remote: str) -> dict[bytes, str]:
    """What the remote had at the last fetch: its ref name -> id (empty for a URL or an unfetched remote)."""
    specs = fetch_refspecs(remote)
    if not specs:
        return {}
    out: dict[bytes, str] = {}
    for name, oid in repo.ref_targets().items():
        theirs = map_back(name.decode("utf-8", "surrogateescape"), specs)
        if theirs is not None and theirs.startswith("refs/"):
            out[theirs.encode("utf-8", "surrogateescape")] = oid
    return out


def _oid(value: str, what: str) -> str:
    if not OID_RE.fullmatch(value):
        raise GateError("GATE-INPUT-MALFORMED", f"{what} {value!r} is not an object id")
    return value


def from_precommit(repo: ClientRepo, env: Mapping[str, str], tracking: Mapping[bytes, str]) -> RefUpdate | None:
    """The one update pre-commit names (None: nothing named and nothing checked out to check).

    new: PRE_COMMIT_TO_REF, else the local ref pre-commit names, else HEAD (a manual run).
    ref: PRE_COMMIT_REMOTE_BRANCH, else the local branch, else the checked-out branch.
    old: the remote-tracking value of that ref, else PRE_COMMIT_FROM_REF, else none (a new ref).
    """
    local = env.get("PRE_COMMIT_LOCAL_BRANCH") or None
    to_ref = env.get("PRE_COMMIT_TO_REF")
    if to_ref:
        new: str | None = _oid(to_ref, "PRE_COMMIT_TO_REF")
    else:
        new = rev_commit(local or "HEAD")
    if new is None:
        return None
    ref = env.get("PRE_COMMIT_REMOTE_BRANCH") or (local if local and local.startswith("refs/") else None)
    ref = ref or current_branch()
    if ref is None:
        raise GateError("GATE-INPUT-ARGUMENT", "cannot tell which ref is pushed: HEAD is detached and "
                                                "pre-commit named no remote branch")
    raw = ref.encode("utf-8", "surrogateescape")
    problem = ref_name_problem(raw)
    if problem is not None:
        raise GateError("GATE-REF-NAME", f"ref {display(raw)} {problem}")
    from_ref = env.get("PRE_COMMIT_FROM_REF")
    old = tracking.get(raw) or (_oid(from_ref, "PRE_COMMIT_FROM_REF") if from_ref else None) or repo.zero_id
    return RefUpdate(old, new, raw)


def read_push(repo: ClientRepo, env: Mapping[str, str], stdin: bytes, remote_arg: str | None, from_git: bool,
              tracking_of: dict[str, dict[bytes, str]]) -> PushInput:
    """The updates to check: git's input when git runs the hook itself, else pre-commit's variables.

    `from_git`: the hook got git's two pre-push arguments (remote, URL), so stdin is git's
    input (empty: nothing to push). `tracking_of` caches `tracking_refs` per remote.
    """
    remote = env.get("PRE_COMMIT_REMOTE_NAME") or remote_arg or "origin"
    tracking = tracking_of.setdefault(remote, tracking_refs(repo, remote))
    if from_git or stdin.strip():
        return PushInput(remote, tuple(parse_pre_push(stdin)), exact=True)
    named = from_precommit(repo, env, tracking)
    return PushInput(remote, () if named is None else (named,), exact=False,
                     named_local=env.get("PRE_COMMIT_LOCAL_BRANCH") or None)


def pending_local(repo: ClientRepo, tracking: Mapping[bytes, str], already: Sequence[RefUpdate],
                  skip_local: str | None) -> list[RefUpdate]:
    """Local branches and tags with commits the remote does not have, as updates of the same name.

    pre-commit names only the first ref of a push; any other ref the push may carry is one
    of these (or a ref the remote already has). Checking all of them may also check a
    local branch that is not being pushed: the violation names its ref.
    """
    names = {u.raw_ref for u in already}
    skip = None if skip_local is None else skip_local.encode("utf-8", "surrogateescape")
    objects = Objects(repo)
    candidates = {}
    for name, tip in sorted(repo.ref_targets(lambda n: n.startswith(LOCAL_PREFIXES)).items()):
        commit = None if name in names or name == skip else objects.peel_to_commit(tip)
        if commit is not None:
            candidates[name] = (tip, commit)
    # One walk: a ref has commits the remote lacks exactly when its own commit is one of them.
    tips = sorted({c for _, c in candidates.values()})
    new = {c.id for c in objects.walk(tips, sorted(set(tracking.values())), None)} if tips else set()
    return [RefUpdate(tracking.get(name) or repo.zero_id, tip, name)
            for name, (tip, commit) in candidates.items() if commit in new]


def run_push_hook(arg_parser: Callable[[], argparse.ArgumentParser],
                  check: Callable[[SimpleNamespace, dict[str, str], bytes], tuple[int, list[str]]],
                  argv: Sequence[str] | None, stdin: bytes | None = None, *, options: Sequence[str],
                  flags: Sequence[str] = ()) -> int:
    """The shared `main` of the pre-push hooks: arguments (`arg_parser`'s, whose `options` take a
    value and `flags` none, read by `hooks.argv` where it can: git's remote and URL as `remote`
    and `url`), environment, stdin (unless read already: capped here either way), one boundary."""
    from gatecore.adapters.environment import client_env

    from .argv import namespace

    args = namespace(sys.argv[1:] if argv is None else argv, arg_parser, options, flags, ("remote", "url"))
    env = client_env()

    def checked() -> tuple[int, list[str]]:
        data = read_stdin() if stdin is None else stdin
        if len(data) > MAX_INPUT_BYTES:
            raise GateError("GATE-INPUT-TOO-LARGE", f"more than {MAX_INPUT_BYTES} bytes of pre-push input")
        return check(args, env, data)

    return run(checked, "push")
