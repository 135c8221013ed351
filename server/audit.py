"""The audit log: one JSON line per push decision, appended safely under concurrent pushes.

Each line is written with one `write` on an `O_APPEND` descriptor while holding an
exclusive `flock`, then fsync-ed. If the write fails part-way (disk full), the file is
truncated back to where it was, so no partial line is ever left. Any failure raises
`GATE-AUDIT-WRITE`, which rejects the push.

The file is the record. With `gate server install --audit-syslog SOCKET` each line also goes,
once written, to a syslog socket (`/dev/log`, where syslog daemons and journald listen) as
one datagram, `<PRI>gate-audit[PID]: LINE`: a sink for central logging, never a condition
of the push (`gate server doctor` sends a test line and says whether it arrives). The file
is opened anew for every line, so rotating it (logrotate, docs/servers.md) needs no signal.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os

from gatecore.errors import GateError

TYPE_CHECKING = False  # (not typing's: post-receive imports this module and nothing of typing)
if TYPE_CHECKING:
    from typing import Any

    from gatecore.adapters.files import StrPath


def _lock(fd: int, wait: float | None) -> None:
    if wait is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    import time

    until = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= until:
                raise
            time.sleep(0.01)


def _audit_error(detail: str) -> GateError:
    return GateError("GATE-AUDIT-WRITE", detail)


#: syslog's facility "user" (1) and severities: informational for an accepted push, warning otherwise.
_INFO, _WARNING = 8 + 6, 8 + 4


def to_syslog(socket_path: str, line: bytes, warning: bool = False) -> None:
    """Send one line to a syslog socket (a datagram; raises OSError when nobody listens)."""
    import socket

    message = f"<{_WARNING if warning else _INFO}>gate-audit[{os.getpid()}]: ".encode() + line.rstrip(b"\n")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.settimeout(1.0)
        sock.sendto(message, socket_path)


def append(path: StrPath, record: dict[str, Any], wait: float | None = None, syslog: str | None = None) -> None:
    """Append one line (and send it to the `syslog` socket, if any). `wait` (seconds) bounds the
    wait for the lock: the deadline watchdog must not block behind the main thread; past it the
    line is skipped (GATE-AUDIT-WRITE)."""
    line = (json.dumps(record, sort_keys=True, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
    except OSError as exc:
        raise _audit_error(f"cannot open {path}: {exc.strerror}") from None
    try:
        _lock(fd, wait)
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            written = 0
            while written < len(line):
                written += os.write(fd, line[written:])
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):  # already failing: the push is rejected either way
                os.ftruncate(fd, start)
            raise _audit_error(f"cannot write {path}: {exc.strerror}") from None
    except OSError as exc:
        raise _audit_error(f"cannot lock {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if syslog:
        with contextlib.suppress(OSError):  # the file holds the line; the sink is best effort (doctor checks it)
            to_syslog(syslog, line, record.get("decision") not in (None, "accept"))
