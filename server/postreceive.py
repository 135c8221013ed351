"""The post-receive hook: `server/launch.py server.postreceive --gate-dir DIR`, one audit line for what landed.

The pre-receive line records the gate's decision; a later hook (gitolite's `update`, a
chained hook, git's own checks, a lost race for a ref) can still refuse a ref the gate
accepted. git runs post-receive after the refs are updated, with one line per ref that
actually changed, so this line says what landed: `"event": "landed"`, the pusher and the
refs. It decides nothing and cannot undo anything, so the installed hook runs it in the
background with its output discarded (the push does not wait for it): the exit code is
always 0, and a failure to log goes to stderr only when it is run by hand.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

from gatecore import __version__
from gatecore.adapters import environment
from gatecore.errors import GateError
from gatecore.git.refs import MAX_INPUT_BYTES, display, parse_pre_receive

from . import audit, installation

TYPE_CHECKING = False  # (not typing's: post-receive imports nothing of typing)
if TYPE_CHECKING:
    from typing import Any


def landed_record(gate_dir: str, data: bytes) -> dict[str, Any]:
    inst = installation.read(gate_dir)
    try:
        env = environment.read_hook_env("auto" if inst.platform == "git" else inst.platform)
        who: dict[str, Any] = {"pusher": env.pusher, "pusher_source": env.pusher_source, "platform": env.platform,
                               "transport": env.transport, "client_address": env.client_address}
    except GateError as exc:  # the push landed all the same: log it without a pusher
        who = {"pusher": None, "pusher_source": exc.code, "platform": inst.platform}
    return {
        "event": "landed",
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "version": __version__,
        **who,
        "refs": [{"ref": display(u.raw_ref), "old": u.old, "new": u.new} for u in parse_pre_receive(data)],
        "pid": os.getpid(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] != "--gate-dir":
        sys.stderr.write("usage: python -m server.postreceive --gate-dir DIR\n")
        return 0
    gate_dir = args[1]
    try:
        record = landed_record(gate_dir, sys.stdin.buffer.read(MAX_INPUT_BYTES))
        audit.append(os.path.join(gate_dir, installation.AUDIT_FILE), record, syslog=installation.read(gate_dir).syslog)
    except GateError as exc:
        sys.stderr.write(f"gate: warning: what landed is not in the audit log: {exc.code}: {exc.detail}\n")
    except Exception as exc:  # the boundary: post-receive cannot reject, it can only say it failed
        sys.stderr.write(f"gate: warning: what landed is not in the audit log: {type(exc).__name__}: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
