"""The real Claude Code (npm @anthropic-ai/claude-code, pinned in tests/agents/npm/claude), offline
against the scripted model: its project `PreToolUse` hook sees every write and shell call, exit 2
denies it, and the model's next request carries the hook's reason as an error `tool_result`.

One run of the CLI (`claude -p`) plays the whole script; each test reads one part of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.agentcli import Played, check_payload, play
from support.scriptedmodel import Turn, call, say

BLOCKED = "BLOCKED-BY-TEST"

# The turns, in order (the model's next request carries each one's result).
WRITE_FROZEN, WRITE_OK, READ_FROZEN, EDIT_FROZEN, BASH_FROZEN, BASH_OK = range(6)


def script(project: Path) -> list[Turn]:
    return [
        call("Write", file_path=str(project / "frozen/x.yml"), content="a: 1\n"),
        call("Write", file_path=str(project / "src/ok.py"), content="x = 1\n"),
        call("Read", file_path=str(project / "frozen/z.yml")),  # Edit refuses a file it has not read
        call("Edit", file_path=str(project / "frozen/z.yml"), old_string="old", new_string="new"),
        call("Bash", command="echo hi > frozen/y", description="write into frozen/"),
        call("Bash", command="echo hi > src/shell.txt", description="write elsewhere"),
        say("All done."),
    ]


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return play("claude", tmp_path_factory.mktemp("claude"), script, matcher="Write|Edit|MultiEdit|Bash",
                files={"frozen/z.yml": "name: old\n", "README.md": "a project\n"})


def _denied(played: Played) -> list[tuple[str, dict[str, object]]]:
    return [(d["tool_name"], d["tool_input"]) for d in played.run.result["permission_denials"]]


def test_the_run_ends_well_offline(claude: Played) -> None:
    run = claude.run
    assert run.returncode == 0, run.describe()
    assert run.result["type"] == "result" and run.result["result"] == "All done.", run.describe()
    assert [r.turn for r in claude.model.main_requests()] == list(range(7)), run.describe()
    assert run.outbound == [], run.describe()


def test_a_write_into_frozen_is_denied_and_the_model_told_why(claude: Played) -> None:
    run = claude.run
    assert not (run.project / "frozen/x.yml").exists()
    assert ("Write", {"file_path": str(run.project / "frozen/x.yml"), "content": "a: 1\n"}) in _denied(claude)
    (result,) = claude.model.results_after(WRITE_FROZEN)
    assert result.is_error and BLOCKED in result.text, result
    payload = claude.hook.payloads()[0]
    assert payload["tool_name"] == "Write" and payload["hook_event_name"] == "PreToolUse"
    check_payload(run, "write-frozen", payload, stable=("hook_event_name", "tool_name", "tool_input", "cwd"))


def test_a_write_elsewhere_lands(claude: Played) -> None:
    run = claude.run
    assert (run.project / "src/ok.py").read_text() == "x = 1\n"
    (result,) = claude.model.results_after(WRITE_OK)
    assert not result.is_error and BLOCKED not in result.text, result
    check_payload(run, "write-allowed", claude.hook.payloads()[1], stable=("hook_event_name", "tool_name", "tool_input"))


def test_an_edit_of_a_frozen_file_is_denied(claude: Played) -> None:
    run = claude.run
    assert (run.project / "frozen/z.yml").read_text() == "name: old\n"
    assert any(name == "Edit" for name, _ in _denied(claude)), run.describe()
    (result,) = claude.model.results_after(EDIT_FROZEN)
    assert result.is_error and BLOCKED in result.text, result
    edit = next(p for p in claude.hook.payloads() if p["tool_name"] == "Edit")
    check_payload(run, "edit-frozen", edit, stable=("hook_event_name", "tool_name", "tool_input"))


def test_the_matcher_leaves_other_tools_alone(claude: Played) -> None:
    assert "Read" not in {p["tool_name"] for p in claude.hook.payloads()}
    (result,) = claude.model.results_after(READ_FROZEN)
    assert not result.is_error and "name: old" in result.text, result


def test_a_shell_redirect_into_frozen_is_denied(claude: Played) -> None:
    run = claude.run
    assert not (run.project / "frozen/y").exists()
    assert ("Bash", {"command": "echo hi > frozen/y", "description": "write into frozen/"}) in _denied(claude)
    (result,) = claude.model.results_after(BASH_FROZEN)
    assert result.is_error and BLOCKED in result.text, result
    bash = next(p for p in claude.hook.payloads() if p["tool_name"] == "Bash")
    check_payload(run, "bash-frozen", bash, stable=("hook_event_name", "tool_name", "tool_input"))


def test_a_shell_command_elsewhere_passes_the_hook(claude: Played) -> None:
    assert [p["tool_input"]["command"] for p in claude.hook.payloads() if p["tool_name"] == "Bash"] == [
        "echo hi > frozen/y", "echo hi > src/shell.txt"]
    (result,) = claude.model.results_after(BASH_OK)
    assert not result.is_error and BLOCKED not in result.text, result
    assert (claude.run.project / "src/shell.txt").read_text() == "hi\n"
