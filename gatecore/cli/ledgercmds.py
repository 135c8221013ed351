"""`gate ledger archive`: the ledger's lifecycle (trusted side)."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from .clicommon import LedgerRemoteOpt, Opt, RepoDirOpt, VerboseOpt, command, err_line, out_line, push_lines

group = typer.Typer(no_args_is_help=True, help="The ledger's lifecycle (trusted side).")


def _seconds(text: str, flag: str = "--older-than") -> int:
    """'30d', '12h', '90m', '3600s' or '0'."""
    from ..configuration.durations import parse

    return parse(text, flag)


@command(group, "archive")
def ledger_archive(
    repo: RepoDirOpt,
    remote: Annotated[str, Opt("--remote", help="The server remote (with --ledger-remote: the forge, for the "
                                                "review refs).")],
    older_than: Annotated[str, Opt("--older-than", help="Archive attempts closed at least this long ago "
                                                        "(30d, 12h, 0).")],
    batch: Annotated[int, Opt("--batch", help="Attempts per push (1 to 5000).")] = 200,
    dry_run: Annotated[bool, Opt("--dry-run", help="Say what would be archived; push nothing.")] = False,
    ledger_remote: LedgerRemoteOpt = None, verbose: VerboseOpt = False,
) -> int:
    """Fold closed attempts into refs/gate/archive, then remove their refs (two pushes per batch; safe to re-run)."""
    from ..trusted.ledgerarchive import archive_closed

    done = archive_closed(repo, remote, _seconds(older_than), int(time.time()), batch=batch, dry_run=dry_run,
                          ledger_remote=ledger_remote)
    if dry_run:
        out_line(f"would archive {len(done.attempts)} attempt(s); pushed nothing (--dry-run)")
    else:
        out_line(f"archived {len(done.attempts)} attempt(s) in {done.pushes} push(es)")
    for text in done.skipped:
        err_line(f"skipped {text}")
    for what, output in done.refused:
        for line in push_lines(output, verbose) or output.splitlines()[-1:]:
            err_line(line)
        where = remote if ledger_remote is None else f"{ledger_remote} or {remote}"
        err_line(f"{what} refused by {where}; what it was to remove stays, and a re-run goes on from here")
    return 0 if done.ok else 1
