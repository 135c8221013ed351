"""The seed's CI flow through the `gate` command line (in process): write, verify, and every table row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import WorkRepo

from gatecore import strictjson
from gatecore.adapters.config import load_keyfile
from gatecore.signing import envelope
from gatecore.signing.seal import sign


@pytest.fixture
def flow(tmp_path: Path) -> dict[str, Path]:
    key = tmp_path / "runner.key"
    out = cli("keys", "generate", "--alg", "ed25519", "--id", "runner-1", "--purpose", "receipt", "--out", str(key))
    assert out.returncode == 0, out.stderr
    ring = tmp_path / "keyring.toml"
    ring.write_text(out.stdout)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Review this patch for policy changes.\n")
    patch = tmp_path / "change.patch"
    patch.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    return {"key": key, "ring": ring, "prompt": prompt, "patch": patch, "out": tmp_path / "receipts"}


def write(f: dict[str, Path], *extra: str, attempt: str = "attempt-1", model: str = "model-a",
          gen: str = "gen-1", verdict: str = "pass", reasons: tuple[str, ...] = ("tests pass",)):  # type: ignore[no-untyped-def]
    args = ["receipt", "write", "--out-dir", str(f["out"]), "--attempt", attempt, "--model", model,
            "--workspace-gen", gen, "--prompt-file", str(f["prompt"]), "--verdict", verdict, "--key", str(f["key"])]
    for r in reasons:
        args += ["--reason", r]
    if "--repo" not in extra:
        args += ["--diff-file", str(f["patch"])]
    return cli(*args, *extra)


def verify(f: dict[str, Path], receipt: Path, *extra: str, attempt: str = "attempt-1", model: str = "model-a",
           gen: str = "gen-1"):  # type: ignore[no-untyped-def]
    args = ["receipt", "verify", "--receipt", str(receipt), "--attempt", attempt, "--model", model,
            "--workspace-gen", gen, "--prompt-file", str(f["prompt"]), "--keyring", str(f["ring"])]
    if "--repo" not in extra:
        args += ["--diff-file", str(f["patch"])]
    return cli(*args, *extra)


def test_write_then_verify_accepts(flow: dict[str, Path]) -> None:
    w = write(flow)
    assert w.returncode == 0, w.stderr
    path = Path(w.stdout.strip())
    assert path == flow["out"] / "attempt-1" / "receipt.json"
    v = verify(flow, path)
    assert v.returncode == 0, v.stdout + v.stderr
    assert v.stdout.strip() == "accept"


def test_json_output(flow: dict[str, Path]) -> None:
    path = Path(write(flow).stdout.strip())
    v = verify(flow, path, "--json", model="model-b")
    doc = json.loads(v.stdout)
    assert v.returncode == 1
    assert doc["decision"] == "reject"
    assert [f["field"] for f in doc["failures"]] == ["model_id"]


def test_write_refuses_to_overwrite(flow: dict[str, Path]) -> None:
    assert write(flow).returncode == 0
    again = write(flow)
    assert again.returncode == 1
    assert "never overwritten" in again.stderr


@pytest.mark.parametrize("attempt", ["../escape", "a/b", "..", ".hidden", "x" * 200, "a b", "x.lock"])
def test_write_refuses_attempt_ids_outside_the_pattern(flow: dict[str, Path], attempt: str) -> None:
    w = write(flow, attempt=attempt)
    assert w.returncode == 1
    assert "GATE-INPUT-ARGUMENT" in w.stderr
    assert not flow["out"].exists() or not any(flow["out"].rglob("receipt.json"))


def test_write_refuses_a_key_of_the_wrong_purpose(flow: dict[str, Path], tmp_path: Path) -> None:
    cli("keys", "generate", "--alg", "ed25519", "--id", "orch", "--purpose", "attempt", "--out", str(tmp_path / "a.key"))
    w = write({**flow, "key": tmp_path / "a.key"})
    assert w.returncode == 2 and "GATE-CONFIG-KEYFILE" in w.stderr


# --- the six non-accept rows of the decision table, through the CLI --------------------

def test_row_same_diff_new_model_id(flow: dict[str, Path]) -> None:
    v = verify(flow, Path(write(flow).stdout.strip()), model="model-b")
    assert v.returncode == 1
    assert "model_id: GATE-BIND-MODEL" in v.stdout


def test_row_same_diff_new_workspace_generation(flow: dict[str, Path]) -> None:
    v = verify(flow, Path(write(flow).stdout.strip()), gen="gen-2")
    assert v.returncode == 1
    assert "workspace_generation: GATE-BIND-GENERATION" in v.stdout


def test_row_verdict_fail(flow: dict[str, Path]) -> None:
    v = verify(flow, Path(write(flow, verdict="fail").stdout.strip()))
    assert v.returncode == 1
    assert "verdict: GATE-VERDICT-FAIL" in v.stdout


def test_row_reasons_empty(flow: dict[str, Path]) -> None:
    # `receipt write` refuses to write an empty-reasons receipt, so seal one by hand.
    refused = write(flow, reasons=())
    assert refused.returncode == 1 and "reasons" in refused.stderr
    good = json.loads(envelope.parse(Path(write(flow).stdout.strip()).read_bytes()).payload)
    good["reasons"] = []
    forged = flow["out"] / "forged.json"
    forged.write_bytes(envelope.encode(sign(load_keyfile(flow["key"]), envelope.PAYLOAD_RECEIPT,
                                            strictjson.dumps(good))))
    v = verify(flow, forged)
    assert v.returncode == 1
    assert "reasons: GATE-RECEIPT-REASONS" in v.stdout


def test_row_diff_changed_after_scoring(flow: dict[str, Path]) -> None:
    path = Path(write(flow).stdout.strip())
    flow["patch"].write_text(flow["patch"].read_text() + "+c\n")
    v = verify(flow, path)
    assert v.returncode == 1
    assert "diff_sha256: GATE-BIND-DIFF" in v.stdout


def test_row_receipt_missing(flow: dict[str, Path]) -> None:
    v = verify(flow, flow["out"] / "attempt-1" / "receipt.json")
    assert v.returncode == 1
    assert "receipt: GATE-RECEIPT-MISSING" in v.stdout


def test_repo_range_flow(flow: dict[str, Path], work: WorkRepo) -> None:
    work.write("a.txt", "one\n")
    base = work.commit("base")
    work.write("a.txt", "two\n")
    head = work.commit("head")
    rng = ["--repo", str(work.path), "--from", base, "--to", head]
    w = write(flow, *rng)
    assert w.returncode == 0, w.stderr
    path = Path(w.stdout.strip())
    assert verify(flow, path, *rng).returncode == 0
    work.write("a.txt", "three\n")
    later = work.commit("later")
    v = verify(flow, path, "--repo", str(work.path), "--from", base, "--to", later)
    assert v.returncode == 1
    assert {"diff_sha256", "new_commit", "new_tree"} <= {ln.split(":")[0].strip() for ln in v.stdout.splitlines()[1:]}


def test_selftest_cli() -> None:
    out = cli("selftest")
    assert out.returncode == 0, out.stdout
    assert "fresh matching receipt with reasons" in out.stdout


def test_usage_error_exits_2(flow: dict[str, Path]) -> None:
    out = cli("receipt", "verify", "--receipt", "x")
    assert out.returncode == 2
