"""`gate approve` and `gate approvals list`: a maintainer's approvals of frozen-path writes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ..errors import GateError
from .clicommon import LedgerRemoteOpt, Opt, VerboseOpt, command, err_line, out_line, push_lines

group = typer.Typer(no_args_is_help=True, help="Maintainer approvals of frozen-path writes.")
top = typer.Typer()


@command(top, "approve")
def approve_cmd(
    ref: Annotated[str, Opt("--ref", help="The ref the agent's push updates (full name).")],
    old: Annotated[str, Opt("--old", help="The ref's value on the server (the update's old id).")],
    new: Annotated[str, Opt("--new", help="The commit the agent pushes (the update's new id).")],
    path: Annotated[list[str], Opt("--path", help="A frozen path to approve; repeat for more.")],
    repository_id: Annotated[str, Opt("--repository-id", help="The repository's id on the server.")],
    approver: Annotated[str | None, Opt("--approver", help="Your name as [approvals] approvers (and your key) name "
                                                           "you (default: git config gate.approver).")] = None,
    key: Annotated[Path | None, Opt("--key", help="Key file of purpose approval, gate keys generate (default: git "
                                                  "config gate.approvalKey).")] = None,
    ssh_key: Annotated[Path | None, Opt("--ssh-key", help="SSH private key listed in the server's allowed "
                                                          "signers for you (default: git config "
                                                          "gate.approvalSshKey).")] = None,
    expires: Annotated[str, Opt("--expires", help="How long the approval may wait for its push (24h, 3d).")] = "24h",
    reason: Annotated[str, Opt("--reason", help="Why (recorded in the approval).")] = "",
    repo: Annotated[Path, Opt("--repo", help="The repository holding the commits.")] = Path("."),
    remote: Annotated[str | None, Opt("--remote", help="Push the approval there (default origin; "
                                                       "--no-push to keep it local).")] = "origin",
    no_push: Annotated[bool, Opt("--no-push", help="Write the approval locally only.")] = False,
    yes: Annotated[bool, Opt("--yes", help="Approve without asking (after showing the changes).")] = False,
    ledger_remote: LedgerRemoteOpt = None, verbose: VerboseOpt = False,
) -> int:
    """Approve an agent's write of frozen paths in exactly one ref update (the rejection prints this command)."""
    from ..trusted import approve

    if no_push and ledger_remote is not None:
        raise GateError("GATE-INPUT-ARGUMENT", "--no-push keeps the approval local: it takes no --ledger-remote")
    if ledger_remote is not None and remote is not None:
        from ..trusted.attempts import ledger_of

        ledger_of(remote, ledger_remote, "--remote", repo)  # not the forge itself

    prepared = approve.prepare(repo, repository_id, ref, old, new, path, approver, key, ssh_key, expires, reason)
    out_line(prepared.changes)
    req = prepared.request
    if not yes and not typer.confirm(f"Approve these writes of {', '.join(req.paths)} on {ref} as {req.approver}?"):
        err_line("not approved")
        return 1
    # an approval is ledger: with a ledger remote it goes there, never to --remote (the forge)
    lines, ok, pushed = approve.complete(repo, prepared, None if no_push else ledger_remote or remote,
                                         int(time.time()))
    for line in [*lines[:1], *push_lines(pushed, verbose), *lines[1:]]:
        out_line(line)
    return 0 if ok else 1


@command(group, "list")
def approvals_list(
    repo: Annotated[Path, Opt("--repo", help="The repository (a clone: git fetch origin '+refs/gate/*:refs/gate/*').")]
    = Path("."),
) -> int:
    """Every approval the repository holds: id, approver, ref update, paths, expiry, and whether it was used."""
    from server.verify import approval_verifier

    from ..trusted.approve import listing_lines

    for line in listing_lines(repo, approval_verifier(repo), int(time.time())):
        out_line(line)
    return 0
