"""Gemini CLI's `BeforeTool` hook (`.gemini/settings.json`).

Payload (geminicli.com/docs/hooks, checked 2026-12-06, and recorded from Gemini CLI 0.61.0:
tests/agents/payloads/gemini/): `hook_event_name: "BeforeTool"`, `tool_name`, `tool_input`, `cwd`,
`session_id`. The write tools: `write_file` and `replace` (`file_path`, absolute); the shell tool
`run_shell_command` (`command`, run in `dir_path` when it names one: absolute, or relative to the
workspace). Other tools are not the gate's.

Answer: exit status 2 blocks the call, stderr is the reason the model is given ("Tool execution
blocked: ..."); the JSON form (`{"decision": "deny", "reason": ...}`) is printed beside it.
"""

from __future__ import annotations

import json

from .toolcall import MODIFY, WRITE, Answer, PathWrite, ToolCall, exit_two, member, path_of, silent

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "gemini"
CATALOGUE: tuple[str, ...] = ()  # Gemini CLI marks no commit of its own (its GitHub app does: gemini-code-assist)
PROJECT_FILES = (".gemini/settings.json",)
USER_FILES = (".gemini/settings.json",)

PATH_KEYS: dict[str, tuple[str, ...]] = {"write_file": ("file_path", "path"), "replace": ("file_path", "path")}
SHELL_TOOLS = frozenset({"run_shell_command"})


def read(payload: dict[str, Any]) -> ToolCall:
    tool = member(payload, "tool_name", str, "payload")
    cwd = member(payload, "cwd", str, "payload", optional=True)
    event = member(payload, "hook_event_name", str, "payload", optional=True) or "BeforeTool"
    if tool in PATH_KEYS:
        args = member(payload, "tool_input", dict, "payload")
        path = path_of(args, PATH_KEYS[tool], "tool_input", tool)
        return ToolCall(NAME, tool, cwd, (PathWrite(path, WRITE if tool == "write_file" else MODIFY),), event=event)
    if tool in SHELL_TOOLS:
        args = member(payload, "tool_input", dict, "payload")
        where = member(args, "dir_path", str, "tool_input", optional=True)
        if where:  # the command's own directory: absolute, or relative to the workspace
            import posixpath

            cwd = posixpath.join(cwd, where) if cwd else where
        return ToolCall(NAME, tool, cwd, command=member(args, "command", str, "tool_input"), event=event)
    return ToolCall(NAME, tool, cwd, event=event)


def deny(call: ToolCall | None, reason: str) -> Answer:
    return exit_two(reason, json.dumps({"decision": "deny", "reason": reason}))


allow = silent  # an allow is said by the exit status alone


CONFIG_PATH = ".gemini/settings.json"
EXECUTABLE = False
MATCHER = "write_file|replace|run_shell_command"


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    # (Gemini CLI's hook timeout is in milliseconds)
    return hookfiles.nested(text, command, CONFIG_PATH, "BeforeTool", MATCHER, name="push-gate", timeout=30000)


def configured(text: str) -> str | None:
    from . import hookfiles

    return hookfiles.configured_json(text, CONFIG_PATH)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"session_id": "doctor", "cwd": cwd, "hook_event_name": "BeforeTool", "tool_name": "write_file",
            "tool_input": {"file_path": path, "content": ""}}
