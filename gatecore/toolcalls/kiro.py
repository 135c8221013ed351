"""Kiro's `preToolUse` hook: the CLI's agent files (`.kiro/agents/*.json`), the IDE's `.kiro/hooks/`.

Payload (kiro.dev, CLI hooks; tests/agents/payloads/kiro/; checked 2026-12-06): `hook_event_name`,
`cwd`, `tool_name` and `tool_input`: `fs_write` (`path`; `command` create, str_replace, insert,
append) and `execute_bash` (`command`). Whether the IDE's hooks can refuse a call is not documented
where it could be read: the CLI's can.

Answer: exit status 2, the reason on stderr, which Kiro gives the model; other statuses proceed.
"""

from __future__ import annotations

from .toolcall import MODIFY, WRITE, Answer, PathWrite, ToolCall, exit_two, member, path_of, silent

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "kiro"
CATALOGUE: tuple[str, ...] = ()  # Kiro marks no commit of its own
PROJECT_FILES = (".kiro/agents/", ".kiro/hooks/", ".kiro/settings/")
USER_FILES = (".kiro/agents/", ".kiro/hooks/", ".kiro/settings/")

SHELL_TOOLS = frozenset({"execute_bash", "execute_cmd", "shell"})


def read(payload: dict[str, Any]) -> ToolCall:
    tool = member(payload, "tool_name", str, "payload")
    cwd = member(payload, "cwd", str, "payload", optional=True)
    event = member(payload, "hook_event_name", str, "payload", optional=True) or "preToolUse"
    if tool in ("fs_write", "write"):
        args = member(payload, "tool_input", dict, "payload")
        path = path_of(args, ("path", "file_path"), "tool_input", tool)
        kind = WRITE if args.get("command") == "create" else MODIFY
        return ToolCall(NAME, tool, cwd, (PathWrite(path, kind),), event=event)
    if tool in SHELL_TOOLS:
        args = member(payload, "tool_input", dict, "payload")
        return ToolCall(NAME, tool, cwd, command=member(args, "command", str, "tool_input"), event=event)
    return ToolCall(NAME, tool, cwd, event=event)


def deny(call: ToolCall | None, reason: str) -> Answer:
    return exit_two(reason)


allow = silent  # an allow is said by the exit status alone


#: Kiro IDE's hook file (its CLI's hooks live in agent definitions, `.kiro/agents/*.json`: docs/agent-hooks.md)
CONFIG_PATH = ".kiro/hooks/push-gate.kiro.hook"
EXECUTABLE = False


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    hookfiles.load(text, CONFIG_PATH)  # an existing file must at least be JSON: it is replaced whole
    return hookfiles.dump({"enabled": True, "name": "push-gate", "version": "1",
                           "description": "push-gate's agent check: refuse writes the server would refuse at push",
                           "when": {"type": "preToolUse", "toolTypes": ["write", "shell"]},
                           "then": {"type": "runCommand", "command": command, "timeout": 30}})


def configured(text: str) -> str | None:
    from . import hookfiles

    return hookfiles.configured_json(text, CONFIG_PATH)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"hook_event_name": "preToolUse", "cwd": cwd, "tool_name": "fs_write",
            "tool_input": {"command": "create", "path": path, "file_text": ""}}
