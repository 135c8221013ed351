"""The receipt flow on a forge, where no hook runs (docs/forges.md, "The receipt flow on a forge"):
docs/ci-example.sh as written, against a repository without the gate's hook, standing in for a hosted
forge. The trusted side's pushes all land, and so does the incident's stale receipt, which the hook
refuses with GATE-BIND-MODEL: on a forge, the review is judged at the merge, by the check.

Then the flow on a forge step by step (`ReviewForge`: bootstrap, attempt open, select-model, review
record or run with a scripted model, the review pushed to a bare repository without the hook, attempt
close) and `gate check --ref refs/heads/review/runner/ID` on a clone that fetched refs/gate/*: a closed
review passes; the incident's stale receipt fails with the hook's codes (the same objects pushed into a
gated server are refused with them); an open attempt, a review ref moved without a receipt, a ledger
rewound to before the failover, a receipt replayed and a receipt for another repository all fail.

Then the ledger kept in a repository of its own (`--ledger-remote`, docs/forges.md): the trusted side's
commands as docs/forges.md shows them, run as written, write and read `refs/gate/*` there and nothing of
it on the forge; an agent's writes of the forge's `refs/gate/*` change nothing they or the check read;
a push refused half way (the ledger's, then the forge's) lands on a retry, with its receipt once."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.checkparity import Judgement, of_check, of_push
from support.cli import cli
from support.docblocks import run_block
from support.gitutil import AGENT, HUMAN, ROOT, WorkRepo, gate, git

from gatecore.git.refs import generation_ref

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
    # at the merge, the check judges what the job left: the stale receipt on the review ref, the attempt
    # still open (the example stops there); closed, the stale receipt fails as the hook failed it (the
    # example's policy and keyring given as files: its main holds neither)
    [review] = [r for r in refs if r.startswith("refs/heads/review/runner/")]
    attempt = review.rsplit("/", 1)[1]
    work = tmp_path / "w"
    ci = tmp_path / "ci"
    subprocess.run(["git", "clone", "-q", f"file://{server}", str(ci)], check=True)

    def check() -> set[str]:
        subprocess.run(["git", "-C", str(ci), "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*"], check=True)
        head = subprocess.run(["git", "-C", str(server), "rev-parse", review], capture_output=True, text=True,
                              check=True).stdout.strip()
        out = cli("check", "--repo", str(ci), "--ref", review, "--head", head, "--target", "origin/main",
                  "--repository-id", "demo/repo", "--policy", str(work / "policy.toml"),
                  "--keyring", str(work / "keyring.toml"), "--format", "json")
        assert out.returncode == 1, out.stdout + out.stderr
        return {v["code"] for v in json.loads(out.stdout)["violations"]}

    assert check() == {"GATE-REVIEW-OPEN"}
    closed = cli("attempt", "close", "--repo", str(work / "runner-clone"), "--attempt", attempt,
                 "--key", str(work / "orchestrator.key"), "--push", "origin", env=RUNNER)
    assert closed.returncode == 0, closed.stderr
    assert check() == STALE


# --- the check at the merge: the review ref judged as it stands ---------------------------------------------

POLICY = """\
[[freeze]]
paths = ["ci/**", ".gate/**"]
authors = ["*@agents.example.com"]
pushers = ["agent-*"]
[trusted]
pushers = ["ci-runner"]
[approvals]
approvers = ["alice"]
"""
STALE = {"GATE-BIND-MODEL", "GATE-BIND-LEDGER"}  # the hook's codes for the incident (tests/push/test_trusted_side.py)
#: The scripted model `gate review run` calls: it answers pass, with the request's challenge.
MODEL = r'''
import json, re, sys
found = re.search(r"^challenge: ([0-9a-f]{64})$", sys.stdin.read(), re.M)
print(json.dumps({"challenge": found.group(1) if found else None, "verdict": "pass", "reasons": ["reviewed"]}))
'''
RUNNER = {"GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com", "GIT_COMMITTER_NAME": "ci",
          "GIT_COMMITTER_EMAIL": "ci@example.com"}


class ReviewForge:
    """A forge without the hook (`forge.git`), the trusted side's clone (`runner`, where the agent's
    change is branch `feature`), its keys, and the CI clone the check runs on. main holds the policy and
    the keyring (public keys) as `.gate/policy.toml` and `.gate/keyring.toml`, committed by a human."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ring = [cli("keys", "generate", "--alg", "ed25519", "--id", key_id, "--purpose", purpose, "--out",
                    str(root / f"{key_id}.key")) for key_id, purpose in (("orchestrator-1", "attempt"),
                                                                         ("runner-1", "receipt"),
                                                                         ("alice-1", "approval"))]
        assert all(r.returncode == 0 for r in ring), ring
        self.forge = root / "forge.git"
        git(root, "init", "-q", "--bare", "-b", "main", str(self.forge))
        self.runner = WorkRepo(root / "runner")
        self.runner.write("app.py", "print(1)\n")
        self.runner.write(".gate/policy.toml", POLICY)
        self.runner.write(".gate/keyring.toml", "".join(r.stdout for r in ring))
        self.main = self.runner.commit("base", identity=HUMAN)
        self.runner.git("remote", "add", "origin", f"file://{self.forge}")
        self.runner.git("push", "-q", "origin", "main")
        self.runner.git("checkout", "-q", "-b", "feature")
        self.runner.write("app.py", "print(2)\n")
        self.head = self.runner.commit("agent change", identity=AGENT)
        self.runner.git("checkout", "-q", "main")
        self.ci = root / "ci"
        git(root, "clone", "-q", f"file://{self.forge}", str(self.ci))
        self.model = root / "model.py"
        self.model.write_text(MODEL)
        self.prompt = root / "prompt.txt"
        self.prompt.write_text("Review this change; answer with JSON {verdict, reasons}.\n")
        self.generations: dict[str, str] = {}

    def gate(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A trusted side's command, as the job runs it; it must succeed."""
        out = cli(*args, cwd=self.root, env=RUNNER)
        assert out.returncode == 0, (args, out.stdout, out.stderr)
        return out

    def bootstrap(self) -> dict[str, str]:
        """`gate bootstrap` of a fresh workspace: its exports (ATTEMPT_ID, WORKSPACE_GEN, GATE_SCORING_DIR)."""
        workspace = Path(tempfile.mkdtemp(dir=self.root))
        exports = dict(line.removeprefix("export ").split("=", 1)
                       for line in self.gate("bootstrap", "--workspace", str(workspace)).stdout.splitlines())
        self.generations[exports["ATTEMPT_ID"]] = exports["WORKSPACE_GEN"]
        return exports

    def open(self, model: str = "model-a", repository: str = "demo/repo", *ledger: str) -> tuple[str, Path]:
        """bootstrap, attempt open, select-model: the attempt and its scoring directory (`ledger`:
        `--ledger-remote URL`, or nothing)."""
        exports = self.bootstrap()
        attempt = exports["ATTEMPT_ID"]
        self.gate("attempt", "open", "--repo", str(self.runner.path), "--attempt", attempt, "--workspace", "ws-1",
                  "--workspace-gen", exports["WORKSPACE_GEN"], "--prompt-file", str(self.prompt),
                  "--repository-id", repository, "--key", str(self.root / "orchestrator-1.key"), "--push", "origin",
                  *ledger)
        self.ledger("select-model", attempt, "--model", model, *ledger)
        return attempt, Path(exports["GATE_SCORING_DIR"])

    def ledger(self, command: str, attempt: str, *args: str) -> None:
        self.gate("attempt", command, "--repo", str(self.runner.path), "--attempt", attempt,
                  "--key", str(self.root / "orchestrator-1.key"), "--push", "origin", *args)

    def record(self, attempt: str, scoring: Path, name: str, *push: str, repo: Path | None = None) -> Path:
        """`gate review record` of feature from a model's output file (`push`: ("--push",) to push it), in
        the trusted side's clone (or `repo`, a runner's clone of its own)."""
        output = scoring / f"{name}.json"
        output.write_text(json.dumps({"verdict": "pass", "reasons": [f"reviewed by {name}"]}))
        receipt = scoring / f"receipt-{name}.json"
        self.gate("review", "record", "--repo", str(repo or self.runner.path), "--attempt", attempt, "--head", "feature",
                  "--model-output", str(output), "--key", str(self.root / "runner-1.key"), "--out", str(receipt),
                  "--remote", "origin", *push)
        return receipt

    def run_args(self, attempt: str, scoring: Path, *ledger: str) -> tuple[str, ...]:
        """`gate review run`'s arguments: the runner calls the (scripted) model, seals and pushes."""
        return ("review", "run", "--repo", str(self.runner.path), "--attempt", attempt, "--head", "feature",
                "--prompt-file", str(self.prompt), "--model-command", f"{sys.executable} {self.model}",
                "--key", str(self.root / "runner-1.key"), "--out", str(scoring / "receipt-run.json"),
                "--remote", "origin", "--push", *ledger)

    def run(self, attempt: str, scoring: Path, *ledger: str) -> None:
        self.gate(*self.run_args(attempt, scoring, *ledger))

    def push_review(self, attempt: str, receipt: Path, *ledger: str) -> None:
        self.gate("review", "push", "--repo", str(self.runner.path), "--attempt", attempt, "--receipt", str(receipt),
                  "--remote", "origin", "--key", str(self.root / "runner-1.key"), *ledger)

    def forge_ref(self, name: str) -> str:
        return git(self.forge, "rev-parse", name).stdout.strip()

    def check(self, attempt: str, head: str | None = None, repository_id: str = "demo/repo",
              onto: tuple[str, ...] = (), ledger: Path | None = None) -> subprocess.CompletedProcess[str]:
        """The required check of the pull request from review/runner/ID, on a clone that fetched the
        forge's branches and refs/gate/* (from `ledger` where one is given, as `ledger-remote` names it):
        the review ref judged as it stands at `head` (default: the forge's)."""
        git(self.ci, "fetch", "-q", "--prune", "origin", "+refs/heads/*:refs/remotes/origin/*")
        git(self.ci, "fetch", "-q", "--prune", f"file://{ledger or self.forge}", "+refs/gate/*:refs/gate/*")
        review = f"refs/heads/review/runner/{attempt}"
        return cli("check", "--repo", str(self.ci), "--ref", review, "--head", head or self.forge_ref(review),
                   "--target", self.forge_ref("refs/heads/main"), "--repository-id", repository_id,
                   "--format", "json", *onto)


def codes(out: subprocess.CompletedProcess[str]) -> set[str]:
    doc = json.loads(out.stdout)
    return {doc["code"]} if doc["decision"] == "error" else {v["code"] for v in doc["violations"]}


@pytest.fixture(scope="module")
def reviews(tmp_path_factory: pytest.TempPathFactory) -> ReviewForge:
    return ReviewForge(tmp_path_factory.mktemp("reviews"))


def test_a_closed_review_passes_the_check(reviews: ReviewForge) -> None:
    attempt, scoring = reviews.open()
    reviews.record(attempt, scoring, "model-a", "--push")
    reviews.ledger("close", attempt)
    out = reviews.check(attempt)
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["head"] == reviews.head


def test_a_review_proposed_onto_another_branch_than_its_ledgers_fails(reviews: ReviewForge) -> None:
    """The pull request from review/runner/ID targets another branch than the one the attempt's ledger
    says reviews go onto (`--onto`, as the action passes the pull request's base): the review covered
    what it brings onto main, not onto that branch, and is refused; onto main it passes."""
    attempt, scoring = reviews.open()
    reviews.record(attempt, scoring, "model-a", "--push")
    reviews.ledger("close", attempt)
    assert reviews.check(attempt, onto=("--onto", "refs/heads/main")).returncode == 0
    elsewhere = reviews.check(attempt, onto=("--onto", "refs/heads/release"))
    assert elsewhere.returncode == 1 and codes(elsewhere) == {"GATE-BIND-BASE-COMMIT"}, elsewhere.stdout


def test_a_review_the_runner_ran_passes_the_check_as_a_process(reviews: ReviewForge) -> None:
    attempt, scoring = reviews.open()
    reviews.run(attempt, scoring)
    reviews.ledger("close", attempt)
    git(reviews.ci, "fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*", "+refs/gate/*:refs/gate/*")
    out = gate("check", "--repo", str(reviews.ci), "--ref", f"refs/heads/review/runner/{attempt}",
               "--head", reviews.head, "--target", reviews.forge_ref("refs/heads/main"), "--repository-id", "demo/repo")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith(f"push-gate: judged {reviews.head} on refs/heads/review/runner/{attempt}")


def test_the_incidents_stale_receipt_fails_the_check_with_the_hooks_code(reviews: ReviewForge, tmp_path: Path) -> None:
    """Model A's receipt, a failover to model B, the stale receipt pushed (the forge takes it: no
    hook), the attempt closed: the check refuses it. The same objects pushed into a gated server,
    its ledger where the failover left it: the hook refuses them, with the same codes."""
    attempt, scoring = reviews.open()
    stale = reviews.record(attempt, scoring, "model-a")
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline")
    ledger = {name: reviews.forge_ref(name)
              for name in (f"refs/gate/attempts/{attempt}", generation_ref(reviews.generations[attempt]))}
    reviews.push_review(attempt, stale)
    reviews.ledger("close", attempt)
    out = reviews.check(attempt)
    assert out.returncode == 1 and codes(out) == STALE, out.stdout
    assert {(v["code"], v["field"], v["attempt_id"]) for v in json.loads(out.stdout)["violations"]} == {
        ("GATE-BIND-MODEL", "model_id", attempt), ("GATE-BIND-LEDGER", "ledger_record", attempt)}
    # the hook, on the same objects
    gated = tmp_path / "gated.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(gated))
    config = {name: tmp_path / name for name in ("policy.toml", "keyring.toml")}
    for name, path in config.items():
        path.write_text(git(reviews.runner.path, "show", f"main:.gate/{name}").stdout)
    assert cli("server", "install", str(gated), "--policy", str(config["policy.toml"]), "--keyring",
               str(config["keyring.toml"]), "--repository-id", "demo/repo").returncode == 0
    runner = {"REMOTE_USER": "ci-runner"}
    url = f"file://{gated}"
    assert git(reviews.runner.path, "push", "-q", url, "main", env=runner, check=False).returncode == 0
    pushed = git(reviews.runner.path, "push", "-q", "--atomic", url,
                 *(f"{oid}:{name}" for name, oid in ledger.items()), env=runner, check=False)
    assert pushed.returncode == 0, pushed.stderr
    review = f"refs/heads/review/runner/{attempt}"
    receipt = f"refs/gate/receipts/{attempt}"
    hook = git(reviews.runner.path, "push", "--atomic", url, f"{reviews.forge_ref(review)}:{review}",
               f"{reviews.forge_ref(receipt)}:{receipt}", env=runner, check=False)
    assert of_push(hook) == of_check(out) == Judgement(1, frozenset((c, None, None) for c in STALE)), hook.stderr


def test_an_open_attempt_fails_the_check(reviews: ReviewForge) -> None:
    attempt, scoring = reviews.open()
    reviews.record(attempt, scoring, "model-a", "--push")
    out = reviews.check(attempt)
    assert out.returncode == 1 and codes(out) == {"GATE-REVIEW-OPEN"}, out.stdout
    reviews.ledger("close", attempt)
    assert reviews.check(attempt).returncode == 0


def test_a_review_ref_moved_without_a_receipt_fails_the_check(reviews: ReviewForge) -> None:
    """The agent pushes its own commit onto the review branch (the forge cannot stop it)."""
    attempt, scoring = reviews.open()
    reviews.record(attempt, scoring, "model-a", "--push")
    reviews.ledger("close", attempt)
    reviews.runner.git("checkout", "-q", "-f", "--detach", reviews.head)
    reviews.runner.write("app.py", "print('after the review')\n")
    moved = reviews.runner.commit("agent, after the review", identity=AGENT)
    reviews.runner.git("checkout", "-q", "-f", "main")
    reviews.runner.git("push", "-q", "origin", f"{moved}:refs/heads/review/runner/{attempt}")
    out = reviews.check(attempt)
    assert out.returncode == 1 and codes(out) == {"GATE-REVIEW-UNRECORDED"}, out.stdout
    # the run for the reviewed head (an event for the commit before the move) still judges that head
    assert reviews.check(attempt, reviews.head).returncode == 0


def test_a_ledger_rewound_before_the_failover_fails_the_check(reviews: ReviewForge) -> None:
    """Whoever can write refs/gate/* on the forge resets the ledger to the record that put model A on
    record: the stale receipt matches that record, and the ledger no longer ends in a close."""
    attempt, scoring = reviews.open()
    before_failover = reviews.forge_ref(f"refs/gate/attempts/{attempt}")
    stale = reviews.record(attempt, scoring, "model-a")
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline")
    reviews.push_review(attempt, stale)
    reviews.ledger("close", attempt)
    assert codes(reviews.check(attempt)) == STALE
    git(reviews.forge, "update-ref", f"refs/gate/attempts/{attempt}", before_failover)
    out = reviews.check(attempt)
    assert out.returncode == 1 and codes(out) == {"GATE-REVIEW-OPEN"}, out.stdout


def test_a_replayed_receipt_fails_the_check(reviews: ReviewForge) -> None:
    """Model A's receipt, a failover, model B's review of the same head (its receipt binds the head to
    itself): the check passes. Then whoever can write refs/gate/* commits a receipt again on the receipt
    ref: B's (a payload the chain holds twice), or the incident's A (a move from nothing, where B left
    the ref)."""
    attempt, scoring = reviews.open()
    reviews.record(attempt, scoring, "model-a", "--push")
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline")
    reviews.record(attempt, scoring, "model-b", "--push")
    reviews.ledger("close", attempt)
    assert reviews.check(attempt).returncode == 0
    receipts = f"refs/gate/receipts/{attempt}"
    fresh = reviews.forge_ref(receipts)
    for replayed, code in ((fresh, "GATE-RECEIPT-REUSED"), (f"{fresh}^", "GATE-REVIEW-UNRECORDED")):
        tree = git(reviews.forge, "rev-parse", f"{replayed}^{{tree}}").stdout.strip()
        replay = git(reviews.forge, "commit-tree", tree, "-p", fresh, "-m", f"gate receipt {attempt}").stdout.strip()
        git(reviews.forge, "update-ref", receipts, replay)
        out = reviews.check(attempt)
        assert out.returncode == 1 and codes(out) == {code}, out.stdout
    git(reviews.forge, "update-ref", receipts, fresh)
    assert reviews.check(attempt).returncode == 0


def test_a_receipt_for_another_repository_fails_the_check(reviews: ReviewForge) -> None:
    """An attempt opened, reviewed and closed for other/repo, its review pushed here; and a review of
    this repository checked as another's."""
    attempt, scoring = reviews.open(repository="other/repo")
    reviews.record(attempt, scoring, "model-a", "--push")
    reviews.ledger("close", attempt)
    out = reviews.check(attempt)
    assert out.returncode == 1 and "GATE-BIND-REPOSITORY" in codes(out), out.stdout
    attempt, scoring = reviews.open()
    reviews.record(attempt, scoring, "model-a", "--push")
    reviews.ledger("close", attempt)
    out = reviews.check(attempt, repository_id="other/repo")
    assert out.returncode == 1 and "GATE-BIND-REPOSITORY" in codes(out), out.stdout


# --- the ledger in a repository of its own: --ledger-remote ------------------------------------------------


def ledger_repository(where: Path) -> tuple[Path, tuple[str, str]]:
    """A ledger repository (bare, no hook: only the trusted side can push to it) and the trusted
    commands' `--ledger-remote` option naming it."""
    ledger = where / "ledger.git"
    git(where, "init", "-q", "--bare", str(ledger))
    return ledger, ("--ledger-remote", f"file://{ledger}")


def ref_of(repo: Path, name: str) -> str | None:
    out = git(repo, "rev-parse", "-q", "--verify", name, check=False)
    return out.stdout.strip() if out.returncode == 0 else None


def gate_refs_of(repo: Path, attempt: str, generation: str) -> dict[str, str | None]:
    """The attempt's refs/gate/* in `repo`: its ledger, its generation claim, its receipts."""
    return {name: ref_of(repo, name) for name in (f"refs/gate/attempts/{attempt}", generation_ref(generation),
                                                  f"refs/gate/receipts/{attempt}")}


def test_with_a_ledger_remote_the_trusted_side_writes_the_ledger_there_as_documented(reviews: ReviewForge,
                                                                                      tmp_path: Path) -> None:
    """docs/forges.md's blocks as written: the orchestrator opens and selects the model in its clone, the
    runner runs the review in a clone of its own, the orchestrator closes; no copy step. The ledger's refs
    are on the ledger repository and nowhere on the forge, the review ref on the forge; the check reading
    the ledger passes. A maintainer's approval (`gate approve --ledger-remote`) lands on the ledger only,
    and lifts an agent's frozen write at the check that reads it. Then the archive: the ledger's refs
    folded into its refs/gate/archive and deleted there, the review ref deleted on the forge."""
    ledger, _ = ledger_repository(tmp_path)
    url = f"file://{ledger}"
    orchestrator = reviews.runner.path
    runner = tmp_path / "runner"
    git(tmp_path, "clone", "-q", f"file://{reviews.forge}", str(runner))
    git(runner, "fetch", "-q", str(orchestrator), "feature:feature")
    exports = reviews.bootstrap()
    attempt = exports["ATTEMPT_ID"]
    env = {**RUNNER, **exports, "MODEL_ID": "gpt-5",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    keys = {"orchestrator.key": str(reviews.root / "orchestrator-1.key"), "LEDGER_URL": url}
    run_block("ledger-remote-orchestrator", {"CLONE": str(orchestrator), **keys, "prompt.txt": str(reviews.prompt),
                                             "org/project": "demo/repo"}, tmp_path, env=env)
    run_block("ledger-remote-runner", {"CLONE": str(runner), "HEAD": "feature", "LEDGER_URL": url,
                                       "prompt.txt": str(reviews.prompt),
                                       "runner.key": str(reviews.root / "runner-1.key"),
                                       "review-with-model": f"{sys.executable} {reviews.model}"}, tmp_path, env=env)
    run_block("ledger-remote-close", {"CLONE": str(orchestrator), **keys}, tmp_path, env=env)
    on_ledger = gate_refs_of(ledger, attempt, exports["WORKSPACE_GEN"])
    assert all(on_ledger.values()), on_ledger
    assert set(gate_refs_of(reviews.forge, attempt, exports["WORKSPACE_GEN"]).values()) == {None}
    review = f"refs/heads/review/runner/{attempt}"
    assert reviews.forge_ref(review) == reviews.head and ref_of(ledger, review) is None
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 0, out.stdout + out.stderr
    # the forge's own refs/gate/* hold nothing of it: read from there, the review has no receipt
    assert codes(reviews.check(attempt)) == {"GATE-RECEIPT-MISSING"}

    # a maintainer approves an agent's write of a frozen path: on the ledger, not the forge
    reviews.runner.git("checkout", "-q", "-f", "-B", "agent-ci", "main")
    reviews.runner.write("ci/deploy.yml", "deploy: approved\n")
    frozen = reviews.runner.commit("agent: ci", identity=AGENT)
    reviews.runner.git("checkout", "-q", "-f", "main")
    reviews.runner.git("push", "-q", "origin", "agent-ci")
    main = reviews.forge_ref("refs/heads/main")
    approved = cli("approve", "--repository-id", "demo/repo", "--ref", "refs/heads/main", "--old", main, "--new",
                   frozen, "--path", "ci/deploy.yml", "--approver", "alice", "--key", str(reviews.root / "alice-1.key"),
                   "--yes", "--repo", str(orchestrator), "--ledger-remote", url)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert f"accepted by {url}" in approved.stdout
    [approval] = git(ledger, "for-each-ref", "--format=%(refname)", "refs/gate/approvals/").stdout.split()
    assert ref_of(reviews.forge, approval) is None

    def check_main(source: Path) -> subprocess.CompletedProcess[str]:
        git(reviews.ci, "fetch", "-q", "--prune", "origin", "+refs/heads/*:refs/remotes/origin/*")
        git(reviews.ci, "fetch", "-q", "--prune", f"file://{source}", "+refs/gate/*:refs/gate/*")
        return cli("check", "--repo", str(reviews.ci), "--ref", "refs/heads/main", "--head", frozen, "--target", main,
                   "--repository-id", "demo/repo", "--format", "json")

    assert check_main(ledger).returncode == 0, check_main(ledger).stdout
    refused = check_main(reviews.forge)
    assert refused.returncode == 1 and codes(refused) == {"GATE-FROZEN-PATH"}, refused.stdout

    # the lifecycle: the ledger's refs archived and deleted on the ledger, the review ref on the forge
    archived = cli("ledger", "archive", "--repo", str(orchestrator), "--remote", "origin", "--ledger-remote", url,
                   "--older-than", "0", env=RUNNER)
    assert archived.returncode == 0 and "archived 1 attempt(s)" in archived.stdout, archived.stdout + archived.stderr
    assert set(gate_refs_of(ledger, attempt, exports["WORKSPACE_GEN"]).values()) == {None}
    assert ref_of(ledger, "refs/gate/archive") is not None and ref_of(reviews.forge, "refs/gate/archive") is None
    assert ref_of(reviews.forge, review) is None
    again = cli("ledger", "archive", "--repo", str(orchestrator), "--remote", "origin", "--ledger-remote", url,
                "--older-than", "0", env=RUNNER)
    assert again.returncode == 0 and "archived 0 attempt(s)" in again.stdout, again.stdout + again.stderr


def test_an_agents_writes_of_the_forges_ledger_change_nothing_the_trusted_side_or_the_check_read(
        reviews: ReviewForge, tmp_path: Path) -> None:
    """An agent writes the forge's refs/gate/* before the job (the attempt's generation claimed, a ledger
    and a receipt ref that are no records) and after it (the ledger copied there and rewound before the
    failover). Read from the forge, the open is refused (the claim); with --ledger-remote every trusted command goes on,
    the incident's stale receipt lands on the ledger and the forge's refs stay as the agent left them, and
    the check reading the ledger refuses that receipt with the hook's codes, before the rewind and after."""
    ledger, via = ledger_repository(tmp_path)
    exports = reviews.bootstrap()
    attempt, generation = exports["ATTEMPT_ID"], exports["WORKSPACE_GEN"]
    planted = gate_refs_of(reviews.forge, attempt, generation)
    git(reviews.forge, "update-ref", generation_ref(generation), reviews.main)  # the agent's claim
    opening = ("attempt", "open", "--repo", str(reviews.runner.path), "--attempt", attempt, "--workspace", "ws-1",
               "--workspace-gen", generation, "--prompt-file", str(reviews.prompt), "--repository-id", "demo/repo",
               "--key", str(reviews.root / "orchestrator-1.key"), "--push", "origin")
    refused = cli(*opening, cwd=reviews.root, env=RUNNER)
    assert refused.returncode == 1 and "GATE-LEDGER-GENERATION-REUSED" in refused.stderr, refused.stderr
    for name in planted:
        git(reviews.forge, "update-ref", name, reviews.main)  # and a ledger and a receipt ref: none is a record
    reviews.gate(*opening, *via)
    reviews.ledger("select-model", attempt, "--model", "model-a", *via)
    scoring = Path(exports["GATE_SCORING_DIR"])
    stale = reviews.record(attempt, scoring, "model-a", *via)
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline", *via)
    reviews.push_review(attempt, stale, *via)
    reviews.ledger("close", attempt, *via)
    assert gate_refs_of(reviews.forge, attempt, generation) == dict.fromkeys(planted, reviews.main)
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 1 and codes(out) == STALE, out.stdout
    # the agent, after the job: the ledger copied onto the forge, its attempt rewound before the failover
    git(reviews.forge, "fetch", "-q", f"file://{ledger}", "+refs/gate/*:refs/gate/*")
    git(reviews.forge, "update-ref", f"refs/gate/attempts/{attempt}", f"refs/gate/attempts/{attempt}~2")
    assert codes(reviews.check(attempt)) == {"GATE-REVIEW-OPEN"}  # read from the forge
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 1 and codes(out) == STALE, out.stdout


@contextlib.contextmanager
def refusing(repo: Path, ref: str) -> Iterator[None]:
    """A pre-receive hook in a bare repository that refuses one ref, while the block runs."""
    hook = repo / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = \"{ref}\" ]; then\n"
                    "    echo 'refused for the test' >&2; exit 1\n  fi\ndone\n")
    hook.chmod(0o755)
    try:
        yield
    finally:
        hook.unlink(missing_ok=True)


def test_a_review_refused_half_way_lands_on_a_retry(reviews: ReviewForge, tmp_path: Path) -> None:
    """The receipt goes to the ledger first, then the review ref to the forge. The ledger refuses the
    receipt: nothing lands. The forge refuses the review ref: the receipt is on the ledger, the command
    says so and fails. The same command again pushes the review ref alone (the receipt stays one commit:
    twice, it would be a replay), and once more finds both there. The check passes."""
    ledger, via = ledger_repository(tmp_path)
    attempt, scoring = reviews.open("model-a", "demo/repo", *via)
    review, receipts = f"refs/heads/review/runner/{attempt}", f"refs/gate/receipts/{attempt}"
    run = reviews.run_args(attempt, scoring, *via)
    with refusing(ledger, receipts):
        first = cli(*run, cwd=reviews.root, env=RUNNER)
    assert first.returncode == 1 and "nothing of the review landed" in first.stderr, first.stderr
    assert ref_of(ledger, receipts) is None and ref_of(reviews.forge, review) is None
    with refusing(reviews.forge, review):
        second = cli(*run, cwd=reviews.root, env=RUNNER)
    assert second.returncode == 1 and "run the same command again" in second.stderr, second.stderr
    receipt = ref_of(ledger, receipts)
    assert receipt is not None and ref_of(reviews.forge, review) is None
    third = cli(*run, cwd=reviews.root, env=RUNNER)
    assert third.returncode == 0, third.stderr
    assert ref_of(ledger, receipts) == receipt and reviews.forge_ref(review) == reviews.head
    fourth = cli(*run, cwd=reviews.root, env=RUNNER)
    assert fourth.returncode == 0 and "already on the server" in fourth.stderr, fourth.stderr
    reviews.ledger("close", attempt, *via)
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 0, out.stdout + out.stderr


def test_another_receipt_after_one_whose_review_ref_did_not_land_is_refused_before_it_is_pushed(
        reviews: ReviewForge, tmp_path: Path) -> None:
    """Model A's review: its receipt on the ledger, its review ref refused by the forge. A failover, and
    model B's review binds a move from nothing, where A's receipt put the review ref at the head: the
    check would refuse the chain (GATE-REVIEW-UNRECORDED), so the runner refuses it first and pushes
    nothing. A's review landed first (gate review push with its receipt: the review ref alone), B's
    follows it, and the check passes."""
    ledger, via = ledger_repository(tmp_path)
    attempt, scoring = reviews.open("model-a", "demo/repo", *via)
    review, receipts = f"refs/heads/review/runner/{attempt}", f"refs/gate/receipts/{attempt}"
    with refusing(reviews.forge, review):
        first = reviews.record(attempt, scoring, "model-a", *via)
        pushed = cli("review", "push", "--repo", str(reviews.runner.path), "--attempt", attempt, "--receipt",
                     str(first), "--remote", "origin", "--key", str(reviews.root / "runner-1.key"), *via, env=RUNNER)
    assert pushed.returncode == 1 and "run the same command again" in pushed.stderr, pushed.stderr
    stranded = ref_of(ledger, receipts)
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline", *via)
    output = scoring / "model-b.json"
    output.write_text(json.dumps({"verdict": "pass", "reasons": ["reviewed by model-b"]}))
    other = cli("review", "record", "--repo", str(reviews.runner.path), "--attempt", attempt, "--head", "feature",
                "--model-output", str(output), "--key", str(reviews.root / "runner-1.key"), "--out",
                str(scoring / "receipt-model-b.json"), "--remote", "origin", "--push", *via, env=RUNNER)
    assert other.returncode == 1 and "GATE-REVIEW-UNRECORDED" in other.stderr, other.stderr
    assert ref_of(ledger, receipts) == stranded and ref_of(reviews.forge, review) is None
    reviews.push_review(attempt, first, *via)
    assert reviews.forge_ref(review) == reviews.head and ref_of(ledger, receipts) == stranded
    (scoring / "receipt-model-b.json").unlink()  # it bound the move from nothing
    reviews.record(attempt, scoring, "model-b", "--push", *via)
    assert git(ledger, "rev-list", "--count", receipts).stdout.strip() == "2"
    reviews.ledger("close", attempt, *via)
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_ledger_remote_comes_with_the_remote_it_is_kept_apart_from(reviews: ReviewForge, tmp_path: Path) -> None:
    """--ledger-remote without --push (the orchestrator's), without --remote (the runner's), or with an
    approval kept local: refused, GATE-INPUT-ARGUMENT, before anything is read or written."""
    _, via = ledger_repository(tmp_path)
    attempt = reviews.bootstrap()["ATTEMPT_ID"]
    key = str(reviews.root / "orchestrator-1.key")
    for args in (("attempt", "close", "--repo", str(reviews.runner.path), "--attempt", attempt, "--key", key, *via),
                 ("review", "record", "--repo", str(reviews.runner.path), "--attempt", attempt, "--head", "feature",
                  "--model-output", str(reviews.prompt), "--key", str(reviews.root / "runner-1.key"), "--out",
                  str(tmp_path / "receipt.json"), "--base", "main", *via),
                 ("approve", "--repository-id", "demo/repo", "--ref", "refs/heads/main", "--old", reviews.main,
                  "--new", reviews.head, "--path", "ci/deploy.yml", "--approver", "alice", "--key",
                  str(reviews.root / "alice-1.key"), "--yes", "--repo", str(reviews.runner.path), "--no-push", *via)):
        out = cli(*args, env=RUNNER)
        assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr and "--ledger-remote" in out.stderr, (
            args, out.stderr)
    assert not (tmp_path / "receipt.json").exists()
