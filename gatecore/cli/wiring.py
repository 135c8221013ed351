"""`gate`'s command tree: which module holds each command and group, and the root they hang on.

Each group's commands, options and help live in that group's module (`servercmds`, `reviewcmds`,
...); this module only wires them, in the order `gate --help` lists them. A command line that
names one command or group builds a root with just that one (`for_args`): the other groups'
modules, and what they import, are never loaded for it (`gate --help`, `--version` and a name
the tree does not hold build them all, so that typer's usage and suggestions see every name).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import Annotated

import typer

from .clicommon import Opt, first_paragraph, out_line

HELP = "Push-time gate for AI agents: frozen files and bound review receipts."

#: The root's own commands, in `gate --help`'s order: (name, module).
COMMANDS: tuple[tuple[str, str], ...] = (
    ("digest", "receiptcmds"),
    ("selftest", "infocmds"),
    ("explain", "infocmds"),
    ("bootstrap", "attemptcmds"),
    ("approve", "approvalcmds"),
    ("demo", "infocmds"),
    ("check", "checkcmds"),
)

#: The groups, in `gate --help`'s order: (name, module); each module's `group` is its typer app.
GROUPS: tuple[tuple[str, str], ...] = (
    ("receipt", "receiptcmds"),
    ("keys", "keycmds"),
    ("policy", "policycmds"),
    ("hook", "hookcmds"),
    ("server", "servercmds"),
    ("attempt", "attemptcmds"),
    ("review", "reviewcmds"),
    ("ledger", "ledgercmds"),
    ("agents", "agentcmds"),
    ("approvals", "approvalcmds"),
    ("attest", "attestcmds"),
)

NAMES = frozenset(name for name, _ in (*COMMANDS, *GROUPS))


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        out_line(f"push-gate {__version__}")
        raise typer.Exit(0)


def _root(version: Annotated[bool, Opt("--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")] = False) -> None:
    """Push-time gate for AI agents: frozen files and bound review receipts."""


@functools.cache
def build(only: str | None = None) -> typer.Typer:
    """The root with every command and group, or with `only` the one named (built once per process)."""
    # rich_markup_mode=None: plain help, as click writes it. typer 0.29's rich help prints every flag's
    # type (`--version <bool>`, `--help <bool>`), which no setting of the rich mode turns off.
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True, help=HELP,
                      rich_markup_mode=None)
    app.callback()(_root)
    for name, module in COMMANDS:
        if only in (None, name):
            commands = importlib.import_module(f"{__package__}.{module}").top.registered_commands
            app.registered_commands += [c for c in commands if c.name == name]
    for name, module in GROUPS:
        if only in (None, name):
            group = importlib.import_module(f"{__package__}.{module}").group
            app.add_typer(group, name=name, short_help=first_paragraph(group.info.help))
    return app


def for_args(args: Sequence[str]) -> typer.Typer:
    """The root `args` need: just the command or group they name first, when they name one; the
    root alone for `--version`."""
    first = args[0] if args else None
    if first == "--version":
        return build("")
    return build(first if first in NAMES else None)
