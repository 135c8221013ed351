"""Review refs through real pushes: every attack on refs/heads/review/runner/* and its receipt.

Each test pushes into a bare repository with the gate installed (`support.lab.Lab`), expects
its specific GATE- code (from the gate's own gate-json lines), and checks that a rejection
changed no ref, the ledger included. One lab is shared by the module; every test uses
attempt ids and branches of its own.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.gitutil import git
from support.lab import AGENT_PUSH, AGENT_USER, RUNNER, Lab, envelope_doc, raw_json
from support.marks import LONG, more
from support.verdicts import assert_refused, codes_of

from gatecore import envelope, strictjson
from gatecore.keys import SigningKey
from gatecore.refs import ATTEMPTS_PREFIX, RECEIPTS_PREFIX, REVIEW_PREFIX
from gatecore.seal import sign

# --- the flow works (so that every rejection below is meaningful) ------------------------

def test_a_fresh_bound_receipt_is_accepted(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"fresh-{attempt}")
    result = lab.push_review(attempt, lab.record(attempt, head))
    assert result.ok, result.output
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head
    assert lab.server.audit()[-1]["attempt_ids"] == [attempt]


def test_the_bare_crafted_receipt_path_accepts_a_good_receipt(lab: Lab) -> None:
    """push_receipt_bytes (used for malformed receipts below) accepts what the runner seals."""
    attempt = lab.open()
    head = lab.change(f"crafted-{attempt}")
    out = lab.push_receipt_bytes(attempt, lab.seal(lab.good_doc(attempt, head)), head)
    assert out.returncode == 0, out.stderr
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head


# --- stale, swapped and mis-bound receipts -----------------------------------------------

def test_the_incident_stale_receipt_after_failover_is_rejected(lab: Lab) -> None:
    """Model A scores, the attempt fails over to model B, the retry pushes A's receipt."""
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
    """A retry opens a new attempt for the same change; the old attempt's receipt is pushed for it."""
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
    more("prompt_sha256", "e" * 64, "GATE-BIND-PROMPT"),
    more("diff_sha256", "d" * 64, "GATE-BIND-DIFF"),
    ("repository", "other/repo", "GATE-BIND-REPOSITORY"),
    ("ref", "refs/heads/review/runner/someone-else", "GATE-BIND-REF"),
    ("old_commit", "c" * 40, "GATE-BIND-OLD-COMMIT"),
    ("ledger_record", None, "GATE-BIND-LEDGER"),
    ("base_commit", "9" * 40, "GATE-BIND-BASE-COMMIT"),
])
def test_validly_sealed_receipt_with_one_field_off_is_rejected(lab: Lab, victim: dict[str, Any], field: str,
                                                               value: Any, code: str) -> None:
    doc = {**victim["doc"], field: value}
    doc = {k: v for k, v in doc.items() if v is not None}
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(doc), victim["head"])
    assert_refused(lab, before, out, code)


def test_receipt_for_another_repository_issued_by_its_runner_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """The runner of another repository (same keys) binds its own repository id."""
    attempt = victim["attempt"]
    path = lab.record(attempt, victim["head"], repository_id="other/repo")
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_review(attempt, path), "GATE-BIND-REPOSITORY")


def test_diff_changed_after_scoring_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """The receipt scored one commit; the review ref is pushed to an amended one."""
    amended = lab.change(f"amended-{victim['attempt']}", {"src/sneak.py": "import os\n"},
                         start=victim["head"])
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), amended)
    assert_refused(lab, before, out, "GATE-BIND-DIFF", "GATE-BIND-NEW-COMMIT", "GATE-BIND-NEW-TREE")


def test_receipt_for_an_old_commit_of_the_ref_is_rejected(lab: Lab) -> None:
    """Receipt issued when the review ref was absent; by push time it points elsewhere."""
    attempt = lab.open()
    first = lab.change(f"old1-{attempt}")
    second = lab.change(f"old2-{attempt}", {"src/two.py": "2\n"}, start=first)
    early = lab.record(attempt, second)  # old_commit: zeros (the ref does not exist yet)
    assert lab.push_review(attempt, lab.record(attempt, first)).ok
    before = lab.snapshot()
    out = lab.push_receipt_bytes(attempt, early.read_bytes(), second)
    assert_refused(lab, before, out, "GATE-BIND-OLD-COMMIT")


def test_receipt_replayed_after_the_ref_moved_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    one = lab.change(f"replay1-{attempt}")
    two = lab.change(f"replay2-{attempt}", {"src/two.py": "2\n"}, start=one)
    r1 = lab.record(attempt, one)
    assert lab.push_review(attempt, r1).ok
    assert lab.push_review(attempt, lab.record(attempt, two)).ok
    before = lab.snapshot()
    # The client's own lease refuses to send it; a raw push reaches the gate.
    assert not lab.push_review(attempt, r1).ok
    out = lab.push_receipt_bytes(attempt, r1.read_bytes(), one)
    assert_refused(lab, before, out, "GATE-BIND-OLD-COMMIT")


def test_receipt_replayed_after_the_review_ref_was_deleted_is_rejected(lab: Lab) -> None:
    attempt = lab.open()
    one = lab.change(f"redo1-{attempt}")
    two = lab.change(f"redo2-{attempt}", {"src/two.py": "2\n"}, start=one)
    r1 = lab.record(attempt, one)
    assert lab.push_review(attempt, r1).ok
    assert lab.push_review(attempt, lab.record(attempt, two)).ok  # a later review supersedes r1
    assert lab.server.push(f":{REVIEW_PREFIX}{attempt}", pusher_env=RUNNER).returncode == 0  # cleanup
    before = lab.snapshot()
    out = lab.push_review(attempt, r1)  # r1 says old_commit = zeros: true again
    assert not out.ok
    assert codes_of(out) & {"GATE-RECEIPT-REUSED"}
    assert lab.snapshot() == before


# --- verdicts and reasons through a push ----------------------------------------------

@pytest.mark.parametrize("changes,code", [
    ({"verdict": "PASS"}, "GATE-RECEIPT-VERDICT"),
    ({"reasons": ["  ", "\t\n"]}, "GATE-RECEIPT-REASONS"),
    more({"attempt_id": "../../etc/passwd"}, "GATE-RECEIPT-FIELD"),
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


@pytest.mark.parametrize("mangle,code", [
    (lambda t: t[:-1] + ',"verdict":"fail"}', "GATE-RECEIPT-MALFORMED"),  # duplicate key
    pytest.param(lambda t: t.replace('"version":1', '"version":1.0'), "GATE-RECEIPT-MALFORMED", marks=LONG),
    (lambda t: t.replace('"version":1', '"version":NaN'), "GATE-RECEIPT-MALFORMED"),  # also 1e400: offline
], ids=["duplicate-key", "float", "nan"])
def test_json_traps_in_a_sealed_payload_are_rejected(lab: Lab, victim: dict[str, Any],
                                                     mangle: Callable[[str], str], code: str) -> None:
    text = strictjson.dumps(victim["doc"]).decode()
    data = lab.seal({}, payload=mangle(text).encode())
    before = lab.snapshot()
    assert_refused(lab, before, lab.push_receipt_bytes(victim["attempt"], data, victim["head"]), code)


# --- seals -------------------------------------------------------------------------------


def _substituted(lab: Lab, doc: dict[str, Any]) -> bytes:
    env = envelope_doc(lab.seal(doc))
    env["payload"] = base64.b64encode(strictjson.dumps({**doc, "model_id": "model-z"})).decode()
    return raw_json(env)


def _sig(lab: Lab, doc: dict[str, Any], key: str, fn: Callable[[bytes], bytes]) -> bytes:
    env = envelope_doc(lab.seal(doc, key))
    env["signatures"][0]["sig"] = base64.b64encode(fn(base64.b64decode(env["signatures"][0]["sig"]))).decode()
    return raw_json(env)


def _stranger(lab: Lab, doc: dict[str, Any], key_id: str) -> bytes:
    from gatecore.keys import ephemeral_pair

    priv, _pub = ephemeral_pair("ed25519", key_id, "receipt")
    return envelope.encode(sign(priv, envelope.PAYLOAD_RECEIPT, strictjson.dumps(doc)))


def _alg_confusion(lab: Lab, doc: dict[str, Any]) -> bytes:
    """HMAC-SHA256 keyed with runner-1's Ed25519 public key (read from the server keyring)."""
    import tomllib

    ring = tomllib.loads(lab.keyring_text)
    pub = next(k for k in ring["key"] if k["id"] == "runner-1")["public_key"]
    key = SigningKey("runner-1", "hmac-sha256", "receipt", base64.b64decode(pub))
    return envelope.encode(sign(key, envelope.PAYLOAD_RECEIPT, strictjson.dumps(doc)))


def _with(lab: Lab, doc: dict[str, Any], where: str, **extra: Any) -> bytes:
    env = envelope_doc(lab.seal(doc))
    (env if where == "top" else env["signatures"][0]).update(extra)
    return raw_json(env)


SEAL_ATTACKS: dict[str, tuple[Callable[[Lab, dict[str, Any]], bytes], tuple[str, ...]]] = {
    "substitution": (_substituted, ("GATE-SEAL-BAD-SIGNATURE",)),
    "empty-sig": (lambda lab, d: _sig(lab, d, "runner-1", lambda s: b""), ("GATE-SEAL-BAD-SIGNATURE",)),
    "truncated-hmac-tag": (lambda lab, d: _sig(lab, d, "runner-hmac", lambda s: s[:16]),
                           ("GATE-SEAL-BAD-SIGNATURE",)),
    "unsealed-bare-payload": (lambda lab, d: strictjson.dumps(d), ("GATE-SEAL-MALFORMED",)),
    "wrong-key-trusted-id": (lambda lab, d: _stranger(lab, d, "runner-1"), ("GATE-SEAL-BAD-SIGNATURE",)),
    "unknown-key-id": (lambda lab, d: _stranger(lab, d, "runner-9"), ("GATE-SEAL-UNKNOWN-KEY",)),
    "alg-confusion": (_alg_confusion, ("GATE-SEAL-BAD-SIGNATURE",)),
    "smuggled-alg-in-signature": (lambda lab, d: _with(lab, d, "sig", alg="none"), ("GATE-SEAL-MALFORMED",)),
    "expired-key": (lambda lab, d: lab.seal(d, "runner-expired"), ("GATE-SEAL-KEY-EXPIRED",)),
    "not-yet-valid-key": (lambda lab, d: lab.seal(d, "runner-future"), ("GATE-SEAL-KEY-EXPIRED",)),
    "revoked-key": (lambda lab, d: lab.seal(d, "runner-revoked"), ("GATE-SEAL-KEY-REVOKED",)),
    "attempt-key-seals-receipt": (lambda lab, d: lab.seal(d, "orch-1"), ("GATE-SEAL-KEY-PURPOSE",)),
    "receipt-as-attempt-type": (lambda lab, d: lab.seal(d, "orch-1", envelope.PAYLOAD_ATTEMPT),
                                ("GATE-SEAL-PAYLOAD-TYPE",)),
    "expired-receipt": (lambda lab, d: lab.seal({**d, "issued_at": int(time.time()) - 7200,
                                                "expires_at": int(time.time()) - 3600}),
                        ("GATE-RECEIPT-EXPIRED",)),
    "receipt-from-the-future": (lambda lab, d: lab.seal({**d, "issued_at": int(time.time()) + 3600,
                                                        "expires_at": int(time.time()) + 7200}),
                                ("GATE-RECEIPT-NOT-YET-VALID",)),
    "padded-past-the-cap": (lambda lab, d: lab.seal(d) + b" " * 70000, ("GATE-RECEIPT-TOO-LARGE",)),
}


SEAL_VARIANTS = ("smuggled-alg-in-signature", "not-yet-valid-key", "receipt-from-the-future", "padded-past-the-cap",
                 "attempt-key-seals-receipt")


@pytest.mark.parametrize("name", [more(n) if n in SEAL_VARIANTS else n for n in SEAL_ATTACKS])
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
    """Payload type confusion: the attempt's own (validly sealed) ledger record as receipt.json."""
    tip = lab.ledger_tip(victim["attempt"])
    record = git(lab.work.path, "show", f"{tip}:record.json").stdout.encode()
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], record, victim["head"])
    assert_refused(lab, before, out, "GATE-SEAL-PAYLOAD-TYPE")


@pytest.mark.parametrize("mode,name", [("120000", "receipt.json"), more("100644", "Receipt.json")])
def test_receipt_commit_of_the_wrong_shape_is_rejected(lab: Lab, victim: dict[str, Any], mode: str,
                                                       name: str) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], mode=mode, name=name)
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


def test_a_receipt_ref_moved_by_two_commits_is_rejected(lab: Lab, victim: dict[str, Any]) -> None:
    """Issue 25, 4: every new receipt commit is checked, not the tip alone: one in between that
    holds a second file would stop archiving and the attempt's reviews later."""
    from gatecore.ledger import RECEIPT_FILE

    data = lab.seal(victim["doc"])
    between = lab.ledger_commit(b"", None, files={RECEIPT_FILE: (0o100644, data), "extra": (0o100644, b"x")})
    tip = lab.ledger_commit(b"", None, files={RECEIPT_FILE: (0o100644, data)}, parents=[between])
    before = lab.snapshot()
    out = lab.server.push(f"+{victim['head']}:{REVIEW_PREFIX}{victim['attempt']}",
                          f"{tip}:{RECEIPTS_PREFIX}{victim['attempt']}", pusher_env=RUNNER, extra=("--atomic",))
    assert_refused(lab, before, out, "GATE-REVIEW-RECEIPT-REF")


def test_a_receipt_commit_that_is_a_merge_with_a_foreign_first_parent_is_rejected(lab: Lab) -> None:
    """Issue 25, 4: walks follow first parents; a merge whose first parent is foreign history would
    drop the attempt's earlier receipts out of the reuse check and out of the archive."""
    from gatecore.ledger import RECEIPT_FILE

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
    out = lab.push_receipt_bytes("never-opened", lab.seal(doc), victim["head"])
    assert_refused(lab, before, out, "GATE-LEDGER-MISSING")


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

@pytest.mark.parametrize("pusher", [AGENT_USER, more("hana")])
def test_only_the_runner_may_push_a_review_even_with_a_valid_receipt(lab: Lab, victim: dict[str, Any],
                                                                     pusher: str) -> None:
    before = lab.snapshot()
    out = lab.push_receipt_bytes(victim["attempt"], lab.seal(victim["doc"]), victim["head"], pusher=pusher)
    assert_refused(lab, before, out, "GATE-REVIEW-PUSHER")


@pytest.mark.parametrize("refspec_kind", ["ledger-create", more("ledger-append"), "ledger-delete", "receipt",
                                          more("review-delete"), "other-gate-ref"])
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
    out = lab.server.push(refspec, pusher_env=AGENT_PUSH)
    assert_refused(lab, before, out, code)


def test_runner_cannot_launder_an_agent_frozen_write_through_a_review_ref(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"launder-{attempt}", {"ci/deploy.yml": "deploy: skip-review\n"})
    before = lab.snapshot()
    out = lab.push_review(attempt, lab.record(attempt, head))
    assert_refused(lab, before, out, "GATE-FROZEN-PATH")


