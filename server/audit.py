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
from gatecore.valueclass import valueclass

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


# --- reading the log back: `gate server audit` ------------------------------------------------------

#: The ref namespace of `gate server doctor`'s probe pushes (gatecore.git.refs.DOCTOR_PREFIX; not imported:
#: the hooks import this module at start-up).
PROBE_PREFIX = "refs/gate/doctor/"


def is_probe(record: dict[str, Any]) -> bool:
    """A decision on a push of doctor's probe refs only (always refused, never lands): marked
    `"probe": true` since the field exists, told by its refs in lines written before it."""
    if "probe" in record:
        return record["probe"] is True
    refs = record.get("refs")
    return (record.get("event") == "decision" and isinstance(refs, list) and bool(refs)
            and all(isinstance(r, dict) and str(r.get("ref", "")).startswith(PROBE_PREFIX) for r in refs))


def probe_push(refs: list[str]) -> bool:
    """Does a push of these refs (display form) consist of doctor's probes only (the `probe` field)?"""
    return bool(refs) and all(r.startswith(PROBE_PREFIX) for r in refs)


@valueclass(frozen=True, slots=True)
class Query:
    """What `gate server audit` shows: lines at or after `since` (seconds since the epoch), with
    one of `codes`, by one of `pushers`, touching one of `refs` (each a glob; empty: any), doctor's
    probes only with `probes`."""

    since: int | None = None
    codes: tuple[str, ...] = ()
    pushers: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    probes: bool = False

    def matches(self, record: dict[str, Any]) -> bool:
        from fnmatch import fnmatchcase

        if not self.probes and is_probe(record):
            return False
        if self.since is not None and (when := line_time(record)) is not None and when < self.since:
            return False
        codes = [c for c in record.get("codes") or [] if isinstance(c, str)]
        if self.codes and not any(fnmatchcase(c, p) for c in codes for p in self.codes):
            return False
        pusher = record.get("pusher")
        if self.pushers and not (isinstance(pusher, str) and any(fnmatchcase(pusher, p) for p in self.pushers)):
            return False
        names = [str(r.get("ref", "")) for r in record.get("refs") or [] if isinstance(r, dict)]
        return not self.refs or any(fnmatchcase(n, p) for n in names for p in self.refs)


def line_time(record: dict[str, Any]) -> int | None:
    """A line's `time` (`2026-12-05T10:00:00Z`) in seconds since the epoch; None if it has none."""
    import calendar
    import time

    try:
        return calendar.timegm(time.strptime(str(record.get("time")), "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return None


def since_value(text: str, now: int) -> int:
    """`--since`: a duration back from `now` (`2h`, `7d`) or a UTC date or time (`2026-12-01`,
    `2026-12-01T10:00:00Z`); GATE-INPUT-ARGUMENT otherwise."""
    import calendar
    import re
    import time

    from gatecore.configuration import durations

    if re.fullmatch(r"\d{1,7}[smhd]?", text.strip()):
        return now - durations.parse(text, "--since")
    for form in ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S"):
        try:
            return calendar.timegm(time.strptime(text.strip(), form))
        except ValueError:
            continue
    raise GateError("GATE-INPUT-ARGUMENT", f"--since {text!r} is neither a duration (2h, 7d) nor a UTC date or "
                                           "time (2026-12-01, 2026-12-01T10:00:00Z)")


def read_lines(path: StrPath) -> list[tuple[int, dict[str, Any] | None]]:
    """The log's lines, numbered from 1, each its record or None when it is not a JSON object
    (GATE-INPUT-PATH when the file cannot be read)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise GateError("GATE-INPUT-PATH", f"cannot read the audit log {path}: {exc.strerror}") from None
    out: list[tuple[int, dict[str, Any] | None]] = []
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        out.append((number, record if isinstance(record, dict) else None))
    return out


def _short(oid: object) -> str:
    return str(oid)[:12]


def _ref_words(ref: dict[str, Any]) -> str:
    name, old, new = str(ref.get("ref", "?")), str(ref.get("old", "")), str(ref.get("new", ""))
    if old.strip("0") == "":
        return f"{name} (created at {_short(new)})"
    if new.strip("0") == "":
        return f"{name} (deleted, was {_short(old)})"
    return f"{name} {_short(old)}..{_short(new)}"


def _refs_words(record: dict[str, Any]) -> str:
    refs = [_ref_words(r) for r in record.get("refs") or [] if isinstance(r, dict)]
    if len(refs) > 3:
        return ", ".join(refs[:3]) + f" and {len(refs) - 3} more refs"
    return ", ".join(refs) or "no refs"


_DECISIONS = {"accept": "accepted", "reject": "REJECTED", "evaluate-reject": "would be rejected (evaluate mode: "
                                                                             "accepted)"}


def words(record: dict[str, Any]) -> list[str]:
    """One audit line in words: when, what was decided, who pushed what from where, the codes,
    and (indented) why each restricted commit was restricted, the approvals used and the reviews
    accepted. Pure."""
    when = str(record.get("time", "(no time)")).replace("T", " ").replace("Z", " UTC")
    pusher = record.get("pusher") or "(pusher unknown)"
    source = " ".join(str(x) for x in (record.get("transport"), record.get("client_address") and
                                       f"from {record['client_address']}") if x)
    who = f"{pusher}" + (f" ({source})" if source else "")
    if record.get("event") == "landed":
        return [f"{when}  landed: {_refs_words(record)}, pushed by {who}"]
    decision = record.get("decision")
    head = f"{when}  {_DECISIONS.get(str(decision), str(decision))}: {who} pushed {_refs_words(record)}"
    codes = [str(c) for c in record.get("codes") or []]
    if codes:
        head += ": " + ", ".join(codes)
    if is_probe(record):
        head += " (gate server doctor's probe)"
    lines = [head]
    for item in record.get("evidence") or []:
        if isinstance(item, dict):
            lines.append(f"    commit {_short(item.get('commit', '?'))} by {item.get('identity', '?')}: "
                         f"{item.get('evidence', '')}")
    for used in record.get("approvals") or []:
        if isinstance(used, dict):
            lines.append(f"    approved by {used.get('approver', '?')}, approval {_short(used.get('id', '?'))}: "
                         f"{', '.join(str(p) for p in used.get('paths') or [])} on {used.get('ref', '?')}")
    for attempt in record.get("attempt_ids") or []:
        lines.append(f"    review of attempt {attempt} accepted")
    return lines


@valueclass(frozen=True, slots=True)
class Report:
    lines: list[str]  # in words, or the matching JSON lines
    notes: list[str]  # for stderr: lines that are no JSON object, how many lines matched, what was left out
    unreadable: int  # lines that are no JSON object


def report(path: StrPath, query: Query, as_json: bool) -> Report:
    """`gate server audit`: the matching lines of the log, in words or as JSON, and notes."""
    shown: list[str] = []
    notes: list[str] = []
    total = probes = matched = unreadable = 0
    for number, record in read_lines(path):
        if record is None:
            notes.append(f"{path}:{number}: not a JSON object: skipped")
            unreadable += 1
            continue
        total += 1
        probes += is_probe(record)
        if not query.matches(record):
            continue
        matched += 1
        if as_json:
            shown.append(json.dumps(record, sort_keys=True, ensure_ascii=True, separators=(",", ":")))
        else:
            shown += words(record)
    hidden = "" if query.probes or not probes else (
        f"; {probes} of gate server doctor's probe pushes not shown (--include-probes shows them)")
    notes.append(f"{matched} of {total} lines of {path}{hidden}")
    return Report(shown, notes, unreadable)
