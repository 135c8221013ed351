"""OpenAI Codex CLI's `PreToolUse` hook (`.codex/hooks.json`, or `[hooks]` in `.codex/config.toml`).

Payload (openai/codex, codex-rs hooks; recorded from Codex 0.171.0: tests/agents/payloads/codex/;
checked 2026-12-06): Claude's envelope (`hook_event_name`, `tool_name`, `tool_input`, `cwd`,
`session_id`) with `turn_id` and `model`. `apply_patch` carries the raw patch in
`tool_input.command` (paths relative to `cwd`: `applypatch`); the shell tool reaches the hook as
`Bash` with `tool_input.command` (a string, or an argv list).

Answer: exit status 2 with the reason on stderr (Codex needs it non-empty), and Claude's JSON form
on stdout. Any other status, and a time-out, let the call through in Codex.
"""

from __future__ import annotations

import json
import shlex

from ..errors import GateError
from .applypatch import patch_writes
from .toolcall import Answer, ToolCall, exit_two, member, silent

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "codex"
CATALOGUE = ("codex",)
PROJECT_FILES = (".codex/hooks.json", ".codex/config.toml")
USER_FILES = (".codex/hooks.json", ".codex/config.toml")


def _command(args: dict[str, Any]) -> str:
    value = args.get("command")
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
            return str(value[2])
        return shlex.join(value)
    raise GateError("GATE-AGENT-PAYLOAD", "tool_input.command is neither a string nor a list of strings")


def read(payload: dict[str, Any]) -> ToolCall:
    tool = member(payload, "tool_name", str, "payload")
    cwd = member(payload, "cwd", str, "payload", optional=True)
    event = member(payload, "hook_event_name", str, "payload", optional=True) or "PreToolUse"
    if tool == "apply_patch":
        args = member(payload, "tool_input", dict, "payload")
        patch = args.get("command", args.get("input"))
        if isinstance(patch, list) and len(patch) == 2 and patch[0] == "apply_patch":
            patch = patch[1]
        if not isinstance(patch, str):
            raise GateError("GATE-AGENT-PAYLOAD", "tool_input of apply_patch holds no patch")
        return ToolCall(NAME, tool, cwd, patch_writes(patch), event=event)
    if tool in ("Bash", "shell", "exec_command"):
        args = member(payload, "tool_input", dict, "payload")
        return ToolCall(NAME, tool, cwd, command=_command(args), event=event)
    return ToolCall(NAME, tool, cwd, event=event)


def deny(call: ToolCall | None, reason: str) -> Answer:
    decision = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}
    return exit_two(reason, json.dumps(decision))


allow = silent  # an allow is said by the exit status alone


CONFIG_PATH = ".codex/hooks.json"
EXECUTABLE = False
MATCHER = "apply_patch|Bash"


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    return hookfiles.nested(text, command, CONFIG_PATH, "PreToolUse", MATCHER, timeout=30)


def configured(text: str) -> str | None:
    from . import hookfiles

    return hookfiles.configured_json(text, CONFIG_PATH)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"session_id": "doctor", "turn_id": "doctor", "cwd": cwd, "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch", "tool_input": {"command": f"*** Begin Patch\n*** Add File: {path}\n+\n"
                                                                  "*** End Patch"}}
