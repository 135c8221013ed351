"""The receipt flow on a forge, where no hook runs (docs/forges.md, "The receipt flow on a forge"):
docs/ci-example.sh as written, against a repository without the gate's hook, standing in for a hosted
forge. The trusted side's pushes all land, and so does the incident's stale receipt, which the hook
refuses with GATE-BIND-MODEL: on a forge, the review is judged at the merge, by the check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.gitutil import ROOT

EXAMPLE = ROOT / "docs" / "ci-example.sh"
INSTALL = "gate server install server.git --policy policy.toml --keyring keyring.toml --repository-id demo/repo"


def test_without_a_hook_the_stale_receipt_lands(tmp_path: Path) -> None:
    script = EXAMPLE.read_text()
    assert script.count(INSTALL) == 1, "the example's install line changed: update this test"
    forge = tmp_path / "forge-example.sh"
    forge.write_text(script.replace(INSTALL, ": # a hosted forge: no pre-receive hook runs"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(["bash", str(forge), str(tmp_path / "w")], capture_output=True, text=True, env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "stale receipt ACCEPTED" in out.stderr
    server = tmp_path / "w" / "server.git"
    refs = subprocess.run(["git", "-C", str(server), "for-each-ref", "--format=%(refname)"], capture_output=True,
                          text=True, check=True).stdout.split()
    # on the forge now: the ledger (open, select-model, failover), the claim, and the stale review
    assert any(r.startswith("refs/gate/attempts/") for r in refs)
    assert any(r.startswith("refs/gate/generations/") for r in refs)
    assert any(r.startswith("refs/gate/receipts/") for r in refs)
    assert any(r.startswith("refs/heads/review/runner/") for r in refs)
    assert not (server / "gate").exists()
