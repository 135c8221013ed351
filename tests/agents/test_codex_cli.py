"""The real Codex CLI (npm @openai/codex, pinned in tests/agents/npm/codex), offline against the
scripted model's Responses API: its project `PreToolUse` hook (.codex/hooks.json, read in a trusted
project) sees `apply_patch` (the raw patch) and shell commands, exit 2 blocks the call, and the
model's next request carries "Command blocked by PreToolUse hook: " + the hook's stderr as the
call's output.

One run of the CLI (`codex exec --json`) plays the whole script; each test reads one part of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.agentcli import Played, check_payload, play
from support.scriptedmodel import Turn, call, freeform, say

BLOCKED = "BLOCKED-BY-TEST"

ADD_FROZEN, ADD_OK, UPDATE_FROZEN, MOVE_INTO_FROZEN, SHELL_FROZEN, SHELL_OK = range(6)

PATCHES = {
    ADD_FROZEN: "*** Begin Patch\n*** Add File: frozen/x.yml\n+a: 1\n*** End Patch\n",
    ADD_OK: "*** Begin Patch\n*** Add File: src/ok.py\n+x = 1\n*** End Patch\n",
    UPDATE_FROZEN: "*** Begin Patch\n*** Update File: frozen/z.yml\n@@\n-name: old\n+name: new\n*** End Patch\n",
    MOVE_INTO_FROZEN: ("*** Begin Patch\n*** Update File: src/ok.py\n*** Move to: frozen/moved.py\n@@\n-x = 1\n+x = 2\n"
                       "*** End Patch\n"),
}


def script(project: Path) -> list[Turn]:
    return [
        *(freeform("apply_patch", PATCHES[turn]) for turn in (ADD_FROZEN, ADD_OK, UPDATE_FROZEN, MOVE_INTO_FROZEN)),
        call("exec_command", cmd="echo hi > frozen/y"),
        call("exec_command", cmd="echo hi > src/shell.txt"),
        say("All done."),
    ]


@pytest.fixture(scope="module")
def codex(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return play("codex", tmp_path_factory.mktemp("codex"), script,
                files={"frozen/z.yml": "name: old\n", "README.md": "a project\n"})


def test_the_run_ends_well_offline(codex: Played) -> None:
    run = codex.run
    assert run.returncode == 0, run.describe()
    messages = [e["item"]["text"] for e in run.result if e.get("type") == "item.completed"
                and e["item"].get("type") == "agent_message"]
    assert messages == ["All done."], run.describe()
    assert [r.turn for r in codex.model.main_requests()] == list(range(7)), run.describe()
    assert run.outbound == [], run.describe()



@pytest.mark.parametrize(("turn", "case"), [(ADD_FROZEN, "patch-add-frozen"), (UPDATE_FROZEN, "patch-update-frozen"),
                                            (MOVE_INTO_FROZEN, "patch-move-into-frozen")])
def test_a_patch_touching_frozen_is_blocked_and_the_model_told_why(codex: Played, turn: int, case: str) -> None:
    run = codex.run
    (result,) = codex.model.results_after(turn)
    assert result.text.startswith(f"Command blocked by PreToolUse hook: {BLOCKED}"), result
    payload = codex.payload("apply_patch", PATCHES[turn])
    assert payload["tool_input"] == {"command": PATCHES[turn]}  # the raw patch, as the model wrote it
    check_payload(run, case, payload, stable=("hook_event_name", "tool_name", "tool_input", "cwd"))


def test_the_frozen_files_stay_as_they_were(codex: Played) -> None:
    project = codex.run.project
    assert not (project / "frozen/x.yml").exists()
    assert (project / "frozen/z.yml").read_text() == "name: old\n"
    assert not (project / "frozen/moved.py").exists()
    assert (project / "src/ok.py").read_text() == "x = 1\n"  # the move was blocked at both ends


def test_a_patch_elsewhere_lands(codex: Played) -> None:
    (result,) = codex.model.results_after(ADD_OK)
    assert BLOCKED not in result.text, result
    check_payload(codex.run, "patch-add-allowed", codex.payload("apply_patch", PATCHES[ADD_OK]),
                  stable=("hook_event_name", "tool_name", "tool_input"))


def test_a_shell_redirect_into_frozen_is_blocked(codex: Played) -> None:
    assert not (codex.run.project / "frozen/y").exists()
    (result,) = codex.model.results_after(SHELL_FROZEN)
    assert result.text.startswith(f"Command blocked by PreToolUse hook: {BLOCKED}"), result
    # exec_command reaches the hook as tool `Bash`, its `cmd` as tool_input.command
    check_payload(codex.run, "shell-frozen", codex.payload("Bash", "frozen/y"),
                  stable=("hook_event_name", "tool_name", "tool_input"))


def test_a_shell_command_elsewhere_runs(codex: Played) -> None:
    (result,) = codex.model.results_after(SHELL_OK)
    assert BLOCKED not in result.text, result
    assert (codex.run.project / "src/shell.txt").read_text() == "hi\n"
