"""Workspace generations reserved by this server, under a lock (closes an open race).

Pre-receive hooks run concurrently and git updates refs only after they exit, so two
pushes opening attempts with the same generation could both find it unused in
`refs/gate/attempts/*`. The hook therefore also records each generation it accepts for
an attempt in `GIT_DIR/gate/generations` while holding an exclusive `flock`; a second
attempt that asks for a recorded generation is refused. A reservation made by a push
that is then rejected for another reason stays: generations are random, burning one
costs nothing. The file is local to the server; the ledger refs remain the record that
replicates.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from .audit import AuditError

FILE = "generations"


def reserve(gate_dir: Path, generation: str, attempt: str) -> str | None:
    """Record `generation` for `attempt`; return the other attempt holding it, if any."""
    path = gate_dir / FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o640)
    except OSError as exc:
        raise AuditError(f"cannot open {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "rb") as fh:
            for line in fh.read().decode("ascii", "replace").splitlines():
                gen, _, holder = line.partition(" ")
                if gen == generation and holder != attempt:
                    return holder
        os.write(fd, f"{generation} {attempt}\n".encode("ascii"))
        os.fsync(fd)
    except OSError as exc:
        raise AuditError(f"cannot record a generation in {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    return None
