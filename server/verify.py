"""Checking what a repository holds the way this server's hook would (for `gate approvals list`
and `gate attest export`).

The command line runs this on the server's own repository: the approvals it lists, and the
records it exports, are then verified with the installation's policy, keyring and
allowed-signers file, exactly as the pre-receive hook verifies them when a push relies on one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gatecore.adapters import config
from gatecore.adapters.gitrepo import GitRepo
from gatecore.errors import GateError
from gatecore.git.objects import Objects
from gatecore.trusted.approve import Verifier
from gatecore.trusted.attest import Sources

from . import installation
from .install import GATE_DIR_NAME, git_dir_of
from .prereceive import load_keyring, ssh_signers

if TYPE_CHECKING:
    from gatecore.configuration.policy import Policy
    from gatecore.git.gitmodel import GitReader
    from gatecore.reserved.approvalrefs import ApprovalContext


def approval_context(inst: installation.Installation, policy: Policy, objects: Objects,
                     repo: GitReader) -> ApprovalContext:
    """How this installation verifies approvals outside a push (`gate approvals list` on the
    server): its keyring, its allowed-signers file, the clock now."""
    import time

    from gatecore.reserved.approvalrefs import ApprovalContext

    return ApprovalContext(objects, policy, inst.repository_id, int(time.time()), repo.ref_target,
                           lambda: load_keyring(inst), ssh_signers(inst))


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


def attest_sources(repo: Path, keyring: Path | None, policy: Path | None, signers: Path | None,
                   repository_id: str | None) -> Sources:
    """What verifies the records `gate attest export` reads: the flags, else what the gate
    installed in `repo` (a server)."""
    gate_dir = git_dir_of(repo) / GATE_DIR_NAME
    inst = installation.read(gate_dir) if (gate_dir / installation.CONFIG_FILE).is_file() else None
    if inst is not None:
        keyring = keyring or (Path(inst.keyring) if inst.has_keyring else None)
        policy = policy or Path(inst.policy)
        signers = signers or (Path(inst.allowed_signers) if os.path.lexists(inst.allowed_signers) else None)
        repository_id = repository_id or inst.repository_id
    if not repository_id:
        raise GateError("GATE-ATTEST-CONFIG", f"{repo} is not a repository the gate is installed in: pass "
                                              "--repository-id (and --keyring, --policy)")
    return Sources(None if keyring is None else config.load_keyring(keyring, cached=False), repository_id,
                   None if policy is None else config.load_policy(policy, cached=False),
                   None if signers is None else config.load_allowed_signers(signers))
