"""The GitLab job's and the Bitbucket step's scripts, run as their runners run them (the script lines
as one shell script, the platform's variables in the environment: GitLab's for a merge request
pipeline and a merged results pipeline, Bitbucket's for a pull-request pipeline), on a real repository
shaped like a merge request, with push-gate installed the way the files demand: a wheel pinned by its
SHA-256 (`PUSH_GATE_SOURCE`).

What they judge (head, the other side, the ref) is checked from the line each prints before the check;
the verdicts need the engine's `gate check`, and skip, saying so, while the build has none."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.forgerepo import HOSTILE_MODULES, POLICY, Forge, PullRequests
from support.gitutil import ROOT, git

GITLAB = ROOT / "forges" / "gitlab" / "push-gate.gitlab-ci.yml"
BITBUCKET = ROOT / "forges" / "bitbucket" / "bitbucket-pipelines.yml"
REQUIREMENTS = ROOT / "forges" / "requirements.txt"


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """push-gate's wheel of this tree and the wheels forges/requirements.txt pins, fetched once: each
    script's own install then reads them alone (PIP_NO_INDEX), as quickly as a runner with a warm cache."""
    out = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(out), str(ROOT)], check=True, capture_output=True)
    assert len(list(out.glob("push_gate-*.whl"))) == 1
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--require-hashes", "--only-binary", ":all:",
                    "--no-deps", "--dest", str(out), "-r", str(REQUIREMENTS)], check=True, capture_output=True)
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


@dataclass
class Run:
    proc: subprocess.CompletedProcess[str]
    project: Path  # the checkout the script judged in
    head: str
    other: str  # the other side the script should choose


def start(script: str, cwd: Path, tmp: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    tmp.mkdir(parents=True, exist_ok=True)
    [wheel] = Path(env["PUSH_GATE_SOURCE"].split("file://", 1)[1].split("#", 1)[0]).parent.glob("push_gate-*.whl")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CI_", "GITLAB_", "BITBUCKET_", "PIP_"))}
    base.update({"TMPDIR": str(tmp), "CI": "true", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheel.parent),
                 "PUSH_GATE_REQUIREMENTS": str(REQUIREMENTS),
                 "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    return subprocess.Popen(["bash", "-c", script], cwd=cwd, env={**base, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def gitlab_env(project: Path, source: str, head: str, **extra: str) -> dict[str, str]:
    _, variables = gitlab_script()
    return {**variables, "PUSH_GATE_SOURCE": source, "PUSH_GATE_REQUIREMENTS": str(REQUIREMENTS),
            "CI_PROJECT_DIR": str(project),
            "CI_COMMIT_SHA": head, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_PROJECT_PATH": "acme/project",
            "GITLAB_USER_LOGIN": "agent-7", "CI_PIPELINE_SOURCE": "merge_request_event", **extra}


@pytest.fixture(scope="module")
def runs(forge: Forge, source: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """The three pipelines, each in a checkout of its own as its runner makes one, run at once (each
    makes its own environment and installs the gate into it: the slow part)."""
    root = tmp_path_factory.mktemp("pipelines")
    checkouts = {}
    for name in ("gitlab-mr", "gitlab-merged", "bitbucket"):
        checkouts[name] = root / name / "checkout"
        git(root, "clone", "-q", f"file://{forge.origin}", str(checkouts[name]))
        for rel in HOSTILE_MODULES:  # what a change could put in the checkout to be imported from there
            (checkouts[name] / rel).parent.mkdir(parents=True, exist_ok=True)
            (checkouts[name] / rel).write_text((forge.workspace / rel).read_text())
    merged = git(checkouts["gitlab-merged"], "commit-tree", "-p", forge.main, "-p", forge.human_head, "-m",
                 "merged result", f"{forge.human_head}^{{tree}}").stdout.strip()  # the merge GitLab makes
    git(checkouts["bitbucket"], "-c", "user.name=pipelines", "-c", "user.email=pipelines@example.com", "merge", "-q",
        "--no-edit", "origin/feature")  # Pipelines' local merge of the source into the destination
    script, _ = gitlab_script()
    plans = {
        "gitlab-mr": (script, gitlab_env(checkouts["gitlab-mr"], source, forge.agent_head, PUSH_GATE_LEDGER_REMOTE="origin",
                                         CI_MERGE_REQUEST_DIFF_BASE_SHA=forge.main), forge.agent_head, forge.main),
        "gitlab-merged": (script, gitlab_env(checkouts["gitlab-merged"], source, merged, PUSH_GATE_LEDGER_REMOTE="origin",
                                             CI_MERGE_REQUEST_DIFF_BASE_SHA=forge.main,
                                             CI_MERGE_REQUEST_TARGET_BRANCH_SHA=forge.main,
                                             CI_MERGE_REQUEST_EVENT_TYPE="merged_result",
                                             GITLAB_USER_LOGIN="hana"), merged, forge.main),  # the human's MR
        "bitbucket": (bitbucket_script(), {
            "PUSH_GATE_SOURCE": source, "PUSH_GATE_LEDGER_REMOTE": "origin", "BITBUCKET_CLONE_DIR": str(checkouts["bitbucket"]),
            "BITBUCKET_COMMIT": forge.agent_head, "BITBUCKET_PR_DESTINATION_BRANCH": "main",
            "BITBUCKET_PR_DESTINATION_COMMIT": forge.main[:12],  # it may come abbreviated
            "BITBUCKET_REPO_FULL_NAME": "acme/project", "BITBUCKET_PR_ID": "7"}, forge.agent_head, forge.main),
    }
    started = {name: start(script_, root / name if name != "bitbucket" else checkouts[name], root / name / "tmp", env)
               for name, (script_, env, _, _) in plans.items()}
    out = {}
    for name, popen in started.items():
        stdout, stderr = popen.communicate()
        proc = subprocess.CompletedProcess(popen.args, popen.returncode, stdout, stderr)
        out[name] = Run(proc, checkouts[name], plans[name][2], plans[name][3])
    return out


def judged(run: Run, forge: Forge, other: str) -> None:
    """The script judged `run.head` from `other` on main, installed the pinned wheel, fetched the
    ledger and imported nothing from the checkout; then, with `gate check` in the build, its verdict
    is the test's to check (else the test skips)."""
    proc = run.proc
    assert f"push-gate: judging {run.head} on refs/heads/main ({other} {run.other})" in proc.stdout, (
        proc.stdout + proc.stderr)
    assert proc.stdout.startswith("push-gate "), proc.stdout  # the pinned wheel's version
    assert git(run.project, "rev-parse", "refs/gate/attempts/A1").stdout.strip() == forge.ledger
    assert sorted(p.name for p in run.project.rglob("*.ran")) == []
    if "No such command 'check'" in proc.stderr:
        pytest.skip("`gate check` is not in this build yet: the verdict part of this test runs with it")


def test_gitlab_a_merge_request_pipeline_is_judged_from_the_targets_tip(forge: Forge, runs: dict[str, Run]) -> None:
    """Not from the diff base (CI_MERGE_REQUEST_DIFF_BASE_SHA, where the source branched): the policy
    is read from the other side, and the branch point is the author's choice (below)."""
    run = runs["gitlab-mr"]
    judged(run, forge, "--target")
    assert run.proc.returncode == 1, run.proc.stdout + run.proc.stderr
    assert "GATE-FROZEN-PATH" in (run.project / "gl-code-quality-report.json").read_text()


def test_gitlab_merged_results_judge_the_merge_from_the_target(forge: Forge, runs: dict[str, Run]) -> None:
    """In a merged results pipeline CI_COMMIT_SHA is the merge GitLab made, what would land."""
    run = runs["gitlab-merged"]
    judged(run, forge, "--target")
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr


def test_bitbucket_a_pull_request_is_judged_on_its_source_commit(forge: Forge, runs: dict[str, Run]) -> None:
    """The clone's HEAD is Pipelines' local merge; BITBUCKET_COMMIT is the source's head, and the
    destination commit, which may come abbreviated, is resolved in the clone."""
    run = runs["bitbucket"]
    judged(run, forge, "target")
    assert run.proc.returncode == 1, run.proc.stdout + run.proc.stderr
    assert "GATE-FROZEN-PATH" in run.proc.stdout + run.proc.stderr


@pytest.mark.parametrize("pipeline", ["merge-request", "merged-results-retried"])
def test_gitlab_a_merge_request_from_before_a_freeze_is_judged_by_the_targets_policy_now(
        source: str, tmp_path: Path, pipeline: str) -> None:
    """The source branch forked from main before main froze docs/: the hook, whose policy is the one
    installed now, refuses the agent's write there. The diff base (CI_MERGE_REQUEST_DIFF_BASE_SHA) is
    that fork point, which the merge request's author chose: read from it, the policy of the fork
    point would judge, so an agent could pick the policy it is judged by (any earlier one of main's).
    A merged results pipeline made before the freeze and retried after it keeps its variables: its
    CI_MERGE_REQUEST_TARGET_BRANCH_SHA is the target of then. The job judges from the target branch's
    tip, fetched."""
    (tmp_path / "mr").mkdir()
    prs = PullRequests(tmp_path / "mr")
    fork = prs.tip()
    head = prs.branch("old-branch", {"docs/guide.md": "agent's guide\n"})
    prs.advance({".gate/policy.toml": POLICY.replace('["ci/**"]', '["ci/**", "docs/**"]')})
    extra = {"CI_MERGE_REQUEST_DIFF_BASE_SHA": fork}
    if pipeline == "merged-results-retried":  # the merge GitLab made then, in the clone it fetched
        git(prs.ci, "fetch", "-q", "origin", head)
        head = git(prs.ci, "commit-tree", "-p", fork, "-p", head, "-m", "merged result",
                   f"{head}^{{tree}}").stdout.strip()
        extra.update(CI_MERGE_REQUEST_TARGET_BRANCH_SHA=fork, CI_MERGE_REQUEST_EVENT_TYPE="merged_result")
    script, _ = gitlab_script()
    popen = start(script, prs.ci, tmp_path / "tmp", gitlab_env(prs.ci, source, head, **extra))
    stdout, stderr = popen.communicate()
    assert f"push-gate: judging {head} on refs/heads/main (--target {prs.tip()})" in stdout, stdout + stderr
    assert popen.returncode == 1, stdout + stderr
    assert f"(policy {prs.tip()[:12]}:.gate/policy.toml): reject" in stdout, stdout
    [issue] = json.loads((prs.ci / "gl-code-quality-report.json").read_text())
    assert (issue["check_name"], issue["location"]["path"]) == ("GATE-FROZEN-PATH", "docs/guide.md")


def test_bitbucket_a_pull_request_is_judged_by_the_policy_of_its_destination_now(
        source: str, tmp_path: Path) -> None:
    """The destination froze docs/ after the commit BITBUCKET_PR_DESTINATION_COMMIT names (a pull
    request's destination commit is the one recorded for it, which need not follow the branch): the
    hook, whose policy is the one installed now, refuses the agent's write there. The step judges from
    the destination branch's tip, fetched."""
    (tmp_path / "pr").mkdir()
    prs = PullRequests(tmp_path / "pr")
    recorded = prs.tip()
    head = prs.branch("old-branch", {"docs/guide.md": "agent's guide\n"})
    prs.advance({".gate/policy.toml": POLICY.replace('["ci/**"]', '["ci/**", "docs/**"]')})
    prs.fetch()  # the clone Pipelines made for the pull request
    popen = start(bitbucket_script(), prs.ci, tmp_path / "tmp", {
        "PUSH_GATE_SOURCE": source, "BITBUCKET_CLONE_DIR": str(prs.ci), "BITBUCKET_COMMIT": head,
        "BITBUCKET_PR_DESTINATION_BRANCH": "main", "BITBUCKET_PR_DESTINATION_COMMIT": recorded[:12],
        "BITBUCKET_REPO_FULL_NAME": "acme/project", "BITBUCKET_PR_ID": "8"})
    stdout, stderr = popen.communicate()
    assert f"push-gate: judging {head} on refs/heads/main (target {prs.tip()})" in stdout, stdout + stderr
    assert popen.returncode == 1 and "GATE-FROZEN-PATH ref=refs/heads/main" in stdout, stdout + stderr


def test_gitlab_a_withdrawn_approval_is_gone_from_a_cached_clone(source: str, tmp_path: Path) -> None:
    """GitLab's runners keep the project's directory between jobs (GIT_STRATEGY fetch, GitLab's default;
    the template's job sets clone, which an admin's copy may not), so a job's clone holds the
    refs/gate/* an earlier job fetched. A maintainer's approval of an agent's
    frozen write, withdrawn on the ledger (only a trusted pusher deletes one), must not outlive there:
    the ledger's fetch prunes what the ledger no longer holds. And a job that names no ledger (the
    template's default) reads none: what the clone kept is deleted, and the approval does not count."""
    (tmp_path / "pr").mkdir()
    key = tmp_path / "approval-key"
    made = cli("keys", "generate", "--alg", "ed25519", "--id", "approval", "--purpose", "approval", "--out", str(key))
    assert made.returncode == 0, made.stderr
    prs = PullRequests(tmp_path / "pr", policy=POLICY + '[approvals]\napprovers = ["alice"]\n',
                       files={".gate/keyring.toml": made.stdout})
    base = prs.tip()
    head = prs.branch("agent", {"ci/deploy.yml": "deploy: approved\n"})
    approved = cli("approve", "--repository-id", "acme/project", "--ref", "refs/heads/main", "--old", base, "--new",
                   head, "--path", "ci/deploy.yml", "--approver", "alice", "--key", str(key), "--yes",
                   "--repo", str(prs.work.path), "--remote", "origin")
    assert approved.returncode == 0, approved.stdout + approved.stderr
    [approval] = git(prs.origin, "for-each-ref", "--format=%(refname)", "refs/gate/approvals/").stdout.split()
    script, _ = gitlab_script()

    def job(n: int, ledger: str = "origin") -> subprocess.CompletedProcess[str]:
        popen = start(script, prs.ci, tmp_path / f"tmp{n}", gitlab_env(prs.ci, source, head,
                                                                       PUSH_GATE_LEDGER_REMOTE=ledger))
        stdout, stderr = popen.communicate()
        return subprocess.CompletedProcess(popen.args, popen.returncode, stdout, stderr)

    first = job(1)
    assert first.returncode == 0, first.stdout + first.stderr  # approved
    unnamed = job(2, ledger=gitlab_script()[1]["PUSH_GATE_LEDGER_REMOTE"])  # the template's default: none
    assert git(prs.ci, "for-each-ref", "refs/gate/").stdout == "", unnamed.stdout
    assert unnamed.returncode == 1 and "GATE-FROZEN-PATH" in unnamed.stdout, unnamed.stdout + unnamed.stderr
    assert job(3).returncode == 0  # named again: fetched again, approved
    git(prs.origin, "update-ref", "-d", approval)  # withdrawn
    second = job(4)  # the same directory, as the runner keeps it
    assert git(prs.ci, "rev-parse", "-q", "--verify", approval, check=False).returncode != 0, second.stdout
    assert second.returncode == 1 and "GATE-FROZEN-PATH" in second.stdout, second.stdout + second.stderr
