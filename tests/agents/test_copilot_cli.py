"""The real GitHub Copilot CLI (npm @github/copilot, pinned in tests/agents/npm/copilot), offline:
COPILOT_OFFLINE=true with a model of our own (BYOK: COPILOT_PROVIDER_BASE_URL, the Anthropic
Messages API), so no GitHub sign-in. Its project hook file (.github/hooks/*.json, `preToolUse`, read
once the folder is trusted: --trust-folder) sees `create`, `edit` and `bash` with the camelCase
payload (`toolName`, `toolArgs`).

Exit 2 alone denies the call but the model is told only "hook exited with code 2" (stderr is not
passed on); a JSON decision on stdout (`permissionDecision: "deny"`, `permissionDecisionReason`)
is what carries the reason. So this hook denies with both.

One run of the CLI (`copilot -p`) plays the whole script; each test reads one part of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.agentcli import Played, RecordingHook, agent_project, check_payload, play, run_agent, write_hook_config
from support.scriptedmodel import ScriptedModel, Turn, call, say

BLOCKED = "BLOCKED-BY-TEST"
DECISION = json.dumps({"permissionDecision": "deny", "permissionDecisionReason": BLOCKED})

CREATE_FROZEN, CREATE_OK, VIEW_FROZEN, EDIT_FROZEN, BASH_FROZEN, BASH_OK = range(6)


def script(project: Path) -> list[Turn]:
    return [
        call("create", path=str(project / "frozen/x.yml"), file_text="a: 1\n"),
        call("create", path=str(project / "src/ok.py"), file_text="x = 1\n"),
        call("view", path=str(project / "frozen/z.yml")),
        call("edit", path=str(project / "frozen/z.yml"), old_str="old", new_str="new"),
        call("bash", command="echo hi > frozen/y", description="write into frozen/"),
        call("bash", command="echo hi > src/shell.txt", description="write elsewhere"),
        say("All done."),
    ]


@pytest.fixture(scope="module")
def copilot(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return play("copilot", tmp_path_factory.mktemp("copilot"), script, rules=[("frozen/", 2, DECISION)],
                # (create refuses a file whose directory does not exist)
                files={"frozen/z.yml": "name: old\n", "src/__init__.py": "", "README.md": "a project\n"})



def test_the_run_ends_well_offline(copilot: Played) -> None:
    run = copilot.run
    assert run.returncode == 0, run.describe()
    (result,) = [e for e in run.result if e.get("type") == "result"]
    assert result["exitCode"] == 0, run.describe()
    messages = [e["data"]["content"] for e in run.result if e.get("type") == "assistant.message"]
    assert messages[-1] == "All done.", run.describe()
    assert [r.turn for r in copilot.model.main_requests()] == list(range(7)), run.describe()
    assert run.outbound == [], run.describe()


def test_a_create_in_frozen_is_denied_and_the_model_told_why(copilot: Played) -> None:
    run = copilot.run
    assert not (run.project / "frozen/x.yml").exists()
    (result,) = copilot.model.results_after(CREATE_FROZEN)
    assert result.text == f"Denied by preToolUse hook: {BLOCKED}", result
    payload = copilot.payload("create", "frozen/x.yml")
    assert payload["toolArgs"] == {"path": str(run.project / "frozen/x.yml"), "file_text": "a: 1\n"}  # an object
    check_payload(run, "create-frozen", payload, stable=("toolName", "toolArgs", "cwd"))


def test_a_create_elsewhere_lands(copilot: Played) -> None:
    assert (copilot.run.project / "src/ok.py").read_text() == "x = 1\n"
    (result,) = copilot.model.results_after(CREATE_OK)
    assert BLOCKED not in result.text, result
    check_payload(copilot.run, "create-allowed", copilot.payload("create", "src/ok.py"), stable=("toolName", "toolArgs"))


def test_an_edit_of_a_frozen_file_is_denied(copilot: Played) -> None:
    assert (copilot.run.project / "frozen/z.yml").read_text() == "name: old\n"
    (result,) = copilot.model.results_after(EDIT_FROZEN)
    assert result.text == f"Denied by preToolUse hook: {BLOCKED}", result
    check_payload(copilot.run, "edit-frozen", copilot.payload("edit", "frozen/z.yml"), stable=("toolName", "toolArgs"))


def test_the_hook_sees_reads_too(copilot: Played) -> None:
    # no matcher in Copilot's hook file: every tool call reaches the hook
    assert "view" in {p["toolName"] for p in copilot.hook.payloads()}
    (result,) = copilot.model.results_after(VIEW_FROZEN)
    assert BLOCKED in result.text  # (this test hook denies any call naming frozen/, a read too)


def test_a_shell_redirect_into_frozen_is_denied(copilot: Played) -> None:
    assert not (copilot.run.project / "frozen/y").exists()
    (result,) = copilot.model.results_after(BASH_FROZEN)
    assert result.text == f"Denied by preToolUse hook: {BLOCKED}", result
    check_payload(copilot.run, "bash-frozen", copilot.payload("bash", "frozen/y"), stable=("toolName", "toolArgs"))


def test_a_shell_command_elsewhere_runs(copilot: Played) -> None:
    (result,) = copilot.model.results_after(BASH_OK)
    assert BLOCKED not in result.text, result
    assert (copilot.run.project / "src/shell.txt").read_text() == "hi\n"


@pytest.fixture(scope="module")
def copilot_claude_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Played, Path]:
    """Copilot CLI in a project that has only Claude Code's hook file (.claude/settings.json)."""
    root = tmp_path_factory.mktemp("copilot-claude")
    project = agent_project(root / "project", {"src/__init__.py": ""})
    hook = RecordingHook(root / "hook.jsonl")
    write_hook_config("claude", project, hook.command)
    script = [call("create", path=str(project / "frozen/x.yml"), file_text="a: 1\n"),
              call("bash", command="echo hi > frozen/y", description="write into frozen/"), say("All done.")]
    with ScriptedModel(script) as model:
        run = run_agent("copilot", project, model, home=root / "home")
    return Played(run, model, hook), project


def test_copilot_runs_claude_codes_hook_file_with_claude_names_but_its_own_arguments(
        copilot_claude_file: tuple[Played, Path]) -> None:
    played, project = copilot_claude_file
    assert played.run.returncode == 0, played.run.describe()
    assert not (project / "frozen/x.yml").exists() and not (project / "frozen/y").exists()
    write, bash = played.hook.payloads()
    # the Claude form (snake_case, PreToolUse, Claude's tool names), but create's own argument
    # names: `path` and `file_text`, not Write's `file_path` and `content`
    assert (write["hook_event_name"], write["tool_name"]) == ("PreToolUse", "Write")
    assert write["tool_input"] == {"path": str(project / "frozen/x.yml"), "file_text": "a: 1\n"}
    assert (bash["tool_name"], bash["tool_input"]["command"]) == ("Bash", "echo hi > frozen/y")
    check_payload(played.run, "claude-file-create-frozen", write, stable=("hook_event_name", "tool_name", "tool_input"))
    check_payload(played.run, "claude-file-bash-frozen", bash, stable=("hook_event_name", "tool_name", "tool_input"))
    # exit 2 denies, and here too the model learns only the exit code
    (result,) = played.model.results_after(0)
    assert result.text == "Denied by preToolUse hook: hook exited with code 2", result
