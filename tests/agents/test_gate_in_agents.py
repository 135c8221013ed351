"""The gate's own check in the real agents: each CLI (Claude Code, Gemini CLI, Codex CLI, Copilot CLI)
runs offline against the scripted model in a project whose hook configuration `gate agents install
--agent NAME` wrote and whose `.gate/policy.toml` freezes `ci/**` and `@agent-config` for
`@known-agents` and for `*@agents.example.com`, the project's git identity (so the rule restricts
the agent whatever its catalogue entry marks: Gemini CLI marks no commit of its own). `gate` is the
venv's console script, on the agent's PATH, so every hook runs the real `gate agents check`.

Per agent, one run plays a script: writes into `ci/` through each write tool and through a shell
redirect (refused: GATE-FROZEN-PATH, the file as it was, the model's next request carries the
code), a write and a shell command elsewhere (they land), `git commit --no-verify` and a shell write
to the agent's own hook file (refused: GATE-AGENT-HOOKS-OFF). And the hook file the agent ran is
byte for byte what `gate agents install` writes into an empty project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.agentcli import HOME_MARK, PAYLOADS, PROJECT_MARK, AgentRun, agent_project, cli, commit_all, run_agent
from support.scriptedmodel import ScriptedModel, ToolResult, Turn, call, freeform, say

#: The venv's console script: what the installed hook command (`gate agents check ...`) finds on PATH.
GATE = Path(sys.executable).parent / "gate"
AGENT_NAME, AGENT_EMAIL = "Coding Agent", "coder@agents.example.com"
POLICY = """\
mode = "enforce"

[[freeze]]
name = "agents"
paths = ["ci/**", "@agent-config"]
authors = ["@known-agents", "*@agents.example.com"]
names = ["@known-agents"]
trailers = ["@known-agents"]
"""
DEPLOY = "name: old\n"
FILES = {"ci/deploy.yml": DEPLOY, "src/__init__.py": "", "src/old.py": "x = 0\n", "README.md": "a project\n",
         ".gate/policy.toml": POLICY}

FROZEN, HOOKS_OFF = "GATE-FROZEN-PATH", "GATE-AGENT-HOOKS-OFF"
PROMPT = "Make the changes."



@dataclass(frozen=True)
class Step:
    """One turn of the script: what the model asks for, and what the gate must answer."""

    role: str  # what the step is for (ROLES; "" for a step no test is about)
    what: str  # the agent's own words for it
    turn: Callable[[Path], Turn]
    path: str = ""  # the path (or the option) the refusal names


#: The steps every agent plays, by the answer they must get: refused as a frozen write, refused as
#: switching a hook off, let through.
FROZEN_ROLES = ("write", "edit", "shell", "move")
OFF_ROLES = ("no-verify", "hook-file")
THROUGH_ROLES = ("write-elsewhere", "shell-elsewhere")
ROLES = FROZEN_ROLES + OFF_ROLES + THROUGH_ROLES


@dataclass(frozen=True)
class Plan:
    agent: str
    config: str  # the hook file `gate agents install --agent AGENT` writes
    steps: tuple[Step, ...]
    denied: Callable[[ToolResult], bool]  # how the CLI marks a refused call in the model's next request

    def step(self, role: str) -> Step:
        (found,) = [step for step in self.steps if step.role == role]
        return found


NO_VERIFY = "git commit --no-verify -am 'skip the hooks'"
MOVE = "mv src/old.py ci/moved.py"
PATCH_ADD = "*** Begin Patch\n*** Add File: ci/new.yml\n+a: 1\n*** End Patch\n"
PATCH_UPDATE = "*** Begin Patch\n*** Update File: ci/deploy.yml\n@@\n-name: old\n+name: new\n*** End Patch\n"
PATCH_MOVE = "*** Begin Patch\n*** Update File: src/old.py\n*** Move to: ci/moved.py\n@@\n-x = 0\n+x = 2\n*** End Patch\n"
PATCH_OK = "*** Begin Patch\n*** Add File: src/ok.py\n+x = 1\n*** End Patch\n"


def _plan(agent: str, config: str, write: Callable[[Path, str, str], Turn], edit: Callable[[Path], Turn],
          shell: Callable[[str], Turn], denied: Callable[[ToolResult], bool], *, move: Step | None = None,
          before_edit: Step | None = None) -> Plan:
    """An agent's script in its own tools (`write(project, rel, text)`, `edit(project)` of ci/deploy.yml,
    `shell(command)`); a move into ci/ through the shell unless the agent has a tool of its own for it."""

    def run(command: str) -> Callable[[Path], Turn]:
        return lambda project: shell(command)

    steps = [Step("write", "a new file in ci/", lambda p: write(p, "ci/new.yml", "a: 1\n"), "ci/new.yml"),
             *([before_edit] if before_edit else []),
             Step("edit", "an edit of ci/deploy.yml", edit, "ci/deploy.yml"),
             Step("shell", "echo x > ci/deploy.yml", run("echo x > ci/deploy.yml"), "ci/deploy.yml"),
             move or Step("move", MOVE, run(MOVE), "ci/moved.py"),
             Step("write-elsewhere", "a new file in src/", lambda p: write(p, "src/ok.py", "x = 1\n")),
             Step("shell-elsewhere", "echo hi > src/shell.txt", run("echo hi > src/shell.txt")),
             Step("no-verify", NO_VERIFY, run(NO_VERIFY), "--no-verify"),
             Step("hook-file", f"echo '{{}}' > {config}", run(f"echo '{{}}' > {config}"), config)]
    return Plan(agent, config, tuple(steps), denied)


PLANS = {
    "claude": _plan(
        "claude", ".claude/settings.json",
        lambda p, rel, text: call("Write", file_path=str(p / rel), content=text),
        lambda p: call("Edit", file_path=str(p / "ci/deploy.yml"), old_string="old", new_string="new"),
        lambda command: call("Bash", command=command, description="a shell command"),
        lambda result: bool(result.is_error),
        # (Edit refuses a file it has not read, before any hook)
        before_edit=Step("", "a read of ci/deploy.yml", lambda p: call("Read", file_path=str(p / "ci/deploy.yml")))),
    "gemini": _plan(
        "gemini", ".gemini/settings.json",
        lambda p, rel, text: call("write_file", file_path=str(p / rel), content=text),
        lambda p: call("replace", file_path=str(p / "ci/deploy.yml"), old_string="old", new_string="new",
                       instruction="rename"),
        lambda command: call("run_shell_command", command=command, description="a shell command"),
        lambda result: bool(result.is_error) and result.text.startswith("Tool execution blocked: ")),
    "codex": _plan(
        "codex", ".codex/hooks.json",
        lambda p, rel, text: freeform("apply_patch", PATCH_ADD if rel == "ci/new.yml" else PATCH_OK),
        lambda p: freeform("apply_patch", PATCH_UPDATE),
        lambda command: call("exec_command", cmd=command),
        lambda result: result.text.startswith("Command blocked by PreToolUse hook: "),
        move=Step("move", "apply_patch: *** Move to: ci/moved.py", lambda p: freeform("apply_patch", PATCH_MOVE),
                  "ci/moved.py")),
    "copilot": _plan(
        "copilot", ".github/hooks/push-gate.json",
        lambda p, rel, text: call("create", path=str(p / rel), file_text=text),
        lambda p: call("edit", path=str(p / "ci/deploy.yml"), old_str="old", new_str="new"),
        lambda command: call("bash", command=command, description="a shell command"),
        lambda result: result.text.startswith("Denied by preToolUse hook: ")),
}


@dataclass
class Gated:
    """One agent's run in the gated project."""

    plan: Plan
    run: AgentRun
    model: ScriptedModel
    head: str  # the project's commit before the run
    installed: bytes  # the hook file as `gate agents install` wrote it into the project (committed)

    def result(self, step: Step) -> ToolResult:
        (result,) = self.model.results_after(self.plan.steps.index(step))
        return result


def _git(project: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project), "GIT_CONFIG_NOSYSTEM": "1",
           "LC_ALL": "C"}
    return subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True,
                          text=True).stdout


def install(project: Path, agent: str) -> str:
    """`gate agents install --agent AGENT` run in `project`, as a user runs it: its output."""
    env = {**os.environ, "PATH": f"{GATE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run([str(GATE), "agents", "install", "--agent", agent], cwd=project, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def gated_project(root: Path, agent: str) -> Path:
    """A project with the policy committed, git's identity the agent's (user.name, user.email), and
    the agent's hook installed by `gate agents install` and committed."""
    project = agent_project(root / "project", FILES)
    _git(project, "config", "user.name", AGENT_NAME)
    _git(project, "config", "user.email", AGENT_EMAIL)
    assert f"{agent}: wrote {PLANS[agent].config}" in install(project, agent)
    commit_all(project, f"{agent}'s pre-tool hook, by gate agents install")
    return project


@pytest.fixture(scope="module", params=sorted(PLANS))
def gated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Gated:
    agent = str(request.param)
    cli(agent)  # skip before making anything
    if not GATE.exists():
        pytest.skip(f"no {GATE}: run the tests from the project's venv (./dev test)")
    plan = PLANS[agent]
    root = tmp_path_factory.mktemp(f"gated-{agent}")
    project = gated_project(root, agent)
    head = _git(project, "rev-parse", "HEAD").strip()
    installed = (project / plan.config).read_bytes()
    script = [*(step.turn(project) for step in plan.steps), say("All done.")]
    with ScriptedModel(script) as model:
        # no GIT_AUTHOR_*/GIT_COMMITTER_* in the agent's environment: git's identity is the project's
        run = run_agent(agent, project, model, PROMPT, home=root / "home", git_identity={})
    return Gated(plan, run, model, head, installed)


def test_the_run_ends_well_offline_with_gate_on_the_agents_path(gated: Gated) -> None:
    run = gated.run
    assert run.returncode == 0, run.describe()
    assert [r.turn for r in gated.model.main_requests()] == list(range(len(gated.plan.steps) + 1)), run.describe()
    assert run.outbound == [], run.describe()
    assert shutil.which("gate", path=run.env["PATH"]) == str(GATE)
    assert "GIT_AUTHOR_EMAIL" not in run.env and "GIT_COMMITTER_EMAIL" not in run.env


def test_the_hook_file_is_the_one_gate_agents_install_writes(gated: Gated, tmp_path: Path) -> None:
    plan, project = gated.plan, gated.run.project
    # as committed, as the agent left it, and as the installer writes it into an empty project
    assert _git(project, "show", f"HEAD:{plan.config}").encode() == gated.installed
    assert (project / plan.config).read_bytes() == gated.installed
    fresh = agent_project(tmp_path / "fresh")
    install(fresh, plan.agent)
    assert (fresh / plan.config).read_bytes() == gated.installed
    assert f"gate agents check --agent {plan.agent}" in gated.installed.decode()
    # and a second install in the project writes nothing
    assert f"{plan.agent}: unchanged {plan.config}" in install(project, plan.agent)


@pytest.mark.parametrize("role", FROZEN_ROLES)
def test_a_write_into_a_frozen_path_is_refused_and_the_model_told_why(gated: Gated, role: str) -> None:
    step = gated.plan.step(role)
    result = gated.result(step)
    assert gated.plan.denied(result), (step.what, result, gated.run.describe())
    assert f"{FROZEN}: {step.path}: " in result.text, (step.what, result)
    assert "freeze[0]:agents" in result.text and AGENT_EMAIL in result.text, (step.what, result)


@pytest.mark.parametrize("role", OFF_ROLES)
def test_switching_the_hooks_off_is_refused(gated: Gated, role: str) -> None:
    step = gated.plan.step(role)
    result = gated.result(step)
    assert gated.plan.denied(result), (step.what, result, gated.run.describe())
    assert f"{HOOKS_OFF}: " in result.text and step.path in result.text, (step.what, result)


@pytest.mark.parametrize("role", THROUGH_ROLES)
def test_a_call_elsewhere_goes_through(gated: Gated, role: str) -> None:
    step = gated.plan.step(role)
    result = gated.result(step)
    assert not gated.plan.denied(result) and "GATE-" not in result.text, (step.what, result)


def test_the_frozen_files_and_the_hooks_stay_as_they_were(gated: Gated) -> None:
    project = gated.run.project
    assert (project / "ci/deploy.yml").read_text() == DEPLOY
    assert not (project / "ci/new.yml").exists() and not (project / "ci/moved.py").exists()
    assert (project / "src/old.py").read_text() == "x = 0\n"  # the move refused whole
    assert (project / gated.plan.config).read_bytes() == gated.installed
    assert _git(project, "rev-parse", "HEAD").strip() == gated.head  # no commit got past its hooks


def test_the_writes_elsewhere_landed(gated: Gated) -> None:
    project = gated.run.project
    assert (project / "src/ok.py").read_text() == "x = 1\n"
    assert (project / "src/shell.txt").read_text() == "hi\n"


def test_the_cli_reports_the_refusals_in_its_own_output(gated: Gated) -> None:
    """What each CLI's own JSON output says about the refused calls."""
    run, project = gated.run, gated.run.project
    refused = [step for step in gated.plan.steps if step.role in FROZEN_ROLES + OFF_ROLES]
    if run.agent == "claude":
        # Claude Code lists each refused call in its result (the Read before the Edit went through)
        denials = [(d["tool_name"], d["tool_input"].get("file_path", d["tool_input"].get("command")))
                   for d in run.result["permission_denials"]]
        assert denials == [("Write", str(project / "ci/new.yml")), ("Edit", str(project / "ci/deploy.yml")),
                           *(("Bash", step.what) for step in refused[2:])], run.describe()
        assert "name: old" in gated.model.results_after(1)[0].text
    elif run.agent == "gemini":
        # Gemini CLI counts each refused call as a failed one
        by_name = run.result["stats"]["tools"]["byName"]
        assert {name: (n["count"], n["fail"]) for name, n in by_name.items()} == {
            "write_file": (2, 1), "replace": (1, 1), "run_shell_command": (5, 4)}, run.describe()
    elif run.agent == "codex":
        # Codex CLI reports the calls that ran (the patch elsewhere, the shell write elsewhere), not the refused
        ran = [e["item"] for e in run.result if e.get("type") == "item.completed"
               and e["item"].get("type") in ("file_change", "command_execution")]
        assert len(ran) == 2, run.describe()
    else:
        # Copilot CLI reports each refused call as a failed tool execution
        done = [e["data"] for e in run.result if e.get("type") == "tool.execution_complete"]
        assert sum(not d.get("success", True) for d in done) == len(refused), run.describe()


@pytest.fixture(scope="module")
def copilot_in_claudes_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[AgentRun, ScriptedModel]:
    """Copilot CLI in a project where only Claude Code's hook is installed (it runs that file too)."""
    cli("copilot")
    root = tmp_path_factory.mktemp("gated-copilot-claude-file")
    project = gated_project(root, "claude")
    script = [call("create", path=str(project / "ci/new.yml"), file_text="a: 1\n"),
              call("bash", command="echo x > ci/deploy.yml", description="a shell command"),
              call("create", path=str(project / "src/ok.py"), file_text="x = 1\n"), say("All done.")]
    with ScriptedModel(script) as model:
        run = run_agent("copilot", project, model, PROMPT, home=root / "home", git_identity={})
    return run, model


def test_copilot_running_claude_codes_file_refuses_but_does_not_say_why(
        copilot_in_claudes_file: tuple[AgentRun, ScriptedModel]) -> None:
    # Copilot sends Claude's form from .claude/settings.json (the claude adapter reads it: `Write` with
    # `path`) and honours exit 2, but tells the model only the exit status: it reads a JSON reason
    # from that file at exit 0 alone. Copilot's own file (gate agents install --agent copilot) says why.
    run, model = copilot_in_claudes_file
    project = run.project
    assert run.returncode == 0, run.describe()
    assert not (project / "ci/new.yml").exists() and (project / "ci/deploy.yml").read_text() == DEPLOY
    assert (project / "src/ok.py").read_text() == "x = 1\n"
    for turn in (0, 1):
        (result,) = model.results_after(turn)
        assert result.text == "Denied by preToolUse hook: hook exited with code 2", result


#: The payloads recorded from the real CLIs (tests/agents/payloads: the run's project written
#: /tmp/agent-project), each with the hook file it came through: Copilot's `claude-file-*` from
#: Claude Code's file, so through `--agent claude`.
RECORDED = sorted(path for path in PAYLOADS.glob("*/*.json") if PROJECT_MARK in path.read_text())


@pytest.fixture(scope="module")
def recorded_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project that freezes `frozen/**` too (the path the recording runs wrote into), git's identity
    the agent's."""
    root = tmp_path_factory.mktemp("recorded")
    project = agent_project(root / "project", {**FILES, "frozen/z.yml": "name: old\n", ".gate/policy.toml":
                                               POLICY.replace('"ci/**"', '"ci/**", "frozen/**"')})
    _git(project, "config", "user.email", AGENT_EMAIL)
    return project


@pytest.mark.parametrize("fixture", RECORDED, ids=[f"{p.parent.name}/{p.stem}" for p in RECORDED])
def test_every_recorded_payload_gets_the_verdict_its_run_gave(fixture: Path, recorded_project: Path) -> None:
    """The payloads the real CLIs sent the test's hook, through `gate agents check` in a project that
    freezes `frozen/**` for the project's identity: `*-frozen` refused with GATE-FROZEN-PATH,
    `*-allowed` let through silently."""
    agent = "claude" if fixture.stem.startswith("claude-file-") else fixture.parent.name
    project = recorded_project
    home = project.parent / "home"
    text = json.dumps(json.loads(fixture.read_text())["payload"])
    text = text.replace(PROJECT_MARK, str(project)).replace(HOME_MARK, str(home))
    proc = subprocess.run([str(GATE), "agents", "check", "--agent", agent], cwd=project, input=text.encode(),
                          capture_output=True, check=False,
                          env={"PATH": os.environ.get("PATH", ""), "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"})
    stderr = proc.stderr.decode()
    if fixture.stem.endswith("-frozen"):
        assert proc.returncode == 2 and stderr.startswith(f"{FROZEN}: frozen/"), stderr
    else:
        assert fixture.stem.endswith("-allowed")
        assert (proc.returncode, proc.stdout, stderr) == (0, b"", ""), stderr
