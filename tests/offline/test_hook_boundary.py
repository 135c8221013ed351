"""The client hooks' error boundary and input: an unexpected error exits 3, never 0; outside a
repository is an error; git's pre-push input is parsed strictly; fetch refspecs map both ways."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.gitutil import HUMAN, git_env

from gatecore import codes


def test_the_boundary_maps_unexpected_errors_to_3_never_0(capsys: pytest.CaptureFixture[str]) -> None:
    from hooks.common import run

    def boom() -> tuple[int, list[str]]:
        raise RuntimeError("surprise")

    assert run(boom, "commit") == 3
    err = capsys.readouterr().err
    assert "gate: commit rejected: GATE-HOOK-INTERNAL: RuntimeError: surprise" in err


def test_outside_a_repository_is_an_error_not_a_pass(tmp_path: Path) -> None:
    for module in ("hooks.frozen_commit", "hooks.frozen_push", "hooks.receipt_push"):
        out = subprocess.run([sys.executable, "-m", module], cwd=tmp_path, env=git_env(HUMAN, GIT_CEILING_DIRECTORIES=str(tmp_path.parent)),
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
        found = re.search(r"rejected: (GATE-GIT-[A-Z-]+):", out.stderr)
        assert found, (module, out.stderr)
        assert out.returncode == codes.exit_code(found.group(1)) != 0, (module, out.stderr)


def test_parse_pre_push_is_strict() -> None:
    from gatecore.errors import GateError
    from gatecore.git.refs import parse_pre_push

    a, b = "a" * 40, "b" * 40
    ups = parse_pre_push(f"refs/heads/x {a} refs/heads/y {b}\n(delete) {'0' * 40} refs/heads/z {b}\n".encode())
    assert [(u.ref, u.old, u.new) for u in ups] == [("refs/heads/y", b, a), ("refs/heads/z", b, "0" * 40)]
    assert ups[1].is_delete
    for bad in (f"refs/heads/x {a} refs/heads/y\n", f"refs/heads/x {a} refs/heads/y {b}",
                f"x {a} refs/heads/y {b}\nx {a} refs/heads/y {b}\n", f"x {a[:39]} refs/heads/y {b}\n"):
        with pytest.raises(GateError):
            parse_pre_push(bad.encode())


def test_fetch_refspec_mapping() -> None:
    from hooks.pushset import map_back, map_forward

    specs = [("refs/heads/*", "refs/remotes/origin/*"), ("refs/gate/*", "refs/gate/*"), ("refs/x", "refs/y")]
    assert map_back("refs/remotes/origin/main", specs) == "refs/heads/main"
    assert map_back("refs/remotes/origin/review/runner/a", specs) == "refs/heads/review/runner/a"
    assert map_back("refs/gate/attempts/a", specs) == "refs/gate/attempts/a"
    assert map_back("refs/y", specs) == "refs/x" and map_back("refs/heads/main", specs) is None
    assert map_forward("refs/heads/main", specs) == "refs/remotes/origin/main"
    assert map_forward("refs/tags/v1", specs) is None

