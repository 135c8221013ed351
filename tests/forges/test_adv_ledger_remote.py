"""An attacker's review of the ledger on a forge (`--ledger-remote`, docs/forges.md, "The receipt flow on
a forge"): the agent, and any account with write access to the forge, pushes anything there (branches,
`refs/gate/*`, the review ref), cannot write the ledger repository and holds no key. Real repositories and
real pushes throughout (`test_receipt_flow.ReviewForge`: a forge without a hook, the trusted side's clone,
the CI clone the check runs on).

* a ledger kept on the forge (no `--ledger-remote`, or one naming the forge), rewound by the agent
  between the failover and the close: the orchestrator's close is refused (`GATE-LEDGER-REWRITE`), not
  appended to the rewound ledger, which would have made the incident's stale receipt pass the check."""

from __future__ import annotations

import pytest
from support.cli import cli
from support.gitutil import git
from test_receipt_flow import RUNNER, ReviewForge, codes, ref_of


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
