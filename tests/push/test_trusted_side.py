"""The trusted side end to end through real pushes: bootstrap, ledger, runner, review refs, and
the commands as docs/ci.md runs them.

The incident is the first test: a passing receipt from model A, pushed after the attempt
failed over to model B, is rejected naming model_id; model B's own receipt is accepted.
Attacks on single fields live in test_review_refs.py and test_ledger.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import pytest
from support.cli import cli
from support.lab import RUNNER, Lab, now
from support.verdicts import assert_refused, refused

from gatecore.errors import GateError
from gatecore.git.refs import REVIEW_PREFIX
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


def test_gate_demo_runs(tmp_path: Path) -> None:
    out = cli("demo", "--keep", str(tmp_path / "demo"))
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
    out = cli("attempt", "show", "--repo", str(lab.work.path), "--attempt", attempt, "--keyring", str(ring),
               "--json")
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert state["model_id"] == "model-a" and state["workspace_generation"] == "gen-show"
    assert state["target"] == "refs/heads/main"  # the server's HEAD when the attempt opened
    missing = cli("attempt", "show", "--repo", str(lab.work.path), "--attempt", "never-opened")
    assert missing.returncode == 1 and "GATE-LEDGER-MISSING" in missing.stderr


def test_review_push_of_a_receipt_file_that_is_not_a_regular_file_is_refused(lab: Lab, tmp_path: Path) -> None:
    attempt = lab.open()
    fifo = tmp_path / "receipt.fifo"
    os.mkfifo(fifo)
    out = cli("review", "push", "--repo", str(lab.work.path), "--attempt", attempt, "--receipt", str(fifo),
               "--remote", lab.remote(), env=RUNNER)
    assert out.returncode == 1 and "GATE-RECEIPT-MISSING" in out.stderr and "not a regular file" in out.stderr
    assert not refused(out, "GATE-RECEIPT-MISSING")  # refused before any push


# --- writes that stay where they are sent ----------------------------------------------------------

def _symlinked_scoring_dir(tmp_path: Path, level: str) -> tuple[Path, Path]:
    """A workspace after bootstrap whose scoring path the agent replaced by a symlink out of it:
    (the --out path the runner is given, the directory outside)."""
    import shutil

    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    boot = bootstrap(ws, now())
    victim = boot.scoring_dir if level == "attempt-dir" else boot.scoring_dir.parent
    shutil.rmtree(victim)
    victim.symlink_to(outside)
    return boot.scoring_dir / "receipt.json", outside


@pytest.mark.parametrize("level", ["attempt-dir", "scoring-dir"])
def test_review_record_never_writes_through_a_symlinked_scoring_directory(lab: Lab, tmp_path: Path,
                                                                          level: str) -> None:
    out_path, outside = _symlinked_scoring_dir(tmp_path, level)
    attempt = lab.open()
    head = lab.change(f"symlink-{attempt}-{level}")
    model = tmp_path / "model.json"
    model.write_text('{"verdict": "pass", "reasons": ["fine"]}')
    out = cli("review", "record", "--repo", str(lab.work.path), "--attempt", attempt, "--head", head,
               "--model-output", str(model), "--key", str(lab.root / "keys" / "runner-1.key"), "--out",
               str(out_path), "--remote", lab.remote(), env=RUNNER)
    assert out.returncode == 1 and "GATE-INPUT-PATH" in out.stderr and "symlink" in out.stderr, out.stderr
    assert list(outside.iterdir()) == []


def test_every_out_flag_refuses_a_symlink_on_its_path(tmp_path: Path) -> None:
    """`gate keys generate --out` and `gate receipt write --out-dir` write the same way."""
    out_path, outside = _symlinked_scoring_dir(tmp_path, "scoring-dir")
    key = cli("keys", "generate", "--alg", "ed25519", "--id", "k1", "--purpose", "receipt", "--out", str(out_path))
    assert key.returncode == 1 and "GATE-INPUT-PATH" in key.stderr, key.stderr
    good = tmp_path / "k1.key"
    assert cli("keys", "generate", "--alg", "ed25519", "--id", "k1", "--purpose", "receipt", "--out",
                str(good)).returncode == 0
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("review\n")
    diff = tmp_path / "change.diff"
    diff.write_text("+x\n")
    receipt = cli("receipt", "write", "--out-dir", str(out_path.parent), "--attempt", "a1-x", "--model", "m",
                   "--workspace-gen", "g1", "--prompt-file", str(prompt), "--verdict", "pass", "--reason", "ok",
                   "--key", str(good), "--diff-file", str(diff))
    assert receipt.returncode == 1 and "GATE-INPUT-PATH" in receipt.stderr, receipt.stderr
    assert list(outside.iterdir()) == []


# --- retries ---------------------------------------------------------------------------------------

def test_the_runners_commands_run_again_after_they_landed_change_nothing(lab: Lab, tmp_path: Path) -> None:
    """CI retries a step after a network error, whether or not its push landed."""
    attempt = lab.open()
    head = lab.change(f"retry-{attempt}")
    model = tmp_path / "model.json"
    model.write_text('{"verdict": "pass", "reasons": ["fine"]}')
    record = ["review", "record", "--repo", str(lab.work.path), "--attempt", attempt, "--head", head,
              "--model-output", str(model), "--key", str(lab.root / "keys" / "runner-1.key"),
              "--out", str(tmp_path / "receipt.json"), "--remote", lab.remote()]
    first = cli(*record, env=RUNNER)  # the push is left for later: as if it had failed
    assert first.returncode == 0, first.stderr
    written = (tmp_path / "receipt.json").read_bytes()
    pushed = cli(*record, "--push", env=RUNNER)  # the retry pushes the receipt it finds
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stderr.splitlines()[-1] == (f"review ref refs/heads/review/runner/{attempt} accepted by {lab.remote()}, "
                                              f"receipt receipt.json recorded on refs/gate/receipts/{attempt}")
    assert (tmp_path / "receipt.json").read_bytes() == written
    assert lab.server.ref(REVIEW_PREFIX + attempt) == head
    before = lab.snapshot()
    again = cli(*record, "--push", env=RUNNER)
    assert again.returncode == 0 and "already" in again.stderr, again.stderr
    push = cli("review", "push", "--repo", str(lab.work.path), "--attempt", attempt, "--receipt",
                str(tmp_path / "receipt.json"), "--remote", lab.remote(), env=RUNNER)
    assert push.returncode == 0 and "already" in push.stderr, push.stderr
    assert lab.snapshot() == before
    # After a failover the landed review is the old model's: nothing is "already" done for the new one.
    assert lab.append(attempt, "failover", model_id="model-b").ok  # type: ignore[union-attr]
    record[record.index("--out") + 1] = str(tmp_path / "receipt-b.json")
    after = cli(*record, "--push", env=RUNNER)
    assert "already" not in after.stderr, after.stderr


def test_the_orchestrators_commands_run_again_after_they_landed_change_nothing(lab: Lab, tmp_path: Path) -> None:
    attempt = lab.fresh()
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"Review this change. Reply with JSON: verdict, reasons.\n")
    key = str(lab.root / "keys" / "orch-1.key")
    common = ["--repo", str(lab.work.path), "--attempt", attempt, "--key", key, "--push", lab.remote()]
    steps = [["attempt", "open", *common, "--workspace", "ws", "--workspace-gen", f"g-{attempt}", "--prompt-file",
              str(prompt), "--repository-id", "demo/repo"],
             ["attempt", "select-model", *common, "--model", "model-a"],
             ["attempt", "failover", *common, "--model", "model-b"],
             ["attempt", "close", *common]]
    for step in steps:
        assert cli(*step, env=RUNNER).returncode == 0
        tip = lab.ledger_tip(attempt)
        again = cli(*step, env=RUNNER)
        assert again.returncode == 0 and "already" in again.stderr, (step, again.stderr)
        assert lab.ledger_tip(attempt) == tip


def test_a_retry_after_the_attempt_was_closed_names_it_closed(lab: Lab, tmp_path: Path) -> None:
    """A retry acknowledges only the state its command would have left: `gate attempt open` (or
    `failover`) run again once the attempt has been closed says GATE-LEDGER-CLOSED, not "already
    on the server", and pushes nothing."""
    attempt = lab.fresh()
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"Review this change. Reply with JSON: verdict, reasons.\n")
    key = str(lab.root / "keys" / "orch-1.key")
    common = ["--repo", str(lab.work.path), "--attempt", attempt, "--key", key, "--push", lab.remote()]
    opened = ["attempt", "open", *common, "--workspace", "ws", "--workspace-gen", f"g-{attempt}", "--prompt-file",
              str(prompt), "--repository-id", "demo/repo"]
    failover = ["attempt", "failover", *common, "--model", "model-b"]
    for step in (opened, ["attempt", "select-model", *common, "--model", "model-a"], failover,
                 ["attempt", "close", *common]):
        assert cli(*step, env=RUNNER).returncode == 0, step
    before = lab.snapshot()
    for step in (opened, failover):
        again = cli(*step, env=RUNNER)
        assert again.returncode == 1 and "GATE-LEDGER-CLOSED" in again.stderr, (step, again.stderr)
        assert "already" not in again.stderr
    assert lab.snapshot() == before


# --- what the commands say ------------------------------------------------------------------------

def test_the_lifecycle_commands_name_what_is_wrong(lab: Lab, tmp_path: Path) -> None:
    archive = ["ledger", "archive", "--older-than", "0"]
    batch = cli(*archive, "--repo", str(lab.work.path), "--remote", lab.remote(), "--batch", "0", env=RUNNER)
    assert batch.returncode == 1 and "GATE-INPUT-ARGUMENT" in batch.stderr and "--batch 0" in batch.stderr, batch
    nowhere = tmp_path / "nonexistent"
    repo = cli(*archive, "--repo", str(nowhere), "--remote", lab.remote(), env=RUNNER)
    assert "GATE-GIT-REPOSITORY" in repo.stderr and str(nowhere) in repo.stderr and "cannot run git" not in repo.stderr
    remote = cli(*archive, "--repo", str(lab.work.path), "--remote", "nowhere", env=RUNNER)
    assert "'nowhere' does not appear to be a git repository" in remote.stderr, remote.stderr
    show = cli("attempt", "show", "--repo", str(lab.work.path), "--attempt", "../../HEAD")
    assert show.returncode == 1 and "GATE-INPUT-ARGUMENT" in show.stderr, show.stderr


# --- the transport ------------------------------------------------------------------------------------

#: An ssh that leaves a daemon holding its stderr, as an ssh control master (ControlPersist) can: it
#: starts the remote's command locally (the server's repository is on this machine).
LINGERING_SSH = """#!/bin/sh
setsid sleep 3600 </dev/null >/dev/null &
echo $! >> "$LINGER_PIDS"
shift
exec sh -c "$1"
"""


def test_the_orchestrators_pushes_end_when_git_does_whatever_its_transport_leaves(lab: Lab, tmp_path: Path) -> None:
    """`gate attempt open --push` and `gate ledger archive` over ssh whose helper outlives it holding
    stderr: each ends when git ends (plus a second), long before the helper (an hour); before, they
    read git's stderr to its end of file. What the transport leaves is not the gate's to end (an
    ssh master serves other sessions): it is left running, never waited for."""
    ssh = tmp_path / "ssh"
    ssh.write_text(LINGERING_SSH)
    ssh.chmod(0o755)
    pids = tmp_path / "pids"
    env = {**RUNNER, "GIT_SSH_COMMAND": str(ssh), "GIT_SSH_VARIANT": "simple", "LINGER_PIDS": str(pids)}
    remote = f"ssh://server{lab.server.bare}"
    attempt = lab.fresh()
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"Review this change. Reply with JSON: verdict, reasons.\n")
    started = time.monotonic()
    try:
        opened = cli("attempt", "open", "--repo", str(lab.work.path), "--attempt", attempt, "--key",
                     str(lab.root / "keys" / "orch-1.key"), "--workspace", "ws", "--workspace-gen", f"g-{attempt}",
                     "--prompt-file", str(prompt), "--repository-id", "demo/repo", "--push", remote, env=env)
        assert opened.returncode == 0, opened.stderr
        archived = cli("ledger", "archive", "--repo", str(lab.work.path), "--remote", remote, "--older-than", "30d",
                       env=env)
        assert archived.returncode == 0, archived.stderr
        took = time.monotonic() - started
        assert took < 60, f"took {took:.0f} s"  # the helpers sleep 3600
        assert lab.ledger_tip(attempt) is not None
    finally:
        for pid in pids.read_text().split() if pids.exists() else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 9)
