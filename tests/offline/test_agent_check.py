"""`gate agents check`, the installed console script, fed each agent's payloads as its hook would be:
a write to a frozen path, a write elsewhere, a move, a multi-file change with one frozen file, a shell
command, what switches a hook off, malformed input, a write tool without a path; each answer checked
in that agent's own form (stdout, stderr, exit status: docs/agent-hooks.md). Then `gate agents
install` and `doctor` on a real work tree: merged into files that hold the user's own hooks, refused
where a file cannot be read, a second run writing nothing, the written files valid against the
vendors' published schemas where there are any."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.agentproject import BOT, agent_project
from support.gitutil import ROOT, git

from gatecore.toolcalls.toolcall import AGENTS

GATE = str(Path(sys.executable).parent / "gate")
POLICY = """\
[[freeze]]
name = "governance"
paths = ["ci/**", ".gate/**", "@agent-config"]
authors = ["@known-agents", "*@agents.example.com"]
trailers = ["@known-agents"]
"""


def _project(path: Path, identity: tuple[str, str] = BOT) -> Path:
    return agent_project(path, POLICY, identity)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("agent-check") / "project")


def run(payload: Any, agent: str | None, cwd: Path, raw: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run([GATE, "agents", "check", *(["--agent", agent] if agent else [])], input=data.decode(
        "utf-8", "surrogateescape"), capture_output=True, text=True, cwd=cwd, env=env, check=False)


# --- each agent's payloads (the forms tests/agents/payloads/AGENT/ holds) -------------------------

def write(agent: str, path: str, cwd: str) -> dict[str, Any]:
    from gatecore.toolcalls.toolcall import adapter

    return adapter(agent).sample_write(path, cwd)


def shell(agent: str, command: str, cwd: str) -> dict[str, Any]:
    return {
        "claude": {"hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Bash", "tool_input": {"command": command}},
        "copilot": {"cwd": cwd, "toolName": "bash", "toolArgs": json.dumps({"command": command})},
        "cursor": {"hook_event_name": "beforeShellExecution", "conversation_id": "c", "command": command, "cwd": cwd},
        "codex": {"hook_event_name": "PreToolUse", "turn_id": "t", "cwd": cwd, "tool_name": "Bash",
                  "tool_input": {"command": command}},
        "gemini": {"hook_event_name": "BeforeTool", "cwd": cwd, "tool_name": "run_shell_command",
                   "tool_input": {"command": command}},
        "windsurf": {"agent_action_name": "pre_run_command", "tool_info": {"command_line": command, "cwd": cwd}},
        "cline": {"hookName": "PreToolUse", "workspaceRoots": [cwd],
                  "preToolUse": {"toolName": "execute_command", "parameters": {"command": command}}},
        "kiro": {"hook_event_name": "preToolUse", "cwd": cwd, "tool_name": "execute_bash",
                 "tool_input": {"command": command}},
    }[agent]


def no_path(agent: str, cwd: str) -> dict[str, Any]:
    payload = write(agent, "x", cwd)
    for holder in (payload.get("tool_input"), payload.get("tool_info"), payload.get("preToolUse", {}).get("parameters")):
        if isinstance(holder, dict):
            for key in ("file_path", "path", "command"):
                holder.pop(key, None)
    if "toolArgs" in payload:
        payload["toolArgs"] = "{}"
    return payload


def patch(cwd: str, body: str) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "turn_id": "t", "cwd": cwd, "tool_name": "apply_patch",
            "tool_input": {"command": f"*** Begin Patch\n{body}*** End Patch"}}


# --- how each agent reads an answer -------------------------------------------------------------

def _json(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)
    assert isinstance(doc, dict)
    return doc


def refused(agent: str, proc: subprocess.CompletedProcess[str]) -> str:
    """The reason the agent would give its model, after checking the refusal's form is the agent's."""
    if agent == "cursor":
        doc = _json(proc.stdout)
        assert proc.returncode == 0 and doc["permission"] == "deny", proc  # exit 2 would show the raw JSON
        assert doc["user_message"] == doc["agent_message"]
        return str(doc["user_message"])
    if agent == "cline":
        doc = _json(proc.stdout)
        assert doc["cancel"] is True, proc
        return str(doc["errorMessage"])
    assert proc.returncode == 2, proc
    assert proc.stderr.strip(), proc  # Codex needs it non-empty; the others show it
    if agent in ("claude", "codex"):
        assert _json(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    elif agent == "copilot":
        doc = _json(proc.stdout)
        assert doc["permissionDecision"] == "deny" and doc["permissionDecisionReason"].strip() == proc.stderr.strip()
    elif agent == "gemini":
        assert _json(proc.stdout)["decision"] == "deny"
    else:
        assert proc.stdout == "", proc  # windsurf, kiro: the status and stderr alone
    assert "Traceback" not in proc.stderr
    return proc.stderr


def allowed(agent: str, proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc
    if agent == "cursor":
        assert _json(proc.stdout) == {"permission": "allow"}  # with failClosed an empty answer blocks
    elif agent == "cline":
        assert _json(proc.stdout) == {"cancel": False}
    else:
        assert proc.stdout == "" and proc.stderr == "", proc  # silent


@pytest.mark.parametrize("agent", AGENTS)
def test_a_write_to_a_frozen_path_is_refused_in_the_agents_own_form(project: Path, agent: str) -> None:
    reason = refused(agent, run(write(agent, str(project / "ci" / "deploy.yml"), str(project)), agent, project))
    assert "GATE-FROZEN-PATH: ci/deploy.yml" in reason and "freeze[0]:governance" in reason
    assert "What to do:" in reason


@pytest.mark.parametrize("agent", AGENTS)
def test_a_write_elsewhere_is_allowed_silently(project: Path, agent: str) -> None:
    allowed(agent, run(write(agent, str(project / "src" / "app.py"), str(project)), agent, project))


@pytest.mark.parametrize("agent", AGENTS)
def test_the_agent_is_recognised_from_its_payloads_shape(project: Path, agent: str) -> None:
    refused(agent, run(write(agent, str(project / "ci" / "new.yml"), str(project)), None, project))


@pytest.mark.parametrize("agent", AGENTS)
def test_a_shell_write_into_a_frozen_path_is_refused_and_a_harmless_one_allowed(project: Path, agent: str) -> None:
    reason = refused(agent, run(shell(agent, "cd ci && echo x >> deploy.yml", str(project)), agent, project))
    assert "GATE-FROZEN-PATH: ci/deploy.yml" in reason
    allowed(agent, run(shell(agent, "ls -la && echo ok > src/out.txt", str(project)), agent, project))


@pytest.mark.parametrize("agent", AGENTS)
def test_switching_a_hook_off_is_refused(project: Path, agent: str) -> None:
    reason = refused(agent, run(shell(agent, "git commit -am wip --no-verify", str(project)), agent, project))
    assert "GATE-AGENT-HOOKS-OFF" in reason
    reason = refused(agent, run(write(agent, str(project / ".git" / "hooks" / "pre-commit"), str(project)), agent,
                                project))
    assert "GATE-AGENT-HOOKS-OFF" in reason


@pytest.mark.parametrize("agent", AGENTS)
def test_malformed_input_and_a_write_without_a_path_are_refused(project: Path, agent: str) -> None:
    assert "GATE-AGENT-PAYLOAD" in refused(agent, run(None, agent, project, raw=b"{not json"))
    # (Codex's writes come in a patch: one without it is a payload the check cannot read)
    code = "GATE-AGENT-PAYLOAD" if agent == "codex" else "GATE-AGENT-NO-PATH"
    assert code in refused(agent, run(no_path(agent, str(project)), agent, project))


def test_a_move_is_checked_at_both_ends(project: Path) -> None:
    into = run(patch(str(project), "*** Update File: src/app.py\n*** Move to: ci/app.py\n@@\n-a\n+b\n"), "codex",
               project)
    assert "GATE-FROZEN-PATH: ci/app.py" in refused("codex", into)
    out = run(patch(str(project), "*** Update File: ci/deploy.yml\n*** Move to: src/deploy.yml\n@@\n-a\n+b\n"),
              "codex", project)
    assert "GATE-FROZEN-PATH: ci/deploy.yml: delete" in refused("codex", out)


def test_a_multi_file_change_with_one_frozen_file_is_refused_naming_only_it(project: Path) -> None:
    proc = run(patch(str(project), "*** Add File: src/new.py\n+x\n*** Update File: ci/deploy.yml\n@@\n-a\n+b\n"
                                   "*** Delete File: src/app.py\n"), "codex", project)
    reason = refused("codex", proc)
    assert "ci/deploy.yml" in reason and "src/new.py" not in reason and "src/app.py" not in reason


def test_paths_are_compared_as_the_server_compares_them(project: Path, tmp_path: Path) -> None:
    """Relative to the call's directory, another case, through a symlink to the frozen file; a path
    outside the work tree is not the gate's."""
    for path in ("ci/deploy.yml", "CI/Deploy.yml", "src/../ci/deploy.yml"):
        refused("gemini", run(write("gemini", path, str(project)), "gemini", project))
    link = project / "src" / "innocent.yml"
    link.symlink_to(project / "ci" / "deploy.yml")
    try:
        assert "ci/deploy.yml" in refused("claude", run(write("claude", str(link), str(project)), "claude", project))
    finally:
        link.unlink()
    allowed("claude", run(write("claude", str(tmp_path / "elsewhere.txt"), str(project)), "claude", project))


def test_the_identity_is_the_commit_to_be_s_with_the_agent_s_marks(tmp_path: Path) -> None:
    """A human's git identity: Claude Code's commits carry its Co-authored-by mark, which the policy
    names (@known-agents): refused; Gemini CLI marks no commit: allowed, as the server would allow
    that commit."""
    human = _project(tmp_path / "human", ("Hana Human", "hana@example.com"))
    target = str(human / "ci" / "deploy.yml")
    reason = refused("claude", run(write("claude", target, str(human)), "claude", human))
    assert "noreply@anthropic.com" in reason and "@known-agents (claude)" in reason
    allowed("gemini", run(write("gemini", target, str(human)), "gemini", human))


def test_a_policy_that_does_not_parse_refuses_with_the_code_underneath(tmp_path: Path) -> None:
    broken = _project(tmp_path / "broken")
    (broken / ".gate" / "policy.toml").write_text("[[freeze]]\npaths = 7\n")
    git(broken, "commit", "-qam", "break the policy")
    reason = refused("claude", run(write("claude", str(broken / "src" / "app.py"), str(broken)), "claude", broken))
    assert "GATE-AGENT-CONFIG: GATE-CONFIG-POLICY" in reason


def test_outside_any_repository_the_writes_are_not_the_gates(tmp_path: Path) -> None:
    allowed("claude", run(write("claude", str(tmp_path / "x"), str(tmp_path)), "claude", tmp_path))


# --- install and doctor ------------------------------------------------------------------------

def gate(*args: str, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PATH"] = path if path is not None else f"{Path(GATE).parent}:{env.get('PATH', '')}"
    return subprocess.run([GATE, *args], capture_output=True, text=True, cwd=cwd, env=env, check=False)


def test_install_merges_keeps_the_users_hooks_and_a_second_run_writes_nothing(tmp_path: Path) -> None:
    work = _project(tmp_path / "p")
    settings = work / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
                      "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "./log.sh"}]}]}}
    settings.write_text(json.dumps(mine))
    dry = gate("agents", "install", "--all", "--dry-run", cwd=work)
    assert dry.returncode == 0 and "claude: would update .claude/settings.json" in dry.stdout, dry
    assert json.loads(settings.read_text()) == mine  # nothing written
    first = gate("agents", "install", "--all", cwd=work)
    assert first.returncode == 0, first
    merged = json.loads(settings.read_text())
    assert merged["permissions"] == mine["permissions"] and merged["hooks"]["PostToolUse"] == mine["hooks"]["PostToolUse"]
    assert merged["hooks"]["PreToolUse"][0] == mine["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["PreToolUse"][1]["hooks"][0]["command"] == "gate agents check --agent claude || exit 2"
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file() and ".git/" not in str(p)}
    again = gate("agents", "install", "--all", cwd=work)
    assert again.returncode == 0 and again.stdout.count("unchanged") == len(AGENTS), again
    assert before == {p: p.read_bytes() for p in work.rglob("*") if p.is_file() and ".git/" not in str(p)}
    assert os.access(work / ".clinerules" / "hooks" / "PreToolUse", os.X_OK)


def test_install_refuses_a_file_it_cannot_read_and_leaves_it(tmp_path: Path) -> None:
    work = _project(tmp_path / "p")
    settings = work / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ // a comment: not JSON\n}")
    out = gate("agents", "install", "--agent", "gemini", cwd=work)
    assert out.returncode == 2 and "GATE-AGENT-INSTALL" in out.stderr, out
    assert settings.read_text() == "{ // a comment: not JSON\n}"


def test_doctor_says_which_hooks_run_the_check(tmp_path: Path) -> None:
    work = _project(tmp_path / "p")
    assert gate("agents", "install", "--agent", "claude", "--agent", "cursor", cwd=work).returncode == 0
    ok = gate("agents", "doctor", cwd=work)
    assert ok.returncode == 0, ok
    assert "claude: ok" in ok.stdout and "cursor: ok" in ok.stdout and "gemini: not configured" in ok.stdout
    lost = gate("agents", "doctor", cwd=work, path="/usr/bin:/bin")  # gate not on the agents' PATH
    assert lost.returncode == 1 and "claude: FAIL" in lost.stdout, lost


SCHEMAS = ROOT / "tests" / "agents" / "schemas"


@pytest.mark.parametrize(("agent", "schema"), [("claude", "claude-code-settings.schema.json"),
                                               ("gemini", "gemini-cli-settings.schema.json"),
                                               ("codex", "codex-hooks.schema.json")])
def test_the_written_files_validate_against_the_vendors_schemas(tmp_path: Path, agent: str, schema: str) -> None:
    if not (SCHEMAS / schema).exists():
        pytest.fail(f"{schema} is not vendored in tests/agents/schemas/")
    work = _project(tmp_path / "p")
    assert gate("agents", "install", "--agent", agent, cwd=work).returncode == 0
    from gatecore.toolcalls.toolcall import adapter

    written = work / adapter(agent).CONFIG_PATH
    checker = Path(sys.executable).parent / "check-jsonschema"
    out = subprocess.run([str(checker), "--schemafile", str(SCHEMAS / schema), str(written)], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr




def test_the_documented_install_runs_as_written(tmp_path: Path) -> None:
    from support.docblocks import run_block

    work = _project(tmp_path / "p")
    env = {"PATH": f"{Path(GATE).parent}:{os.environ.get('PATH', '')}"}
    out = run_block("agent-hooks-install", {}, work, env)
    assert "claude: wrote .claude/settings.json" in out.stdout and "gemini: ok" in out.stdout, out.stdout
