"""The trusted side end to end through real pushes: bootstrap, ledger, runner, review refs.

The incident is the first test: a passing receipt from model A, pushed after the attempt
failed over to model B, is rejected naming model_id; model B's own receipt is accepted.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import AGENT, HUMAN, Server, gate, git

from gatecore import envelope, keyfiles, ledger, runner, strictjson
from gatecore.bootstrap import bootstrap
from gatecore.keys import SigningKey
from gatecore.seal import sign

ROOT = Path(__file__).resolve().parent.parent
REVIEW = "refs/heads/review/runner/"
ATTEMPTS = "refs/gate/attempts/"
RECEIPTS = "refs/gate/receipts/"
PASS = json.dumps({"verdict": "pass", "reasons": ["small and tested"], "score": 9}).encode()


class Flow:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, keyring_extra: str = "") -> None:
        keys = root / "keys"
        keys.mkdir()
        entries = []
        for key_id, purpose in (("orch-1", "attempt"), ("runner-1", "receipt")):
            made = keyfiles.generate("ed25519", key_id, purpose)
            keyfiles.write_private(keys / f"{key_id}.key", made.keyfile_text)
            entries.append(made.keyring_entry)
        self.keyring_text = "\n".join(entries) + keyring_extra
        self.server = Server(root, keyring=self.keyring_text)
        self.attempt_key = keyfiles.load_keyfile(keys / "orch-1.key")
        self.receipt_key = keyfiles.load_keyfile(keys / "runner-1.key")
        self.keys = keys
        w = self.server.work
        w.write("README", "base\n")
        w.write("src/app.py", "print(1)\n")
        self.base = w.commit("base", identity=HUMAN)
        assert self.server.push("main").returncode == 0
        w.git("checkout", "-q", "-b", "feature")
        w.write("src/app.py", "print(2)\n")
        self.head = w.commit("agent change", identity=AGENT)
        self.repo = w.path
        self.remote = "origin"
        self.prompt = b"Review the change; reply with verdict and reasons.\n"
        self.scoring = root / "scoring"
        monkeypatch.setenv("REMOTE_USER", "runner-1")  # the trusted side's account on the server

    def open(self, attempt: str, generation: str = "gen-1", model: str | None = "model-a") -> None:
        _, res = runner.append_record(self.repo, attempt, self.attempt_key, "opened", self.remote,
                                      repository="demo/repo", workspace="ws-1", workspace_generation=generation,
                                      prompt_sha256=hashlib.sha256(self.prompt).hexdigest())
        assert res is not None and res.ok, res.output if res else ""
        if model:
            _, res = runner.append_record(self.repo, attempt, self.attempt_key, "model-selected", self.remote,
                                          model_id=model)
            assert res is not None and res.ok

    def record(self, attempt: str, name: str, output: bytes = PASS, head: str | None = None,
               **kw: object) -> Path:
        return runner.record_review(self.repo, attempt, self.base, head or self.head, output, self.receipt_key,
                                    self.scoring / attempt / name, self.remote, None, 3600, **kw)  # type: ignore[arg-type]

    def raw_push(self, attempt: str, receipt: bytes, head: str, review_attempt: str | None = None,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Push a receipt commit and a review ref without the runner's client-side lease."""
        r = runner.GitRepo.at(self.repo)
        tree = r.write_tree({"receipt.json": receipt})
        commit = r.write_commit(tree, [], "receipt", "t", "t@example.com")
        target = review_attempt or attempt
        return git(self.repo, "push", "--porcelain", "--atomic", self.server.url, f"+{head}:{REVIEW}{target}",
                   f"+{commit}:{RECEIPTS}{target}", check=False,
                   env={"REMOTE_USER": "runner-1", **(env or {})})

    def state(self) -> dict[str, str]:
        return {k: v for k, v in self.server.refs().items() if k.startswith(("refs/gate/", REVIEW))}


@pytest.fixture
def flow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Flow:
    return Flow(tmp_path, monkeypatch)


def test_the_incident_stale_receipt_after_failover_is_rejected_fresh_one_accepted(flow: Flow) -> None:
    ws = flow.server.root / "workspace"
    ws.mkdir()
    boot = bootstrap(ws)
    attempt = boot.attempt_id
    flow.open(attempt, boot.workspace_generation, "model-a")
    stale = flow.record(attempt, "receipt.json")  # model A scores and writes a passing receipt
    _, res = runner.append_record(flow.repo, attempt, flow.attempt_key, "failover", flow.remote,
                                  model_id="model-b", note="model-a offline")
    assert res is not None and res.ok
    before = flow.state()
    result = runner.push_review(flow.repo, attempt, stale, flow.remote)  # retry pushes what it found
    assert not result.ok
    assert "GATE-BIND-MODEL" in result.output and "field=model_id" in result.output
    assert "GATE-BIND-LEDGER" in result.output
    assert flow.state() == before  # nothing moved: no review ref, no receipt ref
    fresh = flow.record(attempt, "receipt-model-b.json")
    result = runner.push_review(flow.repo, attempt, fresh, flow.remote)
    assert result.ok, result.output
    assert flow.server.ref(REVIEW + attempt) == flow.head
    audit = flow.server.audit()[-1]
    assert audit["decision"] == "accept" and audit["attempt_ids"] == [attempt]


def test_cli_end_to_end_as_in_docs(tmp_path: Path) -> None:
    """docs/ci.md's worked example script runs the whole flow against a local bare repository."""
    script = ROOT / "docs" / "ci-example.sh"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "REMOTE_USER"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    out = subprocess.run(["bash", str(script), str(tmp_path / "ci")], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "stale receipt rejected" in out.stdout
    assert "GATE-BIND-MODEL" in out.stdout + out.stderr
    assert "fresh receipt accepted" in out.stdout


def test_gate_demo_runs(tmp_path: Path) -> None:
    out = gate("demo", "--keep", str(tmp_path / "demo"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "GATE-BIND-MODEL" in out.stdout and "GATE-FROZEN-PATH" in out.stdout
    assert "demo passed" in out.stdout
    assert (tmp_path / "demo" / "server.git" / "gate" / "audit.log").exists()


def test_replay_after_the_ref_moved_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    first = flow.record("att-1", "r1.json")
    assert runner.push_review(flow.repo, "att-1", first, flow.remote).ok
    flow.server.work.write("src/app.py", "print(3)\n")
    head2 = flow.server.work.commit("more", identity=AGENT)
    second = flow.record("att-1", "r2.json", head=head2)
    assert runner.push_review(flow.repo, "att-1", second, flow.remote).ok
    before = flow.state()
    out = flow.raw_push("att-1", first.read_bytes(), flow.head)  # r1 was for 0 -> head, the ref is at head2
    assert out.returncode != 0 and "GATE-BIND-OLD-COMMIT" in out.stderr
    assert flow.state() == before


def test_receipt_for_another_repository_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    other = flow.record("att-1", "r.json", repository_id="other/repo")
    result = runner.push_review(flow.repo, "att-1", other, flow.remote)
    assert not result.ok and "GATE-BIND-REPOSITORY" in result.output


def test_receipt_for_another_attempt_and_ref_is_rejected(flow: Flow) -> None:
    flow.open("att-1", "gen-1")
    flow.open("att-2", "gen-2")
    mine = flow.record("att-1", "r.json")
    out = flow.raw_push("att-1", mine.read_bytes(), flow.head, review_attempt="att-2")
    assert out.returncode != 0
    for code in ("GATE-BIND-ATTEMPT", "GATE-BIND-REF", "GATE-BIND-GENERATION", "GATE-BIND-LEDGER"):
        assert code in out.stderr
    assert flow.server.ref(REVIEW + "att-2") is None


def test_substituted_receipt_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    doc = json.loads(flow.record("att-1", "r.json").read_bytes())
    payload = json.loads(envelope.b64decode_strict(doc["payload"], "p"))
    payload["verdict"] = "pass"
    payload["reasons"] = ["I approve of myself"]
    doc["payload"] = envelope.b64encode(strictjson.dumps(payload))
    out = flow.raw_push("att-1", json.dumps(doc).encode(), flow.head)
    assert out.returncode != 0 and "GATE-SEAL-BAD-SIGNATURE" in out.stderr


def test_receipt_sealed_with_an_attempt_key_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    doc = json.loads(flow.record("att-1", "r.json").read_bytes())
    payload = envelope.b64decode_strict(doc["payload"], "p")
    forged = SigningKey(flow.attempt_key.id, "ed25519", "receipt", flow.attempt_key.material)
    out = flow.raw_push("att-1", envelope.encode(sign(forged, envelope.PAYLOAD_RECEIPT, payload)), flow.head)
    assert out.returncode != 0 and "GATE-SEAL-KEY-PURPOSE" in out.stderr


@pytest.mark.parametrize("extra,code", [("revoked = true", "GATE-SEAL-KEY-REVOKED"),
                                        ("not_after = 2020-01-01T00:00:00Z", "GATE-SEAL-KEY-EXPIRED")])
def test_revoked_or_expired_receipt_key_is_rejected(flow: Flow, extra: str, code: str) -> None:
    flow.open("att-1")
    receipt = flow.record("att-1", "r.json")
    ring = flow.keyring_text.replace('id = "runner-1"\n', 'id = "runner-1"\n').split("[[key]]")
    ring = "[[key]]".join(part.replace("revoked = false", extra) if '"runner-1"' in part else part
                          for part in ring)
    (flow.server.root / "keyring2.toml").write_text(ring)
    assert gate("server", "install", str(flow.server.bare), "--keyring",
                str(flow.server.root / "keyring2.toml")).returncode == 0
    result = runner.push_review(flow.repo, "att-1", receipt, flow.remote)
    assert not result.ok and code in result.output


def test_diff_changed_after_scoring_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    receipt = flow.record("att-1", "r.json")
    flow.server.work.write("src/app.py", "print('changed after review')\n")
    changed = flow.server.work.commit("sneaky", identity=AGENT)
    out = flow.raw_push("att-1", receipt.read_bytes(), changed)
    assert out.returncode != 0
    assert "GATE-BIND-DIFF" in out.stderr and "GATE-BIND-NEW-COMMIT" in out.stderr


def test_failing_verdict_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    out = flow.record("att-1", "r.json", output=json.dumps({"verdict": "fail", "reasons": ["no tests"]}).encode())
    result = runner.push_review(flow.repo, "att-1", out, flow.remote)
    assert not result.ok and "GATE-VERDICT-FAIL" in result.output


def test_runner_refuses_model_output_that_is_not_strict(flow: Flow) -> None:
    flow.open("att-1")
    for bad in (b'{"verdict":"PASS","reasons":["x"]}', b'{"verdict":"pass","reasons":[]}',
                b'{"verdict":"pass","verdict":"fail","reasons":["x"]}', b'{"verdict":"pass"}', b"[]"):
        with pytest.raises(runner.InputError):
            flow.record("att-1", "r.json", output=bad)


def test_review_push_without_a_receipt_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f"{flow.head}:{REVIEW}att-1", check=False,
              env={"REMOTE_USER": "runner-1"})
    assert out.returncode != 0 and "GATE-RECEIPT-MISSING" in out.stderr


def test_receipt_ref_without_its_review_ref_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    r = runner.GitRepo.at(flow.repo)
    commit = r.write_commit(r.write_tree({"receipt.json": b"{}"}), [], "r", "t", "t@example.com")
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f"{commit}:{RECEIPTS}att-1", check=False,
              env={"REMOTE_USER": "runner-1"})
    assert out.returncode != 0 and "GATE-REVIEW-RECEIPT-REF" in out.stderr


def test_agent_cannot_push_review_refs_or_the_ledger(flow: Flow) -> None:
    flow.open("att-1")
    receipt = flow.record("att-1", "r.json").read_bytes()
    out = flow.raw_push("att-1", receipt, flow.head, env={"REMOTE_USER": "agent-1"})
    assert out.returncode != 0 and "GATE-REVIEW-PUSHER" in out.stderr
    tip = flow.server.ref(ATTEMPTS + "att-1")
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f"{flow.head}:{ATTEMPTS}att-9", check=False,
              env={"REMOTE_USER": "agent-1"})
    assert out.returncode != 0 and "GATE-LEDGER-PUSHER" in out.stderr
    assert flow.server.ref(ATTEMPTS + "att-1") == tip


def test_an_agent_commit_as_a_ledger_record_is_rejected_even_for_a_trusted_pusher(flow: Flow) -> None:
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f"{flow.head}:{ATTEMPTS}att-9", check=False,
              env={"REMOTE_USER": "runner-1"})
    assert out.returncode != 0 and "GATE-LEDGER-RECORD" in out.stderr


def test_ledger_rollback_and_deletion_are_rejected(flow: Flow) -> None:
    flow.open("att-1")
    _, res = runner.append_record(flow.repo, "att-1", flow.attempt_key, "failover", flow.remote, model_id="model-b")
    assert res is not None and res.ok
    tip = flow.server.ref(ATTEMPTS + "att-1")
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f"+{tip}~1:{ATTEMPTS}att-1", check=False,
              env={"REMOTE_USER": "runner-1"})
    assert out.returncode != 0 and "GATE-LEDGER-REWRITE" in out.stderr
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f":{ATTEMPTS}att-1", check=False,
              env={"REMOTE_USER": "runner-1"})
    assert out.returncode != 0 and "GATE-LEDGER-DELETE" in out.stderr
    assert flow.server.ref(ATTEMPTS + "att-1") == tip


def test_generation_reuse_is_rejected(flow: Flow) -> None:
    flow.open("att-1", "gen-same")
    with pytest.raises(AssertionError):
        flow.open("att-2", "gen-same")
    assert flow.server.ref(ATTEMPTS + "att-2") is None
    # The local ledger was put back, so a fresh generation works.
    flow.open("att-2", "gen-fresh")


def test_out_of_sequence_record_is_rejected_by_the_server(flow: Flow) -> None:
    flow.open("att-1")
    r = runner.GitRepo.at(flow.repo)
    state = runner.attempt_state(r, "att-1")
    # A second model-selected (instead of a failover), sealed correctly, built by hand.
    import dataclasses

    assert state is not None
    fake = dataclasses.replace(state, model_id=None)
    data = ledger.make_record(flow.attempt_key, fake, attempt_id="att-1", kind="model-selected",
                              repository="demo/repo", model_id="model-z")
    parent = r.ref_target(ATTEMPTS + "att-1")
    commit = r.write_commit(r.write_tree({"record.json": data}), [parent] if parent else [], "x", "t", "t@e.com")
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f"{commit}:{ATTEMPTS}att-1", check=False,
              env={"REMOTE_USER": "runner-1"})
    assert out.returncode != 0 and "GATE-LEDGER-SEQUENCE" in out.stderr


def test_closed_attempt_accepts_no_receipt(flow: Flow) -> None:
    flow.open("att-1")
    receipt = flow.record("att-1", "r.json")
    _, res = runner.append_record(flow.repo, "att-1", flow.attempt_key, "closed", flow.remote)
    assert res is not None and res.ok
    result = runner.push_review(flow.repo, "att-1", receipt, flow.remote)
    assert not result.ok and "GATE-LEDGER-CLOSED" in result.output


def test_review_without_a_ledger_is_rejected(flow: Flow) -> None:
    flow.open("att-1")
    receipt = flow.record("att-1", "r.json").read_bytes()
    out = flow.raw_push("att-1", receipt, flow.head, review_attempt="att-nope")
    assert out.returncode != 0 and "GATE-LEDGER-MISSING" in out.stderr


def test_trusted_runner_can_delete_a_review_ref(flow: Flow) -> None:
    flow.open("att-1")
    assert runner.push_review(flow.repo, "att-1", flow.record("att-1", "r.json"), flow.remote).ok
    out = git(flow.repo, "push", "--porcelain", flow.server.url, f":{REVIEW}att-1", check=False,
              env={"REMOTE_USER": "runner-1"})
    assert out.returncode == 0, out.stderr


def test_attempt_show_cli(flow: Flow) -> None:
    flow.open("att-1")
    ring = flow.server.root / "keyring.toml"
    out = gate("attempt", "show", "--repo", str(flow.repo), "--attempt", "att-1", "--keyring", str(ring), "--json")
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert state["model_id"] == "model-a" and state["workspace_generation"] == "gen-1"


def test_bootstrap_wipes_the_scoring_path_and_mints_a_fresh_generation(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    old = ws / ".gate" / "scoring" / "old-attempt"
    old.mkdir(parents=True)
    (old / "receipt.json").write_text('{"verdict":"pass"}')
    (ws / ".gate" / "scoring" / "binder.py").write_text("# binder in place")
    out = gate("bootstrap", "--workspace", str(ws), "--attempt", "att-7")
    assert out.returncode == 0, out.stderr
    exports = dict(line.removeprefix("export ").split("=", 1) for line in out.stdout.split("\n") if line)
    assert exports["ATTEMPT_ID"] == "att-7"
    assert not old.exists() and not (ws / ".gate" / "scoring" / "binder.py").exists()
    assert (ws / ".gate" / "scoring" / "att-7").is_dir()
    again = gate("bootstrap", "--workspace", str(ws), "--attempt", "att-7")
    regen = dict(line.removeprefix("export ").split("=", 1) for line in again.stdout.split("\n") if line)
    assert regen["WORKSPACE_GEN"] != exports["WORKSPACE_GEN"]
    assert gate("bootstrap", "--workspace", str(ws), "--attempt", "../x").returncode == 1
