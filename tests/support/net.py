"""Loopback servers for tests: free ports and `git daemon` with receive-pack enabled."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from .gitutil import git_env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, timeout: float = 30) -> None:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


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
    proc = subprocess.Popen(
        [*prefix, "git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}", f"--base-path={base}",
         "--export-all", "--enable=receive-pack", "--informative-errors", *args, str(base)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()  # runuser passes it on and reaps the daemon
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
