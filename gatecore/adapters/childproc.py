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
outlives its parent is handed to this process instead of to init. So the command's descendants
are listed by their parents (`/proc`) and killed with their groups, its group is killed, and
then every orphan this process adopts as their parents die is killed and reaped too, until the
command's group is gone (`SETTLE_SECONDS` at most; `Ran.left_behind` counts those that were
running outside the group). Elsewhere such a child is left running, but nothing waits for it.
Our ends of the pipes are closed in every case, and the command is reaped only after its group
was killed (so its id, the group's, cannot be reused in between).

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
from collections.abc import Callable, Iterator, Mapping, Sequence

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
        cwd: str | os.PathLike[str] | None = None, on_start: Callable[[int], None] | None = None) -> Ran:
    """Run `argv` with `input` on its stdin (None: no stdin) and read it as the module says
    (`on_start`: told the command's id, which is its group's with `own_session`, once it runs).
    OSError if it cannot start."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with _subreaper(own_session) as before:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env), cwd=cwd,
                                start_new_session=own_session)
        if on_start is not None:
            on_start(proc.pid)
        left = 0
        try:
            out, err, timed_out, too_much = _read(proc, input, deadline, max_stdout, stderr_tail)
        finally:
            _close(proc)
            if own_session:
                left = _end_all(proc, before)
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


# --- ending everything the command started -------------------------------------------------

def _end_all(proc: subprocess.Popen[bytes], before: frozenset[int] | None) -> int:
    """Kill the command's process group and every process it started that left the group, and
    reap the command; how many were running outside its group. Without a subreaper (`before` is
    None) only the group is killed."""
    group = proc.pid  # (a session leader: its group is its id, held while it is unreaped)
    if before is None:
        _kill_group(group)
        return 0
    # Its descendants now, by their parents (a `setsid` child whose parent still runs), then
    # whatever it leaves to this process as its parents die (the subreaper adopts them).
    found = {pid: pgrp for pid, _parent, pgrp in _descendants(group)}
    _kill_group(group)
    for pid, pgrp in found.items():
        _kill(pid, pgrp)
    proc.wait()
    return sum(1 for pgrp in found.values() if pgrp != group) + _end_adopted(before, group, set(found))


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


_DEAD = (b"Z", b"X")  # a zombie (dead, not yet reaped), or dead


def _stat(pid: int | str) -> tuple[bytes, int, int] | None:
    """(state, parent, process group) of a process, from `/proc/PID/stat`; None: it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return (fields[0], int(fields[1]), int(fields[2])) if len(fields) > 2 else None


def _processes() -> Iterator[tuple[int, bytes, int, int]]:
    """(pid, state, parent, process group) of every process."""
    for name in os.listdir("/proc"):
        if name.isdigit() and (found := _stat(name)) is not None:
            yield int(name), *found


def _children() -> list[int]:
    """The processes whose parent is this one, zombies included (to be reaped)."""
    me = os.getpid()
    return [pid for pid, _state, parent, _group in _processes() if parent == me]


def _descendants(root: int) -> list[tuple[int, int, int]]:
    """(pid, parent, process group) of the live processes below `root`, by their parents, now."""
    live = [(pid, parent, group) for pid, state, parent, group in _processes() if state not in _DEAD]
    below: set[int] = {root}
    out: list[tuple[int, int, int]] = []
    grew = True
    while grew:
        grew = False
        for found in live:
            if found[1] in below and found[0] not in below:
                below.add(found[0])
                out.append(found)
                grew = True
    return out


def _kill(pid: int, pgrp: int) -> None:
    """SIGKILL a process and its group (never this process's own group)."""
    if pgrp != os.getpgrp():
        _kill_group(pgrp)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


#: How long the orphans of a killed command may take to reach this process and die.
SETTLE_SECONDS = 2.0


def _end_adopted(before: frozenset[int], group: int, ended: set[int]) -> int:
    """Kill and reap the orphans this process adopted from the command (and theirs, adopted in turn
    as they die), each with its process group, until the command's group is gone and none is left
    to reap (or `SETTLE_SECONDS` passed); how many were running outside the group when found."""
    outside = 0
    until = time.monotonic() + SETTLE_SECONDS
    while True:
        pending = False
        for pid in _children():
            if pid in before:
                continue
            found = _stat(pid)
            if found is not None and found[0] not in _DEAD and pid not in ended:
                outside += found[2] != group
                _kill(pid, found[2])
                ended.add(pid)
            with contextlib.suppress(ChildProcessError):
                pending |= os.waitpid(pid, os.WNOHANG)[0] == 0
        if (not pending and _group_gone(group)) or time.monotonic() >= until:
            return outside
        time.sleep(0.01)


def _group_gone(group: int) -> bool:
    """No process (a zombie included) is left in the group."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
