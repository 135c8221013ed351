"""`gatecore.adapters.spawn` (the hooks' children without `subprocess`) does what `subprocess` does
for what the gate uses of it: the status (a signal as its negative), stdout and stderr apart, input
larger than any pipe holds while the child writes as much back (no deadlock), a timeout that kills,
a child that cannot start, and nothing of this process's descriptors or ignored signals in the child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatecore.adapters import spawn

PY = sys.executable


def _both(argv: list[str], data: bytes | None = None) -> tuple[tuple[int, bytes, bytes], tuple[int, bytes, bytes]]:
    ours = spawn.run(argv, data, dict(os.environ), None)
    done = subprocess.run(argv, input=data, capture_output=True, check=False)
    return ours, (done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("program", [
    "import sys; sys.stdout.write('out'); sys.stderr.write('err'); sys.exit(3)",
    "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])",
    "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
    "pass",
])
def test_status_and_output_are_subprocess_s(program: str) -> None:
    ours, theirs = _both([PY, "-c", program], b"abc\x00def")
    assert ours == theirs


def test_input_and_output_larger_than_a_pipe_do_not_deadlock() -> None:
    """8 MiB in while 8 MiB (and 1 MiB of stderr) come back: written as the child reads."""
    data = os.urandom(1 << 23)
    program = ("import sys; d = sys.stdin.buffer.read(); sys.stderr.buffer.write(d[:1 << 20]); "
               "sys.stdout.buffer.write(d)")
    status, out, err = spawn.run([PY, "-c", program], data, None, 60)
    assert (status, out, err) == (0, data, data[:1 << 20])


def test_a_child_that_stops_reading_its_input_is_no_error() -> None:
    status, out, _ = spawn.run([PY, "-c", "import sys; sys.stdout.write(sys.stdin.read(3))"], b"x" * (1 << 22),
                               None, 60)
    assert (status, out) == (0, b"xxx")


def test_a_timeout_kills_the_child(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(spawn.TimedOut):
        spawn.run([PY, "-c", "import time; time.sleep(30)"], None, None, 0.5)
    assert time.monotonic() - started < 10


def test_a_child_that_closes_its_pipes_and_runs_on_is_killed_at_the_timeout() -> None:
    """The timeout holds after the pipes end too (as `subprocess.run`'s does): a child that closes
    stdout and stderr and goes on running is killed at it, never waited for without end. (It would
    run 120 s: were the timeout not held there, the test fails then instead of hanging CI.)"""
    program = "import os, time; os.close(1); os.close(2); time.sleep(120)"
    child = spawn.Child([PY, "-c", program])
    with pytest.raises(spawn.TimedOut):
        child.communicate(b"", 0.5)
    assert child.returncode == -signal.SIGKILL


def test_a_child_that_cannot_start_is_an_os_error() -> None:
    with pytest.raises(OSError):
        spawn.run(["no-such-program-of-the-gate"], None, None, None)
    with pytest.raises(OSError):
        spawn.Child(["no-such-program-of-the-gate"])


def test_the_child_gets_its_three_pipes_and_no_other_descriptor(tmp_path: Path) -> None:
    """A descriptor this process inherited (made inheritable here, as a parent could leave one) does
    not reach the child, as `subprocess`'s `close_fds` keeps it out; SIGPIPE is the default there."""
    r, w = os.pipe()
    os.set_inheritable(w, True)
    try:
        status, listed, _ = spawn.run(["ls", "/proc/self/fd"], None, None, 30)
        _, proc_status, _ = spawn.run(["cat", "/proc/self/status"], None, None, 30)
    finally:
        os.close(r)
        os.close(w)
    assert status == 0
    assert [fd for fd in map(int, listed.split()) if fd > 2] in ([], [3]), listed  # (3: the listing's own)
    ignored = next(int(line.split()[1], 16) for line in proc_status.decode().splitlines()
                   if line.startswith("SigIgn:"))
    assert not ignored & (1 << (signal.SIGPIPE - 1)) and not ignored & (1 << (signal.SIGXFSZ - 1))


def test_a_child_is_polled_waited_and_killed_as_popen_is() -> None:
    child = spawn.Child([PY, "-c", "import sys; sys.stdout.write(sys.stdin.readline())"])
    assert child.poll() is None
    child.stdin.write(b"hello\n")
    child.stdin.flush()
    assert child.stdout.readline() == b"hello\n"
    assert child.wait() == 0 and child.poll() == 0
    for f in (child.stdin, child.stdout, child.stderr):
        f.close()
    sleeper = spawn.Child([PY, "-c", "import time; time.sleep(30)"])
    sleeper.kill()
    assert sleeper.wait() == -signal.SIGKILL
    sleeper.kill()  # (a second kill of a reaped child is nothing)
    out, err = sleeper.communicate(timeout=2)
    assert (out, err) == (b"", b"")


def test_git_in_a_directory_is_started_there_and_a_missing_or_closed_one_is_the_machines_fault(tmp_path: Path) -> None:
    """`run_git(cwd=...)` starts git by `spawn` with `git -C`: in the directory given, as `subprocess`'s
    `cwd` would; one that is missing or that this process cannot enter is `GATE-GIT-REPOSITORY`, as a
    `chdir` failing was (never git's "not a repository", which the agents' check reads as nothing to judge)."""
    from gatecore.adapters.gitcmd import run_git
    from gatecore.errors import GateError

    (tmp_path / "w").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "w")], check=True)
    out = run_git(["rev-parse", "--show-toplevel"], cwd=tmp_path / "w")
    assert out.stdout.decode().strip() == str((tmp_path / "w").resolve())
    with pytest.raises(GateError) as missing:
        run_git(["rev-parse", "--show-toplevel"], cwd=tmp_path / "nowhere", ok=None)
    assert missing.value.code == "GATE-GIT-REPOSITORY"
    if os.geteuid() != 0:  # (root enters any directory)
        closed = tmp_path / "closed"
        closed.mkdir(mode=0o000)
        try:
            with pytest.raises(GateError) as shut:
                run_git(["rev-parse", "--show-toplevel"], cwd=closed, ok=None)
            assert shut.value.code == "GATE-GIT-REPOSITORY"
        finally:
            closed.chmod(0o700)
