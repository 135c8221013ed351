"""The GitLab job's and the Bitbucket step's scripts, run as their runners run them (the script lines
as one shell script, the platform's variables in the environment: GitLab's for a merge request
pipeline and a merged results pipeline, Bitbucket's for a pull-request pipeline), on a real repository
shaped like a merge request, with push-gate installed the way the files demand: a wheel pinned by its
SHA-256 (`PUSH_GATE_SOURCE`).

What they judge (head, the other side, the ref) is checked from the line each prints before the check;
the verdicts need the engine's `gate check`, and skip, saying so, while the build has none."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.forgerepo import Forge, make_forge
from support.gitutil import ROOT, git

GITLAB = ROOT / "forges" / "gitlab" / "push-gate.gitlab-ci.yml"
BITBUCKET = ROOT / "forges" / "bitbucket" / "bitbucket-pipelines.yml"


@pytest.fixture(scope="module")
def forge(tmp_path_factory: pytest.TempPathFactory) -> Forge:
    return make_forge(tmp_path_factory.mktemp("forge"))


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """push-gate's wheel of this tree and the wheels it depends on, fetched once: each script's own
    install then reads them alone (PIP_NO_INDEX), as quickly as a runner with a warm cache."""
    out = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(out), str(ROOT)], check=True, capture_output=True)
    [wheel] = out.glob("push_gate-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(out), str(wheel)], check=True,
                   capture_output=True)
    return out


@pytest.fixture(scope="module")
def source(wheelhouse: Path) -> str:
    """push-gate as a wheel, pinned by its hash, as PUSH_GATE_SOURCE must be."""
    [wheel] = wheelhouse.glob("push_gate-*.whl")
    return f"push-gate @ file://{wheel}#sha256={hashlib.sha256(wheel.read_bytes()).hexdigest()}"


def gitlab_script() -> tuple[str, dict[str, str]]:
    doc: dict[str, Any] = yaml.safe_load(GITLAB.read_text())
    return "\n".join(doc[".push-gate"]["script"]), {k: str(v) for k, v in doc["variables"].items()}


def bitbucket_script() -> str:
    doc: dict[str, Any] = yaml.safe_load(BITBUCKET.read_text())
    return "\n".join(doc["definitions"]["steps"][0]["step"]["script"])


def run(script: str, cwd: Path, tmp: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    tmp.mkdir(parents=True, exist_ok=True)
    [wheel] = Path(env["PUSH_GATE_SOURCE"].split("file://", 1)[1].split("#", 1)[0]).parent.glob("push_gate-*.whl")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CI_", "GITLAB_", "BITBUCKET_", "PIP_"))}
    base.update({"TMPDIR": str(tmp), "CI": "true", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheel.parent),
                 "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    return subprocess.run(["bash", "-c", script], cwd=cwd, env={**base, **env}, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def gitlab_env(forge: Forge, source: str, head: str, **extra: str) -> dict[str, str]:
    _, variables = gitlab_script()
    return {**variables, "PUSH_GATE_SOURCE": source, "CI_PROJECT_DIR": str(forge.workspace),
            "CI_COMMIT_SHA": head, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_PROJECT_PATH": "acme/project",
            "GITLAB_USER_LOGIN": "agent-7", "CI_PIPELINE_SOURCE": "merge_request_event", **extra}


def reached_the_check(proc: subprocess.CompletedProcess[str]) -> bool:
    """Whether the script got as far as `gate check` (a build without it says "No such command")."""
    return "No such command 'check'" not in proc.stderr


def test_gitlab_a_merge_request_pipeline_is_judged_from_the_diff_base(forge: Forge, source: str,
                                                                      tmp_path: Path) -> None:
    git(forge.workspace, "update-ref", "-d", "refs/gate/attempts/A1", check=False)
    script, _ = gitlab_script()
    proc = run(script, tmp_path, tmp_path / "tmp", gitlab_env(forge, source, forge.agent_head,
                                                              CI_MERGE_REQUEST_DIFF_BASE_SHA=forge.main))
    assert f"push-gate: judging {forge.agent_head} on refs/heads/main (--base {forge.main})" in proc.stdout, (
        proc.stdout + proc.stderr)
    assert proc.stdout.startswith("push-gate "), proc.stdout  # gate --version of the pinned wheel
    assert git(forge.workspace, "rev-parse", "refs/gate/attempts/A1").stdout.strip() == forge.ledger
    assert sorted(p.name for p in forge.workspace.rglob("*.ran")) == []  # nothing imported from the checkout
    if not reached_the_check(proc):
        pytest.skip("`gate check` is not in this build yet: the verdict part of this test runs with it")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = (forge.workspace / "gl-code-quality-report.json").read_text()
    assert "GATE-FROZEN-PATH" in report


def test_gitlab_merged_results_judge_the_merge_from_the_target(forge: Forge, source: str, tmp_path: Path) -> None:
    """In a merged results pipeline CI_COMMIT_SHA is the merge GitLab made, what would land."""
    merged = git(forge.workspace, "commit-tree", "-p", forge.main, "-p", forge.human_head, "-m", "merged result",
                 f"{forge.human_head}^{{tree}}").stdout.strip()
    script, _ = gitlab_script()
    proc = run(script, tmp_path, tmp_path / "tmp", gitlab_env(
        forge, source, merged, CI_MERGE_REQUEST_DIFF_BASE_SHA=forge.main,
        CI_MERGE_REQUEST_TARGET_BRANCH_SHA=forge.main, CI_MERGE_REQUEST_EVENT_TYPE="merged_result"))
    assert f"push-gate: judging {merged} on refs/heads/main (--target {forge.main})" in proc.stdout, (
        proc.stdout + proc.stderr)
    if not reached_the_check(proc):
        pytest.skip("`gate check` is not in this build yet: the verdict part of this test runs with it")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bitbucket_a_pull_request_is_judged_on_its_source_commit(forge: Forge, source: str, tmp_path: Path) -> None:
    """The clone's HEAD is Pipelines' local merge; BITBUCKET_COMMIT is the source's head. The
    destination commit may come abbreviated: it is resolved in the clone."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", f"file://{forge.origin}", str(clone))
    git(clone, "-c", "user.name=pipelines", "-c", "user.email=pipelines@example.com", "merge", "-q", "--no-edit",
        "origin/feature")
    env = {"PUSH_GATE_SOURCE": source, "BITBUCKET_CLONE_DIR": str(clone), "BITBUCKET_COMMIT": forge.agent_head,
           "BITBUCKET_PR_DESTINATION_BRANCH": "main", "BITBUCKET_PR_DESTINATION_COMMIT": forge.main[:12],
           "BITBUCKET_REPO_FULL_NAME": "acme/project", "BITBUCKET_PR_ID": "7"}
    proc = run(bitbucket_script(), clone, tmp_path / "tmp", env)
    assert f"push-gate: judging {forge.agent_head} on refs/heads/main (target {forge.main})" in proc.stdout, (
        proc.stdout + proc.stderr)
    if not reached_the_check(proc):
        pytest.skip("`gate check` is not in this build yet: the verdict part of this test runs with it")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "GATE-FROZEN-PATH" in proc.stdout + proc.stderr
