"""The first five minutes: `./dev` prints its usage, setup says what it does,
and `gate demo` shows, in short lines, an agent's frozen write rejected and a human's
accepted, the incident with the naive gate beside the bound one, the seed's decision table
on the same receipts, and how to get `gate` on PATH."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from support.cli import cli
from support.gitutil import ROOT

from gatecore.selftest import DECISION_TABLE

DEV = ROOT / "dev"


def test_dev_alone_prints_its_usage_not_its_source() -> None:
    for args in ((), ("help",)):
        out = subprocess.run([str(DEV), *args], capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("usage: ./dev COMMAND") and "set -euo" not in out.stdout
        assert all(f"  {c} " in out.stdout for c in ("demo", "test", "bench", "help"))
    out = subprocess.run([str(DEV), "tset"], capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "unknown command 'tset'" in out.stderr and "usage:" in out.stderr


def test_setup_says_what_it_is_doing(tmp_path: Path) -> None:
    """A first run: the install step announces itself and where `gate` ends up (pip and the
    demo are stand-ins here: the real ones take a minute)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, body in (("python", "exit 0"), ("gate", 'echo "gate $*"')):
        (venv / "bin" / name).write_text(f"#!/bin/sh\n{body}\n")
        (venv / "bin" / name).chmod(0o755)
    out = subprocess.run([str(DEV), "demo"], capture_output=True, text=True, check=False,
                         env={**os.environ, "GATE_VENV": str(venv)})
    assert out.returncode == 0 and out.stdout == "gate demo\n", out.stdout + out.stderr
    assert f"dev: installing push-gate and its test tools into {venv}" in out.stderr
    assert f"dev: ready: {venv}/bin/gate" in out.stderr and "export PATH=" in out.stderr
    again = subprocess.run([str(DEV), "demo"], capture_output=True, text=True, check=False,
                           env={**os.environ, "GATE_VENV": str(venv)})
    assert again.stderr == ""  # set up already: nothing to say


def test_the_demo_shows_both_gates_and_both_pushers_in_short_lines() -> None:
    out = cli("demo")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "agent-7 pushes a change to ci/deploy.yml: rejected" in text
    assert "GATE-FROZEN-PATH path=ci/deploy.yml identity=agent-7@agents.example.com" in text
    assert "hana (a human) pushes the same change:   accepted" in text
    assert "naive gate (diff hash and verdict): accept" in text
    assert "bound gate: rejected: the receipt names model-a, the ledger model-b" in text
    assert "GATE-BIND-MODEL field=model_id" in text
    # the stale model output: accepted by the file path, refused by the runner's own call
    assert "bound gate: accepted: a file cannot say which model wrote it" in text
    assert "refused before anything is sealed: GATE-REVIEW-CHALLENGE" in text
    assert "model-b answers this run's request, challenge and all; its receipt: accepted" in text
    for row in DECISION_TABLE:
        assert re.search(rf"{re.escape(row.observed)} +{re.escape(row.naive)} +{row.bound}", text), row.observed
    assert "export PATH=" in text and "demo passed" in text
    assert not re.search(r"\b[0-9a-f]{40}\b", text), "no object ids or digests"
    long = [ln for ln in text.splitlines() if len(ln) > 100 and "/" not in ln]
    assert not long, long
    # the demo's directory is gone when it returns: no line but the first names a path in it (its last
    # step named the audit log there)
    root = re.search(r"^working in (\S+) \(removed at exit", text, re.M).group(1)  # type: ignore[union-attr]
    assert not Path(root).exists()
    assert [ln for ln in text.splitlines() if root in ln] == [f"working in {root} (removed at exit; --keep DIR keeps it)"]
    assert "removed with the demo's directory (gate demo --keep DIR keeps it)" in text
