"""Attacks on review refs and their receipts, as test functions both tiers collect: every one
runs in process (`tests/engine/test_receipt_attacks.py`, on an `EngineLab`), and one of each family
through a real push (`tests/push/test_review_refs.py`, on a `Lab`); the module that imports a test
gives it its `lab` and `victim` fixtures. A rejection must leave every ref as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gatecore import strictjson
from gatecore.git.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from gatecore.signing import envelope

from ..attacks import SEAL_ATTACKS
from ..gitutil import git
from ..lab import AGENT_PUSH, AGENT_USER, RUNNER, Lab
from ..verdicts import assert_refused, refused

ZERO = "0" * 40

# --- the flow works (so that every rejection below is meaningful) ------------------------


def test_a_fresh_bound_receipt_is_accepted(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"fresh-{attempt}")
    result = lab.push_review(attempt, lab.record(attempt, head))
    assert result.ok, result.output
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head
    assert lab.server.audit()[-1]["attempt_ids"] == [attempt]


def test_the_bare_crafted_receipt_path_accepts_a_good_receipt(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"crafted-{attempt}")
    out = lab.push_receipt_bytes(attempt, lab.seal(lab.good_doc(attempt, head)), head)
    assert out.returncode == 0, out.stderr
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head


# --- stale, swapped and mis-bound receipts -----------------------------------------------

def test_the_incident_stale_receipt_after_failover_is_rejected(lab: Lab) -> None:
    attempt = lab.open(model="model-a")
    head = lab.change(f"incident-{attempt}")
    stale = lab.record(attempt, head)
    assert lab.append(attempt, "failover", model_id="model-b", note="model-a offline").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    out = lab.push_review(attempt, stale)
    assert_refused(lab, before, out, "GATE-BIND-MODEL", "GATE-BIND-LEDGER")
    assert "field=model_id" in out.output
    fresh = lab.push_review(attempt, lab.record(attempt, head))
    assert fresh.ok, fresh.output


def test_receipt_of_a_superseded_attempt_is_rejected(lab: Lab) -> None:
    old = lab.open()
    head = lab.change(f"superseded-{old}")
    old_receipt = lab.record(old, head).read_bytes()
    new = lab.open()
    before = lab.snapshot()
    out = lab.push_receipt_bytes(new, old_receipt, head)
    assert_refused(lab, before, out, "GATE-BIND-ATTEMPT", "GATE-BIND-GENERATION", "GATE-BIND-REF",
                   "GATE-BIND-LEDGER")


@pytest.mark.parametrize("field,value,code", [
    ("model_id", "model-b", "GATE-BIND-MODEL"),
    ("workspace_generation", "g-rolled-back", "GATE-BIND-GENERATION"),
    ("prompt_sha256", "e" * 64, "GATE-BIND-PROMPT"),
    ("diff_sha256", "d" * 64, "GATE-BIND-DIFF"),
    ("repository", "other/repo", "GATE-BIND-REPOSITORY"),
    ("ref", "refs/heads/review/runner/someone-else", "GATE-BIND-REF"),
    ("old_commit", "c" * 40, "GATE-BIND-OLD-COMMIT"),
    ("ledger_record", None, "GATE-BIND-LEDGER"),
    ("base_commit", "9" * 40, "GATE-BIND-BASE-COMMIT"),
])
def test_validly_sealed_receipt_with_one_field_off_is_rejected(lab: Lab, victim: dict[str, Any], field: str,
                                                               value: Any, code: str) -> None:
    doc = {k: v for k, v in {**victim["doc"], field: value}.items() if v is not None}
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], lab.seal(doc), victim["head"]), code)


def test_receipt_for_another_repository_issued_by_its_runner_is_rejected(lab: Lab,
                                                                         victim: dict[str, Any]) -> None:
    attempt = victim["attempt"]
    path = lab.record(attempt, victim["head"], repository_id="other/repo")
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, path), "GATE-BIND-REPOSITORY")


def test_diff_changed_after_scoring_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    amended = lab.change(f"amended-{victim['attempt']}", {"src/sneak.py": "import os\n"}, start=victim["head"])
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), amended)
    assert_refused(lab, before, out, "GATE-BIND-DIFF", "GATE-BIND-NEW-COMMIT", "GATE-BIND-NEW-TREE")


def test_receipt_for_an_old_commit_of_the_ref_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    first = lab.change(f"old1-{attempt}")
    second = lab.change(f"old2-{attempt}", {"src/two.py": "2\n"}, start=first)
    early = lab.record(attempt, second)  # old_commit: zeros (the ref does not exist yet)
    assert lab.push_review(attempt, lab.record(attempt, first)).ok
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(attempt, early.read_bytes(), second), "GATE-BIND-OLD-COMMIT")


def _reviewed_twice(lab: Lab, name: str) -> tuple[str, str, Path]:
    """An attempt whose review ref went to one commit, then to a second: (attempt, the first, its
    receipt), the first receipt replayable in every way but its old value."""
    attempt = lab.open()
    one = lab.change(f"{name}1-{attempt}")
    two = lab.change(f"{name}2-{attempt}", {"src/two.py": "2\n"}, start=one)
    r1 = lab.record(attempt, one)
    assert lab.push_review(attempt, r1).ok
    assert lab.push_review(attempt, lab.record(attempt, two)).ok  # a later review supersedes r1
    return attempt, one, r1


def test_receipt_replayed_after_the_ref_moved_is_rejected(lab: Lab) -> None:
    attempt, one, r1 = _reviewed_twice(lab, "replay")
    before = lab.snapshot()
    assert not lab.push_review(attempt, r1).ok  # the runner's own push (its lease, or the gate) refuses
    assert_refused(lab, before, lab.push_receipt_bytes(attempt, r1.read_bytes(), one), "GATE-BIND-OLD-COMMIT")


def test_receipt_replayed_after_the_review_ref_was_deleted_is_rejected(lab: Lab) -> None:
    attempt, _one, r1 = _reviewed_twice(lab, "redo")
    assert lab.server.push(f":{REVIEW_PREFIX}{attempt}", pusher_env=RUNNER).ok  # cleanup
    before = lab.snapshot()
    out = lab.push_review(attempt, r1)  # r1 says old_commit = zeros: true again
    assert_refused(lab, before, out, "GATE-RECEIPT-REUSED")


@pytest.mark.parametrize("encoding", ["indent", "key-order", "compact"])
def test_a_receipt_re_encoded_is_still_the_same_receipt(lab: Lab, encoding: str) -> None:
    """Same payload, same seal, other envelope bytes: after the review ref was deleted and the
    receipt's old_commit (zeros) is true again, it is still a reused receipt."""
    attempt = lab.open()
    head = lab.change(f"reencoded-{attempt}")
    r1 = lab.record(attempt, head)
    assert lab.push_review(attempt, r1).ok
    assert lab.server.push(f":{REVIEW_PREFIX}{attempt}", pusher_env=RUNNER).ok
    doc = json.loads(r1.read_bytes())
    again = {"indent": json.dumps(doc, indent=4), "compact": json.dumps(doc, separators=(",", ":")),
             "key-order": json.dumps(dict(reversed(list(doc.items()))))}[encoding].encode()
    assert again != r1.read_bytes() and envelope.parse(again) == envelope.parse(r1.read_bytes())
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(attempt, again, head), "GATE-RECEIPT-REUSED")


# --- verdicts and reasons ----------------------------------------------------------------

@pytest.mark.parametrize("changes,code", [
    ({"verdict": "PASS"}, "GATE-RECEIPT-VERDICT"),
    ({"reasons": ["  ", "\t\n"]}, "GATE-RECEIPT-REASONS"),
    ({"attempt_id": "../../etc/passwd"}, "GATE-RECEIPT-FIELD"),
    ({"approved_by": "admin"}, "GATE-RECEIPT-FIELD"),
])
def test_receipt_content_attacks_are_rejected(lab: Lab, victim: dict[str, Any], changes: dict[str, Any],
                                              code: str) -> None:
    doc = {k: v for k, v in {**victim["doc"], **changes}.items() if v is not None}
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], lab.seal(doc), victim["head"]), code)


def test_a_fail_verdict_from_the_runner_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    path = lab.record(victim["attempt"], victim["head"],
                      output=json.dumps({"verdict": "fail", "reasons": ["breaks the build"]}).encode())
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(victim["attempt"], path), "GATE-VERDICT-FAIL")


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-1] + ',"verdict":"fail"}',
    lambda t: t.replace('"version":1', '"version":1.0'),
    lambda t: t.replace('"version":1', '"version":NaN'),
    lambda t: t.replace('"version":1', '"version":1e400'),
], ids=["duplicate-key", "float", "nan", "huge-exponent"])
def test_json_traps_in_a_sealed_payload_are_rejected(lab: Lab, victim: dict[str, Any],
                                                     mangle: Callable[[str], str]) -> None:
    text = strictjson.dumps(victim["doc"]).decode()
    data = lab.seal({}, payload=mangle(text).encode())
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], data, victim["head"]),
                   "GATE-RECEIPT-MALFORMED")


# --- seals -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(SEAL_ATTACKS))
def test_seal_and_validity_attacks_are_rejected(lab: Lab, victim: dict[str, Any], name: str) -> None:
    build, codes = SEAL_ATTACKS[name]
    data = build(lab, victim["doc"])
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], data, victim["head"]), *codes)


def test_a_huge_receipt_blob_is_rejected_by_size_before_reading(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], b"{" + b" " * (8 << 20) + b"}", victim["head"])
    assert_refused(lab, before, out, "GATE-RECEIPT-TOO-LARGE")


def test_an_attempt_record_pushed_as_a_receipt_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    tip = lab.ledger_tip(victim["attempt"])
    record = git(lab.work.path, "show", f"{tip}:record.json").stdout.encode()
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], record, victim["head"]),
                   "GATE-SEAL-PAYLOAD-TYPE")


# --- the receipt commit's shape ----------------------------------------------------------

@pytest.mark.parametrize("mode,name", [("120000", "receipt.json"), ("100644", "Receipt.json")])
def test_receipt_commit_of_the_wrong_shape_is_rejected(lab: Lab, victim: dict[str, Any], mode: str,
                                                       name: str) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], mode=mode, name=name)
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


def test_a_receipt_ref_moved_by_two_commits_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    from gatecore.records.ledger import RECEIPT_FILE

    data = lab.seal(victim["doc"])
    between = lab.ledger_commit(b"", None, files={RECEIPT_FILE: (0o100644, data), "extra": (0o100644, b"x")})
    tip = lab.ledger_commit(b"", None, files={RECEIPT_FILE: (0o100644, data)}, parents=[between])
    before = lab.snapshot()
    out = lab.server.push(f"+{victim['head']}:{REVIEW_PREFIX}{victim['attempt']}",
                          f"{tip}:{RECEIPTS_PREFIX}{victim['attempt']}", pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


def test_a_receipt_commit_that_is_a_merge_with_a_foreign_first_parent_is_rejected(lab: Lab) -> None:
    from gatecore.records.ledger import RECEIPT_FILE

    attempt = lab.open()
    first = lab.change(f"merge1-{attempt}")
    assert lab.push_review(attempt, lab.record(attempt, first)).ok
    second = lab.change(f"merge2-{attempt}", start=first)
    data = lab.record(attempt, second).read_bytes()
    previous = lab.server.ref(RECEIPTS_PREFIX + attempt)
    assert previous is not None
    merge = lab.ledger_commit(b"", None, files={RECEIPT_FILE: (0o100644, data)}, parents=[lab.base, previous])
    before = lab.snapshot()
    out = lab.server.push(f"{second}:{REVIEW_PREFIX}{attempt}", f"{merge}:{RECEIPTS_PREFIX}{attempt}",
                          pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


# --- missing pieces and ledger states -------------------------------------------------------

def test_review_ref_without_a_receipt_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    out = lab.server.push(f"{victim['head']}:{REVIEW_PREFIX}{victim['attempt']}", pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-RECEIPT-MISSING")


def test_receipt_ref_without_its_review_ref_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    commit = lab.receipt_commit(victim["attempt"], lab.seal(victim["doc"]))
    before = lab.snapshot()
    out = lab.server.push(f"{commit}:{RECEIPTS_PREFIX}{victim['attempt']}", pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


def test_review_for_an_attempt_without_a_ledger_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    before = lab.snapshot()
    doc = {**victim["doc"], "attempt_id": "never-opened", "ref": REVIEW_PREFIX + "never-opened"}
    assert_refused(lab, before, lab.push_receipt_bytes("never-opened", lab.seal(doc), victim["head"]),
                   "GATE-LEDGER-MISSING")


def test_review_before_a_model_is_on_record_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    attempt = lab.open(model=None)
    doc = {**victim["doc"], "attempt_id": attempt, "ref": REVIEW_PREFIX + attempt}
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(attempt, lab.seal(doc), victim["head"]),
                   "GATE-LEDGER-NO-MODEL")


def test_review_of_a_closed_attempt_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"closed-{attempt}")
    receipt = lab.record(attempt, head)
    assert lab.append(attempt, "closed", note="gave up").ok  # type: ignore[union-attr]
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, receipt), "GATE-LEDGER-CLOSED")


# --- who may push the reserved namespaces ---------------------------------------------------

@pytest.mark.parametrize("pusher", [AGENT_USER, "hana"])
def test_only_the_runner_may_push_a_review_even_with_a_valid_receipt(lab: Lab, victim: dict[str, Any],
                                                                     pusher: str) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], pusher=pusher)
    assert_refused(lab, before, out, "GATE-REVIEW-PUSHER")


@pytest.mark.parametrize("refspec_kind", ["ledger-create", "ledger-append", "ledger-delete", "receipt",
                                          "review-delete", "other-gate-ref"])
def test_agent_pushes_to_the_reserved_namespaces_are_rejected(lab: Lab, victim: dict[str, Any],
                                                              refspec_kind: str) -> None:
    attempt = victim["attempt"]
    tip = lab.ledger_tip(attempt)
    forged = lab.change(f"forged-{refspec_kind}", {"record.json": "{}\n"}, start=tip)
    refspec, code = {
        "ledger-create": (f"{forged}:{ATTEMPTS_PREFIX}agent-made", "GATE-LEDGER-PUSHER"),
        "ledger-append": (f"{forged}:{ATTEMPTS_PREFIX}{attempt}", "GATE-LEDGER-PUSHER"),
        "ledger-delete": (f":{ATTEMPTS_PREFIX}{attempt}", "GATE-LEDGER-PUSHER"),
        "receipt": (f"{forged}:{RECEIPTS_PREFIX}{attempt}", "GATE-REVIEW-PUSHER"),
        "review-delete": (f":{REVIEW_PREFIX}{attempt}", "GATE-REVIEW-PUSHER"),
        "other-gate-ref": (f"{forged}:refs/gate/policy", "GATE-REF-RESERVED"),
    }[refspec_kind]
    if refspec_kind == "review-delete":  # give it something to delete
        fresh = lab.open()
        head = lab.change(f"to-delete-{fresh}")
        assert lab.push_review(fresh, lab.record(fresh, head)).ok
        refspec = f":{REVIEW_PREFIX}{fresh}"
    before = lab.snapshot()
    assert_refused(lab, before, lab.server.push(refspec, pusher_env=AGENT_PUSH), code)


def test_runner_cannot_launder_an_agent_frozen_write_through_a_review_ref(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"launder-{attempt}", {"ci/deploy.yml": "deploy: skip-review\n"})
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, lab.record(attempt, head)), "GATE-FROZEN-PATH")


def test_a_review_and_a_ledger_record_of_one_attempt_in_one_push_are_refused(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"together-{attempt}")
    doc = lab.good_doc(attempt, head)
    lab.append(attempt, "failover", remote=False, model_id="model-b")
    local = git(lab.work.path, "rev-parse", ATTEMPTS_PREFIX + attempt).stdout.strip()
    commit = lab.receipt_commit(attempt, lab.seal(doc))
    before = lab.snapshot()
    out = lab.server.push(f"{local}:{ATTEMPTS_PREFIX}{attempt}", f"{head}:{REVIEW_PREFIX}{attempt}",
                          f"{commit}:{RECEIPTS_PREFIX}{attempt}", pusher_env=RUNNER)
    assert_refused(lab, before, out, "GATE-REVIEW-SAME-PUSH")


# --- the base the server chooses -----------------------------------------------------------------

def test_a_receipt_for_part_of_the_change_is_refused(lab: Lab) -> None:
    attempt = lab.open()
    first = lab.change(f"part1-{attempt}", {"src/part1.py": "unreviewed\n"})
    second = lab.change(f"part2-{attempt}", {"src/part2.py": "reviewed\n"}, start=first)
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, second, base=first))
    assert_refused(lab, before, out, "GATE-BIND-BASE-COMMIT")
    assert "leaves out changes" in out.output


def test_an_empty_diff_receipt_is_refused(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"empty-{attempt}")
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, lab.record(attempt, head, base=head)),
                   "GATE-BIND-BASE-COMMIT")


def test_the_target_branch_named_when_the_attempt_opened_decides_the_base(lab: Lab) -> None:
    release = lab.change("release-line", {"src/release.py": "r\n"}, identity=("Hana Human", "hana@example.com"))
    assert lab.server.push(f"{release}:refs/heads/release").ok
    attempt = lab.fresh()
    assert lab.append(attempt, "opened", target="refs/heads/release", **lab.open_fields(attempt)).ok  # type: ignore[union-attr]
    assert lab.append(attempt, "model-selected", model_id="model-a").ok  # type: ignore[union-attr]
    state = lab.state(attempt)
    assert state is not None and state.target == "refs/heads/release"
    head = lab.change(f"on-release-{attempt}", start=release)
    # Reviewed from main's base, it covers release's commit too: accepted (more than enough).
    assert lab.push_review(attempt, lab.record(attempt, head, base=lab.base)).ok
    # Reviewed from a commit not on release: refused; from release itself: exactly the change, accepted.
    head2 = lab.change(f"on-release2-{attempt}", {"src/r2.py": "2\n"}, start=head)
    assert refused(lab.push_review(attempt, lab.record(attempt, head2, base=head)), "GATE-BIND-BASE-COMMIT")
    assert lab.push_review(attempt, lab.record(attempt, head2, base=release)).ok


