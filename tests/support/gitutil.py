"""git, the `gate` CLI and work repositories, as the tests drive them (never mocked)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the project's checkout
HUMAN = ("Hana Human", "hana@example.com")
AGENT = ("Agent Smith", "bot-7@agents.example.com")
GATE = [sys.executable, "-m", "gatecore.cli"]
#: git's variables a test's git keeps: the format of the repositories it makes (support.formats).
KEPT = frozenset({"GIT_DEFAULT_HASH", "GIT_DEFAULT_REF_FORMAT"})


def git_env(identity: tuple[str, str] = HUMAN, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GL_", "GITEA_", "GITHUB_"))
           or k in KEPT}
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
    out = subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                      proc.stderr.decode("utf-8", "replace"))
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{out.stdout}\n{out.stderr}")
    return out


def git_bytes(cwd: Path | str, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True, check=True,
                          input=input).stdout


def gate(*args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None,
         input: str | None = None) -> subprocess.CompletedProcess[str]:
    run_env = dict(os.environ)
    if env:
        run_env.update(env)
    return subprocess.run([*GATE, *args], cwd=cwd, env=run_env, capture_output=True, text=True, input=input)


class WorkRepo:
    """A non-bare repository with helpers to write files and commit as someone."""

    def __init__(self, path: Path, object_format: str | None = None) -> None:
        """`object_format`: None for git's default (sha1, or a format test's)."""
        self.path = path
        fmt = [] if object_format is None else [f"--object-format={object_format}"]
        git(path.parent, "init", "-q", "-b", "main", *fmt, str(path))
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

    def git(self, *args: str, identity: tuple[str, str] = HUMAN, check: bool = True,
            env: dict[str, str] | None = None, input: bytes | None = None) -> subprocess.CompletedProcess[str]:
        return git(self.path, *args, identity=identity, check=check, env=env, input=input)

    def hash_object(self, data: bytes, kind: str = "blob") -> str:
        """Write an object byte for byte (`--literally`: no checks), as a hostile client can."""
        return git_bytes(self.path, "hash-object", "-t", kind, "-w", "--literally", "--stdin",
                         input=data).decode().strip()
