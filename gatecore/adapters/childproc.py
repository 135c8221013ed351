"""A child process read to a deadline, whatever it leaves behind (the model's command, the trusted side's transport).

A command can answer and exit while something it started still holds its stdout or stderr: a
process of its own session (`setsid`), a daemon, a helper that never ends. Reading the pipes to
their end then waits for that process, not for the command: `gate review run` waited 25 s past a
2 s `--model-timeout` for one, and would wait forever for a helper that never exits. So `run`
reads both pipes (and writes the input) in one `selectors` loop, never waiting for an end of file,
and stops at the first of:

* both pipes at their end, the command exited;
* the command's exit plus `GRACE_SECONDS` (what it wrote before it exited is in the pipe already);
* the deadline (`timeout`; the command is still running: `Ran.timed_out`);
* more stdout than the caller takes (`Ran.too_much`).

Then, with `own_session` (the command ran in a session of its own), everything it started is
ended: its process group, and, on Linux, the processes that left the group. While the command
runs this process is their subreaper (`PR_SET_CHILD_SUBREAPER`): a child that calls `setsid` and
outlives its parent is handed to this process instead of to init, so it is found (its parent is
this process now), killed with its own group and reaped (`Ran.left_behind` counts them).
Elsewhere such a child is left running, but nothing waits for it. Our ends of the pipes are
closed in every case, and the command is reaped only after its group was killed (so its id
cannot be reused in between).

Without `own_session` (git's transport, which may need the terminal for an ssh passphrase), the
command shares this process's group: it is killed alone at the deadline, and what it leaves
behind is left alone, but never waited for.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence

from ..valueclass import valueclass

#: How long the pipes are still read after the command exited: what it wrote is in them already.
GRACE_SECONDS = 1.0
#: How often the loop looks whether the command exited, while its pipes are quiet.
POLL_SECONDS = 0.05
_CHUNK = 65536
#: prctl(2): a process that adopts its descendants' orphans.
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37
_EXIT = "exit"  # the selector's mark on the command's pidfd


@valueclass(frozen=True, slots=True)
class Ran:
    """What a command did: its exit status (None: still running at the deadline, then ended), its
    stdout, the end of its stderr, and what stopped the reading."""

    status: int | None
    stdout: bytes
    stderr_tail: bytes
    timed_out: bool
    too_much: bool
    left_behind: int  # processes outside its group that it left running, ended here


def run(argv: Sequence[str], input: bytes | None, *, env: Mapping[str, str], timeout: float | None,
        max_stdout: int | None = None, stderr_tail: int = 600, own_session: bool = True,
        cwd: str | os.PathLike[str] | None = None) -> Ran:
    """Run `argv` with `input` on its stdin (None: no stdin) and read it as the module says.
    OSError if it cannot start."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with _subreaper(own_session) as before:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env), cwd=cwd,
                                start_new_session=own_session)
        left = 0
        try:
            out, err, timed_out, too_much = _read(proc, input, deadline, max_stdout, stderr_tail)
        finally:
            _close(proc)
            if own_session:
                _kill_group(proc.pid)
                left = _end_adopted(before, proc.pid)
            elif proc.poll() is None:
                proc.kill()
            proc.wait()
    status = None if timed_out else proc.returncode
    return Ran(status, out, err, timed_out, too_much, left)


def _read(proc: subprocess.Popen[bytes], data: bytes | None, deadline: float | None, max_stdout: int | None,
          tail: int) -> tuple[bytes, bytes, bool, bool]:
    """(stdout, the end of stderr, timed out, too much): the pipes read until the first stop."""
    pipes = _Pipes(proc, data, max_stdout, tail)
    exited_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if exited_at is None and _exited(proc.pid):
                exited_at = now
            if exited_at is not None and (now >= exited_at + GRACE_SECONDS or not pipes.reading):
                return bytes(pipes.out), bytes(pipes.err), False, False
            if exited_at is None and deadline is not None and now >= deadline:
                return bytes(pipes.out), bytes(pipes.err), True, False
            if not pipes.step(POLL_SECONDS if deadline is None else max(0.0, min(POLL_SECONDS, deadline - now))):
                return bytes(pipes.out), bytes(pipes.err), False, True
    finally:
        pipes.close()


class _Pipes:
    """The command's three pipes in one selector: its input written as it takes it, its stdout kept
    (up to `max_stdout`), the end of its stderr."""

    def __init__(self, proc: subprocess.Popen[bytes], data: bytes | None, max_stdout: int | None,
                 tail: int) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.proc, self.max_stdout, self.tail = proc, max_stdout, tail
        self.out, self.err = bytearray(), bytearray()
        self.sel = selectors.DefaultSelector()
        self.sel.register(proc.stdout.fileno(), selectors.EVENT_READ, self.out)
        self.sel.register(proc.stderr.fileno(), selectors.EVENT_READ, self.err)
        self.pending = memoryview(data or b"")
        try:  # the command's exit wakes the selector (Linux 5.3+); elsewhere the loop looks every POLL_SECONDS
            self.pidfd: int | None = os.pidfd_open(proc.pid)
            self.sel.register(self.pidfd, selectors.EVENT_READ, _EXIT)
        except (AttributeError, OSError):
            self.pidfd = None
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
            if self.pending:
                self.sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE, None)
            else:
                proc.stdin.close()

    @property
    def reading(self) -> bool:
        """Is stdout or stderr still open?"""
        return any(isinstance(key.data, bytearray) for key in self.sel.get_map().values())

    def close(self) -> None:
        self.sel.close()
        if self.pidfd is not None:
            os.close(self.pidfd)

    def step(self, wait: float) -> bool:
        """Read and write what is ready within `wait` seconds; False: more stdout than is taken."""
        if not self.sel.get_map():
            time.sleep(wait)  # (every pipe is closed and the command still runs: wait for its exit)
            return True
        for key, _ in self.sel.select(wait):
            if key.data is None:  # stdin is writable
                self._write(key.fd)
                continue
            if key.data is _EXIT:  # (the loop reads the exit itself)
                self.sel.unregister(key.fd)
                continue
            chunk = os.read(key.fd, _CHUNK)
            if not chunk:
                self.sel.unregister(key.fd)
                continue
            key.data.extend(chunk)
            if key.data is self.err:
                del self.err[:-self.tail]
            elif self.max_stdout is not None and len(self.out) > self.max_stdout:
                return False
        return True

    def _write(self, fd: int) -> None:
        """Write what the pipe takes; at the end, or when the command stops reading, close stdin."""
        assert self.proc.stdin is not None
        try:
            self.pending = self.pending[os.write(fd, self.pending[:_CHUNK]):]
        except BlockingIOError:
            return
        except OSError:  # it stopped reading: its answer says whether that matters
            self.pending = self.pending[:0]
        if not self.pending:
            self.sel.unregister(fd)
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


def _exited(pid: int) -> bool:
    """Has the command exited? (Not reaped: its id, and its group's, stay its own until `wait`.)"""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _close(proc: subprocess.Popen[bytes]) -> None:
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# --- the processes that left the command's group (Linux) --------------------------------------

def _prctl(option: int, value: int = 0) -> int | None:
    """prctl(2), or None where there is none (not Linux, no libc)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if option == _PR_GET_CHILD_SUBREAPER:
            got = ctypes.c_int(0)
            return None if libc.prctl(option, ctypes.byref(got), 0, 0, 0) != 0 else got.value
        return None if libc.prctl(option, value, 0, 0, 0) != 0 else 0
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def _subreaper(on: bool) -> Iterator[frozenset[int] | None]:
    """While it lasts, this process adopts its descendants' orphans; yields the children it had
    before (None: no subreaper here, nothing will be adopted)."""
    was = _prctl(_PR_GET_CHILD_SUBREAPER) if on else None
    if was is None or _prctl(_PR_SET_CHILD_SUBREAPER, 1) is None:
        yield None
        return
    try:
        yield frozenset(_children())
    finally:
        if not was:
            _prctl(_PR_SET_CHILD_SUBREAPER, 0)


def _children() -> Iterator[int]:
    """The processes whose parent is this one (`/proc/PID/stat`'s fourth field)."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            yield int(name)


def _end_adopted(before: frozenset[int] | None, command: int, rounds: int = 8) -> int:
    """Kill and reap the orphans this process adopted from the command (and theirs, which it adopts
    in turn as they die), each with its process group; how many there were."""
    if before is None:
        return 0
    ended: set[int] = set()
    ours = os.getpgrp()
    for _ in range(rounds):
        adopted = [pid for pid in _children() if pid not in before and pid != command and pid not in ended]
        if not adopted:
            break
        for pid in adopted:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                group = os.getpgid(pid)
                if group != ours:
                    os.killpg(group, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            ended.add(pid)
    return len(ended)
