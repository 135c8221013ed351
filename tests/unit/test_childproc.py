"""A child process read to a deadline (`gatecore.adapters.childproc`): real processes, the input
written whole however large, and every stop the module names. The deadline's own case, a child
that leaves a `setsid` process holding its pipes, runs through `gate review run`
(tests/push/test_model_call.py)."""

from __future__ import annotations

import os

from gatecore.adapters import childproc

ENV = dict(os.environ)


def test_an_input_larger_than_any_pipe_is_written_whole_while_the_output_is_read() -> None:
    data = os.urandom(3 << 20)
    ran = childproc.run(["/bin/sh", "-c", "cat; echo done >&2"], data, env=ENV, timeout=120)
    assert (ran.status, ran.stdout, ran.stderr_tail, ran.timed_out, ran.left_behind) == (0, data, b"done\n", False, 0)


def test_a_command_that_reads_none_of_its_input_is_judged_by_what_it_did() -> None:
    ran = childproc.run(["/bin/sh", "-c", "echo answer; exit 3"], b"x" * (4 << 20), env=ENV, timeout=120)
    assert (ran.status, ran.stdout, ran.timed_out) == (3, b"answer\n", False)


def test_past_the_deadline_the_command_is_ended() -> None:
    ran = childproc.run(["/bin/sh", "-c", "echo started; exec sleep 3600"], None, env=ENV, timeout=0.5)
    assert (ran.status, ran.stdout, ran.timed_out) == (None, b"started\n", True)


def test_more_output_than_is_taken_stops_the_reading() -> None:
    ran = childproc.run(["/bin/sh", "-c", "yes"], None, env=ENV, timeout=120, max_stdout=100_000)
    assert ran.too_much and not ran.timed_out and len(ran.stdout) > 100_000


def test_the_stderr_kept_is_its_end() -> None:
    ran = childproc.run(["/bin/sh", "-c", "seq 1 100000 >&2"], None, env=ENV, timeout=120, stderr_tail=12)
    assert ran.stderr_tail == b"99999\n100000\n"[-12:]


def test_without_a_session_of_its_own_nothing_it_leaves_is_waited_for() -> None:
    """git's transport shares this process's group (an ssh passphrase needs the terminal): what it
    leaves behind is not ended, but the reading stops at its exit plus the grace."""
    ran = childproc.run(["/bin/sh", "-c", "setsid sleep 3600 & echo $!"], None, env=ENV, timeout=None,
                        own_session=False)
    pid = int(ran.stdout)
    try:
        assert ran.status == 0 and ran.left_behind == 0
    finally:
        os.kill(pid, 9)
