"""A clean, reproducible git environment for the benchmark, and fast repository copies."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

_STRIP = ("GIT_", "GL_", "GITEA_", "GITHUB_", "REMOTE_USER", "PRE_COMMIT")


def base_env(home: Path) -> dict[str, str]:
    """The process environment minus anything that would change what git or the gate does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIP)}
    home.mkdir(parents=True, exist_ok=True)
    cfg = home / "gitconfig"
    if not cfg.exists():
        cfg.write_text(
            "[user]\n\tname = Bench Human\n\temail = bench@example.com\n"
            "[init]\n\tdefaultBranch = main\n"
            "[advice]\n\tdetachedHead = false\n"
            "[gc]\n\tauto = 0\n"
            "[receive]\n\tautogc = false\n"
            "[commit]\n\tgpgsign = false\n"
        )
    env.update({
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(cfg), "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C", "HOME": str(home),
    })
    return env


class Git:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def run(self, *args: str, cwd: Path | None = None, input: bytes | None = None,
            extra: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        env = self.env if not extra else {**self.env, **extra}
        proc = subprocess.run(["git", *args], cwd=cwd, env=env, input=input, capture_output=True, check=False)
        if check and proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} (in {cwd}) exited {proc.returncode}:\n"
                               f"{proc.stderr.decode(errors='replace')[-2000:]}")
        return proc

    def out(self, *args: str, cwd: Path | None = None) -> str:
        return self.run(*args, cwd=cwd).stdout.decode().strip()

    def init_bare(self, path: Path) -> None:
        self.run("init", "-q", "--bare", "-b", "main", str(path))
        self.run("config", "receive.autogc", "false", cwd=path)
        self.run("config", "gc.auto", "0", cwd=path)


def link_copy(src: Path, dst: Path) -> None:
    """Copy a repository: object files hard-linked (git never rewrites them in place), the rest copied.

    Git replaces refs, packed-refs and config by rename, never in place, so the template is
    never modified by what happens in the copy.
    """
    def copy(s: str, d: str) -> None:
        if os.sep + "objects" + os.sep in s[len(str(src)):]:
            try:
                os.link(s, d)
                return
            except OSError:
                pass
        shutil.copy2(s, d)

    shutil.copytree(src, dst, copy_function=copy, symlinks=True)
