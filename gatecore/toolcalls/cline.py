"""Cline's `PreToolUse` hook: an executable `.clinerules/hooks/PreToolUse` (the extension) or in
`.cline/hooks/` (the CLI).

Payload (cline/cline, hooks; tests/agents/payloads/cline/; checked 2026-12-06): `hookName`,
`workspaceRoots`, and `preToolUse` with `toolName` and `parameters` (string values): the write tools
`write_to_file` and `replace_in_file` (`path`, relative to the workspace root), the CLI's `editor`
(`path`) and `apply_patch` (`input`, Codex's envelope); `execute_command` runs `command`, the CLI's
`run_commands` each of its `commands` by itself from the workspace root (a string through the shell,
a `{command, args}` argv without one). The CLI also sends `tool_call.input`, with the same paths.

Answer: a JSON object on stdout, `{"cancel": true, "errorMessage": ...}` to refuse (any exit
status); Cline lets through what gives no such answer, so the allow says `{"cancel": false}`.
"""

from __future__ import annotations

import json

from ..errors import GateError
from .applypatch import patch_writes
from .toolcall import MODIFY, WRITE, Answer, PathWrite, ToolCall, member, path_of

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "cline"
CATALOGUE: tuple[str, ...] = ()  # Cline marks no commit of its own
PROJECT_FILES = (".clinerules/", ".cline/")
USER_FILES = (".cline/",)

PATH_TOOLS = {"write_to_file": WRITE, "replace_in_file": MODIFY, "editor": MODIFY, "new_file": WRITE}
SHELL_TOOLS = frozenset({"execute_command", "run_commands"})


def _real_input(payload: dict[str, Any]) -> dict[str, Any]:
    """The CLI's `tool_call.input` (the arguments with their real types), or {}."""
    call = payload.get("tool_call")
    given = call.get("input") if isinstance(call, dict) else None
    return given if isinstance(given, dict) else {}


def _commands(commands: Any) -> str:
    """`run_commands`' commands as one script: each a subshell of its own (Cline runs each by itself,
    from the workspace root), a `{command, args}` argv (run without a shell) quoted as one."""
    import shlex

    out = []
    for entry in commands if isinstance(commands, list) else [commands]:
        text = entry
        if isinstance(entry, dict) and isinstance(entry.get("command"), str) and \
                all(isinstance(a, str) for a in entry.get("args") or []):
            text = shlex.join([entry["command"], *(entry.get("args") or [])])
        if not isinstance(text, str):
            raise GateError("GATE-AGENT-PAYLOAD", "run_commands holds a command that is neither a string nor "
                                                  "{command, args}")
        out.append(f"(\n{text}\n)")
    return "\n".join(out)


def read(payload: dict[str, Any]) -> ToolCall:
    pre = member(payload, "preToolUse", dict, "payload")
    tool = member(pre, "toolName", str, "preToolUse")
    params = pre.get("parameters") or {}
    if not isinstance(params, dict):
        raise GateError("GATE-AGENT-PAYLOAD", "preToolUse.parameters is not an object")
    roots = payload.get("workspaceRoots")
    cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    if tool in PATH_TOOLS:
        path = path_of(params, ("path", "file_path"), "preToolUse.parameters", tool)
        return ToolCall(NAME, tool, cwd, (PathWrite(path, PATH_TOOLS[tool]),), event="PreToolUse")
    if tool == "apply_patch":
        patch = params.get("input")
        if not isinstance(patch, str):
            raise GateError("GATE-AGENT-PAYLOAD", "apply_patch's parameters hold no patch (input)")
        return ToolCall(NAME, tool, cwd, patch_writes(patch), event="PreToolUse")
    if tool in SHELL_TOOLS:
        command = params.get("command")
        commands = _real_input(payload).get("commands", params.get("commands"))
        if isinstance(commands, str):  # the extension's string values: a list arrives JSON-encoded
            try:
                commands = json.loads(commands)
            except ValueError:
                commands = [commands]
        if command is None and commands is not None:
            command = _commands(commands)
        if not isinstance(command, str):
            raise GateError("GATE-AGENT-PAYLOAD", f"{tool}'s parameters hold no command")
        return ToolCall(NAME, tool, cwd, command=command, event="PreToolUse")
    return ToolCall(NAME, tool, cwd, event="PreToolUse")


def deny(call: ToolCall | None, reason: str) -> Answer:
    return Answer(json.dumps({"cancel": True, "errorMessage": reason}) + "\n", reason + "\n", 2)


def allow(call: ToolCall) -> Answer:
    return Answer(json.dumps({"cancel": False}) + "\n", "", 0)


#: An executable hook file (Cline runs `.clinerules/hooks/PreToolUse` itself): it runs the check, and
#: refuses in Cline's form when the gate cannot run at all (Cline lets through what gives no answer).
CONFIG_PATH = ".clinerules/hooks/PreToolUse"
EXECUTABLE = True
_SCRIPT = """#!/bin/sh
# push-gate's agent check (written by gate agents install; docs/agent-hooks.md)
{check}
status=$?
if [ "$status" -eq 0 ] || [ "$status" -eq 2 ]; then exit "$status"; fi
echo '{{"cancel": true, "errorMessage": "GATE-AGENT-INTERNAL: push-gate could not run its check (is gate on PATH?)"}}'
exit 2
"""


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    if text is not None and hookfiles.MARK not in text:
        raise GateError("GATE-AGENT-INSTALL", f"{CONFIG_PATH} exists and is not push-gate's: it is left as it is; "
                                              "add the check to it by hand (docs/agent-hooks.md)")
    return _SCRIPT.format(check=command.removesuffix(" || exit 2"))


def configured(text: str) -> str | None:
    from . import hookfiles

    return next((ln for ln in text.splitlines() if hookfiles.MARK in ln and not ln.startswith("#")), None)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"hookName": "PreToolUse", "workspaceRoots": [cwd],
            "preToolUse": {"toolName": "write_to_file", "parameters": {"path": path, "content": ""}}}
