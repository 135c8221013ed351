"""`gate-frozen-commit-msg`: the commit-msg stage. Is the commit, message and all, a frozen-file write?

The pre-commit stage (`hooks/frozen_commit.py`) runs before the message exists, so a rule
that reads trailers - an `Assisted-by:` line, a `Co-authored-by:` email an `authors` glob
matches - cannot see it there, and a human's commit that names an agent in a trailer would
pass the client and be refused by the server. At the commit-msg stage git has the message:
this hook checks the staged change exactly as the pre-commit stage does, as the commit it
will become, now with its message, read as git will store it (comment lines stripped,
`git stripspace --strip-comments`, as the default `commit.cleanup` does for an edited
message). pre-commit passes the message file as the one argument.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gatecore.adapters.environment import client_env
from gatecore.adapters.files import read_capped
from gatecore.adapters.gitcmd import run_git
from gatecore.errors import GateError

from . import frozen_commit

MAX_MESSAGE_BYTES = 1 << 20


def read_message(path: str) -> bytes:
    """The commit message as git will store it."""
    raw = read_capped(path, "GATE-INPUT-ARGUMENT", "commit message", MAX_MESSAGE_BYTES)
    return run_git(["stripspace", "--strip-comments"], input=raw).stdout


TYPE_CHECKING = False  # (typing's, as mypy reads it)
if TYPE_CHECKING:
    import argparse


def parser() -> argparse.ArgumentParser:
    """The pre-commit stage's options (`--policy`); the one file is the message."""
    p = frozen_commit.parser()
    p.prog = "gate-frozen-commit-msg"
    p.description = ("commit-msg stage: reject a commit, with its message, that writes a frozen path for the "
                     "identities it names, trailers included (docs/client.md).")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from .argv import options_and_files
    from .common import run

    options, filenames = options_and_files(sys.argv[1:] if argv is None else argv, parser, ("--policy",))
    pusher = client_env().get("GATE_PUSHER", "").strip()

    def check() -> tuple[int, list[str]]:
        if not filenames:  # (pre-commit filters the message file by the config's top-level files/exclude)
            raise GateError("GATE-INPUT-ARGUMENT", "the commit-msg stage got no message file: a top-level "
                                                   "`files:` or `exclude:` of .pre-commit-config.yaml leaves out "
                                                   "the message (.git/COMMIT_EDITMSG, .git/MERGE_MSG); let it "
                                                   "through (docs/client.md)")
        if len(filenames) != 1:
            raise GateError("GATE-INPUT-ARGUMENT", "the commit-msg stage takes one file, the commit message "
                                                   f"(got {len(filenames)})")
        return frozen_commit.check(options["--policy"], pusher, read_message(filenames[0]))

    return run(check, "commit")


if __name__ == "__main__":
    raise SystemExit(main())
