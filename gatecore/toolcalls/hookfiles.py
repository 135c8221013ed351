"""The agents' hook configuration files as `gate agents install` writes them (pure: text in, text out).

Each agent's module says where its file is and what its entry looks like (`CONFIG_PATH`,
`configure`, `configured`); this module holds what they share: reading a JSON settings file
strictly (a file it cannot read as one JSON object is refused, never overwritten:
GATE-AGENT-INSTALL), putting the gate's entry into a list of hooks while keeping every other hook
as it was, and finding the gate's entry again. The gate's entry is recognised by its command
(`MARK`); installing twice writes the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import GateError
from ..strictjson import unique_keys

#: What every command the installer writes runs (how the gate's entries are found again).
MARK = "gate agents check"


def command_for(agent: str, gate: str = "gate") -> str:
    """The hook's command: the check, and a refusal (exit 2) if it cannot answer at all (not
    installed, not on PATH, killed): the agents that let any other exit status through then refuse."""
    return f"{gate} agents check --agent {agent} || exit 2"


def ours(command: object) -> bool:
    return isinstance(command, str) and MARK in command


def load(text: str | None, where: str) -> dict[str, Any]:
    """A settings file's JSON object ({} when there is none)."""
    if text is None or not text.strip():
        return {}

    try:
        doc = json.loads(text, object_pairs_hook=unique_keys)
    except ValueError as exc:
        raise GateError("GATE-AGENT-INSTALL", f"{where} is not JSON the installer can read ({exc}): it is left as "
                                              "it is; fix it, or add the hook by hand (docs/agent-hooks.md)") from None
    if not isinstance(doc, dict):
        raise GateError("GATE-AGENT-INSTALL", f"{where} holds a JSON {type(doc).__name__}, not an object: left as "
                                              "it is")
    return doc


def dump(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _list_at(doc: dict[str, Any], keys: Sequence[str], where: str) -> list[Any]:
    node = doc
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise GateError("GATE-AGENT-INSTALL", f"{where}: {'.'.join(keys)} is not where an object is expected")
        node = child
    found = node.setdefault(keys[-1], [])
    if not isinstance(found, list):
        raise GateError("GATE-AGENT-INSTALL", f"{where}: {'.'.join(keys)} is not a list")
    return found


def with_flat_entry(doc: dict[str, Any], keys: Sequence[str], entry: dict[str, Any], field: str,
                    where: str) -> dict[str, Any]:
    """`doc` with `entry` as the gate's one hook in the list at `keys`, whose entries name their
    command in `field` (Copilot's `bash`, Cursor's and Windsurf's `command`): the gate's earlier
    entries replaced, every other kept in its place."""
    hooks = _list_at(doc, keys, where)
    hooks[:] = [h for h in hooks if not (isinstance(h, dict) and ours(h.get(field)))] + [entry]
    return doc


def with_nested_entry(doc: dict[str, Any], keys: Sequence[str], matcher: str, hook: dict[str, Any],
                      where: str) -> dict[str, Any]:
    """`doc` with the gate's hook in Claude's nested form (a list of `{matcher, hooks: [...]}` at
    `keys`: Claude Code, Codex, Gemini CLI): the gate's earlier hooks taken out of every group
    (a group left empty goes), then one group of the gate's own appended."""
    groups = _list_at(doc, keys, where)
    kept = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            inner = [h for h in group["hooks"] if not (isinstance(h, dict) and ours(h.get("command")))]
            if inner:
                kept.append({**group, "hooks": inner})
        else:
            kept.append(group)
    groups[:] = [*kept, {"matcher": matcher, "hooks": [hook]}]
    return doc


def nested(text: str | None, command: str, where: str, event: str, matcher: str, **fields: Any) -> str:
    """A settings file in Claude's nested form (Claude Code, Codex, Gemini CLI) with the gate's hook for
    `event`: `{"type": "command", "command": ..., **fields}` in a group of its own."""
    hook = {"type": "command", "command": command, **fields}
    return dump(with_nested_entry(load(text, where), ("hooks", event), matcher, hook, where))


def find_command(node: Any, fields: Sequence[str] = ("command", "bash")) -> str | None:
    """The gate's command anywhere in a settings document (None: not installed there)."""
    if isinstance(node, dict):
        for field in fields:
            if ours(node.get(field)):
                return str(node[field])
        values: Sequence[Any] = list(node.values())
    elif isinstance(node, list):
        values = node
    else:
        return None
    for value in values:
        found = find_command(value, fields)
        if found is not None:
            return found
    return None


def configured_json(text: str, where: str, fields: Sequence[str] = ("command", "bash")) -> str | None:
    """The gate's command in a JSON settings file, or None."""
    return find_command(load(text, where), fields)


#: A module's `configure(text, command) -> text`.
Configure = Callable[[str | None, str], str]
