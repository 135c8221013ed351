"""The coding agents' real command-line tools, run offline against `scriptedmodel.ScriptedModel`.

`./dev agent-clis` installs the pinned CLIs (tests/agents/npm/NAME: package.json and its lockfile)
into the cache; `cli(name)` finds one there, or skips the test naming that command (fails instead
when GATE_REQUIRE_AGENT_CLIS=1, as CI sets it).

`run_agent(name, project, model, prompt)` runs one agent non-interactively in `project` (a git
work tree: `agent_project`) with a HOME of its own (no user configuration gets in, nothing is left
in the user's), its API pointed at the scripted model and everything else that reaches the network
switched off: the model server is also the process's HTTP(S) proxy, so a request that would leave
the machine is recorded (`AgentRun.outbound`) and refused. It returns the exit code, the output
(parsed when it is JSON), stderr and the model requests of this run.

`hook_config(name, command, matcher)` is each agent's project hook file as it worked here, and
`write_hook_config` commits it into the project. `play(name, root, script)` does it all: a project,
`RecordingHook` (tests/agents/record_and_deny.py) as its hook, the model playing `script`, one run;
`check_payload` holds a payload the hook got to its fixture in tests/agents/payloads/.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .gitutil import ROOT
from .scriptedmodel import Request, ScriptedModel, Turn

#: Where the pinned versions live (one directory per CLI, named as its executable).
LOCKS = ROOT / "tests" / "agents" / "npm"
AGENTS = ("claude", "gemini", "codex", "copilot")
REQUIRE = "GATE_REQUIRE_AGENT_CLIS"


def cache_root() -> Path:
    """`./dev agent-clis`'s cache: ${GATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/push-gate}/agents."""
    base = os.environ.get("GATE_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "push-gate")
    return Path(base) / "agents"


def pinned_version(name: str) -> str:
    deps = json.loads((LOCKS / name / "package.json").read_text())["dependencies"]
    (version,) = deps.values()
    return str(version)


def _stamp(name: str) -> str:
    # as ./dev computes it: sha256 of package.json then package-lock.json
    digest = hashlib.sha256()
    for part in ("package.json", "package-lock.json"):
        digest.update((LOCKS / name / part).read_bytes())
    return digest.hexdigest()


def cli(name: str) -> Path:
    """The pinned CLI's executable, installed by `./dev agent-clis`. A test without it is skipped,
    or fails when GATE_REQUIRE_AGENT_CLIS=1 (CI, which installs them)."""
    version = pinned_version(name)
    root = cache_root() / f"{name}-{version}"
    exe = root / "node_modules" / ".bin" / name
    stamp = root / ".installed"
    problem = None
    if not stamp.is_file() or not os.access(exe, os.X_OK):
        problem = f"{name} {version} is not installed in {root}"
    elif stamp.read_text().strip() != _stamp(name):
        problem = f"{root} was installed from another lockfile than tests/agents/npm/{name}"
    if problem is not None:
        message = f"{problem}: run ./dev agent-clis"
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{message} ({REQUIRE}=1)", pytrace=False)
        pytest.skip(message)
    return exe


# --- the project and the hooks ------------------------------------------------------------------

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "Agent Tester", "GIT_AUTHOR_EMAIL": "tester@example.com",
                "GIT_COMMITTER_NAME": "Agent Tester", "GIT_COMMITTER_EMAIL": "tester@example.com"}


def _git(cwd: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
           "LC_ALL": "C", **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def agent_project(path: Path, files: Mapping[str, str] | None = None) -> Path:
    """A git work tree at `path` holding `files` (relative path: text) in one commit on `main`."""
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main")
    for rel, text in (files or {}).items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "--allow-empty", "-m", "the project as the agent finds it")
    return path


def commit_all(project: Path, message: str = "change") -> None:
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "--allow-empty", "-m", message)


def hook_config(name: str, command: str, matcher: str | None = None) -> tuple[str, dict[str, Any]]:
    """The project file and its JSON that make agent `name` run `command` before its write and shell
    tools (the shapes that worked with the pinned versions: tests/agents/README.md)."""
    if name == "claude":
        entry = {"matcher": matcher or "Write|Edit|MultiEdit|NotebookEdit|Bash",
                 "hooks": [{"type": "command", "command": command}]}
        return ".claude/settings.json", {"hooks": {"PreToolUse": [entry]}}
    if name == "gemini":
        entry = {"matcher": matcher or "write_file|replace|run_shell_command",
                 "hooks": [{"type": "command", "command": command}]}
        return ".gemini/settings.json", {"hooks": {"BeforeTool": [entry]}}
    if name == "codex":
        entry = {"matcher": matcher or "apply_patch|Bash",
                 "hooks": [{"type": "command", "command": command}]}
        return ".codex/hooks.json", {"hooks": {"PreToolUse": [entry]}}
    if name == "copilot":
        return ".github/hooks/test.json", {"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": command, "timeoutSec": 60}]}}
    raise ValueError(f"no hook configuration for {name!r}")


def write_hook_config(name: str, project: Path, command: str, matcher: str | None = None) -> Path:
    """`hook_config` written into `project` and committed; its path."""
    rel, config = hook_config(name, command, matcher)
    target = project / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(config, indent=2) + "\n")
    commit_all(project, f"{name}'s pre-tool hook")
    return target


# --- running an agent ---------------------------------------------------------------------------

@dataclass
class AgentRun:
    agent: str
    version: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    result: Any  # stdout parsed: one JSON document, or a list of JSON lines; None when it is neither
    requests: list[Request]  # what the model server received during this run
    project: Path
    home: Path
    env: dict[str, str]  # the environment the agent ran with (its hooks inherit it)

    @property
    def outbound(self) -> list[str]:
        """The hosts the agent tried to reach through its proxy (the model server): nothing, offline."""
        return [r.path for r in self.requests if r.api == "proxy"]

    def describe(self) -> str:
        """Everything a failing assertion needs to say."""
        routes = "; ".join(f"{r.method} {r.route} {r.api}/{r.kind}/{r.turn}" for r in self.requests)
        return (f"{self.agent} {self.version} exited {self.returncode}\n--- argv: {self.argv}\n"
                f"--- stdout:\n{self.stdout[-4000:]}\n--- stderr:\n{self.stderr[-4000:]}\n--- requests: {routes}")


@dataclass(frozen=True)
class _Agent:
    argv: Callable[[Path, str, bool], list[str]]  # (executable, prompt, trusted)
    env: Callable[[ScriptedModel], dict[str, str]]
    home: Callable[[Path, Path, ScriptedModel, bool], None] = lambda home, project, model, trusted: None


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _gemini_home(home: Path, project: Path, model: ScriptedModel, trusted: bool) -> None:
    _write_json(home / ".gemini" / "settings.json", {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    })
    # the folder trusted as a user trusts it (untrusted, Gemini CLI refuses to run headless)
    if trusted:
        _write_json(home / ".gemini" / "trustedFolders.json", {str(project): "TRUST_FOLDER"})


def _codex_home(home: Path, project: Path, model: ScriptedModel, trusted: bool) -> None:
    # the model as a provider of its own (OPENAI_BASE_URL does not move the built-in one), over
    # HTTP (no WebSocket), no retries; the features that call chatgpt.com or github.com at start
    # switched off; the project trusted, as `codex` asks a user to (its .codex/ is read only then:
    # untrusted, the project's hooks are ignored, silently)
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"""\
model = "gpt-5.5"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted model"
base_url = "{model.base_url}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
tool_suggest = false
in_app_updates = false

[analytics]
enabled = false
""" + (f"""
[projects.{json.dumps(str(project))}]
trust_level = "trusted"
""" if trusted else ""))


def _copilot_dist() -> dict[str, str]:
    """COPILOT_CLI_DIST_DIR: the CLI's JavaScript as `./dev agent-clis` unpacked it (else the CLI
    unpacks 235 MB into each test's HOME)."""
    root = cache_root() / f"copilot-{pinned_version('copilot')}" / "unpacked" / "copilot" / "pkg"
    found = sorted(root.glob(f"*/{pinned_version('copilot')}"))
    return {"COPILOT_CLI_DIST_DIR": str(found[0])} if found else {}


_AGENTS: dict[str, _Agent] = {
    "claude": _Agent(
        argv=lambda exe, prompt, trusted: [str(exe), "-p", prompt, "--permission-mode", "acceptEdits",
                                           "--output-format", "json"],
        env=lambda model: {
            "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "sk-ant-offline-test",
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
        },
    ),
    "gemini": _Agent(
        argv=lambda exe, prompt, trusted: [str(exe), "-p", prompt, "--yolo", "--output-format", "json"],
        env=lambda model: {
            "GOOGLE_GEMINI_BASE_URL": model.base_url, "GEMINI_API_KEY": "offline-test-key",
            "GEMINI_CLI_NO_RELAUNCH": "true",  # one process, not a child relaunched with more memory
        },
        home=_gemini_home,
    ),
    "codex": _Agent(
        # hooks run only once trusted (a hash of each stored in the user's config when the user
        # reviews them in the TUI); --dangerously-bypass-hook-trust is the flag for automation. No
        # sandbox: the project is a test's temporary directory.
        argv=lambda exe, prompt, trusted: [str(exe), "exec", "--json", "--dangerously-bypass-approvals-and-sandbox",
                                           "--dangerously-bypass-hook-trust", prompt],
        env=lambda model: {"OPENAI_API_KEY": "sk-offline-test"},
        home=_codex_home,
    ),
    "copilot": _Agent(
        # --trust-folder: this run only (untrusted, the project's hooks are ignored, silently)
        argv=lambda exe, prompt, trusted: [str(exe), "-p", prompt, "--allow-all-tools",
                                           *(["--trust-folder"] if trusted else []),
                                           "--output-format", "json", "--disable-client-telemetry"],
        env=lambda model: {
            # offline mode: no GitHub sign-in, telemetry, web tools or update; a model of our own (BYOK)
            "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": model.base_url, "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "sk-offline-test", "COPILOT_MODEL": "claude-sonnet-4.5",
            **_copilot_dist(),
        },
    ),
}


def run_agent(name: str, project: Path, model: ScriptedModel, prompt: str = "Do the task.", *,
              home: Path | None = None, timeout: float = 300.0, extra_args: Sequence[str] = (),
              trusted: bool = True, git_identity: Mapping[str, str] = GIT_IDENTITY) -> AgentRun:
    """Run agent `name` once, non-interactively, in `project` against `model` (started). `trusted`:
    the project trusted as each CLI asks a user to (Gemini's trusted folders, Codex's trust_level,
    Copilot's --trust-folder); Claude Code in -p mode asks for no trust. `git_identity`: the
    GIT_AUTHOR_* and GIT_COMMITTER_* variables the agent (and its hooks) run with; `{}` leaves the
    identity to git's configuration (the project's user.name and user.email)."""
    spec = _AGENTS.get(name)
    if spec is None:
        raise ValueError(f"run_agent knows {sorted(_AGENTS)}, not {name!r}")
    exe = cli(name)
    home = home or project.parent / f"home-{name}"
    home.mkdir(parents=True, exist_ok=True)
    spec.home(home, project, model, trusted)
    env = _base_env(home, model, git_identity)
    env.update(spec.env(model))
    argv = [*spec.argv(exe, prompt, trusted), *extra_args]
    first = len(model.requests)
    proc = subprocess.Popen(argv, cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise AssertionError(f"{name} did not finish in {timeout:.0f} s\n--- stdout:\n{stdout[-3000:]}\n"
                             f"--- stderr:\n{stderr[-3000:]}\n--- requests: {model.summary()}") from None
    finally:
        # whatever the agent left running in its session (a shell, a hook) goes with it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return AgentRun(agent=name, version=pinned_version(name), argv=argv, returncode=proc.returncode,
                    stdout=stdout, stderr=stderr, result=_parse(stdout), requests=model.requests[first:],
                    project=project, home=home, env=env)


def _base_env(home: Path, model: ScriptedModel, git_identity: Mapping[str, str] = GIT_IDENTITY) -> dict[str, str]:
    """A clean environment: nothing of the caller's but the tools' directories."""
    tmp = home / "tmp"
    tmp.mkdir(exist_ok=True)
    dirs: list[str] = []
    for tool in ("node", "git", "bash"):
        found = shutil.which(tool)
        if found and str(Path(found).parent) not in dirs:
            dirs.append(str(Path(found).parent))
    dirs += [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(dirs)),
        "HOME": str(home), "USER": "tester", "LOGNAME": "tester", "SHELL": shutil.which("bash") or "/bin/sh",
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(tmp), "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1",
        "GIT_CONFIG_NOSYSTEM": "1", **git_identity,
    }
    # the model server is every proxy too: a request meant for the network is recorded and refused
    for var in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        env[var] = model.base_url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _parse(stdout: str) -> Any:
    text = stdout.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError:
        return None


# --- the hook the harness tests use, and the payloads it records ----------------------------------

HOOK_SCRIPT = ROOT / "tests" / "agents" / "record_and_deny.py"
PAYLOADS = ROOT / "tests" / "agents" / "payloads"
RECORD = "GATE_RECORD_AGENT_PAYLOADS"


#: A hook rule: when the tool's input contains `needle`, say BLOCKED-BY-TEST on stderr, print `stdout`
#: (if not None) and exit with `code`.
Rule = tuple[str, int, str | None]
DENY_FROZEN: tuple[Rule, ...] = (("frozen/", 2, None),)


@dataclass(frozen=True)
class RecordingHook:
    """`tests/agents/record_and_deny.py` as a hook command: it appends each payload to `log` and
    answers by the first of `rules` that matches (by default: a call whose input names a path under
    `frozen/` is denied with exit 2 and BLOCKED-BY-TEST on stderr; any other is let through)."""

    log: Path
    rules: tuple[Rule, ...] = DENY_FROZEN

    @property
    def command(self) -> str:
        parts = [sys.executable, str(HOOK_SCRIPT), str(self.log)]
        if self.rules != DENY_FROZEN:
            parts.append(json.dumps([list(rule) for rule in self.rules]))
        return " ".join(shlex.quote(part) for part in parts)

    def payloads(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


PROJECT_MARK = "/tmp/agent-project"
HOME_MARK = "/tmp/agent-home"


def normalized(value: Any, run: AgentRun) -> Any:
    """`value` with the run's project and home directories written as /tmp/agent-project and
    /tmp/agent-home (the fixtures stay the same from run to run)."""
    text = json.dumps(value)
    for real, mark in ((run.project.resolve(), PROJECT_MARK), (run.project, PROJECT_MARK),
                       (run.home.resolve(), HOME_MARK), (run.home, HOME_MARK)):
        text = text.replace(json.dumps(str(real))[1:-1], mark)
        # Claude Code names a project's transcript directory after its path, "/" as "-"
        text = text.replace(str(real).replace("/", "-"), mark.replace("/", "-"))
    return json.loads(text)


def shape(value: Any) -> Any:
    """The keys and the types of a JSON value, not its values."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return [shape(item) for item in value[:1]]
    return type(value).__name__


def check_payload(run: AgentRun, case: str, payload: dict[str, Any], *, stable: Sequence[str]) -> None:
    """Hold a payload a hook received to its fixture, tests/agents/payloads/AGENT/CASE.json: the same
    keys and types, and the same values under the keys `stable` names (the tool's name and input,
    say). GATE_RECORD_AGENT_PAYLOADS=1 writes the fixture from this run instead (dated, with the
    CLI's version)."""
    path = PAYLOADS / run.agent / f"{case}.json"
    got = normalized(payload, run)
    if os.environ.get(RECORD) == "1" or not path.exists():
        if os.environ.get(RECORD) != "1" and os.environ.get(REQUIRE) == "1":
            raise AssertionError(f"no fixture {path} (record it: {RECORD}=1)")
        path.parent.mkdir(parents=True, exist_ok=True)
        fixture = {"agent": run.agent, "version": run.version, "recorded": datetime.date.today().isoformat(),
                   "paths": f"the run's project directory written as {PROJECT_MARK}, its HOME as {HOME_MARK}",
                   "payload": got}
        path.write_text(json.dumps(fixture, indent=2) + "\n")
        return
    fixture = json.loads(path.read_text())
    want = fixture["payload"]
    assert shape(got) == shape(want), (
        f"{run.agent} {run.version}'s payload for {case} is not shaped as {path} ({fixture['version']}): "
        f"{json.dumps(got)}")
    for key in stable:
        assert got.get(key) == want.get(key), f"{case}: {key} is {got.get(key)!r}, the fixture's {want.get(key)!r}"


@dataclass
class Played:
    """One agent run through a script: what the agent did, what the model received, what the hook saw."""

    run: AgentRun
    model: ScriptedModel
    hook: RecordingHook

    def payload(self, tool: str, needle: str) -> dict[str, Any]:
        """The first payload the hook got for `tool` with an input value containing `needle`
        (`tool_name`/`tool_input`, or Copilot's own `toolName`/`toolArgs`)."""
        for payload in self.hook.payloads():
            name = payload.get("tool_name", payload.get("toolName"))
            args = payload.get("tool_input", payload.get("toolArgs"))
            if name == tool and isinstance(args, dict) and any(needle in str(v) for v in args.values()):
                return payload
        raise AssertionError(f"the hook got no {tool} call with {needle!r}: {self.hook.payloads()}")


def play(name: str, root: Path, script: Callable[[Path], Sequence[Turn]], *, files: Mapping[str, str] | None = None,
         matcher: str | None = None, prompt: str = "Make the changes.", extra_args: Sequence[str] = (),
         rules: Sequence[Rule] = DENY_FROZEN, trusted: bool = True) -> Played:
    """Agent `name` in a fresh project under `root` (holding `files`), its project hook file running a
    `RecordingHook` with `rules`, against a model playing `script(project)`."""
    cli(name)  # skip before making anything
    project = agent_project(root / "project", files)
    hook = RecordingHook(root / "hook.jsonl", tuple(rules))
    write_hook_config(name, project, hook.command, matcher)
    with ScriptedModel(script(project)) as model:
        run = run_agent(name, project, model, prompt, home=root / "home", extra_args=extra_args, trusted=trusted)
    return Played(run, model, hook)
