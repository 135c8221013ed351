"""Hosting accounts for the real-server tests: the account a git server runs hooks as.

A server runs the hook as its own account (gitolite's, the web server's, git daemon's),
never as the developer who ran the tests, and `gate server install` must run as that
account too. The test venv's interpreter may not even be reachable by another account
(pyenv under a 0700 /root), so `server_python()` builds, once per session, an interpreter
every account can run: a venv of the system Python with a copy of the package and its
run-time dependencies, in a world-readable directory.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .gitutil import git_env

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gatecore", "server", "hooks")
#: Test and lint tools the hook never imports: not copied.
_SKIP = ("mypy", "mypyc", "hypothesis", "_pytest", "pytest", "pip", "virtualenv", "ruff", "pre_commit",
         "_editable_impl", "__editable__", "setuptools", "_distutils_hack", "distutils-precedence")


def require_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("real-server tests create hosting accounts and start servers: run as root (CI does)")


def require(*commands: str) -> None:
    for c in commands:
        if shutil.which(c) is None and not Path(c).exists():
            pytest.skip(f"{c} is not installed (.ci/run installs it from Debian's packages)")


def account(name: str, home: Path) -> None:
    """A system account whose home is `home` (created empty), able to log in by key only."""
    if subprocess.run(["getent", "passwd", name], capture_output=True, check=False).returncode != 0:
        subprocess.run(["useradd", "--system", "--home-dir", str(home), "--shell", "/bin/sh", name], check=True)
    else:
        subprocess.run(["usermod", "--home", str(home), name], check=True)
    subprocess.run(["usermod", "-p", "*", name], check=True)  # not locked (sshd refuses '!'), no password
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    shutil.chown(home, name, name)


def as_account(account: str, *cmd: str, cwd: Path | str = "/", env: dict[str, str] | None = None,
               check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command as the hosting account (`runuser -u ACCOUNT -- ...`), the way an admin does;
    runuser sets HOME, USER and SHELL to the account's."""
    run_env = git_env()
    run_env.pop("HOME", None)
    if env:
        run_env.update(env)
    out = subprocess.run(["runuser", "-u", account, "--", *cmd], cwd=cwd, env=run_env, capture_output=True,
                         text=True, input=input)
    if check and out.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} as {account} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return out


def _site_packages(venv: Path) -> Path:
    return next(venv.glob("lib/python3*/site-packages"))


@functools.cache
def server_python() -> Path:
    """An interpreter with the gate that every account can run (see the module docstring)."""
    base = Path("/usr/bin/python3")
    if not base.exists():
        pytest.skip("no system python3 to build an interpreter the hosting accounts can run")
    version = subprocess.run([str(base), "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"system python3 is {version}, the tests run {sys.version_info[:2]}: compiled wheels differ")
    venv = Path(tempfile.mkdtemp(prefix="gate-server-python-", dir="/var/tmp"))
    venv.chmod(0o755)
    atexit.register(shutil.rmtree, venv, True)
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True)
    populate(venv)
    return venv / "bin" / "python3"


def populate(venv: Path) -> None:
    """Put push-gate and its run-time dependencies into a venv of a Python of the tests' version,
    readable by every account (what `pip install push-gate` does, offline)."""
    dst = _site_packages(venv)
    src = Path(sys.prefix) / dst.relative_to(venv)
    for entry in src.iterdir():
        if entry.name.startswith(_SKIP) or entry.name == "__pycache__" or (dst / entry.name).exists():
            continue
        (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, dst / entry.name)
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [venv, *venv.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))


def gate_cmd() -> list[str]:
    return [str(server_python()), "-I", "-m", "gatecore.cli"]
