"""The receipt hook (`gate-review-receipt`) in the trusted side's clone: the runner's own pushes,
the incident, refs pushed by hand, a ledger not fetched, a committed HMAC keyring; the client and
the server give the same verdict."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.gitutil import AGENT, HUMAN, git, git_env
from support.lab import now
from support.precommit import (
    FAIL,
    FETCH_LEDGER,
    PRE_COMMIT,
    RECEIPTS,
    REVIEW,
    HookRepo,
    Review,
    Verdict,
    client_verdict,
    pc_env,
    push_both,
    text,
)

from gatecore.trusted.review import push_review


def test_parity_review_good_receipt_is_accepted_by_both(review: Review) -> None:
    review.open("att-1")  # the ledger pushes go through the receipt hook too
    assert review.server.push("feature", url="origin").returncode == 0
    receipt = review.record("att-1", "receipt.json")
    client, server, output = review.push_review("att-1", receipt)
    assert client == server == Verdict(0, frozenset()), output
    assert review.server.ref(REVIEW + "att-1") == review.head
    # pre-commit named the receipt ref only (the reviewed commit is on the remote already); the hook
    # found the review ref from the receipt and checked both.
    assert f"checked {RECEIPTS}att-1, {REVIEW}att-1;" in output, output
    assert "nothing the server would reject" in output


def test_parity_review_stale_receipt_after_failover_the_incident(review: Review) -> None:
    review.open("att-1", model="model-a")
    stale = review.record("att-1", "receipt.json")
    review.failover("att-1", "model-b")
    client, server, output = review.push_review("att-1", stale)
    assert client == server == Verdict(1, frozenset({"GATE-BIND-MODEL", "GATE-BIND-LEDGER"})), output
    assert "field=model_id" in output
    fresh = review.record("att-1", "receipt-b.json")
    client, server, output = review.push_review("att-1", fresh)
    assert client == server == Verdict(0, frozenset()), output


def test_parity_review_failing_verdict(review: Review) -> None:
    review.open("att-1")
    receipt = review.record("att-1", "receipt.json", FAIL)
    client, server, _ = review.push_review("att-1", receipt)
    assert client == server == Verdict(1, frozenset({"GATE-VERDICT-FAIL"}))


@pytest.mark.parametrize("who", ["agent", "runner"])
def test_parity_review_ref_pushed_by_hand(review: Review, who: str) -> None:
    """An agent may not push review refs; the runner may not push one without its receipt."""
    review.open("att-1")
    env = {"GATE_PUSHER": "agent-7", "REMOTE_USER": "agent-7"} if who == "agent" else {}
    expected = {"GATE-REVIEW-PUSHER"} if who == "agent" else {"GATE-RECEIPT-MISSING"}
    client, server, out = push_both(review.server, f"+feature:{REVIEW}att-1", env=env)
    assert client == server == Verdict(1, frozenset(expected)), text(out)


def test_unknown_pusher_is_treated_as_untrusted(review: Review, monkeypatch: pytest.MonkeyPatch) -> None:
    review.open("att-1")
    monkeypatch.delenv("GATE_PUSHER")
    out = review.server.push(f"+feature:{REVIEW}att-1", url="origin")
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-REVIEW-PUSHER"}))
    assert "pusher (unknown: set GATE_PUSHER)" in text(out)


def test_ledger_not_fetched_says_how_to_fetch_it(review: Review, hook_repo: HookRepo, tmp_path: Path) -> None:
    review.open("att-1")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", review.server.url, str(clone))
    git(clone, "config", "commit.gpgsign", "false")
    out = subprocess.run([*PRE_COMMIT, "install"], cwd=clone, env=git_env(HUMAN, **pc_env(review.pc_home)),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    git(clone, "checkout", "-q", "-b", "work")
    (clone / "src" / "app.py").write_text("print(3)\n")
    git(clone, "commit", "-q", "-a", "--no-verify", "-m", "x", identity=AGENT)
    out = git(clone, "push", "origin", f"HEAD:{REVIEW}att-1", check=False)
    verdict = client_verdict(out)
    assert verdict == Verdict(1, frozenset({"GATE-LEDGER-MISSING"})), text(out)
    assert FETCH_LEDGER in text(out)
    git(clone, "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*")
    out = git(clone, "push", "origin", f"HEAD:{REVIEW}att-1", check=False)
    assert client_verdict(out) == Verdict(1, frozenset({"GATE-RECEIPT-MISSING"})), text(out)


def test_a_committed_hmac_keyring_is_refused(review: Review) -> None:
    review.open("att-1")
    w = review.server.work
    git(w.path, "checkout", "-q", "main")
    w.write(".gate/keyring.toml", '[[key]]\nid = "h"\nalgorithm = "hmac-sha256"\npurpose = "receipt"\n'
                                  'secret = "' + "A" * 43 + '="\n')
    w.commit("hmac keyring", identity=HUMAN)
    assert review.server.push("main", url="origin", extra=("--no-verify",)).returncode == 0
    git(w.path, "checkout", "-q", "feature")
    git(w.path, "merge", "-q", "main", identity=HUMAN)
    receipt = review.record("att-1", "receipt.json")
    result = push_review(review.repo, "att-1", receipt, "origin", now())
    assert not result.ok
    verdict = client_verdict(subprocess.CompletedProcess([], 0, result.output, ""))
    assert verdict == Verdict(2, frozenset({"GATE-CONFIG-KEYRING"})), result.output
    assert "public keys only" in result.output

