"""The trusted side end to end through real pushes: bootstrap, ledger, runner, review refs, and
the commands as docs/ci.md runs them.

The incident is the first test: a passing receipt from model A, pushed after the attempt
failed over to model B, is rejected naming model_id; model B's own receipt is accepted.
Attacks on single fields live in test_review_refs.py and test_ledger.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitutil import ROOT, gate
from support.lab import RUNNER, Lab, now
from support.verdicts import assert_refused, refused

from gatecore.errors import GateError
from gatecore.refs import REVIEW_PREFIX
from gatecore.trusted.bootstrap import bootstrap


def test_the_incident_stale_receipt_after_failover_is_rejected_fresh_one_accepted(lab: Lab) -> None:
    ws = lab.root / "workspace"
    ws.mkdir()
    boot = bootstrap(ws, now())
    attempt = boot.attempt_id
    lab.open(attempt, boot.workspace_generation, "model-a")
    head = lab.change(f"incident-{attempt}")
    stale = lab.record(attempt, head)  # model A scores and writes a passing receipt
    result = lab.append(attempt, "failover", model_id="model-b", note="model-a offline")
    assert result is not None and result.ok
    before = lab.snapshot()
    out = lab.push_review(attempt, stale)  # the retry pushes what it found
    assert_refused(lab, before, out, "GATE-BIND-MODEL", "GATE-BIND-LEDGER")
    assert "field=model_id" in out.output
    fresh = lab.push_review(attempt, lab.record(attempt, head))
    assert fresh.ok, fresh.output
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head
    audit = lab.server.audit()[-1]
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


@pytest.mark.parametrize("bad", [b'{"verdict":"PASS","reasons":["x"]}', b'{"verdict":"pass","reasons":[]}',
                                 b'{"verdict":"pass","verdict":"fail","reasons":["x"]}', b'{"verdict":"pass"}',
                                 b"[]", b'{"verdict":"pass","reasons":["\\u200b"]}',
                                 b'{"verdict":"pass","reasons":["\\u0085\\u0009"]}'])
def test_runner_refuses_model_output_that_is_not_strict(lab: Lab, bad: bytes) -> None:
    attempt = lab.open()
    head = lab.change(f"strict-{attempt}")
    with pytest.raises(GateError):
        lab.record(attempt, head, output=bad)


def test_trusted_runner_can_delete_a_review_ref(lab: Lab) -> None:
    attempt = lab.open()
    head = lab.change(f"delete-{attempt}")
    assert lab.push_review(attempt, lab.record(attempt, head)).ok
    out = lab.server.push(f":{REVIEW_PREFIX}{attempt}", pusher_env=RUNNER)
    assert out.returncode == 0, out.stderr
    assert lab.server.ref(REVIEW_PREFIX + attempt) is None


def test_attempt_show_cli(lab: Lab) -> None:
    attempt = lab.open(lab.fresh(), "gen-show")
    ring = lab.root / "keyring.toml"
    out = gate("attempt", "show", "--repo", str(lab.work.path), "--attempt", attempt, "--keyring", str(ring),
               "--json")
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert state["model_id"] == "model-a" and state["workspace_generation"] == "gen-show"
    assert state["target"] == "refs/heads/main"  # the server's HEAD when the attempt opened
    missing = gate("attempt", "show", "--repo", str(lab.work.path), "--attempt", "never-opened")
    assert missing.returncode == 1 and "GATE-LEDGER-MISSING" in missing.stderr


def test_review_push_of_a_receipt_file_that_is_not_a_regular_file_is_refused(lab: Lab, tmp_path: Path) -> None:
    attempt = lab.open()
    fifo = tmp_path / "receipt.fifo"
    os.mkfifo(fifo)
    out = gate("review", "push", "--repo", str(lab.work.path), "--attempt", attempt, "--receipt", str(fifo),
               "--remote", lab.remote(), env=RUNNER)
    assert out.returncode == 1 and "GATE-RECEIPT-MISSING" in out.stderr and "not a regular file" in out.stderr
    assert not refused(out, "GATE-RECEIPT-MISSING")  # refused before any push
