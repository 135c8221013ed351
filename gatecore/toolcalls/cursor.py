"""Cursor's `preToolUse` and `beforeShellExecution` hooks (`.cursor/hooks.json`).

Payload (cursor.com/docs/reference/hooks as quoted by run-verified captures, Cursor 3.11;
tests/agents/payloads/cursor/; checked 2026-12-06; Cursor's own page was not reachable from here):
`hook_event_name`, `conversation_id`, `workspace_roots`, `cursor_version`, and for `preToolUse`
`tool_name` with `tool_input`: `Write` (edits too) and `Delete` (`file_path`, absolute), `Shell`
(`command`, `cwd`); `beforeShellExecution` has `command` and `cwd` at the top. Cursor writes a UTF-8
byte-order mark before the JSON (`toolcall.read_payload` takes it off). A `cwd` may be empty: the
first workspace root stands for it.

Answer: the flat JSON decision, `{"permission": "deny", "user_message", "agent_message"}` (the model
receives `user_message`), with exit status 0: with status 2 Cursor shows the raw JSON as the reason.
An allow is said too (`{"permission": "allow"}`): with `failClosed`, which `gate agents install`
sets, an empty answer blocks.
"""

from __future__ import annotations

import json

from .toolcall import DELETE, WRITE, Answer, PathWrite, ToolCall, member, path_of

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "cursor"
CATALOGUE = ("cursor",)
PROJECT_FILES = (".cursor/hooks.json",)
USER_FILES = (".cursor/hooks.json",)

PATH_TOOLS = {"Write": WRITE, "Edit": WRITE, "Delete": DELETE}


def _cwd(payload: dict[str, Any], given: object) -> str | None:
    if isinstance(given, str) and given:
        return given
    roots = payload.get("workspace_roots")
    return roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None


def read(payload: dict[str, Any]) -> ToolCall:
    event = member(payload, "hook_event_name", str, "payload")
    if event == "beforeShellExecution":
        return ToolCall(NAME, "Shell", _cwd(payload, payload.get("cwd")),
                        command=member(payload, "command", str, "payload"), event=event)
    tool = member(payload, "tool_name", str, "payload")
    args = member(payload, "tool_input", dict, "payload") if tool in PATH_TOOLS or tool == "Shell" else {}
    if tool in PATH_TOOLS:
        path = path_of(args, ("file_path", "path"), "tool_input", tool)
        return ToolCall(NAME, tool, _cwd(payload, payload.get("cwd")), (PathWrite(path, PATH_TOOLS[tool]),),
                        event=event)
    if tool == "Shell":
        return ToolCall(NAME, tool, _cwd(payload, args.get("cwd") or payload.get("cwd")),
                        command=member(args, "command", str, "tool_input"), event=event)
    return ToolCall(NAME, tool, _cwd(payload, payload.get("cwd")), event=event)


def deny(call: ToolCall | None, reason: str) -> Answer:
    return Answer(json.dumps({"permission": "deny", "user_message": reason, "agent_message": reason}) + "\n", "", 0)


def allow(call: ToolCall) -> Answer:
    return Answer(json.dumps({"permission": "allow"}) + "\n", "", 0)


CONFIG_PATH = ".cursor/hooks.json"
EXECUTABLE = False
MATCHER = "Write|Delete|Shell"


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    doc = hookfiles.load(text, CONFIG_PATH)
    doc.setdefault("version", 1)
    entry = {"command": command, "matcher": MATCHER, "timeout": 30, "failClosed": True}
    return hookfiles.dump(hookfiles.with_flat_entry(doc, ("hooks", "preToolUse"), entry, "command", CONFIG_PATH))


def configured(text: str) -> str | None:
    from . import hookfiles

    return hookfiles.configured_json(text, CONFIG_PATH)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"conversation_id": "doctor", "hook_event_name": "preToolUse", "cursor_version": "doctor",
            "workspace_roots": [cwd], "tool_name": "Write", "tool_input": {"file_path": path}}
