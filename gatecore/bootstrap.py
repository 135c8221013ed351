"""`gate bootstrap`: run by the job image before any agent starts (trusted side).

It mints a fresh workspace generation (never taken from the agent or the workspace),
allocates the attempt id unless the orchestrator passes one, wipes the agent-writable
scoring path - always, even when a binder or receipts are already there - and creates
the per-attempt directory inside it. Receipts left from other generations cannot
survive: the directory they were in is gone. It prints the values to export.
"""

from __future__ import annotations

import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from . import ids
from .errors import InputError

DEFAULT_SCORING = ".gate/scoring"


@dataclass(frozen=True, slots=True)
class Bootstrapped:
    workspace: Path
    workspace_generation: str
    attempt_id: str
    scoring_dir: Path

    def exports(self) -> str:
        return (f"export WORKSPACE_GEN={self.workspace_generation}\n"
                f"export ATTEMPT_ID={self.attempt_id}\n"
                f"export GATE_SCORING_DIR={self.scoring_dir}\n")


def mint_generation(now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    return f"g{stamp}-{secrets.token_hex(12)}"


def mint_attempt_id() -> str:
    return f"a{int(time.time())}-{secrets.token_hex(6)}"


def bootstrap(workspace: Path, attempt_id: str | None = None, scoring: str = DEFAULT_SCORING) -> Bootstrapped:
    if attempt_id is not None and not ids.is_attempt_id(attempt_id):
        raise InputError("GATE-INPUT-ARGUMENT", f"attempt id {attempt_id!r} is not of the allowed form")
    if Path(scoring).is_absolute() or ".." in Path(scoring).parts:
        raise InputError("GATE-INPUT-ARGUMENT", "the scoring path is relative to the workspace, without '..'")
    workspace = workspace.resolve()
    if not workspace.is_dir():
        raise InputError("GATE-INPUT-ARGUMENT", f"workspace {workspace} is not a directory")
    root = workspace / scoring
    if root.is_symlink() or root.is_file():
        root.unlink()
    elif root.exists():
        shutil.rmtree(root)
    attempt = attempt_id or mint_attempt_id()
    target = root / attempt
    target.mkdir(parents=True)
    return Bootstrapped(workspace, mint_generation(), attempt, target)
