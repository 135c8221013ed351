"""Checking what a repository holds the way this server's hook would (for `gate approvals list`).

The command line runs this on the server's own repository: the approvals it lists are then
verified with the installation's policy, keyring and allowed-signers file, exactly as the
pre-receive hook verifies them when a push relies on one.
"""

from __future__ import annotations

from pathlib import Path

from gatecore.adapters import config
from gatecore.adapters.gitrepo import GitRepo
from gatecore.objects import Objects
from gatecore.trusted.approve import Verifier

from . import installation
from .install import GATE_DIR_NAME, git_dir_of
from .prereceive import approval_context


def approval_verifier(repo: Path) -> Verifier | None:
    """Verifies approvals as the hook would, when `repo` is a repository the gate is installed in."""
    gate_dir = git_dir_of(repo) / GATE_DIR_NAME
    if not (gate_dir / installation.CONFIG_FILE).is_file():
        return None
    inst = installation.read(gate_dir)
    reader = GitRepo.at(repo)
    ctx = approval_context(inst, config.load_policy(inst.policy), Objects(reader), reader)
    verify: Verifier = ctx.verify
    return verify
