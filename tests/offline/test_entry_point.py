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


def test_help_names_no_flag_a_type() -> None:
    """typer 0.29's rich help printed `--version <bool>`, `--help <bool>` and `--yes <bool>`: a flag
    takes no value, so every `--help` of the tree, the root's and each command's and group's, shows
    none; and each command's line in its group's listing is its whole first sentence."""
    import importlib

    from gatecore.cli.wiring import COMMANDS, GROUPS

    lines = [("--help",), *((name, "--help") for name, _ in COMMANDS)]
    for group, module in GROUPS:
        app = importlib.import_module(f"gatecore.cli.{module}").group
        lines += [(group, c.name or "", "--help") for c in app.registered_commands]
        lines.append((group, "--help"))
    lines.remove(("agents", "check", "--help"))  # an agent's pre-tool hook: argparse, no typer (main's docstring)
    assert len(lines) > 40
    for args in lines:
        out = cli(*args)
        assert out.returncode == 0 and "<bool>" not in out.stdout, (args, out.stdout, out.stderr)
        if "Commands:" in out.stdout:
            assert "..." not in out.stdout.split("Commands:")[1], (args, out.stdout)
    root = cli("--help").stdout
    assert "--version  Print the version and exit." in root and "--help     Show this message and exit." in root
