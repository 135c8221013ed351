"""`gate receipt write|verify` and `gate digest`: the seed's flow on files, the bound values as arguments."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .clicommon import (
    AttemptOpt,
    DiffFileOpt,
    FromOpt,
    GenOpt,
    ModelOpt,
    Opt,
    PromptOpt,
    RepoOpt,
    ToOpt,
    command,
    out_line,
)

if TYPE_CHECKING:
    from ..checks.binding import Decision

group = typer.Typer(no_args_is_help=True, help="Write and verify sealed review receipts (files).")
top = typer.Typer()


@command(group, "write")
def receipt_write(
    out_dir: Annotated[Path, Opt("--out-dir", help="Receipts root; writes DIR/ID/receipt.json.")],
    attempt: AttemptOpt, model: ModelOpt, workspace_gen: GenOpt, prompt_file: PromptOpt,
    verdict: Annotated[str, Opt("--verdict", help="pass or fail.")],
    key: Annotated[Path, Opt("--key", help="Signing key file (gate keys generate).")],
    reason: Annotated[list[str] | None, Opt("--reason", help="A reason; repeat for more.")] = None,
    diff_file: DiffFileOpt = None, repo: RepoOpt = None, rev_from: FromOpt = None, rev_to: ToOpt = None,
    ttl: Annotated[int, Opt("--ttl", help="Seconds the receipt stays valid.", min=1,
                            max=30 * 24 * 3600)] = 86400,
) -> int:
    """Seal a review receipt bound to this attempt and write it (never overwrites)."""
    from ..adapters.config import load_keyfile
    from ..trusted.filereceipts import DiffSource, write_receipt

    path = write_receipt(out_dir, attempt, model, workspace_gen, prompt_file,
                         DiffSource(diff_file, repo, rev_from, rev_to), verdict, list(reason or []),
                         load_keyfile(key), ttl, int(time.time()))
    out_line(str(path))
    return 0


def print_decision(decision: Decision, as_json: bool) -> None:
    if as_json:
        out_line(json.dumps(decision.as_dict(), sort_keys=True))
        return
    if decision.accepted:
        out_line("accept")
        return
    out_line("reject")
    for f in decision.failures:
        out_line(f"  {f.field}: {f.code}: {f.detail}")


@command(group, "verify")
def receipt_verify(
    receipt: Annotated[Path, Opt("--receipt", help="The receipt file to verify.")],
    attempt: AttemptOpt, model: ModelOpt, workspace_gen: GenOpt, prompt_file: PromptOpt,
    keyring: Annotated[Path, Opt("--keyring", help="Keyring file (TOML) with the runner's key.")],
    diff_file: DiffFileOpt = None, repo: RepoOpt = None, rev_from: FromOpt = None, rev_to: ToOpt = None,
    as_json: Annotated[bool, Opt("--json", help="Print the decision as JSON.")] = False,
) -> int:
    """Verify a receipt: exit 0 on accept, 1 on any reject (each failed field printed)."""
    from ..adapters.config import load_keyring
    from ..trusted.filereceipts import DiffSource, verify_receipt

    decision = verify_receipt(receipt, attempt, model, workspace_gen, prompt_file,
                              DiffSource(diff_file, repo, rev_from, rev_to), load_keyring(keyring, cached=False),
                              int(time.time()))
    print_decision(decision, as_json)
    return 0 if decision.accepted else 1


@command(top, "digest")
def digest_cmd(diff_file: DiffFileOpt = None, repo: RepoOpt = None, rev_from: FromOpt = None,
               rev_to: ToOpt = None) -> int:
    """Print the diff digest (and its algorithm) that a receipt would bind."""
    from ..trusted.filereceipts import DiffSource, bind_diff

    b = bind_diff(DiffSource(diff_file, repo, rev_from, rev_to))
    out_line(f"{b.diff_algorithm} {b.diff_sha256}")
    return 0
