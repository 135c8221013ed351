"""What the command groups share: the command decorator, the output, the options several groups take."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

Opt = typer.Option


F = TypeVar("F", bound=Callable[..., int])


def command(group: typer.Typer, name: str) -> Callable[[F], F]:
    """Register a command whose return value is its exit code. Its line in its group's listing is
    its docstring's first paragraph, whole (`short_help`: the plain help would cut it at 45 columns)."""

    def register(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: object, **kwargs: object) -> None:
            raise typer.Exit(fn(*args, **kwargs))

        group.command(name, short_help=first_paragraph(fn.__doc__))(run)
        return fn

    return register


def first_paragraph(doc: str | None) -> str | None:
    """A docstring's first paragraph on one line (None: no docstring)."""
    if not doc:
        return None
    return " ".join(doc.strip().split("\n\n")[0].split())


def out_line(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def err_line(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


AttemptOpt = Annotated[str, Opt("--attempt", help="Attempt id (from the orchestrator).")]


ModelOpt = Annotated[str, Opt("--model", help="Model id on record for this attempt.")]


GenOpt = Annotated[str, Opt("--workspace-gen", help="Workspace generation minted by bootstrap.")]


PromptOpt = Annotated[Path, Opt("--prompt-file", help="The prompt given to the model.")]


DiffFileOpt = Annotated[Path | None, Opt("--diff-file", help="Patch file: bind the SHA-256 of its bytes.")]


RepoOpt = Annotated[Path | None, Opt("--repo", help="Repository: bind the tree delta --from..--to.")]


FromOpt = Annotated[str | None, Opt("--from", help="Base revision of the change.")]


ToOpt = Annotated[str | None, Opt("--to", help="Reviewed revision.")]


RepoDirOpt = Annotated[Path, Opt("--repo", help="The trusted side's clone.")]


VerboseOpt = Annotated[bool, Opt("--verbose", "-v", help="Also print git's own output of the push.")]


LedgerRemoteOpt = Annotated[str | None, Opt("--ledger-remote", help="Read and push the ledger (refs/gate/*) here, "
                                                                    "not on the other remote: a ledger repository "
                                                                    "only the trusted side writes (a hosted forge, "
                                                                    "docs/forges.md).")]


def push_lines(output: str, verbose: bool) -> list[str]:
    """What a trusted command shows of its `git push --porcelain`: everything with -v; else the
    server's own lines (the gate's rejection: codes, hints, gate-json) and each ref it refused."""
    if verbose:
        return output.splitlines()
    shown = []
    for line in output.splitlines():
        if line.startswith("remote: "):
            if line[8:].strip():
                shown.append(line[8:].rstrip())
        elif line.startswith("!\t"):
            _, refspec, why = [*line.split("\t"), "", ""][:3]
            shown.append(f"refused: {refspec.rpartition(':')[2]} {why}".rstrip())
    return shown
