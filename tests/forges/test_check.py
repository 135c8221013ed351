"""`gate check` on real repositories shaped like pull requests (docs/forges.md): a forge that runs
no hook (`support.forgerepo.PullRequests`: every push lands), the CI job's clone fetched from it,
and the check run on that clone as the forge files run it: in process (`support.cli`) where the
command's behaviour is tested, as a process where the installed entry point is.

Which commits a pull request answers for (its own, from the merge base with the target; a merge
group's, from the group's parent), which policy judges them (the target's, never the head's), what
a clone that cannot show the range gets, and the four output forms."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli import cli
from support.forgerepo import POLICY, PullRequests
from support.gitutil import AGENT, HUMAN, gate, git

from gatecore import codes

#: How a merge queue names itself on the merge commits it makes (GitHub's web-flow identity).
QUEUE = ("GitHub", "noreply@github.com")


@pytest.fixture(scope="module")
def prs(tmp_path_factory: pytest.TempPathFactory) -> PullRequests:
    return PullRequests(tmp_path_factory.mktemp("prs"))


def check(prs: PullRequests, *args: str, fmt: str = "json", **env: str) -> subprocess.CompletedProcess[str]:
    """`gate check --repo CI --format FMT ARGS`, in process, after the CI clone fetched."""
    prs.fetch()
    return cli("check", "--repo", str(prs.ci), "--format", fmt, *args, env=env or None)


def verdict(out: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    doc = json.loads(out.stdout)
    assert isinstance(doc, dict)
    return doc


def found(out: subprocess.CompletedProcess[str]) -> set[tuple[str, str | None]]:
    """(code, path) of every violation the JSON form lists."""
    return {(v["code"], v.get("path")) for v in verdict(out)["violations"]}


def pr(prs: PullRequests, head: str, target: str | None = None, *extra: str, fmt: str = "json", **env: str
       ) -> subprocess.CompletedProcess[str]:
    """A pull request onto main: its head, the target's tip as the event names it (default: now)."""
    return check(prs, "--head", head, "--target", target or prs.tip(), "--ref", "refs/heads/main", *extra, fmt=fmt,
                 **env)


def fresh(prs: PullRequests, prefix: str) -> str:
    prs.n += 1
    return f"{prefix}-{prs.n}"


# --- who wrote what ---------------------------------------------------------------------------

def test_an_agents_frozen_write_fails_the_check(prs: PullRequests) -> None:
    head = prs.branch(fresh(prs, "agent-ci"), {"app.py": "print(2)\n", "ci/deploy.yml": "deploy: v2\n"})
    out = pr(prs, head)
    assert out.returncode == 1, out.stderr
    doc = verdict(out)
    assert (doc["decision"], doc["exit"], doc["head"], doc["base"]) == ("reject", 1, head, prs.tip())
    [v] = doc["violations"]
    assert (v["code"], v["path"], v["rule"], v["commit"], v["identity"]) == (
        "GATE-FROZEN-PATH", "ci/deploy.yml", "freeze[0]", head, AGENT[1])


@pytest.mark.parametrize("kind", ["delete", "rename"])
def test_an_agents_indirect_frozen_write_fails_the_check(prs: PullRequests, kind: str) -> None:
    files: dict[str, str | None] = ({"ci/deploy.yml": None} if kind == "delete"
                                    else {"ci/deploy.yml": None, "deploy.yml": "deploy: v1\n"})
    out = pr(prs, prs.branch(fresh(prs, f"agent-{kind}"), files))
    assert out.returncode == 1 and ("GATE-FROZEN-PATH", "ci/deploy.yml") in found(out), out.stdout


def test_an_agents_change_without_a_frozen_write_passes(prs: PullRequests) -> None:
    out = pr(prs, prs.branch(fresh(prs, "agent-app"), {"app.py": "print(3)\n"}))
    assert out.returncode == 0, out.stdout + out.stderr
    assert verdict(out)["decision"] == "accept" and verdict(out)["violations"] == []


def test_a_humans_frozen_write_passes(prs: PullRequests) -> None:
    out = pr(prs, prs.branch(fresh(prs, "human-ci"), {"ci/deploy.yml": "deploy: v4\n"}, identity=HUMAN))
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_humans_frozen_write_in_an_agents_pull_request_is_not_the_agents(prs: PullRequests) -> None:
    """The commits are judged one by one, as in a push: the human's commit writes ci/, the agent's
    does not."""
    name = fresh(prs, "mixed")
    prs.branch(name, {"ci/deploy.yml": "deploy: v5\n"}, identity=HUMAN)
    head = prs.branch(name, {"app.py": "print(5)\n"}, start=name)
    assert pr(prs, head).returncode == 0


def test_the_forges_pusher_counts(prs: PullRequests) -> None:
    """A human's commit pushed by an agent's account (`--pusher`, github.actor): restricted."""
    head = prs.branch(fresh(prs, "pushed-by-agent"), {"ci/deploy.yml": "deploy: v6\n"}, identity=HUMAN)
    assert pr(prs, head).returncode == 0
    out = pr(prs, head, None, "--pusher", "agent-7")
    assert out.returncode == 1 and ("GATE-FROZEN-PATH", "ci/deploy.yml") in found(out)
    assert verdict(out)["violations"][0]["identity"] == "pusher:agent-7"


# --- which commits are the pull request's -----------------------------------------------------

def test_a_merge_group_is_judged_from_its_parent(prs: PullRequests) -> None:
    """The merge queue's commit: the target's tip merged with the pull request, made by the queue.
    `--merge-group --base <the group's parent>` judges what the group adds to it."""
    for identity, files, expected in ((AGENT, {"ci/deploy.yml": "deploy: queued\n"}, 1),
                                      (HUMAN, {"ci/deploy.yml": "deploy: queued by a human\n"}, 0),
                                      (AGENT, {"app.py": "print('queued')\n"}, 0)):
        head = prs.branch(fresh(prs, "queued"), files, identity=identity)
        parent = prs.tip()
        prs.work.git("checkout", "-q", "-f", "-B", "group", parent)
        prs.work.git("merge", "-q", "--no-ff", "--no-edit", head, identity=QUEUE)
        group = prs.work.head()
        prs.work.git("push", "-q", "-f", "origin", f"{group}:refs/heads/gh-readonly-queue/main/pr-{prs.n}")
        out = check(prs, "--head", group, "--base", parent, "--merge-group", "--ref", "refs/heads/main")
        assert out.returncode == expected, (files, out.stdout, out.stderr)
        assert verdict(out)["base"] == parent
        if expected:
            assert found(out) == {("GATE-FROZEN-PATH", "ci/deploy.yml")}  # the agent's commit, not the merge


def test_a_squashed_merge_group_is_judged_as_its_one_commit(prs: PullRequests) -> None:
    """A squash keeps the pull request's author: an agent's squashed frozen write fails."""
    parent = prs.tip()
    group = prs.branch(f"gh-readonly-queue/main/{fresh(prs, 'squash')}", {"ci/deploy.yml": "deploy: squashed\n"},
                       start=parent)
    out = check(prs, "--head", group, "--base", parent, "--merge-group", "--ref", "refs/heads/main")
    assert out.returncode == 1 and found(out) == {("GATE-FROZEN-PATH", "ci/deploy.yml")}


def test_a_merge_group_lands_on_its_base_not_on_a_merge_base(prs: PullRequests) -> None:
    head = prs.branch(fresh(prs, "mg-target"), {"app.py": "print(6)\n"})
    out = check(prs, "--head", head, "--target", prs.tip(), "--merge-group", "--ref", "refs/heads/main")
    assert out.returncode == codes.exit_code("GATE-INPUT-ARGUMENT") == 1  # the registry's class for the code
    assert "GATE-INPUT-ARGUMENT" in out.stderr and "--merge-group" in out.stderr


def test_a_force_pushed_head_is_judged_on_its_own_commits(prs: PullRequests) -> None:
    """The pull request's head rewritten: the run for the new head judges the new head's commits
    only; the old head's commits (still in the clone) are nobody's now. And the other way round."""
    name = fresh(prs, "rewritten")
    old = prs.branch(name, {"ci/deploy.yml": "deploy: first try\n"})
    assert pr(prs, old).returncode == 1
    new = prs.branch(name, {"app.py": "print('second try')\n"})  # from main again: a force push
    assert git(prs.ci, "cat-file", "-e", f"{old}^{{commit}}").returncode == 0
    out = pr(prs, new)
    assert out.returncode == 0, out.stdout
    # the reverse: a clean head rewritten into a frozen write
    name = fresh(prs, "rewritten")
    assert pr(prs, prs.branch(name, {"app.py": "print('clean')\n"})).returncode == 0
    out = pr(prs, prs.branch(name, {"ci/deploy.yml": "deploy: rewritten\n"}))
    assert out.returncode == 1 and ("GATE-FROZEN-PATH", "ci/deploy.yml") in found(out)


def test_a_head_whose_base_moved_answers_for_its_own_commits(prs: PullRequests) -> None:
    """After the branch point the target moved on: a human changed ci/ there, and (landed before the
    check was required) an agent did too. Neither is the pull request's: its base is the merge base."""
    fork = prs.tip()
    head = prs.branch(fresh(prs, "behind"), {"app.py": "print('behind')\n"}, start=fork)
    prs.advance({"ci/deploy.yml": "deploy: hardened\n"})
    prs.advance({"ci/deploy.yml": "deploy: agent, before the check\n"}, identity=AGENT)
    out = pr(prs, head)
    assert out.returncode == 0, out.stdout
    assert verdict(out)["base"] == fork
    # the agent brings the pull request up to date: a merge that takes the target's ci/ is no write
    prs.work.git("checkout", "-q", "-f", head)
    prs.work.git("merge", "-q", "--no-edit", prs.tip(), identity=AGENT)
    merged = prs.work.head()
    prs.work.git("push", "-q", "-f", "origin", f"{merged}:refs/heads/behind-merged-{prs.n}")
    out = pr(prs, merged)
    assert out.returncode == 0, out.stdout
    assert verdict(out)["base"] == prs.tip()
    # ...but one that keeps the stale ci/ over the human's change is a revert, and fails
    prs.work.git("checkout", "-q", "-f", head)
    prs.work.git("merge", "-q", "--no-commit", "-s", "ours", prs.tip(), identity=AGENT)
    prs.work.git("commit", "-q", "--no-edit", identity=AGENT)
    stale = prs.work.head()
    prs.work.git("push", "-q", "-f", "origin", f"{stale}:refs/heads/behind-stale-{prs.n}")
    out = pr(prs, stale)
    assert out.returncode == 1 and ("GATE-FROZEN-PATH", "ci/deploy.yml") in found(out), out.stdout


# --- which policy -----------------------------------------------------------------------------

UNFROZEN = POLICY.replace('paths = ["ci/**"]', 'paths = ["nothing/**"]')


def test_a_pull_request_that_unfreezes_its_own_write_is_judged_by_the_targets_policy(prs: PullRequests) -> None:
    head = prs.branch(fresh(prs, "unfreeze"), {".gate/policy.toml": UNFROZEN, "ci/deploy.yml": "deploy: free\n"})
    out = pr(prs, head)
    assert out.returncode == 1 and ("GATE-FROZEN-PATH", "ci/deploy.yml") in found(out), out.stdout
    assert verdict(out)["policy"] == f"{prs.tip()[:12]}:.gate/policy.toml"


def test_a_pull_request_from_before_a_freeze_is_judged_by_the_targets_policy_now(tmp_path: Path) -> None:
    """The target froze docs/ after the branch point: the agent's write there, in a branch from before,
    fails, as the hook (which holds the policy installed now) refuses its push. Read from the merge
    base, the policy of the branch point would let it through."""
    prs = PullRequests(tmp_path)
    head = prs.branch("old-branch", {"docs/guide.md": "agent's guide\n"})
    prs.advance({".gate/policy.toml": POLICY.replace('["ci/**"]', '["ci/**", "docs/**"]')})
    out = pr(prs, head)
    assert out.returncode == 1 and found(out) == {("GATE-FROZEN-PATH", "docs/guide.md")}, out.stdout
    assert verdict(out)["base"] == prs.base  # the merge base: what is judged
    assert verdict(out)["policy"] == f"{prs.tip()[:12]}:.gate/policy.toml"  # the target: what judges
    # given --base, the base is all there is to read (so the GitLab job never gives its diff base, the
    # branch point: tests/forges/test_ci_templates.py)
    out = check(prs, "--head", head, "--base", prs.base, "--ref", "refs/heads/main")
    assert out.returncode == 0 and verdict(out)["policy"] == f"{prs.base[:12]}:.gate/policy.toml"


def test_a_target_without_a_policy_is_a_configuration_error(tmp_path: Path) -> None:
    prs = PullRequests(tmp_path)
    prs.advance({".gate/policy.toml": None})
    out = pr(prs, prs.branch("any", {"app.py": "x\n"}), None)
    assert out.returncode == codes.exit_code("GATE-CONFIG-POLICY") == 2 and "GATE-CONFIG-POLICY" in out.stderr
    assert (verdict(out)["decision"], verdict(out)["code"]) == ("error", "GATE-CONFIG-POLICY")


# --- what the clone holds ---------------------------------------------------------------------

def test_a_clone_that_lacks_the_head_fails_incomplete(prs: PullRequests) -> None:
    """A fork's head the clone never fetched (it sits at refs/pull/N/head on the forge): the
    registry's exit for GATE-GIT-INCOMPLETE, a rejection (1), never a pass and never a crash (3)."""
    prs.work.git("checkout", "-q", "-f", "--detach", "main")
    prs.work.write("ci/deploy.yml", "from a fork\n")
    head = prs.work.commit("a fork's change", identity=AGENT)
    prs.work.git("push", "-q", "origin", f"{head}:refs/pull/7/head")
    out = pr(prs, head)
    assert out.returncode == codes.exit_code("GATE-GIT-INCOMPLETE") == 1, out.stderr
    assert "GATE-GIT-INCOMPLETE" in out.stderr and f"--head {head}" in out.stderr
    git(prs.ci, "fetch", "-q", "origin", head)  # as the action does: fetched by its id
    assert pr(prs, head).returncode == 1 and ("GATE-FROZEN-PATH", "ci/deploy.yml") in found(pr(prs, head))


@pytest.mark.parametrize("given", ["target", "base"])
def test_a_shallow_clone_that_cuts_the_range_fails_incomplete(tmp_path: Path, given: str) -> None:
    """A clone cut inside the range (fetch-depth 1) cannot show what the pull request did below the
    cut: an agent's deletion of a frozen file there is in no tree the clone holds. Refused, not
    passed (the boundary commit read as a root finds no deletion)."""
    prs = PullRequests(tmp_path)
    name = "cut"
    prs.branch(name, {"ci/deploy.yml": None})
    head = prs.branch(name, {"app.py": "print('after the deletion')\n"}, start=name)
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "-b", name, f"file://{prs.origin}", str(shallow))
    git(shallow, "fetch", "-q", "--depth", "1", "origin", "+refs/heads/main:refs/remotes/origin/main")
    side = ["--target", prs.tip()] if given == "target" else ["--base", prs.tip()]
    out = cli("check", "--repo", str(shallow), "--head", head, *side, "--ref", "refs/heads/main")
    assert out.returncode == 1 and "GATE-GIT-INCOMPLETE" in out.stderr, out.stdout + out.stderr
    git(shallow, "fetch", "-q", "--unshallow", "origin")
    out = cli("check", "--repo", str(shallow), "--head", head, *side, "--ref", "refs/heads/main")
    assert out.returncode == 1 and "GATE-FROZEN-PATH ref=refs/heads/main" in out.stdout, out.stdout + out.stderr


def test_a_shallow_clone_holding_the_whole_range_is_judged(prs: PullRequests, tmp_path: Path) -> None:
    """Shallow below the base is no gap: the base's history is not judged."""
    head = prs.branch(fresh(prs, "deep-enough"), {"ci/deploy.yml": "deploy: shallow\n"})
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{prs.origin}", str(shallow))
    git(shallow, "fetch", "-q", "--depth", "2", "origin", head)
    out = cli("check", "--repo", str(shallow), "--head", head, "--base", prs.tip(), "--ref", "refs/heads/main")
    assert out.returncode == 1 and "GATE-FROZEN-PATH ref=refs/heads/main" in out.stdout, out.stdout + out.stderr


# --- the output forms -------------------------------------------------------------------------

def test_text_is_the_hooks_report_after_what_was_judged(prs: PullRequests) -> None:
    head = prs.branch(fresh(prs, "text"), {"ci/deploy.yml": "deploy: text\n"})
    out = pr(prs, head, None, fmt="text")
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0] == (f"push-gate: judged {head} on refs/heads/main, from {prs.tip()} "
                        f"(policy {prs.tip()[:12]}:.gate/policy.toml): reject")
    assert lines[1] == "gate: change rejected: 1 violation"
    assert lines[2].startswith("GATE-FROZEN-PATH ref=refs/heads/main commit=")
    gate_json = [json.loads(ln.removeprefix("gate-json: ")) for ln in lines if ln.startswith("gate-json: ")]
    assert [(j["code"], j["path"], j["exit"]) for j in gate_json] == [("GATE-FROZEN-PATH", "ci/deploy.yml", 1)]


def test_github_annotations_and_the_job_summary(prs: PullRequests, tmp_path: Path) -> None:
    head = prs.branch(fresh(prs, "github"), {"ci/deploy.yml": "deploy: gh\n", "ci/extra.yml": "x\n"})
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step's summary\n")
    out = pr(prs, head, None, fmt="github", GITHUB_STEP_SUMMARY=str(summary))
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    annotations = sorted(ln for ln in lines if ln.startswith("::error "))
    assert [a.split(" reason=")[0] for a in annotations] == [
        f"::error title=GATE-FROZEN-PATH,file={path}::GATE-FROZEN-PATH ref=refs/heads/main commit={head[:12]} "
        f"identity={AGENT[1]} path={path} rule=freeze[0]" for path in ("ci/deploy.yml", "ci/extra.yml")]
    # the human lines follow, with workflow commands stopped: nothing a commit says is a command
    start = lines.index(next(ln for ln in lines if ln.startswith("::stop-commands::")))
    token = lines[start].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines[-1] == f"::{token}::"
    assert lines[start + 1].startswith(f"push-gate: judged {head}")
    text = summary.read_text()
    assert text.startswith("earlier step's summary\n## push-gate check\n")  # appended, never replaced
    assert "**Verdict: reject**" in text and text.count("| GATE-FROZEN-PATH |") == 2
    # --summary names the file where the environment does not
    other = tmp_path / "other.md"
    out = pr(prs, prs.branch(fresh(prs, "github-ok"), {"app.py": "x\n"}), None, "--summary", str(other), fmt="github")
    assert out.returncode == 0 and not [ln for ln in out.stdout.splitlines() if ln.startswith("::error")]
    assert "**Verdict: accept**" in other.read_text()


def test_gitlab_writes_its_report_on_a_pass_a_rejection_and_an_error(prs: PullRequests, tmp_path: Path) -> None:
    report = tmp_path / "gl-code-quality-report.json"
    args = ("--report", str(report))
    out = pr(prs, prs.branch(fresh(prs, "gitlab"), {"ci/deploy.yml": "deploy: gl\n"}), None, *args, fmt="gitlab")
    assert out.returncode == 1
    [issue] = json.loads(report.read_text())
    assert (issue["check_name"], issue["severity"], issue["location"]["path"]) == (
        "GATE-FROZEN-PATH", "blocker", "ci/deploy.yml")
    assert out.stdout.splitlines()[1] == "gate: change rejected: 1 violation"  # the human lines, for the log
    out = pr(prs, prs.branch(fresh(prs, "gitlab-ok"), {"app.py": "x\n"}), None, *args, fmt="gitlab")
    assert out.returncode == 0 and json.loads(report.read_text()) == []
    out = pr(prs, "0" * 40, None, *args, fmt="gitlab")  # an error: the report says so (a stale one would mislead)
    assert out.returncode == 1
    [issue] = json.loads(report.read_text())
    assert issue["check_name"] == "GATE-GIT-INCOMPLETE" and issue["location"]["path"] == "refs/heads/main"
    out = pr(prs, prs.tip(), None, fmt="gitlab")
    assert out.returncode == codes.exit_code("GATE-INPUT-ARGUMENT") and "--report" in out.stderr


def test_an_error_is_said_in_every_form(prs: PullRequests, tmp_path: Path) -> None:
    """A check that could not decide fails with its code's exit, and says why where the form's reader
    looks: JSON on stdout, an annotation and the job summary on GitHub."""
    missing = "1" * 40
    out = pr(prs, missing, None, fmt="json")
    assert out.returncode == 1
    assert verdict(out) == {"decision": "error", "exit": 1, "code": "GATE-GIT-INCOMPLETE", "ref": "refs/heads/main",
                            "detail": verdict(out)["detail"]}
    assert missing in verdict(out)["detail"]
    summary = tmp_path / "summary.md"
    out = pr(prs, missing, None, "--summary", str(summary), fmt="github")
    assert out.returncode == 1
    assert out.stdout.startswith("::error title=GATE-GIT-INCOMPLETE::GATE-GIT-INCOMPLETE: --head ")
    assert "**Verdict: error**" in summary.read_text() and "GATE-GIT-INCOMPLETE" in summary.read_text()


def test_a_bad_format_is_refused_before_anything_is_judged(prs: PullRequests) -> None:
    out = pr(prs, prs.tip(), None, fmt="sarif")
    assert out.returncode == codes.exit_code("GATE-INPUT-ARGUMENT") and "GATE-INPUT-ARGUMENT" in out.stderr
    assert out.stdout == ""


# --- the installed entry point ----------------------------------------------------------------

def test_the_command_as_a_process(prs: PullRequests, tmp_path: Path) -> None:
    """`gate check` as CI runs it: exit 1 with the report on a rejection, 0 on a pass, the job
    summary from $GITHUB_STEP_SUMMARY, and the configuration class (2) for a missing policy."""
    head = prs.branch(fresh(prs, "process"), {"ci/deploy.yml": "deploy: process\n"})
    passing = prs.branch(fresh(prs, "process-ok"), {"app.py": "x\n"})
    prs.fetch()
    common = ("check", "--repo", str(prs.ci), "--target", prs.tip(), "--ref", "refs/heads/main")
    out = gate(*common, "--head", head)
    assert out.returncode == 1 and "GATE-FROZEN-PATH ref=refs/heads/main" in out.stdout, out.stderr
    summary = tmp_path / "summary.md"
    out = gate(*common, "--head", passing, "--format", "github",
               env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "**Verdict: accept**" in summary.read_text()
    out = gate(*common, "--head", head, "--policy", str(tmp_path / "absent.toml"))
    assert out.returncode == 2 and "GATE-" in out.stderr


def test_every_repository_format(repo_format: Any, tmp_path: Path) -> None:
    """SHA-1 or SHA-256 objects, files or reftable refs (as the format tests' git makes them): the
    check reads the clone through git's plumbing, whatever libgit2 can open."""
    prs = PullRequests(tmp_path)
    agent = prs.branch("agent", {"ci/deploy.yml": "deploy: v2\n"})
    human = prs.branch("human", {"ci/deploy.yml": "deploy: v3\n"}, identity=HUMAN)
    assert len(agent) == repo_format.hexsz
    out = pr(prs, agent)
    assert out.returncode == 1 and found(out) == {("GATE-FROZEN-PATH", "ci/deploy.yml")}, out.stdout + out.stderr
    assert pr(prs, human).returncode == 0
