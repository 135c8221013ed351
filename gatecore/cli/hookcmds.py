"""`gate hook pre-receive`: the hook's check run from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .clicommon import Opt, command

group = typer.Typer(no_args_is_help=True, help="Run the gate as a git hook.")


@command(group, "pre-receive")
def hook_pre_receive(
    gate_dir: Annotated[Path, Opt("--gate-dir", help="The installation directory (GIT_DIR/gate).")],
) -> int:
    """Run the pre-receive check on stdin (the installed hook runs server/launch.py server.prereceive)."""
    from server.prereceive import main as prereceive_main

    return prereceive_main(["--gate-dir", str(gate_dir)])
