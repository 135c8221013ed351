"""`gate policy check`: a policy file in the admin's words."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .clicommon import Opt, command, err_line, out_line

group = typer.Typer(no_args_is_help=True, help="Check policy files.")


@command(group, "check")
def policy_check(
    policy: Annotated[Path, typer.Argument(help="Policy file (TOML).")],
    repo: Annotated[Path | None, Opt("--repo", help="Also warn about frozen path patterns that match no path on "
                                                    "this repository's default branch.")] = None,
) -> int:
    """Validate a policy file; print each problem with its line, location and fix (exit 2)."""
    from ..adapters.config import check_policy

    found = check_policy(policy, repo)
    for p in found.problems:
        err_line(f"GATE-CONFIG-POLICY: {p}")
    if found.problems:
        return 2
    out_line(f"ok: {policy}")
    for line in [*found.lines, *found.warnings]:
        out_line(line)
    return 0
