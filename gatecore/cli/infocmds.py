"""`gate explain`, `gate selftest` and `gate demo`: what the gate says about itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from .clicommon import Opt, command, err_line, out_line

top = typer.Typer()


@command(top, "selftest")
def selftest_cmd() -> int:
    """Run the decision table and the offline attack list against the binder."""
    from ..selftest import run

    text, ok = run()
    out_line(text)
    return 0 if ok else 1


@command(top, "explain")
def explain_cmd(
    code: Annotated[str | None, typer.Argument(help="A code such as GATE-BIND-MODEL.")] = None,
    markdown: Annotated[bool, Opt("--markdown", help="Print the whole table (docs/codes.md).")] = False,
    list_all: Annotated[bool, Opt("--list", help="List every code.")] = False,
    as_json: Annotated[bool, Opt("--json", help="As JSON: the fields a gate-json line carries (docs/codes.md).")]
    = False,
) -> int:
    """Explain a rejection code: reason, hint, exit class, who must act, whether a retry helps."""
    from .. import codes

    if markdown:
        out_line(codes.markdown_table())
        return 0
    if list_all or code is None:
        if as_json:
            out_line(json.dumps([codes.as_json(c) for c in codes.CODES], sort_keys=True))
            return 0
        for c in codes.CODES.values():
            out_line(f"{c.code}  {c.reason}")
        return 0
    try:
        out_line(json.dumps(codes.as_json(code), sort_keys=True) if as_json else codes.explain(code))
    except KeyError:
        err_line(f"unknown code {code!r}; `gate explain --list` lists them")
        return 2
    return 0


@command(top, "demo")
def demo_cmd(
    keep: Annotated[Path | None, Opt("--keep", help="Work in this directory and keep it.")] = None,
) -> int:
    """Show the product: the incident replayed against a real bare repository."""
    from server.demo import run_demo

    return run_demo(keep)
