"""Two builds of different commits say different versions everywhere an admin looks (the failure
it guards against: every build said 0.1.0, so doctor called an older build's hook "this version"
and upgrade said "from 0.1.0 to 0.1.0"): `gate --version`, the hook's first lines, the audit line, doctor, and
upgrade's "from A to B". Each build is this project as a repository at one commit, its version
written by the build's own step (`python hatch_build.py`); the older one installs the gate, a
human pushes through its hook, and the newer one's doctor and upgrade take over."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support.gitutil import HUMAN, WorkRepo, git
from support.server import POLICY
from support.snapshot import project_repository


def build(tree: Path) -> str:
    """The build's version step in `tree` (writes gatecore/_build.py); the version it printed."""
    out = subprocess.run([sys.executable, "hatch_build.py"], cwd=tree, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def gate_of(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`gate ARGS` of the build in `tree` (its own gatecore, server and hooks)."""
    return subprocess.run([sys.executable, "-m", "gatecore.cli", *args], cwd=tree, capture_output=True, text=True)


def audit_versions(bare: Path) -> list[str]:
    lines = (bare / "gate" / "audit.log").read_text().splitlines()
    return [json.loads(line)["version"] for line in lines if json.loads(line)["event"] == "decision"]


def test_two_builds_of_different_commits_say_so_everywhere(tmp_path: Path) -> None:
    old_tree, new_tree = tmp_path / "old", tmp_path / "new"
    project_repository(old_tree)
    git(tmp_path, "clone", "-q", str(old_tree), str(new_tree))
    (new_tree / "README.md").write_text((new_tree / "README.md").read_text() + "\none more commit\n")
    git(new_tree, "commit", "-q", "-am", "one more commit")
    old, new = build(old_tree), build(new_tree)
    head = git(new_tree, "rev-parse", "HEAD").stdout.strip()
    assert old == "0.1.0"  # the commit that set VERSION: the release
    assert new == f"0.1.1.dev1+g{head[:12]}"  # one commit after it
    assert gate_of(old_tree, "--version").stdout == f"push-gate {old}\n"
    assert gate_of(new_tree, "--version").stdout == f"push-gate {new}\n"

    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    (tmp_path / "policy.toml").write_text(POLICY)
    out = gate_of(old_tree, "server", "install", str(bare), "--policy", str(tmp_path / "policy.toml"))
    assert out.returncode == 0 and f"installed push-gate {old} " in out.stdout, out.stdout + out.stderr
    assert f"(push-gate {old})" in (bare / "hooks" / "pre-receive").read_text().splitlines()[1]
    work = WorkRepo(tmp_path / "work")
    work.write("README", "hello\n")
    work.commit("base", identity=HUMAN)
    assert git(work.path, "push", f"file://{bare}", "main", check=False).returncode == 0
    assert audit_versions(bare) == [old]

    out = gate_of(new_tree, "server", "doctor", str(bare))
    assert out.returncode == 1
    assert (f"FAIL hook written by push-gate {old}, older than this environment's {new}: run gate server upgrade "
            f"{bare}") in out.stdout, out.stdout
    out = gate_of(new_tree, "server", "upgrade", str(bare))
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == f"upgraded from push-gate {old} to {new}", out.stdout
    work.write("README", "hello again\n")
    work.commit("second", identity=HUMAN)
    assert git(work.path, "push", f"file://{bare}", "main", check=False).returncode == 0
    assert audit_versions(bare) == [old, new]
    out = gate_of(new_tree, "server", "doctor", str(bare))
    assert f"ok   hook written by push-gate {new} (this version)" in out.stdout, out.stdout

    # rolled back: the older build's doctor sees a newer hook and says so
    out = gate_of(old_tree, "server", "doctor", str(bare))
    assert out.returncode == 1
    assert re.search(rf"FAIL hook written by push-gate {re.escape(new)}, newer than this environment's "
                     rf"{re.escape(old)} \(rolled back", out.stdout), out.stdout
    # and the older build's upgrade, the documented rollback, says that it rolled back (it said "upgraded")
    out = gate_of(old_tree, "server", "upgrade", str(bare), "--dry-run")
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == f"would roll back from push-gate {new} to {old}", \
        out.stdout
    out = gate_of(old_tree, "server", "upgrade", str(bare))
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == f"rolled back from push-gate {new} to {old}", \
        out.stdout
    out = gate_of(old_tree, "server", "upgrade", str(bare))
    assert out.stdout.splitlines()[-1] == f"re-installed push-gate {old} (the version already installed)", out.stdout
