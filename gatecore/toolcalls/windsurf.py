"""Windsurf's (Devin Desktop's) `pre_write_code` and `pre_run_command` hooks (`.windsurf/hooks.json`).

Payload (docs.windsurf.com, Cascade hooks; tests/agents/payloads/windsurf/; checked 2026-12-06):
`agent_action_name`, and `tool_info`: `file_path` (absolute) with `edits[]` for a write,
`command_line` with `cwd` for a command.

Answer: exit status 2, the reason on stderr, which Windsurf shows the agent; it reads no JSON
decision, and any other status lets the action through.
"""

from __future__ import annotations

from .toolcall import WRITE, Answer, PathWrite, ToolCall, exit_two, member, path_of, silent

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "windsurf"
CATALOGUE: tuple[str, ...] = ()  # Windsurf marks no commit of its own
PROJECT_FILES = (".windsurf/hooks.json", ".devin/hooks.json")
USER_FILES = (".codeium/windsurf/hooks.json",)


def read(payload: dict[str, Any]) -> ToolCall:
    action = member(payload, "agent_action_name", str, "payload")
    info = member(payload, "tool_info", dict, "payload") if action in ("pre_write_code", "pre_run_command") else {}
    if action == "pre_write_code":
        path = path_of(info, ("file_path", "path"), "tool_info", action)
        return ToolCall(NAME, action, member(info, "cwd", str, "tool_info", optional=True), (PathWrite(path, WRITE),),
                        event=action)
    if action == "pre_run_command":
        return ToolCall(NAME, action, member(info, "cwd", str, "tool_info", optional=True),
                        command=member(info, "command_line", str, "tool_info"), event=action)
    return ToolCall(NAME, action, event=action)


def deny(call: ToolCall | None, reason: str) -> Answer:
    return exit_two(reason)


allow = silent  # an allow is said by the exit status alone


CONFIG_PATH = ".windsurf/hooks.json"
EXECUTABLE = False


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    doc = hookfiles.load(text, CONFIG_PATH)
    for event in ("pre_write_code", "pre_run_command"):
        entry = {"command": command, "show_output": True}
        doc = hookfiles.with_flat_entry(doc, ("hooks", event), entry, "command", CONFIG_PATH)
    return hookfiles.dump(doc)


def configured(text: str) -> str | None:
    from . import hookfiles

    return hookfiles.configured_json(text, CONFIG_PATH)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"agent_action_name": "pre_write_code", "tool_info": {"file_path": path, "cwd": cwd, "edits": []}}
