"""The installed `gate` console script and `python -m gatecore.cli` reach the same `main(argv)`
as the in-process tests, with the same exit classes (a few real processes; the command line's
own behaviour is tested in process, tests/support/cli.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.cli import cli
from support.gitutil import GATE

from gatecore import __version__

CONSOLE_SCRIPT = Path(sys.executable).parent / "gate"


def test_the_console_script_and_the_module_run_main() -> None:
    for command in ([str(CONSOLE_SCRIPT)], GATE):
        out = subprocess.run([*command, "--version"], capture_output=True, text=True, check=False)
        assert out.returncode == 0 and out.stdout == f"push-gate {__version__}\n", out.stderr
        usage = subprocess.run([*command, "receipt", "verify", "--receipt", "x"], capture_output=True, text=True,
                               check=False)
        assert usage.returncode == 2 and "Missing option" in usage.stderr
        known = subprocess.run([*command, "explain", "GATE-NOT-A-CODE"], capture_output=True, text=True,
                               check=False)
        assert known.returncode == 2 and "unknown code" in known.stderr


def test_in_process_main_returns_what_the_process_exits_with() -> None:
    assert cli("--version").stdout == f"push-gate {__version__}\n"
    assert cli("receipt", "verify", "--receipt", "x").returncode == 2
    assert cli("--help").returncode == 0
    assert "Usage: gate" in cli().stdout + cli().stderr
