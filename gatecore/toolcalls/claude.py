"""Claude Code's `PreToolUse` hook (`.claude/settings.json`), and the same payload as GitHub
Copilot's CLI and Cursor read it from that file.

Payload (code.claude.com/docs/en/hooks, checked 2026-12-06, and recorded from Claude Code
2.1.328: tests/agents/payloads/claude/): `hook_event_name`, `tool_name`, `tool_input`, `cwd`,
`session_id`, `transcript_path`, `permission_mode`. The write tools and where they name the path:
`Write`, `Edit`, `MultiEdit` (`file_path`, absolute; `MultiEdit` is gone from 2.1.332, still read),
`NotebookEdit` (`notebook_path`); `Bash` runs `command`. Other tools (reads, searches, MCP tools)
are not the gate's. Copilot CLI sends this form from `.claude/settings.json` with its own argument
names (`Write` with `path`), and Continue's CLI (`filepath`) and Auggie send it from theirs: read too.

Answer: a denial is exit status 2 with the reason on stderr, which Claude Code feeds back to the
model; the same decision is printed as its JSON form (`hookSpecificOutput.permissionDecision:
"deny"`), which it reads only at exit 0, for the callers that read JSON first. Any other exit
status lets the call through in Claude Code: the installed command turns every status but 0 and
2 into 2 (`gate agents install`).
"""

from __future__ import annotations

import json

from .toolcall import MODIFY, WRITE, Answer, PathWrite, ToolCall, exit_two, member, path_of, silent

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "claude"
CATALOGUE = ("claude",)
#: (`disableAllHooks` in any of these switches every hook off; the local file is not committed)
PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json")
USER_FILES = (".claude/settings.json",)

#: tool name -> the keys its input names the path by
PATH_KEYS: dict[str, tuple[str, ...]] = {
    "Write": ("file_path", "path", "filepath"), "Edit": ("file_path", "path", "filepath"),
    "MultiEdit": ("file_path", "path", "filepath"),
    "NotebookEdit": ("notebook_path", "file_path"),
}
SHELL_TOOLS = frozenset({"Bash"})


def read(payload: dict[str, Any]) -> ToolCall:
    tool = member(payload, "tool_name", str, "payload")
    cwd = member(payload, "cwd", str, "payload", optional=True)
    event = member(payload, "hook_event_name", str, "payload", optional=True) or "PreToolUse"
    if tool in PATH_KEYS:
        args = member(payload, "tool_input", dict, "payload")
        path = path_of(args, PATH_KEYS[tool], "tool_input", tool)
        return ToolCall(NAME, tool, cwd, (PathWrite(path, WRITE if tool == "Write" else MODIFY),), event=event)
    if tool in SHELL_TOOLS:
        args = member(payload, "tool_input", dict, "payload")
        return ToolCall(NAME, tool, cwd, command=member(args, "command", str, "tool_input"), event=event)
    return ToolCall(NAME, tool, cwd, event=event)


def deny(call: ToolCall | None, reason: str) -> Answer:
    decision = {"hookSpecificOutput": {"hookEventName": (call.event if call else "") or "PreToolUse",
                                       "permissionDecision": "deny", "permissionDecisionReason": reason}}
    return exit_two(reason, json.dumps(decision))


allow = silent  # an allow is said by the exit status alone


#: The file `gate agents install` writes (merged into: the user's other settings and hooks kept).
CONFIG_PATH = ".claude/settings.json"
EXECUTABLE = False
MATCHER = "Write|Edit|MultiEdit|NotebookEdit|Bash"


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    return hookfiles.nested(text, command, CONFIG_PATH, "PreToolUse", MATCHER, timeout=30)


def configured(text: str) -> str | None:
    from . import hookfiles

    return hookfiles.configured_json(text, CONFIG_PATH)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"session_id": "doctor", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": path, "content": ""}}
