"""An attacker's review of the ledger on a forge (`--ledger-remote`, docs/forges.md, "The receipt flow on
a forge"): the agent, and any account with write access to the forge, pushes anything there (branches,
`refs/gate/*`, the review ref), cannot write the ledger repository and holds no key. Real repositories and
real pushes throughout (`test_receipt_flow.ReviewForge`: a forge without a hook, the trusted side's clone,
the CI clone the check runs on).

* a ledger kept on the forge (no `--ledger-remote`, or one naming the forge), rewound by the agent
  between the failover and the close: the orchestrator's close is refused (`GATE-LEDGER-REWRITE`), not
  appended to the rewound ledger, which would have made the incident's stale receipt pass the check;
* a review of a closed attempt (a CI retry of the runner's job after the orchestrator's close): the
  runner seals none (`GATE-LEDGER-CLOSED`), where it sealed one, pushed it to the ledger repository, and
  the check, which judges a review at the close with the clock's allowance, passed it; the retry of a
  review refused half way before the close still lands;
* `gate review push --receipt FILE` (the file in the scoring directory, which the agent writes) of a
  receipt that could never pass: another attempt's (sealed, from an earlier job), or one the ledger's
  chain holds already (a retry of an earlier push after later reviews): refused before anything is
  pushed (`GATE-BIND-ATTEMPT`, `GATE-RECEIPT-REUSED`), where it was committed to the ledger repository,
  which nobody can take back (the attempt's review dead, or its chain ending in a replay);
* `--ledger-remote` naming the forge itself (the same remote name, its URL, its path): the trusted side
  believed the ledger apart and wrote it where the agent writes; refused (`GATE-INPUT-ARGUMENT`) before
  anything is read or pushed, by every command that takes the option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import git
from test_receipt_flow import RUNNER, ReviewForge, codes, ledger_repository, ref_of, refusing

from gatecore.git.refs import generation_ref


@pytest.fixture(scope="module")
def reviews(tmp_path_factory: pytest.TempPathFactory) -> ReviewForge:
    return ReviewForge(tmp_path_factory.mktemp("adv"))


def close(reviews: ReviewForge, attempt: str, *via: str) -> tuple[int, str]:
    out = cli("attempt", "close", "--repo", str(reviews.runner.path), "--attempt", attempt,
              "--key", str(reviews.root / "orchestrator-1.key"), "--push", "origin", *via, cwd=reviews.root, env=RUNNER)
    return out.returncode, out.stderr


@pytest.mark.parametrize("rewind", ["to-the-record-before-the-failover", "deleted-then-rewound"])
def test_a_ledger_rewound_on_the_forge_before_the_close_is_not_closed(reviews: ReviewForge, rewind: str) -> None:
    """The incident where the forge holds the ledger: model A's receipt, the failover to B, and the agent
    (who can write the forge's refs/gate/*) puts the ledger back to the record that selected A, before
    the orchestrator closes. The close synced that ledger and sealed a close on top of it: a closed
    ledger with A on record, and A's stale receipt passed the check. The close (and the runner) now
    refuse a ledger that does not continue the one the clone holds, and keep the clone's copy, also when
    the agent deletes the ledger first and pushes the rewound one after the refusal."""
    attempt, scoring = reviews.open()
    ledger_ref = f"refs/gate/attempts/{attempt}"
    before_failover = reviews.forge_ref(ledger_ref)
    stale = reviews.record(attempt, scoring, "model-a")
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline")
    failed_over = reviews.forge_ref(ledger_ref)
    if rewind == "deleted-then-rewound":
        git(reviews.forge, "update-ref", "-d", ledger_ref)
        code, err = close(reviews, attempt)
        assert code == 1 and "GATE-LEDGER-REWRITE" in err, err
    git(reviews.forge, "update-ref", ledger_ref, before_failover)
    reviews.push_review(attempt, stale)  # (no hook: it lands, the check judges it)
    code, err = close(reviews, attempt)
    assert code == 1 and "GATE-LEDGER-REWRITE" in err, err
    assert reviews.forge_ref(ledger_ref) == before_failover  # nothing appended to the rewound ledger
    assert ref_of(reviews.runner.path, ledger_ref) == failed_over  # the clone's copy kept
    review = cli("review", "record", "--repo", str(reviews.runner.path), "--attempt", attempt, "--head", "feature",
                 "--model-output", str(scoring / "model-a.json"), "--key", str(reviews.root / "runner-1.key"),
                 "--out", str(scoring / "receipt-again.json"), "--remote", "origin", env=RUNNER)
    assert review.returncode == 1 and "GATE-LEDGER-REWRITE" in review.stderr, review.stderr
    assert codes(reviews.check(attempt)) == {"GATE-REVIEW-OPEN"}
    # the ledger put back where the orchestrator left it: the close lands, and the stale receipt fails
    git(reviews.forge, "update-ref", ledger_ref, failed_over)
    assert close(reviews, attempt)[0] == 0
    assert codes(reviews.check(attempt)) == {"GATE-BIND-MODEL", "GATE-BIND-LEDGER"}


def _incident(reviews: ReviewForge) -> tuple[str, str, str, str]:
    """Model A's review, the failover to B, A's stale receipt on the forge's review ref: (the attempt, its
    ledger ref, the forge's ledger before the failover, after it)."""
    attempt, scoring = reviews.open()
    ledger_ref = f"refs/gate/attempts/{attempt}"
    before_failover = reviews.forge_ref(ledger_ref)
    stale = reviews.record(attempt, scoring, "model-a")
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline")
    reviews.push_review(attempt, stale)
    return attempt, ledger_ref, before_failover, reviews.forge_ref(ledger_ref)


def _closes_only_the_ledger_it_left(reviews: ReviewForge, attempt: str, ledger_ref: str, before_failover: str,
                                    failed_over: str) -> None:
    """The close refused the rewound ledger; put back, it lands, and A's stale receipt fails the check."""
    assert reviews.forge_ref(ledger_ref) == before_failover  # nothing appended to the rewound ledger
    assert codes(reviews.check(attempt)) == {"GATE-REVIEW-OPEN"}
    git(reviews.forge, "update-ref", ledger_ref, failed_over)
    assert close(reviews, attempt)[0] == 0
    assert codes(reviews.check(attempt)) == {"GATE-BIND-MODEL", "GATE-BIND-LEDGER"}


def test_a_ledger_rewound_between_its_listing_and_its_fetch_is_not_closed(reviews: ReviewForge,
                                                                          tmp_path: Path) -> None:
    """The clone synced the ledger in two steps: `ls-remote` (the forward-only check judged that value),
    then a forced fetch (which installed whatever the forge held by then). An agent that rewound the
    ledger in between (here: the forge's upload-pack does it when the fetch asks, the second call) had
    the close sealed on top of the rewound ledger, and A's stale receipt passed the check. The ledger
    is judged as fetched now."""
    attempt, ledger_ref, before_failover, failed_over = _incident(reviews)
    calls, wrapper = tmp_path / "calls", tmp_path / "upload-pack"
    wrapper.write_text(f"""#!/bin/sh
n=$(cat '{calls}' 2>/dev/null || echo 0); echo $((n+1)) > '{calls}'
if [ "$n" = 1 ]; then git --git-dir='{reviews.forge}' update-ref {ledger_ref} {before_failover}; fi
exec git-upload-pack "$@"
""")
    wrapper.chmod(0o755)
    git(reviews.runner.path, "config", "remote.origin.uploadpack", str(wrapper))
    try:
        code, err = close(reviews, attempt)
    finally:
        git(reviews.runner.path, "config", "--unset", "remote.origin.uploadpack")
    assert calls.read_text().strip() == "2", "the close asked the forge twice (its listing, its fetch)"
    assert code == 1 and "GATE-LEDGER-REWRITE" in err, err
    _closes_only_the_ledger_it_left(reviews, attempt, ledger_ref, before_failover, failed_over)


@pytest.mark.parametrize("fetch", ["gate-ledger-archive", "documented-fetch"])
def test_a_fetch_of_the_reserved_refs_does_not_make_the_clone_forget_its_ledger(reviews: ReviewForge,
                                                                                fetch: str) -> None:
    """The clone held the ledger as its `refs/gate/attempts/<id>`, which a forced fetch of `refs/gate/*`
    overwrites: `gate ledger archive` in the orchestrator's clone, or the fetch the docs give before
    `gate attest export` or `gate approvals list`. After the agent's rewind such a fetch took the
    rewound ledger for the clone's own, and the close sealed it. The clone's memory of each ledger is
    a ref outside `refs/gate/` now (`refs/gate-held/attempts/<id>`), which no such fetch writes."""
    attempt, ledger_ref, before_failover, failed_over = _incident(reviews)
    git(reviews.forge, "update-ref", ledger_ref, before_failover)
    if fetch == "gate-ledger-archive":
        out = cli("ledger", "archive", "--repo", str(reviews.runner.path), "--remote", "origin", "--older-than",
                  "86400", cwd=reviews.root, env=RUNNER)
        assert out.returncode == 0, out.stderr
    else:
        git(reviews.runner.path, "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*")
    assert ref_of(reviews.runner.path, ledger_ref) == before_failover  # the fetch rewound the clone's copy
    code, err = close(reviews, attempt)
    assert code == 1 and "GATE-LEDGER-REWRITE" in err and f"git push origin {ledger_ref}:{ledger_ref}" in err, err
    assert ref_of(reviews.runner.path, ledger_ref) == failed_over  # the copy put back from the memory
    _closes_only_the_ledger_it_left(reviews, attempt, ledger_ref, before_failover, failed_over)


def test_an_archive_of_a_forged_close_does_not_make_the_clone_forget(reviews: ReviewForge) -> None:
    """The agent appends an unsealed "closed" record, dated two days back, to the forge's ledger (no hook
    verifies it; `gate ledger archive` reads closed chains without their seals). The orchestrator's
    routine archive folds the attempt away and, in the clone, deleted its memory of the ledger with its
    refs. The agent then put back the ledger before the failover, the receipt and review refs, the claim,
    and deleted the archive: the close, in that clone, took the ledger put back for its own and sealed it,
    and A's stale receipt passed the check. The clone keeps its memory through an archive now."""
    import time

    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.git.objects import Objects
    from gatecore.records import ledger
    from gatecore.signing.keys import ephemeral_pair
    from gatecore.trusted.attempts import record_commit

    attempt, ledger_ref, before_failover, failed_over = _incident(reviews)
    keep = {r: reviews.forge_ref(r) for r in (f"refs/gate/receipts/{attempt}", f"refs/heads/review/runner/{attempt}")}
    root = git(reviews.forge, "rev-list", "--max-parents=0", failed_over).stdout.strip()
    claims = [name for oid, name in (line.split() for line in git(
        reviews.forge, "for-each-ref", "--format=%(objectname) %(refname)", "refs/gate/generations/").stdout.splitlines())
        if oid == root]
    forge = GitRepo.at(reviews.forge)
    state = ledger.read_state(Objects(forge), failed_over, None, 0, attempt)
    agent_key, _ = ephemeral_pair("ed25519", "orchestrator-1", "attempt")
    forged = ledger.make_record(agent_key, state, attempt_id=attempt, kind="closed", repository=state.repository,
                                now=int(time.time()) - 2 * 86400)
    git(reviews.forge, "update-ref", ledger_ref,
        record_commit(forge, ledger.RECORD_FILE, forged, failed_over, "close\n", int(time.time())))
    out = cli("ledger", "archive", "--repo", str(reviews.runner.path), "--remote", "origin", "--older-than", "86400",
              cwd=reviews.root, env=RUNNER)
    assert out.returncode == 0, out.stderr
    git(reviews.forge, "update-ref", ledger_ref, before_failover)
    for name, value in (*keep.items(), *((c, root) for c in claims)):
        git(reviews.forge, "update-ref", name, value)
    git(reviews.forge, "update-ref", "-d", "refs/gate/archive")
    code, err = close(reviews, attempt)
    assert code == 1 and "GATE-LEDGER-REWRITE" in err, err
    assert reviews.forge_ref(ledger_ref) == before_failover
    assert codes(reviews.check(attempt)) == {"GATE-REVIEW-OPEN"}


def test_an_open_whose_push_was_cut_off_runs_again(reviews: ReviewForge, tmp_path: Path) -> None:
    """The orchestrator's `gate attempt open` is killed while its push hangs (here: the ledger repository's
    hook waits for ever). The clone had moved its ledger ref to the record before pushing and put it back
    only on a refusal, so it held an opened record the ledger never got, with no memory to tell: every
    run after it was refused, GATE-LEDGER-REWRITE ("no longer holds it"), and its advice (push the copy
    back) was refused too, without the generation claim. The record is pushed by its id now, the clone's
    refs moved once it landed: the run again opens the attempt."""
    import os
    import signal
    import subprocess
    import time

    from support.gitutil import GATE

    ledger, via = ledger_repository(tmp_path)
    hook, started = ledger / "hooks" / "pre-receive", tmp_path / "push-started"
    hook.write_text(f"#!/bin/sh\ntouch '{started}'\nexec sleep 100000\n")
    hook.chmod(0o755)
    exports = reviews.bootstrap()
    attempt = exports["ATTEMPT_ID"]
    args = ("attempt", "open", "--repo", str(reviews.runner.path), "--attempt", attempt, "--workspace", "ws-1",
            "--workspace-gen", exports["WORKSPACE_GEN"], "--prompt-file", str(reviews.prompt), "--repository-id",
            "demo/repo", "--key", str(reviews.root / "orchestrator-1.key"), "--push", "origin", *via)
    proc = subprocess.Popen([*GATE, *args], cwd=reviews.root, env={**os.environ, **RUNNER}, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not started.exists():  # the push is under way (waited for, not timed)
            assert proc.poll() is None, "the open ended before its push"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    hook.unlink()
    assert ref_of(ledger, f"refs/gate/attempts/{attempt}") is None  # nothing landed
    assert ref_of(reviews.runner.path, f"refs/gate/attempts/{attempt}") is None  # nor moved in the clone
    again = cli(*args, cwd=reviews.root, env=RUNNER)
    assert again.returncode == 0, again.stderr
    assert ref_of(ledger, f"refs/gate/attempts/{attempt}") is not None
    assert ref_of(ledger, generation_ref(exports["WORKSPACE_GEN"])) is not None


def record_args(reviews: ReviewForge, attempt: str, scoring: Path, name: str, *via: str) -> tuple[str, ...]:
    """`gate review record --push` of feature from a model's output file (written here)."""
    output = scoring / f"{name}.json"
    output.write_text(json.dumps({"verdict": "pass", "reasons": [f"reviewed by {name}"]}))
    return ("review", "record", "--repo", str(reviews.runner.path), "--attempt", attempt, "--head", "feature",
            "--model-output", str(output), "--key", str(reviews.root / "runner-1.key"), "--out",
            str(scoring / f"receipt-{name}.json"), "--remote", "origin", "--push", *via)


def test_no_review_is_sealed_for_a_closed_attempt(reviews: ReviewForge, tmp_path: Path) -> None:
    """The orchestrator closed the attempt (its job ended); the runner's job runs (again) after it. With the
    ledger apart no hook refuses the push: the runner sealed the receipt, pushed it to the ledger and the
    review ref to the forge, and the check, judging the review at the close with the clock's allowance
    (five minutes), passed it. Now neither `run` (before the model is called) nor `record` seals one."""
    ledger, via = ledger_repository(tmp_path)
    attempt, scoring = reviews.open("model-a", "demo/repo", *via)
    reviews.ledger("close", attempt, *via)
    for args in (reviews.run_args(attempt, scoring, *via), record_args(reviews, attempt, scoring, "model-a", *via)):
        out = cli(*args, cwd=reviews.root, env=RUNNER)
        assert out.returncode == 1 and "GATE-LEDGER-CLOSED" in out.stderr, (args, out.stderr)
    assert not (scoring / "receipt-run.json").exists() and not (scoring / "receipt-model-a.json").exists()
    assert ref_of(ledger, f"refs/gate/receipts/{attempt}") is None
    assert ref_of(reviews.forge, f"refs/heads/review/runner/{attempt}") is None


def test_a_review_refused_half_way_before_the_close_lands_after_it(reviews: ReviewForge, tmp_path: Path) -> None:
    """The receipt on the ledger, the review ref refused by the forge, the runner's job fails and the
    orchestrator's close follows: the same command run again hands on the receipt it sealed before the
    close and pushes the review ref alone; the check passes."""
    ledger, via = ledger_repository(tmp_path)
    attempt, scoring = reviews.open("model-a", "demo/repo", *via)
    review = f"refs/heads/review/runner/{attempt}"
    args = record_args(reviews, attempt, scoring, "model-a", *via)
    with refusing(reviews.forge, review):
        first = cli(*args, cwd=reviews.root, env=RUNNER)
    assert first.returncode == 1 and "run the same command again" in first.stderr, first.stderr
    reviews.ledger("close", attempt, *via)
    again = cli(*args, cwd=reviews.root, env=RUNNER)
    assert again.returncode == 0, again.stderr
    assert reviews.forge_ref(review) == reviews.head
    assert git(ledger, "rev-list", "--count", f"refs/gate/receipts/{attempt}").stdout.strip() == "1"
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 0, out.stdout + out.stderr


def push(reviews: ReviewForge, attempt: str, receipt: Path, *via: str, key: str = "runner-1.key") -> tuple[int, str]:
    """The runner's `gate review push` of `receipt` (with its key: required with a ledger remote)."""
    with_key = ("--key", str(reviews.root / key)) if key else ()
    out = cli("review", "push", "--repo", str(reviews.runner.path), "--attempt", attempt, "--receipt", str(receipt),
              "--remote", "origin", *with_key, *via, cwd=reviews.root, env=RUNNER)
    return out.returncode, out.stderr


def test_a_receipt_the_runner_did_not_seal_is_not_spent_on_the_ledger(reviews: ReviewForge, tmp_path: Path) -> None:
    """The agent seals a receipt of this very review with a key of its own named as the runner's
    (`runner-1`) and puts it where the runner reads it. With the ledger apart no hook verifies a seal:
    `gate review push --receipt` committed it to the ledger, the runner's `review record|run --push`
    handed it on as its own earlier receipt (the same fields), and a later run found it "already on the
    server": the model never called, the attempt's review dead for good (GATE-SEAL-BAD-SIGNATURE at the
    check). Now the runner's key must have sealed what it pushes, and `gate review push` with a ledger
    remote takes that key; the runner's own review then lands and passes."""
    ledger, via = ledger_repository(tmp_path)
    attempt, scoring = reviews.open("model-a", "demo/repo", *via)
    agent_key = tmp_path / "agent.key"
    made = cli("keys", "generate", "--alg", "ed25519", "--id", "runner-1", "--purpose", "receipt", "--out",
               str(agent_key))
    assert made.returncode == 0, made.stderr
    runner_args = record_args(reviews, attempt, scoring, "model-a", *via)  # (writes the model's output file)
    planted = scoring / "receipt-model-a.json"
    forged = cli("review", "record", "--repo", str(reviews.runner.path), "--attempt", attempt, "--head", "feature",
                 "--model-output", str(scoring / "model-a.json"), "--key", str(agent_key), "--out", str(planted),
                 "--remote", "origin", *via, cwd=reviews.root, env=RUNNER)
    assert forged.returncode == 0, forged.stderr
    receipts, review = f"refs/gate/receipts/{attempt}", f"refs/heads/review/runner/{attempt}"
    code, err = push(reviews, attempt, planted, *via)
    assert code == 1 and "GATE-SEAL-BAD-SIGNATURE" in err, err
    code, err = push(reviews, attempt, planted, *via, key="")
    assert code == 1 and "GATE-INPUT-ARGUMENT" in err and "--key" in err, err
    out = cli(*runner_args, cwd=reviews.root, env=RUNNER)
    assert out.returncode == 1 and "GATE-INPUT-PATH" in out.stderr and "did not seal" in out.stderr, out.stderr
    assert ref_of(ledger, receipts) is None and ref_of(reviews.forge, review) is None  # nothing spent
    out = cli(*record_args(reviews, attempt, scoring, "the-runner", *via), cwd=reviews.root, env=RUNNER)
    assert out.returncode == 0, out.stderr
    reviews.ledger("close", attempt, *via)
    checked = reviews.check(attempt, ledger=ledger)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_another_attempts_receipt_is_not_spent_on_this_attempts_ledger(reviews: ReviewForge, tmp_path: Path) -> None:
    """The agent puts a sealed receipt of an earlier attempt (its own scoring directory held it) where the
    runner's `gate review push --receipt` reads it. It was committed to this attempt's receipt ref on the
    ledger (nothing there compares its attempt or ref) and moved the forge's review ref to that attempt's
    head: the check refused it, and every later review of this attempt (GATE-REVIEW-UNRECORDED: the chain
    names another ref) for good. Now refused before anything is pushed; this attempt's review then lands."""
    ledger, via = ledger_repository(tmp_path)
    other, other_scoring = reviews.open("model-a", "demo/repo", *via)
    theirs = reviews.record(other, other_scoring, "model-a", "--push", *via)
    attempt, scoring = reviews.open("model-a", "demo/repo", *via)
    planted = scoring / "receipt-model-a.json"
    planted.write_bytes(theirs.read_bytes())
    code, err = push(reviews, attempt, planted, *via)
    assert code == 1 and "GATE-BIND-ATTEMPT" in err, err
    assert ref_of(ledger, f"refs/gate/receipts/{attempt}") is None
    assert ref_of(reviews.forge, f"refs/heads/review/runner/{attempt}") is None
    planted.unlink()
    reviews.record(attempt, scoring, "model-a", "--push", *via)
    reviews.ledger("close", attempt, *via)
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_receipt_the_ledger_holds_already_is_not_pushed_again(reviews: ReviewForge, tmp_path: Path) -> None:
    """Model A reviews the head, a failover, model B reviews it (its receipt moves the review ref from the
    head to itself), and again (another file). A retry of the push of B's first receipt: it follows the
    ledger's last one (both leave the ref at the head), so it was committed to the ledger a second time
    and the chain ended in a replay (GATE-RECEIPT-REUSED at the check). Now refused before it is pushed."""
    ledger, via = ledger_repository(tmp_path)
    attempt, scoring = reviews.open("model-a", "demo/repo", *via)
    reviews.record(attempt, scoring, "model-a", "--push", *via)
    reviews.ledger("failover", attempt, "--model", "model-b", "--reason", "model-a offline", *via)
    first = reviews.record(attempt, scoring, "model-b", "--push", *via)
    again = scoring / "receipt-model-b-again.json"
    answer = scoring / "model-b-again.json"
    answer.write_text(json.dumps({"verdict": "pass", "reasons": ["reviewed by model-b, again"]}))
    made = cli("review", "record", "--repo", str(reviews.runner.path), "--attempt", attempt, "--head", "feature",
               "--model-output", str(answer), "--key", str(reviews.root / "runner-1.key"),
               "--out", str(again), "--remote", "origin", *via, cwd=reviews.root, env=RUNNER)
    assert made.returncode == 0, made.stderr
    assert push(reviews, attempt, again, *via)[0] == 0
    receipts = f"refs/gate/receipts/{attempt}"
    tip = ref_of(ledger, receipts)
    code, err = push(reviews, attempt, first, *via)
    assert code == 1 and "GATE-RECEIPT-REUSED" in err, err
    assert ref_of(ledger, receipts) == tip
    reviews.ledger("close", attempt, *via)
    out = reviews.check(attempt, ledger=ledger)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("spelling", ["origin", "url", "path", "path-without-.git", "localhost", "escaped"])
def test_a_ledger_remote_naming_the_forge_itself_is_refused(reviews: ReviewForge, tmp_path: Path,
                                                            spelling: str) -> None:
    """`--ledger-remote` names the same repository as `--push` / `--remote` (origin): by its name, by its
    URL, or by its path with a trailing slash (and, found in a later review, as git also reads it: the
    path without `.git`, `file://localhost/...`, `%2E` for a dot). The commands took it for a ledger repository apart and wrote
    the ledger, claims, receipts and approvals on the forge, where the agent writes them, in two pushes
    where one atomic push was due. Now refused before anything is read or written."""
    forge = str(reviews.forge)
    same = {"origin": "origin", "url": f"file://{forge}", "path": f"{forge}/",
            "path-without-.git": forge.removesuffix(".git"),  # (git finds X.git where X is none)
            "localhost": f"file://localhost{forge}", "escaped": f"file://{forge}".replace(".git", "%2Egit")}[spelling]
    assert git(reviews.runner.path, "ls-remote", same, "HEAD").returncode == 0  # git reaches the forge so
    via = ("--ledger-remote", same)
    exports = reviews.bootstrap()
    attempt = exports["ATTEMPT_ID"]
    scoring = Path(exports["GATE_SCORING_DIR"])
    key = str(reviews.root / "orchestrator-1.key")
    commands = [
        ("attempt", "open", "--repo", str(reviews.runner.path), "--attempt", attempt, "--workspace", "ws-1",
         "--workspace-gen", exports["WORKSPACE_GEN"], "--prompt-file", str(reviews.prompt), "--repository-id",
         "demo/repo", "--key", key, "--push", "origin", *via),
        ("attempt", "close", "--repo", str(reviews.runner.path), "--attempt", attempt, "--key", key, "--push",
         "origin", *via),
        record_args(reviews, attempt, scoring, "model-a", *via),
        reviews.run_args(attempt, scoring, *via),
        ("review", "push", "--repo", str(reviews.runner.path), "--attempt", attempt, "--receipt",
         str(scoring / "receipt-model-a.json"), "--remote", "origin", *via),
        ("ledger", "archive", "--repo", str(reviews.runner.path), "--remote", "origin", "--older-than", "0", *via),
        ("approve", "--repository-id", "demo/repo", "--ref", "refs/heads/main", "--old", reviews.main, "--new",
         reviews.head, "--path", "app.py", "--approver", "alice", "--key", str(reviews.root / "alice-1.key"),
         "--yes", "--repo", str(reviews.runner.path), *via),
    ]
    before = git(reviews.forge, "for-each-ref").stdout
    for args in commands:
        out = cli(*args, cwd=reviews.root, env=RUNNER)
        assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr and "same repository" in out.stderr, (
            args, out.stdout, out.stderr)
    assert git(reviews.forge, "for-each-ref").stdout == before
