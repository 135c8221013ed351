"""GitHub Copilot's `preToolUse` hook (CLI and cloud agent): `.github/hooks/*.json`.

Payload (docs.github.com, "Hooks configuration" and the CLI's hooks reference; recorded from Copilot
CLI 1.0.102: tests/agents/payloads/copilot/; checked 2026-12-06): `toolName`, `toolArgs`, `cwd`,
`sessionId`, `timestamp`. `toolArgs` is documented as a JSON string and arrives as an object from
1.0.102: both are read. Configured for the PascalCase event (`PreToolUse`), it sends Claude's
envelope (`tool_name`, `tool_input`) with its own tool names: read too. The write tools: `create`
and `edit` (`path`, absolute), `str_replace_editor` (`path`), `apply_patch` (the patch, as Codex
writes one: `applypatch`); `bash` and `powershell` run `command`. Hooks Copilot reads from
`.claude/settings.json` send Claude's form (the `claude` adapter reads those, Copilot's `path`
included).

Answer: the JSON decision (`permissionDecision: "deny"` with its reason) and exit status 2: with the
status alone the model is told only "hook exited with code 2" (tests/agents/README.md). A hook's
time-out is an allow in Copilot: the check answers well inside its 30 s
(`agent_check.DEADLINE_SECONDS` is below it, and the installed hook sets `timeoutSec`).
"""

from __future__ import annotations

import json

from ..errors import GateError
from .applypatch import patch_writes
from .toolcall import MODIFY, WRITE, Answer, PathWrite, ToolCall, exit_two, member, path_of, silent

TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any

NAME = "copilot"
CATALOGUE = ("copilot",)
PROJECT_FILES = (".github/hooks/", ".github/copilot/")
USER_FILES = (".copilot/hooks/", ".copilot/settings.json", ".copilot/config.json")

PATH_KEYS = {"create": ("path",), "edit": ("path",), "str_replace_editor": ("path",), "write": ("path",)}
SHELL_TOOLS = frozenset({"bash", "powershell"})


def _args(payload: dict[str, Any]) -> Any:
    args = payload.get("toolArgs")
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args  # a freeform tool's text (apply_patch)
    return args


#: Copilot's own tool names (the PascalCase form, `PreToolUse`, keeps them: `detect` tells it from Claude's).
TOOLS = frozenset({*PATH_KEYS, "apply_patch", *SHELL_TOOLS, "view", "glob", "grep", "task"})


def read(payload: dict[str, Any]) -> ToolCall:
    if "toolName" not in payload and "tool_name" in payload:  # the PascalCase event's form
        payload = {**payload, "toolName": payload["tool_name"], "toolArgs": payload.get("tool_input")}
    tool = member(payload, "toolName", str, "payload")
    cwd = member(payload, "cwd", str, "payload", optional=True)
    args = _args(payload)
    if tool in PATH_KEYS:
        if not isinstance(args, dict):
            raise GateError("GATE-AGENT-PAYLOAD", f"toolArgs of {tool} is not an object")
        if tool == "str_replace_editor" and args.get("command") == "view":
            return ToolCall(NAME, tool, cwd, event="preToolUse")  # (its one command that writes nothing)
        path = path_of(args, PATH_KEYS[tool], "toolArgs", tool)
        return ToolCall(NAME, tool, cwd, (PathWrite(path, WRITE if tool == "create" else MODIFY),), event="preToolUse")
    if tool == "apply_patch":
        patch = args if isinstance(args, str) else next(
            (args.get(k) for k in ("input", "patch", "command") if isinstance(args, dict) and isinstance(args.get(k),
                                                                                                    str)), None)
        if not isinstance(patch, str):
            raise GateError("GATE-AGENT-PAYLOAD", "toolArgs of apply_patch holds no patch")
        return ToolCall(NAME, tool, cwd, patch_writes(patch), event="preToolUse")
    if tool in SHELL_TOOLS:
        if not isinstance(args, dict):
            raise GateError("GATE-AGENT-PAYLOAD", f"toolArgs of {tool} is not an object")
        return ToolCall(NAME, tool, cwd, command=member(args, "command", str, "toolArgs"), event="preToolUse")
    return ToolCall(NAME, tool, cwd, event="preToolUse")


def deny(call: ToolCall | None, reason: str) -> Answer:
    return exit_two(reason, json.dumps({"permissionDecision": "deny", "permissionDecisionReason": reason}))


allow = silent  # an allow is said by the exit status alone


CONFIG_PATH = ".github/hooks/push-gate.json"
EXECUTABLE = False
MATCHER = "create|edit|str_replace_editor|write|apply_patch|bash|powershell"


def configure(text: str | None, command: str) -> str:
    from . import hookfiles

    doc = hookfiles.load(text, CONFIG_PATH)
    doc.setdefault("version", 1)
    entry = {"type": "command", "bash": command, "timeoutSec": 30, "matcher": MATCHER}
    return hookfiles.dump(hookfiles.with_flat_entry(doc, ("hooks", "preToolUse"), entry, "bash", CONFIG_PATH))


def configured(text: str) -> str | None:
    from . import hookfiles

    return hookfiles.configured_json(text, CONFIG_PATH)


def sample_write(path: str, cwd: str) -> dict[str, Any]:
    return {"sessionId": "doctor", "timestamp": 0, "cwd": cwd, "toolName": "create",
            "toolArgs": json.dumps({"path": path, "file_text": ""})}
