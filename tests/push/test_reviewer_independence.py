"""Reviewer independence through real pushes: the orchestrator records who wrote
the change when it opens the attempt, the gate refuses a review by the author's model or vendor.

Every ledger record and review is written and pushed by the trusted side's own code (`Lab`), the
policy is installed with `gate server install`: a review by another model of the author's vendor
is refused (`GATE-REVIEW-SAME-VENDOR`) and nothing moves; after a failover to another vendor's
model the same change passes; an attempt opened without an author cannot show independence; a
reviewer whose id no naming scheme places (an Azure deployment) is refused until the policy names
the model it serves, and a model of its own passes once the policy names its vendor; under
`"model"` the author's model under another name (OpenRouter's and Bedrock's, Cursor's word order,
the policy's alias) is refused. The reviewed commits' own evidence adds authors: a co-author
trailer of another vendor's agent, a trailer naming the model (read by the same model-id table:
Bedrock's id is the model, an id no scheme places is refused until the policy names it).
`gate attempt show` names author, reviewer and initiator, and
the exported attestation carries them. The decision's permutations run in-process
(tests/unit/test_vendors.py, tests/unit/test_modelnames.py).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import cli
from support.lab import LAB_POLICY, Lab
from support.verdicts import assert_refused, codes_of

from gatecore.adapters.config import load_vendor_table
from gatecore.checks.independence import Author

VENDOR_POLICY = LAB_POLICY + '[review]\nindependent = "vendor"\n'
AUTHOR = Author("claude-sonnet-4-5-20250929", None, "hana@example.com")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("independence") / "lab", policy=VENDOR_POLICY,
               key_ids=("orch-1", "runner-1"))


@pytest.fixture
def policy(lab: Lab) -> Iterator[Path]:
    """The lab's policy file; whatever a test installs, the vendor policy is back afterwards."""
    try:
        yield lab.server.policy_file
    finally:
        lab.server.policy_file.write_text(VENDOR_POLICY)
        lab.server.install("--policy", str(lab.server.policy_file))


def opened(lab: Lab, reviewer: str, author: Author | None = AUTHOR) -> str:
    attempt = lab.fresh()
    result = lab.append(attempt, "opened", author=author, **lab.open_fields(attempt))
    assert result is not None and result.ok, result
    result = lab.append(attempt, "model-selected", model_id=reviewer)
    assert result is not None and result.ok, result
    return attempt


def test_a_review_by_the_authors_vendor_is_refused_and_another_vendors_passes(lab: Lab) -> None:
    attempt = opened(lab, "us.anthropic.claude-opus-4-1-20250805-v1:0")
    head = lab.change(f"c-{attempt}")
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-VENDOR")
    assert codes_of(out) == {"GATE-REVIEW-SAME-VENDOR"}
    assert "is anthropic's (vendor table" in out.output and "claude-sonnet-4-5-20250929" in out.output

    shown = cli("attempt", "show", "--repo", str(lab.work.path), "--attempt", attempt)
    assert shown.returncode == 0, shown.stderr
    table = load_vendor_table().version
    assert shown.stdout.splitlines()[:3] == [
        f"author: claude-sonnet-4-5-20250929, read as claude-sonnet-4-5; vendor anthropic (vendor table {table})",
        "reviewer: us.anthropic.claude-opus-4-1-20250805-v1:0, read as claude-opus-4-1; vendor anthropic (vendor "
        f"table {table})",
        "initiator: hana@example.com"]

    result = lab.append(attempt, "failover", model_id="gpt-5")
    assert result is not None and result.ok, result
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert out.ok, out.output
    assert lab.server.audit()[-1]["attempt_ids"] == [attempt]
    assert "reviewer: gpt-5, read as gpt-5; vendor openai" in cli(
        "attempt", "show", "--repo", str(lab.work.path), "--attempt", attempt).stdout

    keyfile = lab.root / "attest.key"
    assert cli("keys", "generate", "--alg", "ed25519", "--id", "attest-1", "--purpose", "attestation",
               "--out", str(keyfile)).returncode == 0
    bundle = cli("attest", "export", "--repo", str(lab.server.bare), "--key", str(keyfile),
                 "--ref", f"refs/heads/review/runner/{attempt}")
    assert bundle.returncode == 0, bundle.stderr
    [line] = bundle.stdout.splitlines()
    statement = json.loads(base64.b64decode(json.loads(line)["payload"]))
    records = {a["name"]: a["annotations"] for a in statement["predicate"]["inputAttestations"]}
    assert (records["ledger-opened"]["author_model"], records["ledger-opened"]["initiator"]) == (
        "claude-sonnet-4-5-20250929", "hana@example.com")
    assert "author_vendor" not in records["ledger-opened"] and records["receipt"]["model_id"] == "gpt-5"


def test_an_attempt_opened_without_an_author_cannot_show_independence(lab: Lab) -> None:
    attempt = opened(lab, "gpt-5", author=None)
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, lab.change(f"c-{attempt}")))
    assert_refused(lab, before, out, "GATE-REVIEW-AUTHOR-UNKNOWN")
    assert "gate attempt open ... --author-model" in out.output  # the hint says what to do


def test_a_reviewer_no_scheme_places_is_refused_until_the_policy_names_its_model_and_vendor(
        lab: Lab, policy: Path) -> None:
    attempt = opened(lab, "acme-coder-1")
    receipt = lab.record(attempt, lab.change(f"c-{attempt}"))
    before = lab.snapshot()
    out = lab.push_review(attempt, receipt)
    assert_refused(lab, before, out, "GATE-REVIEW-MODEL-UNPLACED")
    assert "acme-coder-1 is placed by no model-id scheme" in out.output and "[review.models]" in out.output
    policy.write_text(VENDOR_POLICY + '[review.models]\n"acme-coder-1" = "acme-coder-1"\n')
    lab.server.install("--policy", str(policy))
    out = lab.push_review(attempt, receipt)  # a model of its own: of no known vendor yet
    assert_refused(lab, before, out, "GATE-REVIEW-VENDOR-UNKNOWN")
    assert "[review.vendors]" in out.output
    policy.write_text(VENDOR_POLICY + '[review.models]\n"acme-coder-1" = "acme-coder-1"\n'
                                      '[review.vendors]\nacme = ["acme-coder-*"]\n')
    lab.server.install("--policy", str(policy))
    out = lab.push_review(attempt, receipt)  # the same receipt: the refused pushes used nothing
    assert out.ok, out.output


def test_under_model_the_authors_model_by_another_name_is_refused(lab: Lab, policy: Path) -> None:
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n')
    lab.server.install("--policy", str(policy))
    attempt = opened(lab, "anthropic/claude-sonnet-4.5")
    head = lab.change(f"c-{attempt}")
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-MODEL")
    assert "both read claude-sonnet-4-5" in out.output
    result = lab.append(attempt, "failover", model_id="claude-opus-4-1")  # the vendor's other model: "model" allows it
    assert result is not None and result.ok, result
    assert lab.push_review(attempt, lab.record(attempt, head)).ok


@pytest.mark.parametrize("author,reviewer,read", [
    ("deepseek/deepseek-r1", "us.deepseek.r1-v1:0", "both read deepseek-r1"),  # OpenRouter's, Bedrock's
    ("claude-4.5-sonnet", "claude-sonnet-4-5-20250929", "both read claude-sonnet-4-5"),  # Cursor's word order
    ("claude-sonnet-4-5-20250929", "sonnet", "claude-sonnet and claude-sonnet-4-5 are one model"),  # Claude Code
])
def test_under_model_two_names_of_one_model_are_refused(lab: Lab, policy: Path, author: str, reviewer: str,
                                                         read: str) -> None:
    """Both were accepted before: Bedrock's prefix was stripped with its vendor (the id read `r1`),
    and Cursor's word order read as another model."""
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n')
    lab.server.install("--policy", str(policy))
    attempt = opened(lab, reviewer, author=Author(author))
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, lab.change(f"c-{attempt}")))
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-MODEL")
    assert codes_of(out) == {"GATE-REVIEW-SAME-MODEL"} and read in out.output, out.output


def test_a_deployment_name_is_refused_until_the_policy_says_which_model_it_serves(lab: Lab, policy: Path) -> None:
    """Azure's deployment names are chosen by their owner: `azure/team-gpt` could be any model, so
    it is refused under "model"; once the policy names the model it serves, it is judged as that."""
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n')
    lab.server.install("--policy", str(policy))
    attempt = opened(lab, "azure/team-claude")
    head = lab.change(f"c-{attempt}")
    receipt = lab.record(attempt, head)
    before = lab.snapshot()
    out = lab.push_review(attempt, receipt)
    assert_refused(lab, before, out, "GATE-REVIEW-MODEL-UNPLACED")
    assert "(here: azure/)" in out.output and "named by its owner" in out.output
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n[review.models]\n'
                                   '"azure/team-claude" = "claude-sonnet-4-5"\n')
    lab.server.install("--policy", str(policy))
    out = lab.push_review(attempt, receipt)  # the author's model, by the policy's word
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-MODEL")
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n[review.models]\n'
                                   '"azure/team-claude" = "gpt-5"\n')
    lab.server.install("--policy", str(policy))
    assert lab.push_review(attempt, receipt).ok


# --- authors from the evidence of the reviewed commits ---------------------------------------------

GPT_AUTHOR = Author("gpt-5", "openai", "hana@example.com")


def change_with(lab: Lab, name: str, message: str) -> str:
    """A commit on top of the base whose message is `message` (its trailers included), by a human."""
    lab.work.git("checkout", "-q", "-f", "-B", name, lab.base)
    lab.work.write(f"src/{name}.py", f"print({name!r})\n")
    head = lab.work.commit(message)
    lab.work.git("checkout", "-q", "--detach")
    return head


def test_the_commits_show_an_author_the_ledger_does_not_name(lab: Lab, policy: Path) -> None:
    """The ledger says gpt-5 wrote the change; a reviewed commit says Claude Code co-wrote it. A
    review by Claude is refused under "vendor", the refusal naming the commit and its trailer; the
    ledger alone would have let it through. Under "off" nothing is read."""
    attempt = opened(lab, "claude-opus-4-1", author=GPT_AUTHOR)
    head = change_with(lab, f"ev-{attempt}", "Tidy the parser\n\nCo-Authored-By: Claude <noreply@anthropic.com>\n")
    receipt = lab.record(attempt, head)
    before = lab.snapshot()
    out = lab.push_review(attempt, receipt)
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-VENDOR")
    assert f"commit {head[:12]} shows claude" in out.output
    assert "Co-Authored-By: Claude <noreply@anthropic.com>" in out.output or "noreply@anthropic.com" in out.output
    policy.write_text(LAB_POLICY)
    lab.server.install("--policy", str(policy))
    assert lab.push_review(attempt, receipt).ok  # "off": the same receipt, nothing asked


def test_a_commit_that_names_its_model_is_that_models_under_model(lab: Lab, policy: Path) -> None:
    """`Assisted-by: AGENT:MODEL` (the Linux kernel's trailer) names the model that wrote the
    commit: under "model" a review by that model is refused, by another model of its vendor not."""
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n')
    lab.server.install("--policy", str(policy))
    attempt = opened(lab, "claude-opus-4-1", author=GPT_AUTHOR)
    head = change_with(lab, f"named-{attempt}", "Fix the cache\n\nAssisted-by: Claude:claude-opus-4-1-20250805\n")
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-MODEL")
    assert f"commit {head[:12]} shows ai-assistance-trailers" in out.output and "claude-opus-4-1-20250805" in out.output
    result = lab.append(attempt, "failover", model_id="claude-sonnet-4-5")
    assert result is not None and result.ok, result
    assert lab.push_review(attempt, lab.record(attempt, head)).ok


def test_the_evidence_reads_model_ids_as_the_ledger_does(lab: Lab, policy: Path) -> None:
    """A trailer naming the reviewer under another of its names (Bedrock's id for Claude Opus 4.1)
    is that model; a trailer naming a model no scheme places cannot be told apart from the
    reviewer, so it is refused as the ledger's id would be, until the policy names it."""
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n')
    lab.server.install("--policy", str(policy))
    attempt = opened(lab, "claude-opus-4-1", author=GPT_AUTHOR)
    head = change_with(lab, f"bedrock-{attempt}",
                       "Fix the cache\n\nAssisted-by: Claude:us.anthropic.claude-opus-4-1-20250805-v1:0\n")
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-MODEL")
    assert f"commit {head[:12]} shows ai-assistance-trailers" in out.output, out.output
    head = change_with(lab, f"deployed-{attempt}", "Fix the cache\n\nAssisted-by: Claude:azure/team-model\n")
    receipt = lab.record(attempt, head)
    out = lab.push_review(attempt, receipt)
    assert_refused(lab, before, out, "GATE-REVIEW-MODEL-UNPLACED")
    assert codes_of(out) == {"GATE-REVIEW-MODEL-UNPLACED"} and f"commit {head[:12]}" in out.output, out.output
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n[review.models]\n'
                                   '"azure/team-model" = "gpt-5"\n')
    lab.server.install("--policy", str(policy))
    assert lab.push_review(attempt, receipt).ok  # another model than the reviewer, by the policy's word


def test_every_model_a_commit_names_counts_not_the_first(lab: Lab, policy: Path) -> None:
    """Issue 44: the ledger says gpt-5 wrote the change, the reviewer is claude-opus-4-1, and one
    reviewed commit names claude-sonnet-4-5 and then claude-opus-4-1. The first model alone was
    read, so the review was accepted while the same commit with the second trailer alone was
    refused; every model named counts now, in either order."""
    policy.write_text(LAB_POLICY + '[review]\nindependent = "model"\n')
    lab.server.install("--policy", str(policy))
    attempt = opened(lab, "claude-opus-4-1", author=GPT_AUTHOR)
    before = lab.snapshot()
    for n, trailers in enumerate(("Assisted-by: Claude:claude-sonnet-4-5\nAssisted-by: Claude:claude-opus-4-1\n",
                                  "assisted-by: Claude:claude-opus-4-1\nAssisted-By: Claude:claude-sonnet-4-5\n")):
        head = change_with(lab, f"two-{n}-{attempt}", f"Fix the cache\n\n{trailers}")
        out = lab.push_review(attempt, lab.record(attempt, head))
        assert_refused(lab, before, out, "GATE-REVIEW-SAME-MODEL")
        assert codes_of(out) == {"GATE-REVIEW-SAME-MODEL"} and "naming claude-opus-4-1" in out.output, out.output
