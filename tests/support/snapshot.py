"""This project as a git repository (a snapshot of the working tree, committed), the way a
forge would hold it for pre-commit's `repo:`/`rev:` and `try-repo`."""

from __future__ import annotations

import shutil
from pathlib import Path

from .gitutil import ROOT, git

#: What pre-commit needs to build the hooks' environment (pyproject's readme and license included).
SNAPSHOT = ("gatecore", "server", "hooks", "pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml",
            "VERSION", "hatch_build.py")


def project_repository(dest: Path) -> str:
    """Copy the project into `dest` (created), commit it on main; returns the commit id."""
    dest.mkdir(parents=True)
    for name in SNAPSHOT:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_build.py"))
        else:
            shutil.copy2(src, dest / name)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot")
    return git(dest, "rev-parse", "HEAD").stdout.strip()
