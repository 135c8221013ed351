"""forges/github/action.yml's steps, run in order with bash as GitHub's runner runs them
(tests/support/ghactions.py), on real repositories shaped like a pull request: an `origin` bare
repository as the forge, a clone of it as actions/checkout leaves it (fetch-depth 0).

The install step builds the gate from the action's own tree, as a composite action gets it (the
whole repository at the pinned commit); the range step's choices (what is judged, per event) and
fetches are checked here, and the check step's verdicts with the installed `gate check` (those tests
skip, saying so, on a build without the command).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.forgerepo import POLICY, Forge, make_forge
from support.ghactions import Runner, install_action_tree, load_action
from support.gitutil import HUMAN, ROOT, WorkRepo, git

ACTION = ROOT / "forges" / "github" / "action.yml"
@pytest.fixture(scope="module")
def action_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sha = git(ROOT, "rev-parse", "HEAD").stdout.strip()
    return install_action_tree(tmp_path_factory.mktemp("runner") / "_actions" / "OWNER" / "push-gate" / sha)


@pytest.fixture(scope="module")
def python_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What actions/setup-python leaves on PATH: a python3 of 3.11 or newer."""
    bin_dir = tmp_path_factory.mktemp("setup-python")
    (bin_dir / "python3").symlink_to(sys.executable)
    return bin_dir


def make_runner(forge: Forge, action_path: Path, python_bin: Path, temp: Path, event_name: str,
                event: dict[str, object], **inputs: str) -> Runner:
    temp.mkdir(parents=True, exist_ok=True)
    return Runner(load_action(ACTION), action_path, forge.workspace, temp, event_name, event,
                  inputs=inputs, path_prepend=[str(python_bin)],
                  action_ref=action_path.parent.parent.name)  # uses: OWNER/push-gate/forges/github@SHA


def pull_request(head: str, base: str, head_ref: str = "feature", base_ref: str = "main") -> dict[str, object]:
    return {"action": "synchronize", "number": 7,
            "pull_request": {"head": {"sha": head, "ref": head_ref}, "base": {"sha": base, "ref": base_ref}}}


@pytest.fixture(scope="module")
def installed(forge: Forge, action_path: Path, python_bin: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.CompletedProcess[str]]]:
    """The install step, run once: pip installs the gate from the action's own tree."""
    runner = make_runner(forge, action_path, python_bin, tmp_path_factory.mktemp("install"), "pull_request",
                         pull_request(forge.agent_head, forge.main))
    proc = runner.run("install")
    yield runner.outputs["install"].get("gate", ""), proc


def test_every_expression_is_one_the_evaluator_knows(forge: Forge, action_path: Path, python_bin: Path,
                                                      tmp_path: Path) -> None:
    runner = make_runner(forge, action_path, python_bin, tmp_path, "pull_request", pull_request("a", "b"))
    exprs = runner.expressions()
    assert len(exprs) > 20
    for expr in exprs:
        runner.known(expr)


def test_the_install_step_builds_the_gate_from_the_actions_own_tree(forge: Forge, installed: tuple[str, subprocess.CompletedProcess[str]]) -> None:
    gate, proc = installed
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert Path(gate).is_file() and "/push-gate." in gate
    sha = git(ROOT, "rev-parse", "HEAD").stdout.strip()  # the action tree is pinned to it (fixture action_path)
    assert proc.stdout.strip().endswith(f".dev0+g{sha[:12]}"), proc.stdout  # the version names the pinned commit
    version = subprocess.run([gate, "--version"], capture_output=True, text=True, check=True).stdout
    assert version == proc.stdout
    # nothing the pull request put in the checkout ran: the steps run in $RUNNER_TEMP, with python -I
    assert sorted(p.name for p in forge.workspace.rglob("*.ran")) == []


def test_the_hazard_the_install_step_avoids_is_real(forge: Forge, tmp_path: Path) -> None:
    """`python3 -m venv` run in the checkout imports the pull request's venv/ package."""
    copy = tmp_path / "ws"
    (copy / "venv").mkdir(parents=True)
    (copy / "venv" / "__init__.py").write_text((forge.workspace / "venv" / "__init__.py").read_text())
    subprocess.run([sys.executable, "-m", "venv", "--help"], cwd=copy, capture_output=True)
    assert (copy / "venv" / "__init__.ran").exists()


def run_range(forge: Forge, action_path: Path, python_bin: Path, tmp_path: Path, event_name: str,
              event: dict[str, object], **inputs: str) -> tuple[Runner, subprocess.CompletedProcess[str]]:
    runner = make_runner(forge, action_path, python_bin, tmp_path, event_name, event, **inputs)
    return runner, runner.run("range")


def test_a_pull_request_is_judged_from_its_base_sha_on_its_base_branch(forge: Forge, action_path: Path,
                                                                      python_bin: Path, tmp_path: Path) -> None:
    git(forge.workspace, "update-ref", "-d", "refs/gate/attempts/A1", check=False)
    runner, proc = run_range(forge, action_path, python_bin, tmp_path, "pull_request",
                             pull_request(forge.agent_head, forge.main), **{"ledger-remote": "origin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = runner.outputs["range"]
    assert (out["head"], out["target"], out["base"], out["ref"], out["merge-group"], out["review"]) == (
        forge.agent_head, forge.main, "", "refs/heads/main", "", "")
    assert out["repo"] == str(forge.workspace)
    assert f"judging {forge.agent_head} on refs/heads/main" in proc.stdout
    # the ledger came with it: refs/gate/* fetched from the remote named (here the forge itself)
    assert git(forge.workspace, "rev-parse", "refs/gate/attempts/A1").stdout.strip() == forge.ledger


def test_with_no_ledger_remote_named_no_ledger_is_read_and_a_review_fails(forge: Forge, action_path: Path,
                                                                          python_bin: Path, tmp_path: Path) -> None:
    """The default names no ledger: refs/gate/* on the pull request's own repository are anyone's with
    write access (docs/forges.md, "The receipt flow"). None is fetched, what a kept workspace holds from
    an earlier run is deleted (approvals there no longer count), and a pull request from
    review/runner/<id>, whose receipt only a ledger can judge, fails as a configuration error."""
    git(forge.workspace, "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*")  # left by an earlier run
    assert git(forge.workspace, "rev-parse", "refs/gate/attempts/A1").stdout.strip() == forge.ledger
    git(forge.workspace, "symbolic-ref", "refs/gate/odd", "refs/heads/main")  # (deleted itself, not main)
    main = git(forge.workspace, "rev-parse", "refs/heads/main").stdout
    _, proc = run_range(forge, action_path, python_bin, tmp_path / "plain", "pull_request",
                        pull_request(forge.agent_head, forge.main))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(forge.workspace, "for-each-ref", "refs/gate/").stdout == ""
    assert git(forge.workspace, "rev-parse", "refs/heads/main").stdout == main
    _, proc = run_range(forge, action_path, python_bin, tmp_path / "review", "pull_request",
                        pull_request(forge.agent_head, forge.main, head_ref="review/runner/A1"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ("::error title=push-gate::the pull request is from review/runner/A1: its receipt is judged against the "
            "ledger, and no ledger-remote is named") in proc.stdout
    assert "judging" not in proc.stdout


def test_the_commit_judged_is_the_one_the_event_names_not_the_branch_tip(forge: Forge, action_path: Path,
                                                                        python_bin: Path, tmp_path: Path) -> None:
    """A pull request's head as an API reports it can lag its branch: the action never asks; it
    judges the commit this run was started for (and to which its result is attached)."""
    runner, proc = run_range(forge, action_path, python_bin, tmp_path, "pull_request",
                             pull_request(forge.older_head, forge.main))
    assert proc.returncode == 0, proc.stderr
    assert runner.outputs["range"]["head"] == forge.older_head != forge.agent_head


def test_a_forks_head_missing_from_the_checkout_is_fetched_by_its_id(forge: Forge, action_path: Path,
                                                                     python_bin: Path, tmp_path: Path) -> None:
    assert git(forge.workspace, "cat-file", "-e", f"{forge.fork_head}^{{commit}}", check=False).returncode != 0
    runner, proc = run_range(forge, action_path, python_bin, tmp_path, "pull_request",
                             pull_request(forge.fork_head, forge.main, head_ref="patch-1"))
    assert proc.returncode == 0, proc.stderr
    assert git(forge.workspace, "cat-file", "-e", f"{forge.fork_head}^{{commit}}", check=False).returncode == 0
    assert runner.outputs["range"]["head"] == forge.fork_head


def test_a_merge_group_is_judged_from_its_base_branchs_tip(forge: Forge, action_path: Path, python_bin: Path,
                                                           tmp_path: Path) -> None:
    """The first entry of a queue: its base_sha is the branch's tip (behind another entry it is not: below)."""
    event = {"action": "checks_requested",
             "merge_group": {"head_sha": forge.agent_head, "head_ref": "refs/heads/gh-readonly-queue/main/pr-7-x",
                             "base_sha": forge.main, "base_ref": "refs/heads/main"}}
    runner, proc = run_range(forge, action_path, python_bin, tmp_path, "merge_group", event)
    assert proc.returncode == 0, proc.stderr
    out = runner.outputs["range"]
    assert (out["head"], out["base"], out["target"], out["ref"], out["merge-group"]) == (
        forge.agent_head, forge.main, "", "refs/heads/main", "true")


def test_a_pull_request_from_a_review_branch_also_judges_the_review_ref(forge: Forge, action_path: Path,
                                                                       python_bin: Path, tmp_path: Path) -> None:
    event = pull_request(forge.review_head, forge.main, head_ref="review/runner/A1")
    runner, proc = run_range(forge, action_path, python_bin, tmp_path / "auto", "pull_request", event,
                             **{"ledger-remote": "origin"})
    assert proc.returncode == 0, proc.stderr
    assert runner.outputs["range"]["review"] == "refs/heads/review/runner/A1"
    runner, proc = run_range(forge, action_path, python_bin, tmp_path / "off", "pull_request", event, review="false")
    assert proc.returncode == 0 and runner.outputs["range"]["review"] == ""


def test_an_event_that_names_no_change_is_a_configuration_error(forge: Forge, action_path: Path,
                                                                python_bin: Path, tmp_path: Path) -> None:
    runner, proc = run_range(forge, action_path, python_bin, tmp_path / "push", "push",
                             {"before": forge.main, "after": forge.agent_head})
    assert proc.returncode == 2
    assert "::error title=push-gate::no head to judge: on a push event, give the input head" in proc.stdout
    runner, proc = run_range(forge, action_path, python_bin, tmp_path / "given", "push", {},
                             head=forge.agent_head, base=forge.main, ref="refs/heads/main")
    assert proc.returncode == 0, proc.stderr
    assert (runner.outputs["range"]["head"], runner.outputs["range"]["base"]) == (forge.agent_head, forge.main)


# --- the check step: needs the engine's `gate check` --------------------------------------------------

@pytest.fixture(scope="module")
def gate_check(installed: tuple[str, subprocess.CompletedProcess[str]]) -> str:
    gate, proc = installed
    assert proc.returncode == 0, proc.stderr
    probe = subprocess.run([gate, "check", "--help"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"`gate check` is not in this build yet (`gate check --help` exits {probe.returncode}): "
                    "the engine's command comes separately; these tests run the action's check step with it")
    return gate


def run_check(forge: Forge, action_path: Path, python_bin: Path, tmp_path: Path, gate: str, event_name: str,
              event: dict[str, object], **inputs: str) -> tuple[Runner, subprocess.CompletedProcess[str]]:
    runner, proc = run_range(forge, action_path, python_bin, tmp_path, event_name, event, **inputs)
    assert proc.returncode == 0, proc.stderr
    runner.outputs["install"] = {"gate": gate}
    return runner, runner.run("check")


def test_an_agents_frozen_write_fails_the_check_with_annotations(forge: Forge, action_path: Path, python_bin: Path,
                                                                 tmp_path: Path, gate_check: str) -> None:
    runner, proc = run_check(forge, action_path, python_bin, tmp_path, gate_check, "pull_request",
                             pull_request(forge.agent_head, forge.main))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert runner.outputs["check"]["exit-code"] == "1"
    assert "::error title=GATE-FROZEN-PATH,file=ci/deploy.yml::" in proc.stdout
    assert "GATE-FROZEN-PATH" in runner.summary.read_text()


def test_a_humans_frozen_write_passes_the_check(forge: Forge, action_path: Path, python_bin: Path,
                                                tmp_path: Path, gate_check: str) -> None:
    runner, proc = run_check(forge, action_path, python_bin, tmp_path, gate_check, "pull_request",
                             pull_request(forge.human_head, forge.main, head_ref="human"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert runner.outputs["check"]["exit-code"] == "0"


def test_a_merge_group_with_an_agents_frozen_write_fails(forge: Forge, action_path: Path, python_bin: Path,
                                                         tmp_path: Path, gate_check: str) -> None:
    event = {"merge_group": {"head_sha": forge.agent_head, "base_sha": forge.main, "base_ref": "refs/heads/main",
                             "head_ref": "refs/heads/gh-readonly-queue/main/pr-7-x"}}
    runner, proc = run_check(forge, action_path, python_bin, tmp_path, gate_check, "merge_group", event)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert runner.outputs["check"]["exit-code"] == "1" and "GATE-FROZEN-PATH" in runner.summary.read_text()


def test_a_pull_request_is_judged_by_the_policy_of_its_base_branch_now(action_path: Path, python_bin: Path,
                                                                      tmp_path: Path, gate_check: str) -> None:
    """pull_request.base.sha can be as old as the pull request (GitHub sets it when the pull request is
    opened or synchronized, and it does not follow the base branch): the base branch froze app.py
    since, and the agent's write there is refused by the hook, whose policy is the one installed now.
    Read from base.sha, the policy of then would judge; the action judges from the base branch's tip."""
    (tmp_path / "forge").mkdir()
    forge = make_forge(tmp_path / "forge")
    work = WorkRepo(tmp_path / "forge" / "work")
    work.git("checkout", "-q", "-f", "main")
    work.write(".gate/policy.toml", POLICY.replace('["ci/**"]', '["ci/**", "app.py"]'))
    tip = work.commit("freeze app.py", identity=HUMAN)
    work.git("push", "-q", str(forge.origin), "main")
    git(forge.workspace, "fetch", "-q", "origin")  # the checkout, made for this run
    runner, proc = run_check(forge, action_path, python_bin, tmp_path / "run", gate_check, "pull_request",
                             pull_request(forge.older_head, forge.main))  # base.sha: main before the freeze
    assert runner.outputs["range"]["target"] == tip, proc.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "::error title=GATE-FROZEN-PATH,file=app.py::" in proc.stdout


def test_a_merge_group_behind_another_answers_for_what_it_lands(action_path: Path, python_bin: Path,
                                                                tmp_path: Path, gate_check: str) -> None:
    """The second entry of a merge queue: its group is built on the first entry's group, whose head is its
    `base_sha` ("the merge group's parent commit"), not on the target branch. Where the queue may merge
    a group whose head passed although an entry before it failed ("Require all queue entries to pass
    required checks" off), the second group lands the first's commits too: an agent's frozen write there
    (its pull request's check green from before a freeze, say) lands with a human's clean change behind
    it. Judged from base_sha, the second group answers for its own merge only and passes; the action
    judges every group from the target branch's tip, fetched, as the hook judges the push that lands it."""
    (tmp_path / "forge").mkdir()
    forge = make_forge(tmp_path / "forge")
    work = WorkRepo(tmp_path / "forge" / "work")
    queue = ("GitHub", "noreply@github.com")
    first = work.git("commit-tree", "-p", forge.main, "-p", forge.agent_head, "-m", "Merge pull request #7",
                     f"{forge.agent_head}^{{tree}}").stdout.strip()  # main + the agent's pull request
    work.git("checkout", "-q", "-f", "-B", "docs", forge.main)
    work.write("docs.md", "a human's page\n")
    human = work.commit("human: docs", identity=HUMAN)
    work.git("checkout", "-q", "-f", "-B", "group", first)
    work.git("merge", "-q", "--no-ff", "--no-edit", human, identity=queue)
    second = work.git("rev-parse", "HEAD").stdout.strip()
    work.git("push", "-q", str(forge.origin), f"{first}:refs/heads/gh-readonly-queue/main/pr-7-{forge.main}",
             f"{second}:refs/heads/gh-readonly-queue/main/pr-8-{first}")
    git(forge.workspace, "fetch", "-q", "origin")
    event = {"action": "checks_requested",
             "merge_group": {"head_sha": second, "base_sha": first, "base_ref": "refs/heads/main",
                             "head_ref": f"refs/heads/gh-readonly-queue/main/pr-8-{first}"}}
    runner, proc = run_check(forge, action_path, python_bin, tmp_path / "run", gate_check, "merge_group", event)
    assert runner.outputs["range"]["base"] == forge.main, proc.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "::error title=GATE-FROZEN-PATH,file=ci/deploy.yml::" in proc.stdout


@pytest.mark.xfail(strict=True, reason="a required check knows one account per run, github.actor: an agent's push "
                                       "that a human's event follows (a reopen, 'Update branch', a commit on top) is "
                                       "judged as the human's push, so a pushers rule alone cannot hold on a forge "
                                       "(docs/forges.md, 'What changes from the hook': restrict by what commits carry)")
def test_an_agents_push_is_not_laundered_by_a_humans_later_event(forge: Forge, action_path: Path, python_bin: Path,
                                                                 tmp_path: Path, gate_check: str) -> None:
    """The agent's account pushes a commit that names the human as its author and committer, writing
    ci/ (the hook refuses the push: `pushers = ["agent-*"]` names agent-7). The run for that push,
    whose actor is agent-7, fails; the human then reopens the pull request, and that run's actor is
    the human: the same head passes."""
    work = WorkRepo(forge.workspace.parent / "work")
    work.git("checkout", "-q", "-f", "-B", "laundered", forge.main)
    work.write("ci/deploy.yml", "deploy: pushed by agent-7 as the human\n")
    head = work.commit("deploy", identity=HUMAN)
    work.git("push", "-q", str(forge.origin), "laundered")
    event = pull_request(head, forge.main, head_ref="laundered")
    runner = make_runner(forge, action_path, python_bin, tmp_path / "push", "pull_request", event)
    runner.actor = "agent-7"
    assert runner.run("range").returncode == 0
    runner.outputs["install"] = {"gate": gate_check}
    assert runner.run("check").returncode == 1  # the agent's own push: refused, as the hook refuses it
    event = {**event, "action": "reopened"}
    runner = make_runner(forge, action_path, python_bin, tmp_path / "reopen", "pull_request", event)
    runner.actor = "hana"
    assert runner.run("range").returncode == 0
    runner.outputs["install"] = {"gate": gate_check}
    proc = runner.run("check")
    assert proc.returncode == 1, proc.stdout  # XFAIL: passes, judged as hana's push
