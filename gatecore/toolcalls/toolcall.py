"""A tool call as the gate reads it from any agent's pre-tool hook, and the gate's answer to it.

An agent's adapter (one module of this package per payload format) turns the payload its hook
hands over into a `ToolCall`: which tool, which paths it would write and how, which shell
command it would run, in which directory. It decides nothing: what the writes mean under the
policy is the engine's (`pipeline.judge` on `Writes`), and the shell command is read by
`shellwrites`. The answer goes back in the agent's own words (`Answer`, each adapter's `answer`).

Payloads are read by `read_payload`: JSON, duplicate keys refused, at most `MAX_PAYLOAD_BYTES`
(a tool call that writes a file carries the file: larger than any gate document). Anything a
payload does not say the way its agent documents it is `GATE-AGENT-PAYLOAD`, never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..errors import GateError
from ..strictjson import unique_keys
from ..valueclass import valueclass

#: A payload larger than this is refused (a write of a 32 MiB file is not one an agent's tool makes).
MAX_PAYLOAD_BYTES = 32 * 1024 * 1024

#: Kinds of write (`ProposedWrite.kind` takes them as they are).
ADD, MODIFY, DELETE, WRITE, MODE = "add", "modify", "delete", "write", "mode"


@valueclass(frozen=True, slots=True)
class PathWrite:
    """A path a tool would write, as the payload gives it (absolute, or relative to the call's
    directory), and how. `tree`: the path may be a directory and the write reaches below it (a
    recursive delete, a copy into it). `source`: what a copy or a move puts there (named as
    `path` is), whose files appear below `path` when it is a directory ("": none)."""

    path: str
    kind: str = WRITE
    tree: bool = False
    source: str = ""


@valueclass(frozen=True, slots=True)
class ToolCall:
    """What a pre-tool payload asks for, read by its agent's adapter."""

    agent: str  # the adapter's name (`AGENTS`)
    tool: str  # the tool's name as the agent calls it (`Write`, `apply_patch`, `run_shell_command`)
    cwd: str | None = None  # the directory the call runs in, when the payload says (else the hook's own)
    writes: tuple[PathWrite, ...] = ()
    command: str | None = None  # a shell command the tool would run (read by `shellwrites`)
    event: str = ""  # the hook event (`PreToolUse`, `BeforeTool`, ...), for the answer


@valueclass(frozen=True, slots=True)
class Answer:
    """What the hook process prints and exits with."""

    stdout: str
    stderr: str
    exit_code: int


def read_payload(data: bytes) -> dict[str, Any]:
    """One hook payload: a JSON object, duplicate keys refused (GATE-AGENT-PAYLOAD otherwise)."""
    if len(data) > MAX_PAYLOAD_BYTES:
        raise GateError("GATE-AGENT-PAYLOAD", f"the payload is {len(data)} bytes, more than the "
                                              f"{MAX_PAYLOAD_BYTES} the check reads")
    data = data.removeprefix(b"\xef\xbb\xbf")  # Cursor writes a byte-order mark before the JSON
    if not data.strip():
        raise GateError("GATE-AGENT-PAYLOAD", "the hook was given no payload on stdin")

    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=unique_keys)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise GateError("GATE-AGENT-PAYLOAD", f"the payload is not a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise GateError("GATE-AGENT-PAYLOAD", f"the payload is a JSON {type(value).__name__}, not an object")
    return value


def member(obj: Mapping[str, Any], key: str, kind: type, where: str, *, optional: bool = False) -> Any:
    """`obj[key]`, which must be of `kind` (GATE-AGENT-PAYLOAD naming `where` otherwise); None when
    absent and `optional`."""
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        got = "absent" if key not in obj else f"a JSON {type(value).__name__}"
        raise GateError("GATE-AGENT-PAYLOAD", f"{where}.{key} is {got}, not a {kind.__name__}")
    return value


def path_of(obj: Mapping[str, Any], keys: tuple[str, ...], where: str, tool: str) -> str:
    """The first of `keys` that `obj` holds, a non-empty string: the path a write tool names
    (GATE-AGENT-NO-PATH when it names none)."""
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
        if value is not None:
            raise GateError("GATE-AGENT-PAYLOAD", f"{where}.{key} is a JSON {type(value).__name__}, not a path")
    raise GateError("GATE-AGENT-NO-PATH", f"{tool} writes a file, and its input names none ({where}: no "
                                          + " / ".join(keys) + ")")


def exit_two(reason: str, decision: str | None = None) -> Answer:
    """A denial by exit status 2 with the reason on stderr (the form most agents honour), and the
    same decision as JSON on stdout where the agent reads one too (`decision`: its text)."""
    return Answer(decision + "\n" if decision else "", reason if reason.endswith("\n") else reason + "\n", 2)


ALLOW = Answer("", "", 0)


def silent(call: ToolCall) -> Answer:
    """The allow of an agent that reads the exit status alone: nothing printed, status 0."""
    return ALLOW


TYPE_CHECKING = False  # (typing's, as mypy reads it: an agent's hook does not import `typing`)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:
    Protocol = object

#: The agents whose pre-tool hooks the gate reads, one module of this package each (docs/agent-hooks.md).
AGENTS: tuple[str, ...] = ("claude", "copilot", "cursor", "codex", "gemini", "windsurf", "cline", "kiro")


class Adapter(Protocol):
    """What each agent's module provides."""

    NAME: str
    #: the catalogue entries (gatecore/data/agents.toml) whose marks this agent's commits carry
    CATALOGUE: tuple[str, ...]
    #: the files, relative to the work tree, that configure this agent's hooks (a write to one is refused; a
    #: name ending in `/` is a directory, everything below it counted)
    PROJECT_FILES: tuple[str, ...]
    #: the same in the user's home directory
    USER_FILES: tuple[str, ...]

    def read(self, payload: dict[str, Any]) -> ToolCall: ...

    def deny(self, call: ToolCall | None, reason: str) -> Answer: ...

    def allow(self, call: ToolCall) -> Answer: ...

    #: `gate agents install`'s file (relative to the work tree), and whether it is a program
    CONFIG_PATH: str
    EXECUTABLE: bool

    def configure(self, text: str | None, command: str) -> str: ...

    def configured(self, text: str) -> str | None: ...

    def sample_write(self, path: str, cwd: str) -> dict[str, Any]: ...


def adapter(name: str) -> Adapter:
    """The module that reads `name`'s payloads (GATE-AGENT-PAYLOAD for an agent it does not know)."""
    if name not in AGENTS:
        raise GateError("GATE-AGENT-PAYLOAD", f"unknown agent {name!r} (the check reads {', '.join(AGENTS)})")
    import sys

    qualified = f"{__package__}.{name}"
    __import__(qualified)  # (not `importlib`'s: with `warnings` it costs every tool call half a millisecond)
    module: Adapter = sys.modules[qualified]
    return module


_KIRO_TOOLS = frozenset({"fs_write", "fs_read", "execute_bash", "use_aws", "report_issue"})
_COPILOT_TOOLS = frozenset({"create", "edit", "bash", "powershell", "view", "str_replace_editor", "glob", "grep"})


def detect(payload: Mapping[str, Any]) -> str:
    """Which agent sent `payload`, from its shape, for a hook installed without `--agent`."""
    event = payload.get("hook_event_name")
    if "agent_action_name" in payload:
        return "windsurf"
    if isinstance(payload.get("preToolUse"), dict):
        return "cline"
    if "toolName" in payload:
        return "copilot"
    if "cursor_version" in payload or "conversation_id" in payload:
        return "cursor"
    if event == "BeforeTool":
        return "gemini"
    tool = payload.get("tool_name")
    if event in ("PreToolUse", "preToolUse") and tool in _KIRO_TOOLS:
        return "kiro"
    if event == "PreToolUse" and tool in _COPILOT_TOOLS:
        return "copilot"  # Copilot's PascalCase form keeps its own (lower-case) tool names
    if event == "PreToolUse" and "tool_name" in payload:
        return "codex" if "turn_id" in payload or tool == "apply_patch" else "claude"
    raise GateError("GATE-AGENT-PAYLOAD", "the payload's shape is no agent's the check knows: give --agent NAME "
                                          f"({', '.join(AGENTS)})")
