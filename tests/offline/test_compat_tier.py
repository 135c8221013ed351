"""The compat tier's own parts (`./dev compat`, docs/architecture.md), without running git's suite:
its list of expected differences, its reading of git's TAP output and of the hook's log, and the
scripts that make the gate a config-defined hook of `receive-pack` and of nothing else.
A run of one of git's scripts: tests/push/test_git_accepts.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.gitutil import ROOT

sys.path.insert(0, str(ROOT))

from compat.run import (
    MODES,
    Case,
    Difference,
    GitUnderTest,
    Run,
    attach_decisions,
    load_expected,
    make_git,
    matches,
    parse_tap,
    report,
)

from gatecore import codes


def test_every_expected_difference_names_a_registered_code_and_a_reason() -> None:
    expected = load_expected()
    assert expected
    for e in expected:
        assert e.code in codes.CODES, e
        assert set(e.modes) <= set(MODES) and e.reason.strip(), e
    assert len({(e.script, e.test) for e in expected}) == len(expected)


def test_tap_output_is_read_as_git_writes_it() -> None:
    tests, skipped = parse_tap("\n".join([
        "ok 1 - setup",
        "not ok 2 - push into aliased refs (inconsistent)",
        "#\tsome output",
        "ok 3 # skip needs a web server (missing HTTPD)",
        "not ok 4 - known bug # TODO known breakage",
        "ok 5 - fixed bug # TODO known breakage vanished",
        "1..5",
    ]))
    assert skipped is None
    assert {n: (t.title, t.status) for n, t in tests.items()} == {
        1: ("setup", "ok"), 2: ("push into aliased refs (inconsistent)", "fail"),
        3: ("needs a web server (missing HTTPD)", "skip"), 4: ("known bug", "todo"), 5: ("fixed bug", "fixed")}
    assert parse_tap("1..0 # SKIP Cannot run httpd tests as root\n") == ({}, "Cannot run httpd tests as root")


def test_a_script_that_reports_no_test_fails_the_run_and_shows_what_it_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A script that stopped before its first test (twice: the runner tries once more) compared
    nothing: the run fails, naming it, with the end of its output, rather than saying ok."""
    gated = Run("t5535-x", "sha1", True, tests={1: Case(1, "setup", "ok")})
    plain = Run("t5535-x", "sha1", False, exit=1, tail="Bail out! cannot setup test environment")
    assert plain.silent and not gated.silent
    assert not Run("t5535-x", "sha1", False, skipped="no prerequisite").silent
    rc = report({("t5535-x", "sha1", True): gated, ("t5535-x", "sha1", False): plain}, ["t5535-x"], ["sha1"],
                [], 1.0, tmp_path)
    out = capsys.readouterr().out
    assert rc == 1
    assert "sha1 plain t5535-x (exit 1)" in out and "Bail out! cannot setup test environment" in out
    assert out.rstrip().splitlines()[-1].startswith("FAILED")


def test_each_decision_goes_to_the_test_whose_output_encloses_it() -> None:
    log = b"expecting success of 1\nok 1 - setup\nexpecting success of 2\nremote: ...\nnot ok 2 - push\n"
    at_second = log.index(b"expecting success of 2") + 5
    rejected = (b"gate: push rejected: 1 violation\nGATE-REF-NAME ref=refs/heads/bar reason=...\n"
                b'gate-json: {"code": "GATE-REF-NAME", "exit": 1}\n')
    hook_log = b"\n@@ 3 0\n" + b"\n@@ %d 1\n" % at_second + rejected + b"\n@@ 9999 3\ngate: push rejected: X\n"
    tests, _ = parse_tap(log.decode())
    orphans = attach_decisions(tests, log, hook_log)
    assert tests[1].decisions == [(0, "")]
    assert tests[2].codes == ["GATE-REF-NAME"]
    assert tests[2].decisions[0][0] == 1 and "GATE-REF-NAME ref=refs/heads/bar" in tests[2].decisions[0][1]
    assert orphans == [(3, "gate: push rejected: X")]
    listed = next(e for e in load_expected() if e.code == "GATE-REF-NAME")
    found = Difference("sha1", listed.script, Case(2, listed.test, "fail", ["GATE-REF-NAME"]))
    assert matches(listed, found)
    assert not matches(listed, Difference("sha1", listed.script, Case(2, listed.test, "fail", ["GATE-GIT-MALFORMED"])))


def test_the_hook_is_added_to_receive_pack_and_to_nothing_else(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "bin").mkdir(parents=True)
    (real / "exec").mkdir()
    fake = real / "bin" / "git"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)
    (real / "exec" / "git-upload-pack").write_text("")
    hook = tmp_path / "pre-receive"
    bin_dir, exec_dir = make_git(tmp_path / "wrapped", GitUnderTest(real / "bin", real / "exec", tmp_path, "2.55.0"),
                                 hook)
    assert (exec_dir / "git-upload-pack").resolve() == real / "exec" / "git-upload-pack"

    def args(*argv: str, via: Path = bin_dir / "git") -> list[str]:
        return subprocess.run([str(via), *argv], capture_output=True, text=True, check=True).stdout.splitlines()

    added = ["-c", f"hook.pushgate.command={hook}", "-c", "hook.pushgate.event=pre-receive"]
    assert args("receive-pack", "repo.git") == [*added, "receive-pack", "repo.git"]
    assert args("-C", "x", "-c", "a.b=1", "--git-dir", "g", "receive-pack", ".") == \
        [*added, "-C", "x", "-c", "a.b=1", "--git-dir", "g", "receive-pack", "."]
    assert args(".", via=exec_dir / "git-receive-pack") == [*added, "receive-pack", "."]
    assert args("push", "origin", "receive-pack") == ["push", "origin", "receive-pack"]
    assert args("-c", "receive-pack", "log") == ["-c", "receive-pack", "log"]
    plain, _ = make_git(tmp_path / "plain", GitUnderTest(real / "bin", real / "exec", tmp_path, "2.55.0"), None)
    assert args("receive-pack", ".", via=plain / "git") == ["receive-pack", "."]
