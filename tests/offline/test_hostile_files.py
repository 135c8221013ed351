"""Hostile files at the CLI: a FIFO, a device, an unbounded or oversized file, a path that is a
file where a directory belongs, a symlink out of the workspace. Each ends in a code and a
one-line reason (never a traceback, never a hang), and nothing outside the workspace is
touched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.cli import cli
from support.gitutil import GATE
from support.lab import BASIC_KEYS, key_material

TIMEOUT = 60  # a command that hangs fails the test instead of hanging it


def gate(*args: str, hostile: bool = False) -> subprocess.CompletedProcess[str]:
    """In process, except where a FIFO or a device is read: a regression there would hang, and
    a subprocess with a timeout fails the test instead of hanging the suite."""
    if not hostile:
        return cli(*args)
    return subprocess.run([*GATE, *args], capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    _ring, _keys = key_material(tmp_path / "keys", BASIC_KEYS)
    (tmp_path / "keyring.toml").write_text(_ring)
    (tmp_path / "prompt.txt").write_text("review this\n")
    (tmp_path / "change.patch").write_text("--- a\n+++ b\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    big.write_bytes(b'{"verdict":"pass","reasons":["' + b"x" * 70000 + b'"]}')
    return {"key": tmp_path / "keys" / "runner-1.key", "keyring": tmp_path / "keyring.toml",
            "prompt": tmp_path / "prompt.txt", "patch": tmp_path / "change.patch", "fifo": fifo,
            "zero": Path("/dev/zero"), "big": big, "root": tmp_path}


def _write(files: dict[str, Path], **over: Path) -> subprocess.CompletedProcess[str]:
    f = {**files, **over}
    hostile = any(v in (files["fifo"], files["zero"]) for v in over.values())
    return gate("receipt", "write", "--out-dir", str(f["root"] / "receipts"), "--attempt", "a1", "--model", "m",
                "--workspace-gen", "g1", "--prompt-file", str(f["prompt"]), "--diff-file", str(f["patch"]),
                "--verdict", "pass", "--reason", "ok", "--key", str(f["key"]), hostile=hostile)


def _no_traceback(out: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in out.stderr and "INTERNAL" not in out.stderr, out.stderr


@pytest.mark.parametrize("which", ["fifo", "zero"])
@pytest.mark.parametrize("role", ["prompt", "patch"])
def test_a_fifo_or_device_as_an_input_file_is_refused(files: dict[str, Path], role: str, which: str) -> None:
    out = _write(files, **{role: files[which]})
    assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr and "not a regular file" in out.stderr
    _no_traceback(out)


@pytest.mark.parametrize("which", ["fifo", "zero"])
def test_a_fifo_or_device_as_the_key_file_is_refused(files: dict[str, Path], which: str) -> None:
    out = _write(files, key=files[which])
    assert out.returncode == 2 and "GATE-CONFIG-KEYFILE" in out.stderr
    _no_traceback(out)


@pytest.mark.parametrize("which", ["fifo", "zero", "big"])
def test_a_hostile_receipt_file_is_no_receipt(files: dict[str, Path], which: str) -> None:
    out = gate("receipt", "verify", "--receipt", str(files[which]), "--attempt", "a1", "--model", "m",
               "--workspace-gen", "g1", "--prompt-file", str(files["prompt"]), "--diff-file", str(files["patch"]),
               "--keyring", str(files["keyring"]), hostile=which != "big")
    assert out.returncode == 1 and out.stdout.startswith("reject"), out.stdout + out.stderr
    assert ("GATE-RECEIPT-TOO-LARGE" if which == "big" else "GATE-RECEIPT-MISSING") in out.stdout
    _no_traceback(out)


@pytest.mark.parametrize("which", ["fifo", "zero", "big"])
def test_hostile_model_output_is_refused_before_anything_is_read_from_git(files: dict[str, Path],
                                                                         which: str) -> None:
    out = gate("review", "record", "--repo", str(files["root"]), "--attempt", "a1", "--head", "HEAD",
               "--model-output", str(files[which]), "--key", str(files["key"]), "--out", str(files["root"] / "r.json"),
               hostile=which != "big")
    assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr, out.stderr
    assert ("larger than" if which == "big" else "not a regular file") in out.stderr
    _no_traceback(out)


def test_a_file_where_the_attempt_directory_belongs_is_refused(files: dict[str, Path]) -> None:
    (files["root"] / "receipts").mkdir()
    (files["root"] / "receipts" / "a1").write_text("not a directory\n")
    out = _write(files)
    assert out.returncode == 1 and "GATE-INPUT-PATH" in out.stderr
    _no_traceback(out)


def test_a_receipt_is_never_overwritten(files: dict[str, Path]) -> None:
    assert _write(files).returncode == 0
    out = _write(files)
    assert out.returncode == 1 and "GATE-INPUT-PATH" in out.stderr and "never overwritten" in out.stderr


@pytest.mark.parametrize("reason", ["\u200b", "\u2060 \u00a0", "\x85"])
def test_a_reason_that_shows_nothing_is_refused(files: dict[str, Path], reason: str) -> None:
    f = files
    out = gate("receipt", "write", "--out-dir", str(f["root"] / "receipts"), "--attempt", "a1", "--model", "m",
               "--workspace-gen", "g1", "--prompt-file", str(f["prompt"]), "--diff-file", str(f["patch"]),
               "--verdict", "pass", "--reason", reason, "--key", str(f["key"]))
    assert out.returncode == 1 and "GATE-INPUT-ARGUMENT" in out.stderr and "reason" in out.stderr, out.stderr


# --- bootstrap ------------------------------------------------------------------------------------

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


def test_bootstrap_never_follows_a_symlink_out_of_the_workspace(tmp_path: Path) -> None:
    """The agent plants `.gate -> /somewhere`: bootstrap refuses and deletes nothing there."""
    ws, outside = tmp_path / "ws", tmp_path / "precious"
    (outside / "scoring").mkdir(parents=True)
    (outside / "scoring" / "keep.txt").write_text("do not delete\n")
    ws.mkdir()
    (ws / ".gate").symlink_to(outside)
    out = gate("bootstrap", "--workspace", str(ws))
    assert out.returncode == 1 and "GATE-INPUT-PATH" in out.stderr, out.stderr
    assert (outside / "scoring" / "keep.txt").read_text() == "do not delete\n"
    _no_traceback(out)


def test_bootstrap_removes_a_symlinked_scoring_path_itself_not_its_target(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("do not delete\n")
    (ws / ".gate").mkdir(parents=True)
    (ws / ".gate" / "scoring").symlink_to(outside)
    out = gate("bootstrap", "--workspace", str(ws))
    assert out.returncode == 0, out.stderr
    assert (outside / "keep.txt").exists()
    assert (ws / ".gate" / "scoring").is_dir() and not (ws / ".gate" / "scoring").is_symlink()
