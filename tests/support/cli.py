"""`gate ARGS` in this process: `gatecore.cli.main(argv)` with its output captured (pre-commit's
pattern). Tests of the command line's own behaviour use this; a few subprocess runs
(`support.gitutil.gate`) prove the installed entry point works.

typer builds the click command tree from the app's functions on every call of the app (a
process calls it once; here, every `cli` call did: 35 ms of annotation parsing each, a few
seconds of CPU per module). This process builds it once per app and reuses it, as a click
program built at import does: the commands, their options and `main`'s error boundary are
the same objects every call."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from gatecore.cli import main

_build_command = typer.main.get_command
_commands: weakref.WeakKeyDictionary[typer.Typer, Any] = weakref.WeakKeyDictionary()


def _command_built_once(app: typer.Typer) -> Any:
    """`typer.main.get_command`, memoised per app (see the module's docstring)."""
    if app not in _commands:
        _commands[app] = _build_command(app)
    return _commands[app]


typer.main.get_command = _command_built_once


@contextlib.contextmanager
def _environment(cwd: Path | str | None, env: dict[str, str] | None) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    try:
        if env:
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def cli(*args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `gate ARGS` in process; the result has the shape of a subprocess run (text=True). Its
    streams are text over bytes, as a process's are: a command may write bytes to `sys.stdout.buffer`."""
    out, err = _stream(), _stream()
    saved_stdin = sys.stdin
    sys.stdin = io.StringIO(input or "")
    try:
        with _environment(cwd, env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["gate", *args], code, _text(out), _text(err))


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")
