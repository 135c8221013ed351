"""Every agent's documented and recorded pre-tool payloads (tests/agents/payloads/AGENT/CASE.json) read by
its adapter (`gatecore.toolcalls`): the agent recognised from the payload's shape, and the paths or the
command the tool would write found, each fixture's own (its source and date are in the file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.gitutil import ROOT

from gatecore.errors import GateError
from gatecore.toolcalls.shellwrites import read_command
from gatecore.toolcalls.toolcall import AGENTS, adapter, detect, read_payload

PAYLOADS = ROOT / "tests" / "agents" / "payloads"
FIXTURES = sorted(PAYLOADS.glob("*/*.json"))

#: Fixtures whose payload another agent's adapter reads: Copilot's and Continue's hooks from Claude's file.
SENT_AS = {"continue": "claude", "copilot/claude-file": "claude", "copilot/claude-settings": "claude"}
#: Payloads the check refuses to read (a post-tool event: no tool call to judge).
UNREAD = {"cursor/afterFileEdit-edits.json": "GATE-AGENT-PAYLOAD"}


def _case(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _expected_agent(path: Path) -> str:
    case = _case(path)
    for prefix, agent in SENT_AS.items():
        if case.startswith(prefix):
            return agent
    return path.parent.name


def _payload(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    assert "payload" in doc and ("source" in doc or "recorded" in doc), f"{path}: payload without its source or date"
    payload: dict[str, Any] = doc["payload"]
    return payload


def test_every_agent_has_fixtures() -> None:
    assert {p.parent.name for p in FIXTURES} >= set(AGENTS)


@pytest.mark.parametrize("path", FIXTURES, ids=_case)
def test_each_payload_is_read_by_its_agents_adapter(path: Path) -> None:
    payload = _payload(path)
    if _case(path) in UNREAD:
        with pytest.raises(GateError) as exc:
            adapter(detect(payload)).read(payload)
        assert exc.value.code == UNREAD[_case(path)]
        return
    agent = detect(payload)
    assert agent == _expected_agent(path)
    call = adapter(agent).read(payload)
    named = [w.path for w in call.writes]
    if call.command is not None:
        reading = read_command(call.command)
        named += [w.path for w in reading.writes] + list(reading.patches)
        assert named or reading.off or reading.unread or "apply_patch" in call.command, (call, reading)
    assert named or call.command is not None, f"{_case(path)}: {call} names nothing it writes"


def test_cursor_s_byte_order_mark_is_taken_off() -> None:
    payload = _payload(PAYLOADS / "cursor" / "preToolUse-write.json")
    assert read_payload(b"\xef\xbb\xbf" + json.dumps(payload).encode()) == payload


@pytest.mark.parametrize("data", [b"", b"   ", b"[1]", b"nope", b'{"a": 1, "a": 2}', b"\xff\xfe", b"[" * 100_000])
def test_what_is_not_one_json_object_is_refused(data: bytes) -> None:
    with pytest.raises(GateError) as exc:
        read_payload(data)
    assert exc.value.code == "GATE-AGENT-PAYLOAD"


def test_a_shape_no_agent_sends_is_refused_not_guessed() -> None:
    with pytest.raises(GateError) as exc:
        detect({"tool": "Write", "path": "x"})
    assert exc.value.code == "GATE-AGENT-PAYLOAD"


def test_agent_config_freezes_every_agents_hook_files() -> None:
    """A commit cannot switch the agents' checks off under a policy that freezes `@agent-config`: every
    file `gate agents install` writes, and every hook file the check refuses writes to, is in the set."""
    from gatecore.adapters.config import load_catalogue
    from gatecore.configuration.policy import PathGlob, normalize_path

    globs = [PathGlob.compile(p) for p, _ in load_catalogue().config_paths()]
    for name in AGENTS:
        module = adapter(name)
        for path in (module.CONFIG_PATH, *module.PROJECT_FILES):
            probe = normalize_path(path + "x.json" if path.endswith("/") else path)
            assert any(g.matches(probe) for g in globs), (name, path)
