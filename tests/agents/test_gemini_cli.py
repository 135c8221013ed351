"""The real Gemini CLI (npm @google/gemini-cli, pinned in tests/agents/npm/gemini), offline against
the scripted model: its project `BeforeTool` hook (.gemini/settings.json) sees `write_file`,
`replace` and `run_shell_command`, exit 2 blocks the call, and the model's next request carries
"Tool execution blocked: " + the hook's stderr as the `functionResponse`'s error.

One run of the CLI (`gemini -p --yolo`) plays the whole script; each test reads one part of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.agentcli import Played, check_payload, play
from support.scriptedmodel import Turn, call, say

BLOCKED = "BLOCKED-BY-TEST"

WRITE_FROZEN, WRITE_OK, REPLACE_FROZEN, SHELL_FROZEN, SHELL_OK = range(5)


def script(project: Path) -> list[Turn]:
    return [
        call("write_file", file_path=str(project / "frozen/x.yml"), content="a: 1\n"),
        call("write_file", file_path=str(project / "src/ok.py"), content="x = 1\n"),
        call("replace", file_path=str(project / "frozen/z.yml"), old_string="old", new_string="new",
             instruction="rename"),
        call("run_shell_command", command="echo hi > frozen/y", description="write into frozen/"),
        call("run_shell_command", command="echo hi > src/shell.txt", description="write elsewhere"),
        say("All done."),
    ]


@pytest.fixture(scope="module")
def gemini(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return play("gemini", tmp_path_factory.mktemp("gemini"), script,
                files={"frozen/z.yml": "name: old\n", "README.md": "a project\n"})



def test_the_run_ends_well_offline(gemini: Played) -> None:
    run = gemini.run
    assert run.returncode == 0, run.describe()
    assert run.result["response"] == "All done.", run.describe()
    assert [r.turn for r in gemini.model.main_requests()] == list(range(6)), run.describe()
    assert run.outbound == [], run.describe()
    # the JSON result counts each blocked call as a failed one
    by_name = run.result["stats"]["tools"]["byName"]
    assert {name: (n["count"], n["fail"]) for name, n in by_name.items()} == {
        "write_file": (2, 1), "replace": (1, 1), "run_shell_command": (2, 1)}, run.describe()
    # Gemini CLI's own side request (its model router's complexity score) took no turn of the script
    assert {r.kind for r in run.requests if r.api == "gemini"} == {"main", "side"}


def test_a_write_into_frozen_is_blocked_and_the_model_told_why(gemini: Played) -> None:
    run = gemini.run
    assert not (run.project / "frozen/x.yml").exists()
    (result,) = gemini.model.results_after(WRITE_FROZEN)
    assert result.is_error and result.text == f"Tool execution blocked: {BLOCKED}", result
    payload = gemini.payload("write_file", "frozen/x.yml")
    assert payload["hook_event_name"] == "BeforeTool"
    check_payload(run, "write-frozen", payload, stable=("hook_event_name", "tool_name", "tool_input", "cwd"))


def test_a_write_elsewhere_lands(gemini: Played) -> None:
    run = gemini.run
    assert (run.project / "src/ok.py").read_text() == "x = 1\n"
    (result,) = gemini.model.results_after(WRITE_OK)
    assert not result.is_error, result
    check_payload(run, "write-allowed", gemini.payload("write_file", "src/ok.py"),
                  stable=("hook_event_name", "tool_name", "tool_input"))


def test_a_replace_in_a_frozen_file_is_blocked(gemini: Played) -> None:
    run = gemini.run
    assert (run.project / "frozen/z.yml").read_text() == "name: old\n"
    (result,) = gemini.model.results_after(REPLACE_FROZEN)
    assert result.is_error and BLOCKED in result.text, result
    check_payload(run, "replace-frozen", gemini.payload("replace", "frozen/z.yml"),
                  stable=("hook_event_name", "tool_name", "tool_input"))


def test_a_shell_redirect_into_frozen_is_blocked(gemini: Played) -> None:
    run = gemini.run
    assert not (run.project / "frozen/y").exists()
    (result,) = gemini.model.results_after(SHELL_FROZEN)
    assert result.is_error and BLOCKED in result.text, result
    check_payload(run, "shell-frozen", gemini.payload("run_shell_command", "frozen/y"),
                  stable=("hook_event_name", "tool_name", "tool_input"))


def test_a_shell_command_elsewhere_runs(gemini: Played) -> None:
    (result,) = gemini.model.results_after(SHELL_OK)
    assert not result.is_error, result
    assert (gemini.run.project / "src/shell.txt").read_text() == "hi\n"
