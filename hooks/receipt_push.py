"""`gate-receipt-push`: the pre-push stage for the reserved namespaces.

A push to `refs/heads/review/runner/<id>` (with its receipt ref `refs/gate/receipts/<id>`),
or to the ledger `refs/gate/attempts/<id>`, is checked by the server's own
`gatecore.reserved.check`: trusted pusher, ledger chain, receipt seal, every
bound field recomputed from the local objects, verdict and reasons. It needs:

* the ledger, fetched from the remote: `git fetch origin '+refs/gate/*:refs/gate/*'`
  (GATE-LEDGER-MISSING says so when it is not there);
* the keyring, `.gate/keyring.toml` committed in the repository (ed25519 public keys
  only) or `--keyring PATH`;
* the repository id the server was installed with (`--repository-id`; default: the one
  the attempt's ledger records name);
* the pusher account the server will see, in `GATE_PUSHER` (unset: unknown, which no
  trusted-pusher glob but `*` matches, so the check says what the server says to an agent).

The remote's current values of the review and receipt refs are read with one
`git ls-remote`, since a receipt is bound to the exact old value. Under pre-commit, which
names only the first ref of a push, the hook adds the refs that travel with it: the
local receipt ref of a named review ref, and for each local receipt ref the remote does
not have, the review ref its receipt names.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing itself is not imported: this hook answers most pushes in a few ms)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: `gatecore.git.refs.GATE_PREFIX` and `REVIEW_PREFIX` (held equal by tests/unit/test_client_startup.py),
#: spelled out so that a push with no reserved ref is answered before anything is imported.
RESERVED = (b"refs/gate/", b"refs/heads/review/runner/")
#: `gatecore.git.refs.MAX_INPUT_BYTES` (the same test).
MAX_INPUT_BYTES = 16 << 20
#: Characters no ref name holds (git's check_refname_format), besides control characters.
_ODD_IN_REFS = frozenset(' ~^:?*[\\\x7f')
_VALUE_OPTIONS = ("--policy", "--keyring", "--repository-id")


def _positionals(argv: Sequence[str]) -> list[str] | None:
    """The positional arguments (remote, URL), or None for anything the quick path leaves to argparse
    (`hooks.argv.read_options`' reading: a value starting with `-`, a third plain argument, plain
    arguments on both sides of an option go to the hook's parser, which refuses them)."""
    from .argv import read_options  # (nothing of the engine: the quick path imports none of it)

    got = read_options(argv, _VALUE_OPTIONS, plain=2)
    return None if got is None else got[1]


def _no_reserved_lines(stdin: bytes) -> bool:
    """git's pre-push lines, each well-formed, none of them to a reserved ref."""
    for line in stdin.split(b"\n")[:-1]:
        parts = line.rsplit(b" ", 3)
        if (len(parts) != 4 or not parts[0] or len(parts[1]) not in (40, 64) or len(parts[3]) != len(parts[1])
                or not parts[2].startswith(b"refs/") or parts[2].startswith(RESERVED)):
            return False
    return stdin.endswith(b"\n") or not stdin.strip()


def _no_local_receipts() -> bool:
    """No local receipt ref that could travel with a push pre-commit names only one ref of, as
    git lists them (one `for-each-ref`, in any ref backend; nothing is read from the directory).
    git is started with `os.posix_spawnp` (`subprocess`, with `locale` and `re`, costs this path
    11 ms to import); anything that goes wrong says False, and the whole check runs."""
    if TYPE_CHECKING:
        import signal as _signal
    else:
        import _signal  # (the C module under `signal`: its numbers, without the enums)

    argv = ["git", "for-each-ref", "--count=1", "--format=%(refname)", "refs/gate/receipts/"]
    r, w = os.pipe()
    try:
        pid = os.posix_spawnp("git", argv, os.environ, setsigdef=(_signal.SIGPIPE,), file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, w, 1),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except (OSError, ValueError):  # (ValueError: an environment entry posix_spawn refuses, a name empty or with "=")
        os.close(r)
        return False
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as out:
        listed = out.read()
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:  # (SIGCHLD ignored, inherited: git was reaped for us, its status unknown)
        return False
    return os.waitstatus_to_exitcode(status) == 0 and not listed.strip()


def nothing_reserved(argv: Sequence[str], stdin: bytes, env: Mapping[str, str]) -> bool:
    """True when this push can carry no ref of the reserved namespaces, told from git's input
    (or pre-commit's named ref and the local receipt refs) alone: the hook then has nothing to
    check. Anything unusual says False, and the whole check runs."""
    positionals = _positionals(argv)
    if positionals is None:
        return False
    if len(positionals) >= 2 or stdin.strip():  # git's own input: every ref of the push
        return _no_reserved_lines(stdin)
    named = env.get("PRE_COMMIT_REMOTE_BRANCH", "")
    if (not named.startswith("refs/") or named.encode("utf-8", "surrogateescape").startswith(RESERVED)
            or not _plain_ref_name(named)):
        return False
    return _no_local_receipts()


def _plain_ref_name(name: str) -> bool:
    """A ref name with nothing git's check_refname_format refuses (and nothing odd besides):
    anything else goes to the whole check, which says GATE-REF-NAME."""
    return not (any(c in _ODD_IN_REFS or c < " " for c in name) or ".." in name or "@{" in name or "//" in name
                or "/." in name or name.endswith(("/", ".", ".lock")) or ".lock/" in name)


def read_stdin() -> bytes:
    """git's pre-push lines if the hook's stdin carries them (empty under pre-commit or a terminal)."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return b""
    return stream.buffer.read(MAX_INPUT_BYTES + 1)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    stdin = read_stdin()
    if len(stdin) <= MAX_INPUT_BYTES and nothing_reserved(args, stdin, os.environ):
        return 0
    from .receipt_check import run

    return run(args, stdin)


if __name__ == "__main__":
    raise SystemExit(main())
