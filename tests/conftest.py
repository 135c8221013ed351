"""Shared fixtures: real git repositories, real identities, the real `gate` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HUMAN = ("Hana Human", "hana@example.com")
AGENT = ("Agent Smith", "bot-7@agents.example.com")
GATE = [sys.executable, "-m", "gatecore.cli"]


def git_env(identity: tuple[str, str] = HUMAN, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GL_", "GITEA_", "GITHUB_"))}
    name, email = identity
    env.update({
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": env.get("GATE_TEST_HOME", env.get("HOME", "/tmp")),
        "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
    })
    env.update(extra)
    return env


def git(cwd: Path | str, *args: str, identity: tuple[str, str] = HUMAN, check: bool = True,
        env: dict[str, str] | None = None, input: bytes | None = None) -> subprocess.CompletedProcess[str]:
    run_env = git_env(identity)
    if env:
        run_env.update(env)
    proc = subprocess.run(["git", *args], cwd=cwd, env=run_env, capture_output=True, input=input)
    out = subprocess.CompletedProcess(proc.args, proc.returncode,
                                      proc.stdout.decode("utf-8", "replace"),
                                      proc.stderr.decode("utf-8", "replace"))
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{out.stdout}\n{out.stderr}")
    return out


def git_bytes(cwd: Path | str, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True, check=True).stdout


def gate(*args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None,
         input: str | None = None) -> subprocess.CompletedProcess[str]:
    run_env = dict(os.environ)
    if env:
        run_env.update(env)
    return subprocess.run([*GATE, *args], cwd=cwd, env=run_env, capture_output=True, text=True, input=input)


class WorkRepo:
    """A non-bare repository with helpers to write files and commit as someone."""

    def __init__(self, path: Path) -> None:
        self.path = path
        git(path.parent, "init", "-q", "-b", "main", str(path))
        git(path, "config", "commit.gpgsign", "false")

    def write(self, rel: str, data: str | bytes, mode: int | None = None) -> None:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.is_file():
            p.unlink()
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        if mode is not None:
            p.chmod(mode)

    def symlink(self, rel: str, target: str) -> None:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.exists():
            p.unlink()
        p.symlink_to(target)

    def commit(self, message: str = "change", identity: tuple[str, str] = HUMAN,
               committer: tuple[str, str] | None = None) -> str:
        git(self.path, "add", "-A")
        env = {}
        if committer is not None:
            env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        git(self.path, "commit", "-q", "--allow-empty", "-m", message, identity=identity, env=env)
        return self.head()

    def head(self, rev: str = "HEAD") -> str:
        return git(self.path, "rev-parse", rev).stdout.strip()

    def git(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return git(self.path, *args, **kw)  # type: ignore[arg-type]


@pytest.fixture
def work(tmp_path: Path) -> Iterator[WorkRepo]:
    yield WorkRepo(tmp_path / "work")


POLICY = """\
mode = "enforce"
[[freeze]]
name = "governance"
paths = ["ci/**", "gate.toml", ".pre-commit-config.yaml", "vendor/sub"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[trusted]
pushers = ["runner-*"]
"""


class Server:
    """A bare repository with the gate installed, and a work repository that pushes to it."""

    def __init__(self, root: Path, policy: str = POLICY, keyring: str | None = None,
                 platform: str = "git", extra: tuple[str, ...] = ()) -> None:
        self.root = root
        self.bare = root / "server.git"
        git(root, "init", "-q", "--bare", "-b", "main", str(self.bare))
        self.policy_file = root / "policy.toml"
        self.policy_file.write_text(policy)
        args = ["server", "install", str(self.bare), "--policy", str(self.policy_file), "--platform", platform,
                "--repository-id", "demo/repo", *extra]
        if keyring is not None:
            (root / "keyring.toml").write_text(keyring)
            args += ["--keyring", str(root / "keyring.toml")]
        out = gate(*args)
        assert out.returncode == 0, out.stdout + out.stderr
        self.gate_dir = self.bare / "gate"
        self.work = WorkRepo(root / "work")
        self.work.git("remote", "add", "origin", f"file://{self.bare}")

    @property
    def url(self) -> str:
        return f"file://{self.bare}"

    def push(self, *refspecs: str, pusher_env: dict[str, str] | None = None, identity: tuple[str, str] = HUMAN,
             url: str | None = None, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        return git(self.work.path, "push", "--porcelain", *extra, url or self.url, *refspecs, identity=identity,
                   check=False, env=pusher_env or {})

    def ref(self, name: str) -> str | None:
        out = git(self.bare, "rev-parse", "--verify", "-q", name, check=False)
        return out.stdout.strip() if out.returncode == 0 else None

    def refs(self) -> dict[str, str]:
        out = git(self.bare, "for-each-ref", "--format=%(refname) %(objectname)").stdout
        return dict(line.split(" ") for line in out.splitlines())

    def audit(self) -> list[dict[str, object]]:
        import json

        path = self.gate_dir / "audit.log"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def rejected(out: subprocess.CompletedProcess[str], code: str) -> bool:
    text = out.stdout + out.stderr
    return out.returncode != 0 and code in text and "pre-receive hook declined" in text


@pytest.fixture
def server(tmp_path: Path) -> Server:
    s = Server(tmp_path)
    s.work.write("README", "hello\n")
    s.work.write("ci/deploy.yml", "deploy: true\n")
    s.work.write("src/app.py", "print('hi')\n")
    s.work.commit("base", identity=HUMAN)
    out = s.push("main")
    assert out.returncode == 0, out.stderr
    return s
