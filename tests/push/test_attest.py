"""`gate attest export` on what real pushes left behind, checked with independent libraries.

Reviews are recorded and pushed by the trusted side's own code (`Lab`), approvals with `gate
approve`; the export runs as the `gate` command. Its output is verified with securesystemslib's
DSSE `Envelope` (the signature) and the in-toto attestation bindings (the Statement and the
SLSA Verification Summary schema), never with the gate's own code.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import json
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from in_toto_attestation.predicates.vsa.v1 import vsa_pb2
from in_toto_attestation.v1 import resource_descriptor_pb2, statement_pb2
from in_toto_attestation.v1.statement import Statement
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey
from support.cli import cli
from support.gitutil import AGENT, git
from support.keygen import needs_ssh_keygen, ssh_key
from support.lab import PROMPT_SHA, RUNNER, ZERO, Lab, now
from support.server import APPROVALS_POLICY

from gatecore.git.refs import REVIEW_PREFIX

VSA = "https://slsa.dev/verification_summary/v1"
REASONS = ["small, tested change"]


# --- the independent verifier ---------------------------------------------------------------

def public_key(entry: str) -> SSlibKey:
    """The key `gate keys generate` printed (its keyring entry), as securesystemslib takes it."""
    doc = tomllib.loads(entry)["key"][0]
    raw = base64.b64decode(doc["public_key"])
    return SSlibKey(doc["id"], "ed25519", "ed25519", {"public": raw.hex()})


def verified(bundle: str, key: SSlibKey) -> list[dict[str, Any]]:
    """Every line: a DSSE envelope signed by `key` over an in-toto Statement v1 whose predicate is
    a SLSA Verification Summary v1. Returns the statements."""
    out = []
    for line in bundle.splitlines():
        env = Envelope.from_dict(json.loads(line))
        assert env.payload_type == "application/vnd.in-toto+json"
        assert list(env.verify([key], 1)) == [key.keyid]
        doc = json.loads(env.payload)
        Statement.copy_from_pb(json_format.ParseDict(doc, statement_pb2.Statement())).validate()
        assert doc["predicateType"] == VSA
        predicate = doc["predicate"]
        # Strictly: the binding (0.9.3) types inputAttestations and policy as uri + digest only, so
        # each is also checked as the full ResourceDescriptor the VSA specification makes it.
        bare = {**predicate, "inputAttestations": [{"uri": a["uri"], "digest": a["digest"]}
                                                   for a in predicate["inputAttestations"]],
                "policy": {k: v for k, v in predicate["policy"].items() if k in ("uri", "digest")}}
        bare["verifier"] = {"id": predicate["verifier"]["id"]}  # verifier.version is VSA 1.1
        # The binding types verifiedLevels as one string, the specification as an array of strings
        # (in-toto/attestation#425: the specification is authoritative).
        levels = bare.pop("verifiedLevels")
        assert isinstance(levels, list) and all(isinstance(v, str) and not v.startswith("SLSA_") for v in levels)
        json_format.ParseDict(bare, vsa_pb2.VerificationSummary())
        for entry in [*predicate["inputAttestations"], predicate["policy"]]:
            json_format.ParseDict(entry, resource_descriptor_pb2.ResourceDescriptor())
        out.append(doc)
    return out


def inputs(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["name"]: a for a in doc["predicate"]["inputAttestations"]}


def receipt_payload(path: Path) -> dict[str, Any]:
    doc = json.loads(base64.b64decode(json.loads(path.read_bytes())["payload"]))
    assert isinstance(doc, dict)
    return doc


# --- the lab ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def att(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A lab with three accepted reviews (one attempt reviewed twice, one after a failover) and an
    attestation key."""
    root = tmp_path_factory.mktemp("attest")
    lab = Lab(root / "lab", key_ids=("orch-1", "runner-1"))
    keyfile = root / "attest.key"
    made = cli("keys", "generate", "--alg", "ed25519", "--id", "attest-1", "--purpose", "attestation",
                "--out", str(keyfile))
    assert made.returncode == 0, made.stderr
    first = lab.open(lab.fresh())
    head1 = lab.change(f"c1-{first}")
    r1 = lab.record(first, head1)
    assert lab.push_review(first, r1).ok
    head2 = lab.change(f"c2-{first}", start=head1)
    r2 = lab.record(first, head2)
    assert lab.push_review(first, r2).ok
    second = lab.open(lab.fresh())
    assert lab.append(second, "failover", model_id="model-b").ok  # type: ignore[union-attr]
    head3 = lab.change(f"c3-{second}")
    r3 = lab.record(second, head3)
    assert lab.push_review(second, r3).ok
    return {"lab": lab, "key": keyfile, "entry": made.stdout, "first": first, "second": second,
            "heads": [head1, head2, head3], "receipts": [r1, r2, r3], "root": root}


def export(att: dict[str, Any], *args: str, repo: Path | None = None) -> subprocess.CompletedProcess[str]:
    lab: Lab = att["lab"]
    return cli("attest", "export", "--repo", str(repo or lab.server.bare), "--key", str(att["key"]), *args)


def test_accepted_reviews_export_as_verifiable_statements(att: dict[str, Any]) -> None:
    lab: Lab = att["lab"]
    before = time.time()
    out = export(att)
    assert out.returncode == 0, out.stderr
    assert "exported 3 statement(s): 3 review(s), 0 approval(s)" in out.stderr
    docs = verified(out.stdout, public_key(att["entry"]))
    by_commit = {d["subject"][0]["digest"]["gitCommit"]: d for d in docs}
    assert set(by_commit) == set(att["heads"])
    for head, receipt_file, attempt, old in zip(att["heads"], att["receipts"],
                                                [att["first"], att["first"], att["second"]],
                                                [ZERO, att["heads"][0], ZERO], strict=True):
        doc = by_commit[head]
        ref = REVIEW_PREFIX + attempt
        tree = git(lab.work.path, "rev-parse", f"{head}^{{tree}}").stdout.strip()
        assert doc["subject"] == [{"name": ref, "digest": {"gitCommit": head, "gitTree": tree},
                                   "annotations": {"sourceRefs": [ref]}}]
        pred = doc["predicate"]
        assert pred["verificationResult"] == "PASSED" and pred["verifiedLevels"] == ["PUSH_GATE_REVIEW_RECEIPT_V1"]
        assert pred["resourceUri"] == "push-gate:demo/repo"
        assert calendar.timegm(time.strptime(pred["timeVerified"], "%Y-%m-%dT%H:%M:%SZ")) >= int(before)
        rec = inputs(doc)
        raw = receipt_file.read_bytes()
        assert rec["receipt"]["digest"] == {"sha256": hashlib.sha256(raw).hexdigest()}
        assert rec["receipt"]["mediaType"] == "application/vnd.gate.receipt.v1+json"
        sent = receipt_payload(receipt_file)
        got = rec["receipt"]["annotations"]
        for name in ("attempt_id", "model_id", "prompt_sha256", "workspace_generation", "diff_algorithm",
                     "diff_sha256", "verdict", "repository", "ref", "old_commit", "base_commit", "new_commit",
                     "new_tree", "ledger_record", "issued_at", "expires_at"):
            assert got[name] == sent[name], name
        assert (got["attempt_id"], got["ref"], got["old_commit"], got["new_commit"]) == (attempt, ref, old, head)
        assert got["prompt_sha256"] == PROMPT_SHA and got["verdict"] == "pass" and "reasons" not in got
        reasons = json.dumps(REASONS, separators=(",", ":"), ensure_ascii=False).encode()
        assert got["reasons_sha256"] == hashlib.sha256(reasons).hexdigest() and got["reasons_count"] == 1
        assert got["keyid"] == "runner-1"
        # How the runner got the answer, and the settings the review was verified again under.
        assert got["model_run"] == "file"  # gate review record --model-output
        assert pred["policy"]["annotations"] == {"independent": "off", "model_run": "any"}
        # The ledger records it was bound to: the model record is the one the receipt names.
        assert rec["ledger-model"]["digest"] == {"sha256": sent["ledger_record"]}
        assert rec["ledger-opened"]["annotations"]["workspace_generation"] == sent["workspace_generation"]
    second = inputs(by_commit[att["heads"][2]])["ledger-model"]["annotations"]
    assert (second["kind"], second["model_id"], second["models"]) == ("failover", "model-b", ["model-a", "model-b"])
    first = inputs(by_commit[att["heads"][0]])["ledger-model"]["annotations"]
    assert (first["kind"], first["models"]) == ("model-selected", ["model-a"])


def test_the_signature_covers_every_byte(att: dict[str, Any]) -> None:
    out = export(att, "--ref", REVIEW_PREFIX + att["second"])
    assert out.returncode == 0, out.stderr
    [line] = out.stdout.splitlines()
    wire = json.loads(line)
    doc = json.loads(base64.b64decode(wire["payload"]))
    doc["predicate"]["inputAttestations"][0]["annotations"]["model_id"] = "model-a"
    wire["payload"] = base64.b64encode(json.dumps(doc).encode()).decode()
    with pytest.raises(VerificationError):
        Envelope.from_dict(wire).verify([public_key(att["entry"])], 1)
    other = cli("keys", "generate", "--alg", "ed25519", "--id", "attest-1", "--purpose", "attestation",
                 "--out", str(att["root"] / f"other-{time.time_ns()}.key"))
    with pytest.raises(VerificationError):
        Envelope.from_dict(json.loads(line)).verify([public_key(other.stdout)], 1)


def test_filters_and_output_file(att: dict[str, Any], tmp_path: Path) -> None:
    out = export(att, "--ref", REVIEW_PREFIX + att["first"], "--out", str(tmp_path / "r.intoto.jsonl"))
    assert out.returncode == 0 and out.stdout == "", out.stderr
    docs = verified((tmp_path / "r.intoto.jsonl").read_text(), public_key(att["entry"]))
    assert [d["subject"][0]["digest"]["gitCommit"] for d in docs] == att["heads"][:2]
    again = export(att, "--out", str(tmp_path / "r.intoto.jsonl"))
    assert again.returncode == 1 and "GATE-INPUT-ARGUMENT" in again.stderr  # never overwritten
    later = export(att, "--since", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600)))
    assert later.returncode == 0 and later.stdout == "" and "exported 0 statement(s)" in later.stderr
    bad = export(att, "--since", "yesterday")
    assert bad.returncode == 1 and "GATE-INPUT-ARGUMENT" in bad.stderr


def test_a_clone_exports_the_same_with_the_servers_keyring(att: dict[str, Any], tmp_path: Path) -> None:
    lab: Lab = att["lab"]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", lab.remote(), str(clone))
    git(clone, "fetch", "-q", "origin", "+refs/gate/*:refs/gate/*", "+refs/heads/*:refs/remotes/origin/*")
    missing = export(att, repo=clone)
    assert missing.returncode == 2 and "GATE-ATTEST-CONFIG" in missing.stderr, missing.stderr
    ring = lab.server.gate_dir / "keyring.toml"
    out = export(att, "--keyring", str(ring), "--repository-id", "demo/repo", "--resource-uri",
                 "git+https://git.example.com/demo/repo", repo=clone)
    assert out.returncode == 0, out.stderr
    docs = verified(out.stdout, public_key(att["entry"]))
    assert len(docs) == 3 and {d["predicate"]["resourceUri"] for d in docs} == {"git+https://git.example.com/demo/repo"}
    receipt = inputs(docs[0])["receipt"]
    assert receipt["uri"].startswith("git+https://git.example.com/demo/repo@") and receipt["uri"].endswith(
        "#receipt.json")


def _keyring_with(lab: Lab, key_id: str, tail: str, path: Path) -> Path:
    """The server's keyring with `key_id`'s `revoked = false` replaced by `tail`."""
    text = (lab.server.gate_dir / "keyring.toml").read_text()
    head, sep, rest = text.partition(f'id = "{key_id}"')
    assert sep
    path.write_text(head + sep + rest.replace("revoked = false\n", tail, 1))
    return path


def test_revoked_keys_refuse_what_they_sealed_and_retired_keys_do_not(att: dict[str, Any], tmp_path: Path) -> None:
    """The keyring of today judges every seal: a key revoked since refuses all it sealed (it may have
    been stolen, and a thief backdates); a key retired since (not_after) served when it sealed."""
    lab: Lab = att["lab"]
    revoked = _keyring_with(lab, "runner-1", "revoked = true\n", tmp_path / "revoked.toml")
    out = export(att, "--keyring", str(revoked))
    assert out.returncode == 1 and out.stdout == "", out.stderr
    assert out.stderr.count("GATE-SEAL-KEY-REVOKED") == 3 and "GATE-ATTEST-REFUSED: 3 record(s)" in out.stderr
    sealed = max(receipt_payload(p)["issued_at"] for p in att["receipts"])
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sealed + 1))
    retired = _keyring_with(lab, "runner-1", f"not_after = {when}\nrevoked = false\n", tmp_path / "retired.toml")
    while now() <= sealed + 1:  # the key's window must have closed before the export runs
        time.sleep(0.2)
    out = export(att, "--keyring", str(retired))
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 3, out.stderr
    attempt_key = _keyring_with(lab, "orch-1", "revoked = true\n", tmp_path / "orch.toml")
    out = export(att, "--keyring", str(attempt_key))
    assert out.returncode == 1 and out.stderr.count("GATE-SEAL-KEY-REVOKED") == 3, out.stderr


def test_forged_and_replayed_receipts_in_a_clone_are_refused(att: dict[str, Any], tmp_path: Path) -> None:
    """Whoever can write the clone's refs can add receipts the server never accepted: the export
    verifies each receipt, and exports only those the gate would accept."""
    lab: Lab = att["lab"]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--mirror", lab.remote(), str(clone))
    attempt = att["second"]
    ref = f"refs/gate/receipts/{attempt}"
    tip = git(clone, "rev-parse", ref).stdout.strip()
    replay = att["receipts"][2].read_bytes()

    def stack(data: bytes, parent: str) -> str:
        blob = git(clone, "hash-object", "-w", "--stdin", input=data).stdout.strip()
        tree = git(clone, "mktree", input=f"100644 blob {blob}\treceipt.json\n".encode()).stdout.strip()
        return git(clone, "commit-tree", tree, "-p", parent, "-m", "forged").stdout.strip()

    forged = json.loads(replay)
    forged["signatures"][0]["sig"] = base64.b64encode(b"\x01" * 64).decode()
    top = stack(json.dumps(forged).encode(), stack(replay, tip))
    git(clone, "update-ref", ref, top)
    ring = lab.server.gate_dir / "keyring.toml"
    out = export(att, "--keyring", str(ring), "--repository-id", "demo/repo", repo=clone)
    assert out.returncode == 1, out.stderr
    assert "GATE-RECEIPT-REUSED" in out.stderr and "GATE-SEAL-BAD-SIGNATURE" in out.stderr
    assert "GATE-ATTEST-REFUSED: 2 record(s)" in out.stderr
    assert len(verified(out.stdout, public_key(att["entry"]))) == 3
    other = export(att, "--keyring", str(ring), "--repository-id", "other/repo", repo=clone)
    assert other.returncode == 1 and other.stdout == "" and "GATE-BIND-REPOSITORY" in other.stderr


def test_a_wrong_key_is_refused(att: dict[str, Any]) -> None:
    lab: Lab = att["lab"]
    out = cli("attest", "export", "--repo", str(lab.server.bare), "--key", str(lab.root / "keys" / "runner-1.key"))
    assert out.returncode == 2 and "GATE-CONFIG-KEYFILE" in out.stderr and out.stdout == ""
    hmac = cli("keys", "generate", "--alg", "hmac-sha256", "--id", "a-h", "--purpose", "attestation", "--out",
                str(lab.root / "hmac-attest.key"))
    assert hmac.returncode == 1 and "an attestation key is ed25519" in hmac.stderr
    pem = cli("attest", "public-key", "--key", str(att["key"]))
    assert pem.returncode == 0 and pem.stdout.startswith("-----BEGIN PUBLIC KEY-----")
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    loaded = SSlibKey.from_crypto(load_pem_public_key(pem.stdout.encode()), keyid="attest-1")  # type: ignore[arg-type]
    assert loaded.keyval == public_key(att["entry"]).keyval
    assert "key id: attest-1" in pem.stderr


def test_the_public_key_command_gives_the_key_id_the_verification_snippet_needs(att: dict[str, Any]) -> None:
    """docs/attestations.md verifies with the key id and PEM `gate attest public-key --json` prints,
    nothing typed by hand: its snippet, run on a real export."""
    out = cli("attest", "public-key", "--key", str(att["key"]), "--json")
    assert out.returncode == 0, out.stderr
    public = json.loads(out.stdout)
    assert public["keyid"] == "attest-1" and public["algorithm"] == "ed25519"
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = SSlibKey.from_crypto(load_pem_public_key(public["public_key_pem"].encode()),  # type: ignore[arg-type]
                               keyid=public["keyid"])
    bundle = export(att)
    assert bundle.returncode == 0, bundle.stderr
    assert len(verified(bundle.stdout, key)) == 3


# --- approvals -------------------------------------------------------------------------------------

APPROVAL_POLICY = APPROVALS_POLICY.replace('approvers = ["alice", "release-*"]', 'approvers = ["alice"]')


@needs_ssh_keygen
def test_used_approvals_export_and_unused_ones_do_not(tmp_path: Path) -> None:
    """Two approvals served a push (one sealed with an approval key, one SSH-signed), a third never
    did: two statements."""
    from support.server import Server
    from support.verdicts import refused

    keys = {}
    for kid, purpose in (("alice", "approval"), ("attest", "attestation")):
        made = cli("keys", "generate", "--alg", "ed25519", "--id", kid, "--purpose", purpose,
                    "--out", str(tmp_path / kid))
        assert made.returncode == 0, made.stderr
        keys[kid] = made.stdout
    signers = tmp_path / "allowed_signers"
    signers.write_text(f'alice namespaces="git,gate-approval" {ssh_key(tmp_path / "alice_ssh")}\n')
    (tmp_path / "s").mkdir()
    s = Server(tmp_path / "s", policy=APPROVAL_POLICY, keyring=keys["alice"],
               extra=("--allowed-signers", str(signers)))
    s.work.write("ci/deploy.yml", "deploy: true\n")
    s.work.commit("base")
    assert s.push("main").returncode == 0
    maint = tmp_path / "maint"
    git(tmp_path, "clone", "-q", s.url, str(maint))
    agent = {"REMOTE_USER": "agent-7"}

    def agent_writes(text: str) -> tuple[str, str]:
        old = s.work.head()
        s.work.write("ci/deploy.yml", text)
        return old, s.work.commit(f"agent: {text.strip()}", identity=AGENT)

    def approve(old: str, head: str, *how: str) -> None:
        git(maint, "fetch", "-q", str(s.work.path), "+HEAD:refs/agent/head")
        got = cli("approve", "--repository-id", "demo/repo", "--ref", "refs/heads/main", "--old", old, "--new",
                   head, "--path", "ci/deploy.yml", "--approver", "alice", *how, "--yes", "--reason",
                   "the fix we asked for", cwd=maint, env={"REMOTE_USER": "alice"})
        assert got.returncode == 0, got.stdout + got.stderr

    heads = []
    for how in (("--key", str(tmp_path / "alice")), ("--ssh-key", str(tmp_path / "alice_ssh"))):
        old, head = agent_writes(f"deploy: {how[0]}\n")
        assert refused(s.push("main", pusher_env=agent), "GATE-FROZEN-PATH")
        approve(old, head, *how)
        assert s.push("main", pusher_env=agent).returncode == 0
        heads.append((old, head))
    approve(*agent_writes("deploy: never\n"), "--key", str(tmp_path / "alice"))  # never pushed
    out = cli("attest", "export", "--repo", str(s.bare), "--key", str(tmp_path / "attest"))
    assert out.returncode == 0, out.stderr
    assert "exported 2 statement(s): 0 review(s), 2 approval(s)" in out.stderr
    docs = verified(out.stdout, public_key(keys["attest"]))
    # statements come in time order; two approvals made in one second may come either way
    by_commit = {d["subject"][0]["digest"]["gitCommit"]: d for d in docs}
    assert len(docs) == 2 and sorted(by_commit) == sorted(h for _, h in heads)
    for (old, head), signer in zip(heads, ("alice", "ssh:SHA256:"), strict=True):
        doc = by_commit[head]
        assert doc["subject"][0]["annotations"] == {"sourceRefs": ["refs/heads/main"]}
        assert doc["predicate"]["verifiedLevels"] == ["PUSH_GATE_APPROVAL_V1"]
        [record] = doc["predicate"]["inputAttestations"]
        notes = record["annotations"]
        assert (notes["approver"], notes["paths"], notes["old"], notes["new"], notes["used"]) == (
            "alice", ["ci/deploy.yml"], old, head, True)
        assert notes["reason_sha256"] == hashlib.sha256(b"the fix we asked for").hexdigest()
        assert record["mediaType"] == "application/vnd.gate.approval.v1+json" and notes["keyid"].startswith(signer)
    # A policy that no longer names the approver refuses what she approved.
    policy = tmp_path / "policy.toml"
    policy.write_text(APPROVAL_POLICY.replace('approvers = ["alice"]', 'approvers = ["bob"]'))
    out = cli("attest", "export", "--repo", str(s.bare), "--key", str(tmp_path / "attest"), "--policy", str(policy))
    assert out.returncode == 1 and out.stderr.count("GATE-APPROVAL-APPROVER") == 2 and out.stdout == "", out.stderr


# --- archived attempts ------------------------------------------------------------------------------

def test_archiving_ends_the_export_of_an_attempt_but_a_clone_that_kept_its_refs_still_proves_it(
        tmp_path: Path) -> None:
    """After `gate ledger archive`, the server holds only the digest of each receipt: nothing to
    export. A clone fetched before still holds the refs; its receipts export when the archive (as
    fetched since) holds them, as it must for every receipt the gate accepted."""
    from gatecore.trusted.ledgerarchive import archive_closed

    lab = Lab(tmp_path / "lab", key_ids=("orch-1", "runner-1"))
    key = tmp_path / "attest.key"
    made = cli("keys", "generate", "--alg", "ed25519", "--id", "attest-1", "--purpose", "attestation",
                "--out", str(key))
    attempt = lab.open(lab.fresh())
    head = lab.change(f"arch-{attempt}")
    assert lab.push_review(attempt, lab.record(attempt, head)).ok
    assert lab.append(attempt, "closed", note="merged").ok  # type: ignore[union-attr]
    state = lab.state(attempt)
    assert state is not None
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--mirror", lab.remote(), str(clone))
    assert archive_closed(lab.work.path, lab.remote(), 0, now(), env=RUNNER).attempts == [attempt]
    git(clone, "fetch", "-q", "origin", "+refs/gate/archive:refs/gate/archive")
    served = cli("attest", "export", "--repo", str(lab.server.bare), "--key", str(key))
    assert served.returncode == 0 and served.stdout == "", served.stderr
    ring = lab.server.gate_dir / "keyring.toml"
    kept = cli("attest", "export", "--repo", str(clone), "--key", str(key), "--keyring", str(ring),
                "--repository-id", "demo/repo")
    assert kept.returncode == 0, kept.stderr
    [doc] = verified(kept.stdout, public_key(made.stdout))
    assert doc["subject"][0]["digest"]["gitCommit"] == head
    # An archive that says the attempt was archived without its receipt: the receipt was never
    # accepted (the gate lets a receipt ref go only when the archive holds every receipt).
    from gatecore.adapters.gitrepo import GitRepo
    from gatecore.records import archive

    repo = GitRepo.at(clone)
    tree = repo.write_nested_tree(None, archive.entries_for(attempt, state.workspace_generation, []))
    git(clone, "update-ref", archive.ARCHIVE_REF, repo.write_commit(tree, [], "forged\n", "x", "x@x", now()))
    forged = cli("attest", "export", "--repo", str(clone), "--key", str(key), "--keyring", str(ring),
                  "--repository-id", "demo/repo")
    assert forged.returncode == 1 and forged.stdout == "" and "GATE-LEDGER-ARCHIVE" in forged.stderr, forged.stderr
