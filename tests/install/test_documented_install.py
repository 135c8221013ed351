"""The documented install, upgrade and rollback path, run as written into a fresh environment made
with nothing but git and Python (the failures it guards against: `pip install push-gate` found no distribution, the docs
named two environments, docs/upgrading.md ran a bare `gate` under runuser, and every build said
0.1.0, so an upgrade read "from 0.1.0 to 0.1.0").

Two builds of this project, as a forge would hold it: the commit that set VERSION (the release,
0.1.0) and one commit after it (0.1.1.dev1+g...), each built to a wheel by `python -m build`.
The blocks of README.md, docs/servers.md and docs/upgrading.md run with bash, their placeholders
filled here: the environment `/opt/push-gate` and the hosting root `/srv/git` are temporary
directories, the repositories belong to the account running the tests (so `runuser -u git --`
is dropped), and `https://example.com/push-gate.git` is a bare repository on disk. The wheel's
smoke path (`.ci/wheel-smoke`: a human's push accepted, an agent's frozen write refused, `gate
explain`) runs from the environment the documented lines made. Needs the package index (pip
installs pygit2, pydantic, typer and cryptography into the fresh environment)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.docblocks import run_block
from support.gitutil import HUMAN, ROOT, WorkRepo, git
from support.server import POLICY
from support.snapshot import project_repository


def wheel_of(tree: Path, out: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), str(tree)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("builds")
    old_tree = root / "old"
    old_commit = project_repository(old_tree)
    forge = root / "forge" / "push-gate.git"  # the project's URL on a forge
    git(root, "clone", "-q", "--bare", str(old_tree), str(forge))
    new_tree = root / "new"
    git(root, "clone", "-q", str(forge), str(new_tree))
    (new_tree / "README.md").write_text((new_tree / "README.md").read_text() + "\none more commit\n")
    git(new_tree, "commit", "-q", "-am", "one more commit")
    git(new_tree, "push", "-q", "origin", "main")
    new_commit = git(new_tree, "rev-parse", "HEAD").stdout.strip()
    return {"old_wheel": wheel_of(old_tree, root / "dist-old"), "new_wheel": wheel_of(new_tree, root / "dist-new"),
            "old_commit": old_commit, "new_commit": new_commit, "forge": forge,
            "old": "0.1.0", "new": f"0.1.1.dev1+g{new_commit[:12]}"}


def test_the_documented_install_upgrade_and_rollback(tmp_path: Path, builds: dict[str, object]) -> None:
    env, srv = tmp_path / "opt" / "push-gate", tmp_path / "srv" / "git"
    old, new = str(builds["old"]), str(builds["new"])
    old_wheel, new_wheel = str(builds["old_wheel"]), str(builds["new_wheel"])
    admin = tmp_path / "admin"  # where the admin works: policy.toml, the wheels, the clone
    admin.mkdir()
    (admin / "policy.toml").write_text(POLICY)
    base = {"/opt/push-gate": str(env)}
    gate = env / "bin" / "gate"

    def version() -> str:
        return subprocess.run([str(gate), "--version"], capture_output=True, text=True, check=True).stdout.strip()

    # README and docs/servers.md, one block: the environment from the system's Python and the wheel
    # as `./dev build` leaves it in dist/ (its name as the build made it: no version in the block)
    (admin / "dist").mkdir()
    shutil.copy2(old_wheel, admin / "dist")
    out = run_block("admin-install", base, admin)
    assert out.stdout.strip().endswith(f"push-gate {old}"), out.stdout
    assert version() == f"push-gate {old}"
    # docs/servers.md: each other install source, each one checked by its version
    run_block("install-clone", {**base, "https://example.com/push-gate.git": f"file://{builds['forge']}"}, admin)
    assert version() == f"push-gate {new}"  # the clone's commit, one after the release
    # pip takes a git+ URL with a host only: file://localhost/PATH, as the block's text says for a local mirror
    assert "git+file://localhost/PATH" in (ROOT / "docs" / "servers.md").read_text()
    run_block("install-git-url", {**base, "https://example.com/push-gate.git": f"file://localhost{builds['forge']}",
                                  "COMMIT": str(builds["old_commit"])}, admin)
    assert version() == f"push-gate {old}"
    subprocess.run([str(ROOT / ".ci" / "wheel-smoke"), "--env", str(env)], check=True, capture_output=True)

    # two gated repositories under the hosting root, installed as docs/servers.md says
    srv.mkdir(parents=True)
    for name in ("project", "other"):
        git(srv, "init", "-q", "--bare", "-b", "main", f"{name}.git")
    hosting = {**base, "/srv/git": str(srv), "runuser -u git -- ": ""}
    run_block("install-repository", hosting, admin)
    subprocess.run([str(gate), "server", "install", str(srv / "other.git"), "--policy", "policy.toml"], cwd=admin,
                   check=True, capture_output=True)
    work = WorkRepo(tmp_path / "work")
    work.write("README", "hello\n")
    work.commit("base", identity=HUMAN)
    assert git(work.path, "push", f"file://{srv / 'project.git'}", "main", check=False).returncode == 0
    out = run_block("which-version", hosting, admin)
    assert out.stdout.splitlines()[0] == f"push-gate {old}"
    assert f"(push-gate {old})" in out.stdout and f'"version":"{old}"' in out.stdout, out.stdout

    # docs/upgrading.md: the package, then the hooks, then doctor, in that order
    run_block("upgrade-package", {**base, "./push_gate-0.1.1-py3-none-any.whl": new_wheel}, admin)
    assert version() == f"push-gate {new}"
    doctor = subprocess.run([str(gate), "server", "doctor", "--all", str(srv)], capture_output=True, text=True)
    assert doctor.returncode == 1 and f"hook written by push-gate {old}, older than this environment's {new}" \
        in doctor.stdout, doctor.stdout
    out = run_block("upgrade-hooks", hosting, admin)
    assert f"upgraded from push-gate {old} to {new}" in out.stdout, out.stdout
    run_block("upgrade-doctor", hosting, admin)
    assert git(work.path, "push", f"file://{srv / 'project.git'}", "main:side", check=False).returncode == 0
    last = json.loads((srv / "project.git" / "gate" / "audit.log").read_text().splitlines()[-2])
    assert last["event"] == "decision" and last["version"] == new

    # rolling back to the version that exists, from its kept wheel
    out = run_block("rollback", {**base, **hosting, "./push_gate-0.1.0-py3-none-any.whl": old_wheel}, admin)
    assert f"rolled back from push-gate {new} to {old}" in out.stdout, out.stdout
    assert version() == f"push-gate {old}"
    run_block("upgrade-doctor", hosting, admin)

    run_block("uninstall", hosting, admin)
    assert not (srv / "project.git" / "hooks" / "pre-receive").exists()
