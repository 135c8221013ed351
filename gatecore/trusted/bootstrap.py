"""`gate bootstrap`: run by the job image before any agent starts (trusted side).

It mints a fresh workspace generation (never taken from the agent or the workspace),
allocates the attempt id unless the orchestrator passes one, wipes the agent-writable
scoring path - always, even when a binder or receipts are already there - and creates
the per-attempt directory inside it. Receipts left from other generations cannot
survive: the directory they were in is gone. It prints the values to export.

The scoring path lies inside the workspace, which the agent can write: every component
of it is checked without following symlinks, so a `.gate` symlink planted by the agent
is refused (`GATE-INPUT-PATH`) and nothing outside the workspace is ever deleted.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import time
from pathlib import Path, PurePosixPath

from .. import ids
from ..errors import GateError
from ..valueclass import valueclass

DEFAULT_SCORING = ".gate/scoring"


@valueclass(frozen=True, slots=True)
class Bootstrapped:
    workspace: Path
    workspace_generation: str
    attempt_id: str
    scoring_dir: Path

    def exports(self) -> str:
        return (f"export WORKSPACE_GEN={self.workspace_generation}\n"
                f"export ATTEMPT_ID={self.attempt_id}\n"
                f"export GATE_SCORING_DIR={self.scoring_dir}\n")


def mint_generation(now: float) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    return f"g{stamp}-{secrets.token_hex(12)}"


def mint_attempt_id(now: float) -> str:
    return f"a{int(now)}-{secrets.token_hex(6)}"


def _directory_inside(workspace: Path, parts: tuple[str, ...]) -> Path:
    """workspace/parts..., each component a real directory (created if absent), never a symlink."""
    current = workspace
    for part in parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            current.mkdir()
            continue
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise GateError("GATE-INPUT-PATH", f"{current} is not a plain directory inside the workspace "
                                               "(a symlink or a file); refusing to follow or remove it")
    return current


def bootstrap(workspace: Path, now: float, attempt_id: str | None = None,
              scoring: str = DEFAULT_SCORING) -> Bootstrapped:
    if attempt_id is not None and not ids.is_attempt_id(attempt_id):
        raise GateError("GATE-INPUT-ARGUMENT", f"attempt id {attempt_id!r} is not of the allowed form")
    parts = PurePosixPath(scoring).parts
    if not parts or PurePosixPath(scoring).is_absolute() or ".." in parts or "." in parts:
        raise GateError("GATE-INPUT-ARGUMENT", "the scoring path is relative to the workspace, without '..'")
    workspace = workspace.resolve()
    if not workspace.is_dir():
        raise GateError("GATE-INPUT-ARGUMENT", f"workspace {workspace} is not a directory")
    parent = _directory_inside(workspace, parts[:-1])
    root = parent / parts[-1]
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        shutil.rmtree(root)  # fd-based: does not follow symlinks inside the tree
    elif info is not None:
        root.unlink()  # a file or a symlink (the link itself, never its target)
    attempt = attempt_id or mint_attempt_id(now)
    root.mkdir()
    target = root / attempt
    target.mkdir()
    return Bootstrapped(workspace, mint_generation(now), attempt, target)
