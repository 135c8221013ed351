"""The gate as git 2.54+'s config-defined hook (`hook.gate.command`, `hook.gate.event =
pre-receive`, in the repository's or the system config), and doctor reading, through git, what
runs at pre-receive: exactly one gate, and the setting that takes it out named with the file
that sets it (`core.hooksPath`, `hook.gate.enabled`, `hook.pre-receive.enabled`).

The config-defined layout needs git 2.54+: these tests take the modern git from GATE_MODERN_GIT
(the git binary or its bin directory) or `./dev modern-git`'s cache, and skip, saying so, where
there is none. The core.hooksPath and probe tests run on any git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import AGENT, GATE, WorkRepo, git, git_env
from support.server import POLICY, Server
from support.verdicts import refused

from server.hooklist import SYSTEM_HOOK


def modern_git_bin() -> Path:
    """The bin directory of a git 2.54+ (GATE_MODERN_GIT, else ./dev modern-git's cache)."""
    given = os.environ.get("GATE_MODERN_GIT")
    cache = Path(os.environ.get("GATE_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                 / "push-gate")
    candidates = [Path(given)] if given else []
    candidates += sorted(cache.glob("git-*/inst/bin"), reverse=True)
    for candidate in candidates:
        binary = candidate if candidate.is_file() else candidate / "git"
        if not os.access(binary, os.X_OK):
            continue
        version = subprocess.run([str(binary), "version"], capture_output=True, text=True, check=False).stdout
        major, minor = (int(x) for x in version.split()[2].split(".")[:2])
        if (major, minor) >= (2, 54):
            return binary.parent
    pytest.skip("no git 2.54 or newer: set GATE_MODERN_GIT or run ./dev modern-git (config-defined hooks need it)")


@pytest.fixture
def modern() -> dict[str, str]:
    """The environment that puts the modern git first on PATH (gate commands, pushes, the hook)."""
    return {"PATH": f"{modern_git_bin()}:{os.environ['PATH']}"}


def _bare(root: Path, name: str = "r.git") -> Path:
    git(root, "init", "-q", "--bare", "-b", "main", str(root / name))
    return root / name


def _agent_write(work: WorkRepo, text: str = "agent\n") -> None:
    work.write("ci/deploy.yml", text)
    work.commit("agent", identity=AGENT)


def _audit_lines(bare: Path) -> list[str]:
    log = bare / "gate" / "audit.log"
    return [ln for ln in log.read_text().splitlines() if '"event": "decision"' in ln or '"event":"decision"' in ln] \
        if log.exists() else []


def test_a_config_defined_gate_guards_pushes_beside_the_repositorys_own_hook(tmp_path: Path,
                                                                              modern: dict[str, str]) -> None:
    """installed as hook.gate in the repository's config, the gate decides every push, the
    repository's own hooks/pre-receive stays in place and runs too, and doctor sees one gate."""
    bare = _bare(tmp_path)
    own = bare / "hooks" / "pre-receive"
    marker = tmp_path / "own-hook-ran"
    own.write_text(f"#!/bin/sh\ncat >> {marker}\n")
    own.chmod(0o755)
    (tmp_path / "policy.toml").write_text(POLICY)
    out = cli("server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"), "--config-hook",
              "repository", env=modern)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "git runs the gate as hook.gate (local config) at pre-receive" in out.stdout, out.stdout
    assert own.read_text() == f"#!/bin/sh\ncat >> {marker}\n"  # untouched, no --chain needed
    assert git(bare, "config", "--get", "hook.gate.event").stdout.strip() == "pre-receive"
    work = WorkRepo(tmp_path / "w")
    work.write("src/a.py", "human\n")
    work.commit("human")
    assert work.git("push", f"file://{bare}", "main", check=False, env=modern).returncode == 0
    assert "refs/heads/main" in marker.read_text()
    _agent_write(work)
    assert refused(work.git("push", f"file://{bare}", "main", check=False, env=modern), "GATE-FROZEN-PATH")
    assert len(_audit_lines(bare)) == 2  # one gate: one decision per push
    out = cli("server", "doctor", str(bare), env=modern)
    assert out.returncode == 0, out.stdout
    assert "ok   one gate runs at pre-receive (git 2." in out.stdout and "hook.gate (local config)" in out.stdout
    assert f"note {own} (not the gate's) runs too, after the gate" in out.stdout
    assert "read the quarantined objects" in out.stdout


def test_doctor_names_the_setting_that_disables_a_config_defined_gate(tmp_path: Path, modern: dict[str, str]) -> None:
    bare = _bare(tmp_path)
    (tmp_path / "policy.toml").write_text(POLICY)
    assert cli("server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"), "--config-hook",
               "repository", env=modern).returncode == 0
    work = WorkRepo(tmp_path / "w")
    _agent_write(work)
    for key in ("hook.gate.enabled", "hook.pre-receive.enabled"):
        git(bare, "config", key, "false")
        out = cli("server", "doctor", str(bare), env=modern)
        assert out.returncode == 1, out.stdout
        assert f"FAIL {key} = false ({bare / 'config'} (local config)) takes the gate out" in out.stdout, out.stdout
        assert "note probe push not run: a check above failed" in out.stdout
        # and it is out: the agent's write lands
        assert work.git("push", f"file://{bare}", f"main:{key}", check=False, env=modern).returncode == 0
        git(bare, "config", "--unset", key)
    assert cli("server", "doctor", str(bare), env=modern).returncode == 0


def test_doctor_names_core_hooks_path_that_takes_the_hook_file_out(tmp_path: Path) -> None:
    """Any git: `core.hooksPath` in the repository's config moves the hook file git runs; doctor
    names the setting and the file that sets it (its probe only said the push was accepted),
    and says it did not run the probe, and why."""
    server = Server(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(server.bare, "config", "core.hooksPath", str(elsewhere))
    out = cli("server", "doctor", str(server.bare))
    assert out.returncode == 1
    assert (f"FAIL core.hooksPath = {elsewhere} ({server.bare / 'config'} (local config)) takes the gate out: git runs "
            f"{elsewhere / 'pre-receive'}, not {server.bare / 'hooks' / 'pre-receive'}") in out.stdout, out.stdout
    assert "note probe push not run: a check above failed (core.hooksPath = " in out.stdout
    assert not [r for r in server.refs() if r.startswith("refs/gate/doctor/")]
    # the post-receive hook that logs what landed is moved away with it
    landed = server.bare / "hooks" / "post-receive"
    assert (f"FAIL post-receive hook (logs what landed): {landed}, but core.hooksPath = {elsewhere} "
            f"({server.bare / 'config'} (local config)) moves it: git runs {elsewhere / 'post-receive'}") in out.stdout


def test_doctor_reads_through_git_whether_a_config_defined_post_receive_runs(tmp_path: Path,
                                                                             modern: dict[str, str]) -> None:
    """The config-defined post-receive hook (`hook.gate-landed`) that logs what landed: doctor asks
    git whether it runs, and names the setting that takes it out or the command that replaced it."""
    bare = _bare(tmp_path)
    (tmp_path / "policy.toml").write_text(POLICY)
    assert cli("server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"), "--config-hook",
               "repository", env=modern).returncode == 0
    landed = bare / "gate" / "hooks" / "post-receive"
    out = cli("server", "doctor", str(bare), env=modern)
    assert out.returncode == 0 and f"ok   post-receive hook (logs what landed): {landed}\n" in out.stdout, out.stdout
    for key in ("hook.gate-landed.enabled", "hook.post-receive.enabled"):
        git(bare, "config", key, "false")
        out = cli("server", "doctor", str(bare), env=modern)
        assert out.returncode == 1, out.stdout
        assert (f"FAIL post-receive hook (logs what landed): {landed}, but {key} = false ({bare / 'config'} "
                "(local config)) takes it out: the audit log says what the gate decided") in out.stdout, out.stdout
        git(bare, "config", "--unset", key)
    git(bare, "config", "hook.gate-landed.command", "true")
    out = cli("server", "doctor", str(bare), env=modern)
    assert out.returncode == 1 and "but hook.gate-landed (local config) runs 'true', not it" in out.stdout, out.stdout
    git(bare, "config", "--unset-all", "hook.gate-landed.command")
    git(bare, "config", "--unset-all", "hook.gate-landed.event")
    out = cli("server", "doctor", str(bare), env=modern)
    assert out.returncode == 1 and "but git lists no hook.gate-landed at post-receive" in out.stdout, out.stdout


def test_doctor_fails_when_two_gates_run(tmp_path: Path, modern: dict[str, str]) -> None:
    """The hook file and a config-defined hook that runs the gate again: every push judged twice."""
    server = Server(tmp_path)
    hook = server.bare / "hooks" / "pre-receive"
    git(server.bare, "config", "hook.again.command", str(hook))
    git(server.bare, "config", "hook.again.event", "pre-receive")
    out = cli("server", "doctor", str(server.bare), env=modern)
    assert out.returncode == 1
    assert f"FAIL 2 gates run at pre-receive: hook.again (local config), the hook file {hook}" in out.stdout, out.stdout


def test_the_config_layout_is_refused_on_a_git_older_than_2_54(tmp_path: Path) -> None:
    version = git(tmp_path, "version").stdout.split()[2]
    if tuple(int(x) for x in version.split(".")[:2]) >= (2, 54):
        pytest.skip(f"the machine's git is {version}: no older git to refuse")
    bare = _bare(tmp_path)
    (tmp_path / "policy.toml").write_text(POLICY)
    out = cli("server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"), "--config-hook", "repository")
    assert out.returncode == 2 and "GATE-CONFIG-LAYOUT" in out.stderr, out.stderr
    assert f"this git is {'.'.join(version.split('.')[:2])}, which would not run the gate at all" in out.stderr
    assert not (bare / "gate").exists() and git(bare, "config", "--get", "hook.gate.command", check=False).returncode


def test_switching_layouts_leaves_exactly_one_gate(tmp_path: Path, modern: dict[str, str]) -> None:
    """file -> config: the gate's hook file goes and a chained hook comes back to hooks/pre-receive
    (git runs it beside the config-defined gate); config -> file (off): the settings go."""
    bare = _bare(tmp_path)
    own = bare / "hooks" / "pre-receive"
    own.write_text("#!/bin/sh\nexit 0\n")
    own.chmod(0o755)
    (tmp_path / "policy.toml").write_text(POLICY)
    assert cli("server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"), "--chain",
               env=modern).returncode == 0
    assert "managed-by" in own.read_text()
    out = cli("server", "install", str(bare), "--config-hook", "repository", env=modern)
    assert out.returncode == 0, out.stderr
    assert own.read_text() == "#!/bin/sh\nexit 0\n"  # restored
    assert cli("server", "doctor", str(bare), env=modern).returncode == 0
    out = cli("server", "install", str(bare), "--config-hook", "off", "--chain", env=modern)
    assert out.returncode == 0, out.stderr
    assert "managed-by" in own.read_text()
    assert git(bare, "config", "--get", "hook.gate.command", check=False).returncode == 1
    assert not (bare / "gate" / "hooks" / "pre-receive").exists()
    out = cli("server", "doctor", str(bare), env=modern)
    assert out.returncode == 0 and "one gate runs at pre-receive (git 2." in out.stdout, out.stdout
    out = cli("server", "install", str(bare), "--config-hook", "repository", "--chain", env=modern)
    assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr  # --chain is for the hook file
    out = cli("server", "install", str(bare), "--config-hook", "system", "--platform", "gitlab", env=modern)
    assert out.returncode == 2 and "GATE-CONFIG-LAYOUT" in out.stderr


def test_a_gate_in_the_system_config_serves_every_repository(tmp_path: Path, modern: dict[str, str]) -> None:
    """hook.gate in the system config runs each repository's own installation, and refuses pushes
    to a repository where the gate is not installed (never lets one through)."""
    system = tmp_path / "gitconfig"
    system.write_text("")
    env = {**{k: v for k, v in git_env().items() if k != "GIT_CONFIG_NOSYSTEM"}, **modern,
           "GIT_CONFIG_SYSTEM": str(system)}

    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False)

    gated, other = _bare(tmp_path), _bare(tmp_path, "other.git")
    (tmp_path / "policy.toml").write_text(POLICY)
    out = run(*GATE, "server", "install", str(gated), "--policy",
              str(tmp_path / "policy.toml"), "--config-hook", "system")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "in git's system config (every repository)" in out.stdout
    assert run("git", "config", "--system", "--get", "hook.gate.command").stdout.strip() == SYSTEM_HOOK
    work = WorkRepo(tmp_path / "w")
    _agent_write(work)
    out = run("git", "push", f"file://{gated}", "main", cwd=work.path)
    assert refused(out, "GATE-FROZEN-PATH"), out.stderr
    out = run("git", "push", f"file://{other}", "main", cwd=work.path)
    assert out.returncode != 0 and "GATE-CONFIG-INSTALL: the gate is not installed in this repository" in out.stderr
    out = run(*GATE, "server", "doctor", str(gated))
    assert out.returncode == 0, out.stdout
    assert "hook.gate (system config)" in out.stdout
    # a hook file beside it would be a second gate (and the system's would refuse every push): refused
    out = run(*GATE, "server", "install", str(other), "--policy", str(tmp_path / "policy.toml"))
    assert out.returncode == 2 and "GATE-CONFIG-LAYOUT" in out.stderr and "--config-hook system" in out.stderr
    out = run(*GATE, "server", "install", str(gated), "--config-hook", "off")
    assert out.returncode == 2 and "GATE-CONFIG-LAYOUT" in out.stderr
    assert (gated / "gate" / "hooks" / "pre-receive").exists()
    out = run(*GATE, "server", "install", str(other), "--policy", str(tmp_path / "policy.toml"), "--config-hook",
              "system")
    assert out.returncode == 0, out.stderr
    assert refused(run("git", "push", f"file://{other}", "main", cwd=work.path), "GATE-FROZEN-PATH")
