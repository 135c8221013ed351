"""The hooks' child processes (git, the tree worker), started without `subprocess`.

Every push starts a Python for its hook, and `subprocess` costs that start 3-4 ms of CPU to import
(`locale`, `selectors` with `math`, `signal` and its enums, `warnings`): more than the git processes
of a small push together. This module starts a child with `os.posix_spawnp` (a `vfork` and an
`exec`, a third of `subprocess.Popen`'s CPU in the parent) and talks to it through pipes, as
`subprocess` would with `stdin`, `stdout` and `stderr` all `PIPE`:

* the child gets the three pipes as 0, 1 and 2 and nothing else of this process: every descriptor
  Python opens is close-on-exec (PEP 446), and those this process inherited are made so before each
  child starts (`close_fds`, as `subprocess` closes them in each child);
* SIGPIPE and SIGXFSZ are the default in the child (Python ignores SIGPIPE, and an ignored signal
  stays ignored across `exec`), as `subprocess`'s `restore_signals` makes them;
* `run` writes the input and reads both outputs in one `poll` loop (no thread, no deadlock on a
  full pipe) under a timeout, after which the child is killed (`TimedOut`); `Child.returncode` is
  the exit status, or minus the signal that ended it, as `subprocess` reports it.

`tests/unit/test_spawn.py` holds this to `subprocess` on what the gate uses of it.
"""

from __future__ import annotations

import contextlib
import os
import select
import time

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    import signal as _signal
    from collections.abc import Mapping, Sequence
    from typing import IO
else:
    import _signal  # (the C module under `signal`, loaded at every start: its numbers, without the enums)

_CHUNK = 1 << 16


class TimedOut(Exception):
    """The child ran past `run`'s timeout (it was killed)."""


def close_fds() -> None:
    """Make every descriptor of this process above 2 close-on-exec (those it inherited; Python's
    own are already): no child gets them, as `subprocess` closes them in each child with
    `close_fds=True`. Where the system lists no descriptors (no /proc or /dev/fd), none is changed."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(listing)
        except OSError:
            continue
        for name in names:
            fd = int(name) if name.isdigit() else -1
            if fd > 2:
                with contextlib.suppress(OSError):  # (the listing's own descriptor, closed since)
                    os.set_inheritable(fd, False)
        break


def _pipe() -> tuple[int, int]:
    """A pipe whose ends are above 2 (an end that took 0, 1 or 2 would be the child's own)."""
    r, w = os.pipe()
    if min(r, w) > 2:
        return r, w
    import fcntl

    moved = (fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 3), fcntl.fcntl(w, fcntl.F_DUPFD_CLOEXEC, 3))
    os.close(r)
    os.close(w)
    return moved


class Child:
    """A started child: its pipes (`stdin` to write, `stdout` and `stderr` to read, as files), its
    `pid`, and `poll`, `wait`, `kill` and `communicate` as `subprocess.Popen`'s."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None, bufsize: int = -1) -> None:
        """Start `argv` (its first word looked up in PATH); OSError if it cannot start."""
        close_fds()
        ends: list[int] = []
        try:
            for _ in range(3):
                ends += _pipe()
            in_r, in_w, out_r, out_w, err_r, err_w = ends
            self.pid = os.posix_spawnp(
                argv[0], list(argv), os.environ if env is None else env,
                file_actions=[(os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
                              (os.POSIX_SPAWN_DUP2, err_w, 2)],
                setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ))
        except BaseException:
            for fd in ends:
                os.close(fd)
            raise
        for fd in (in_r, out_w, err_w):  # (the child's ends)
            os.close(fd)
        self.returncode: int | None = None
        self.stdin: IO[bytes] = open(in_w, "wb", buffering=bufsize)  # noqa: SIM115 (closed by the caller)
        self.stdout: IO[bytes] = open(out_r, "rb", buffering=bufsize)  # noqa: SIM115
        self.stderr: IO[bytes] = open(err_r, "rb", buffering=bufsize)  # noqa: SIM115

    def _reaped(self, status: int) -> int:
        self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                return self._reaped(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            while True:
                try:
                    _, status = os.waitpid(self.pid, 0)
                except InterruptedError:  # (PEP 475 retries; kept for the systems that do not)
                    continue
                return self._reaped(status)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # (it ended, reaped elsewhere: nothing to kill)
                os.kill(self.pid, _signal.SIGKILL)

    def communicate(self, input: bytes = b"", timeout: float | None = None) -> tuple[bytes, bytes]:
        """Write `input` (then close stdin), read stdout and stderr to their end, wait for the child:
        its output and its errors. Past `timeout` seconds the child is killed and `TimedOut` raised."""
        with contextlib.suppress(OSError, ValueError):  # (a child that stopped reading, a pipe closed)
            self.stdin.flush()
        return _exchange(self, input, None if timeout is None else time.monotonic() + timeout)


def _exchange(child: Child, data: bytes, until: float | None) -> tuple[bytes, bytes]:
    poller = select.poll()
    reading: dict[int, list[bytes]] = {}
    outs: list[list[bytes]] = []
    for pipe in (child.stdout, child.stderr):
        outs.append([])
        if not pipe.closed:
            reading[pipe.fileno()] = outs[-1]
            poller.register(pipe.fileno(), select.POLLIN)
    feed = _Feed(child.stdin, data, poller, select.PIPE_BUF)
    while reading or feed.fd >= 0:
        left = None if until is None else until - time.monotonic()
        if left is not None and left <= 0:
            child.kill()
            child.wait()
            raise TimedOut
        for fd, _events in poller.poll(None if left is None else max(1, int(left * 1000))):
            if fd == feed.fd:
                feed.more()
                continue
            chunk = os.read(fd, _CHUNK)
            if chunk:
                reading[fd].append(chunk)
            else:
                poller.unregister(fd)
                del reading[fd]
    child.stdout.close()
    child.stderr.close()
    if until is None:
        child.wait()
    else:
        _wait_until(child, until)
    return b"".join(outs[0]), b"".join(outs[1])


def _wait_until(child: Child, until: float) -> None:
    """Wait for a child that closed its pipes, as long as the timeout leaves (one that closed them and
    went on running is killed at it: `TimedOut`, as `subprocess.run` ends it)."""
    delay = 0.0005
    while child.poll() is None:
        left = until - time.monotonic()
        if left <= 0:
            child.kill()
            child.wait()
            raise TimedOut
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.05)


class _Feed:
    """A child's stdin written as `poll` says it takes more (at most `step` bytes a write: what a
    writable pipe takes without blocking), then closed; `fd` -1 once done."""

    def __init__(self, pipe: IO[bytes], data: bytes, poller: select.poll, step: int) -> None:
        self.pipe, self.view, self.at, self.poller, self.step = pipe, memoryview(data), 0, poller, step
        self.fd = -1
        if data and not pipe.closed:
            self.fd = pipe.fileno()
            poller.register(self.fd, select.POLLOUT)
        else:
            self._close()

    def more(self) -> None:
        try:
            self.at += os.write(self.fd, self.view[self.at:self.at + self.step])
        except BrokenPipeError:
            self.at = len(self.view)  # the child stopped reading: its status says why
        if self.at >= len(self.view):
            self.poller.unregister(self.fd)
            self.fd = -1
            self._close()

    def _close(self) -> None:
        with contextlib.suppress(OSError):  # (one that stopped reading: its status says why)
            self.pipe.close()


def run(argv: Sequence[str], input: bytes | None, env: Mapping[str, str] | None, timeout: float | None
        ) -> tuple[int, bytes, bytes]:
    """`subprocess.run(argv, input=input, capture_output=True, env=env, timeout=timeout)`: the
    status, stdout and stderr (OSError if it cannot start; `TimedOut`, the child killed)."""
    child = Child(argv, env)
    out, err = child.communicate(input or b"", timeout)
    assert child.returncode is not None
    return child.returncode, out, err
