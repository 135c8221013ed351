"""Loopback servers for tests: free ports and `git daemon` with receive-pack enabled."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from .gitutil import git_env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> None:
    """Wait until the server `proc` answers on `port`. A server that has died is not waited for:
    its own error (the file it logs to) is the failure's message. `timeout` only bounds a server
    that neither answers nor dies; a loaded machine gets its time."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if proc.poll() is not None:
            raise AssertionError(f"the server exited ({proc.returncode}) before it listened on 127.0.0.1:{port}: "
                                 f"{_tail(log)}")
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s: {_tail(log)}")


def _tail(log: Path, limit: int = 2000) -> str:
    try:
        text = log.read_text(errors="replace").strip()
    except OSError as exc:
        return f"(no log: {exc})"
    return (text[-limit:] if text else "(it said nothing)").replace("\n", " | ")


@contextlib.contextmanager
def git_daemon(base: Path, extra_env: dict[str, str] | None = None, *args: str,
               account: str | None = None) -> Iterator[str]:
    """`git daemon` serving every repository below `base` (push enabled): yields git://127.0.0.1:PORT.

    `account`: run it as that account (`runuser -u ACCOUNT -- git daemon ...`, as a service
    manager's `User=` would), with the account's own HOME; the repositories must be its own."""
    port = free_port()
    env = {**git_env(), **(extra_env or {})}
    prefix: list[str] = []
    if account is not None:
        prefix = ["runuser", "-u", account, "--"]
        env.pop("HOME", None)
    log = Path(tempfile.mkdtemp(prefix="gate-daemon-log-")) / "daemon.log"
    with log.open("wb") as sink:
        # cwd: the daemon's account may not reach the directory the tests run from (a clone in
        # a 0700 home); git refuses to start in a directory it cannot read.
        proc = subprocess.Popen(
            [*prefix, "git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}", f"--base-path={base}",
             "--export-all", "--enable=receive-pack", "--informative-errors", *args, str(base)],
            env=env, cwd=base, stdout=sink, stderr=sink)
    try:
        wait_for_port(port, proc, log)
        yield f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()  # runuser passes it on and reaps the daemon
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(log.parent, ignore_errors=True)
