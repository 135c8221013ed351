"""The `gate` command line: a package with one module per command group (the outer layer).

`main(argv) -> int` is the single error boundary (pre-commit's shape; tests call it in
process): a `GateError` prints its code and reason and returns the status its code's
registry entry names (1 reject, 2 configuration, 3 internal); a usage error returns 2;
anything unexpected returns 3 as `GATE-CLI-INTERNAL`. Nothing ever maps an error to 0.

The commands live in their groups' modules (`receiptcmds`, `keycmds`, `policycmds`,
`agentcmds`, `hookcmds`, `servercmds`, `attemptcmds`, `reviewcmds`, `ledgercmds`,
`approvalcmds`, `attestcmds`, `checkcmds`, `infocmds`), each a thin function over the package that returns
an exit code and reads the clock once; `wiring` hangs them on the root, loading only the group
a command line names; `clicommon` holds what they share; `__main__` is `python -m gatecore.cli`.
Only these modules talk to typer, and `main` imports typer only once it has a command line
to run; `gate agents check`, which an agent runs before every tool call, never imports it.

This is the outer layer: it may import everything, the `server` package included (the
server's commands: install, doctor, the approvals verifier). Nothing imports it.

The installed pre-receive hook does not come through here: it runs `server/launch.py
server.prereceive`, which keeps typer and pydantic off the hook's start-up path.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..errors import GateError


def _err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


def _own_packages() -> None:
    """`server` and `hooks` are push-gate's own, whatever else the environment ships under those
    names (server/launch.py binds them, as it does for the installed hook; its `bind` is run from
    the file itself, without `runpy`, whose imports would cost every command, an agent's hook
    among them, a few milliseconds)."""
    import os

    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    launch = os.path.join(top, "server", "launch.py")
    with open(launch, encoding="utf-8") as fh:
        code = compile(fh.read(), launch, "exec")
    space: dict[str, object] = {"__name__": "gate_launch", "__file__": launch}
    exec(code, space)  # noqa: S102 - push-gate's own file, by its path
    bind = space["bind"]
    assert callable(bind)
    bind()


def _agent_check(args: list[str]) -> int:
    """`gate agents check`: `hooks.agent_check`, held to be push-gate's own after it is imported (what
    `_own_packages` makes sure of beforehand, at the cost of compiling server/launch.py: a few
    milliseconds on a road an agent runs before every tool call)."""
    import os

    import hooks
    from hooks.agent_check import main as agent_check

    ours = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "hooks")
    if os.path.dirname(os.path.abspath(hooks.__file__ or "")) != ours:
        _err(f"GATE-CONFIG-INSTALL: the package 'hooks' was imported from {hooks.__file__}, not from push-gate's "
             f"{ours}: give push-gate its own environment (docs/servers.md)")
        return 2  # (2: a refusal in every agent that reads the status)
    return agent_check(args)


def main(argv: Sequence[str] | None = None) -> int:
    """`gate ARGS`: the single error boundary (the console script, and the tests, in process).

    A `GateError` prints its code and reason and returns the exit class its code names; a
    usage error returns 2; anything unexpected prints its traceback and returns 3, reported
    as `GATE-CLI-INTERNAL`. Nothing maps an error to 0."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:2] == ["agents", "check"]:
        # an agent's pre-tool hook, run before every tool call: its own boundary, and no typer
        # (`agentcmds.agents_check` is the same command for `gate agents --help`)
        return _agent_check(args[2:])
    try:
        _own_packages()
    except ImportError as exc:  # another distribution's server or hooks package came first
        _err(f"GATE-CONFIG-INSTALL: {exc}")
        return 2
    import traceback

    import typer

    from .wiring import for_args

    try:
        app = for_args(args)  # (the group's module imported here: its errors meet this boundary)
        result = app(args=args, prog_name="gate", standalone_mode=False)
    except GateError as exc:
        _err(f"{exc.code}: {exc.detail}")
        return exc.exit_code
    except typer.Abort:
        _err("aborted")
        return 1
    except typer.TyperException as exc:  # usage errors: typer's message and its status (2)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _err(exc.format_message())
        return exc.exit_code or 2
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception as exc:  # the boundary: never 0
        traceback.print_exc()
        _err(f"GATE-CLI-INTERNAL: {type(exc).__name__}: {exc}")
        return 3
    return result if isinstance(result, int) else 0
