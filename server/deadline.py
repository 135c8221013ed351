"""The hook's deadline: cooperative checks, plus a watchdog that cannot be outwaited.

Long loops compare `time.monotonic()` with `Deadline.at` and raise a `GateError` with
GATE-HOOK-DEADLINE, which rejects the push with an audit line. If the process is stuck
where it cannot check (waiting on a git process that does not answer), the watchdog thread writes the
code to stderr and ends the process with exit 3 a moment after the deadline: the push is
rejected either way, never accepted. Before it exits, the watchdog kills the process groups the
gate runs in sessions of their own (`groups`: a chained hook's, which would outlive it), and gives
`on_expire` (the hook's audit line) a brief chance to run.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable

TYPE_CHECKING = False  # (not typing's: the hooks import this module and nothing of typing)
if TYPE_CHECKING:
    import signal as _signal
else:
    import _signal  # (`signal`'s numbers without its enums, whose making is most of its import)

GRACE_SECONDS = 0.5


class Deadline:
    def __init__(self, seconds: float, prefix: str = "", on_expire: Callable[[], None] | None = None) -> None:
        self.at = time.monotonic() + seconds
        self._prefix = prefix
        self.on_expire = on_expire
        #: process groups to kill with the gate if the watchdog ends it (a chained hook's, while it runs)
        self.groups: list[int] = []
        self._lock = threading.Lock()
        self._cancelled = False
        thread = threading.Thread(target=self._watch, name="gate-deadline", daemon=True)
        thread.start()

    def reset(self, seconds: float, started: float) -> None:
        with self._lock:
            self.at = started + seconds

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True

    def _watch(self) -> None:
        while True:
            with self._lock:
                if self._cancelled:
                    return
                remaining = self.at + GRACE_SECONDS - time.monotonic()
            if remaining <= 0:
                msg = f"{self._prefix}gate: push rejected: GATE-HOOK-DEADLINE: the gate ran out of time\n"
                os.write(2, msg.encode("ascii", "replace"))
                for group in list(self.groups):
                    with contextlib.suppress(OSError):
                        os.killpg(group, _signal.SIGKILL)
                if self.on_expire is not None:
                    # The process ends with 3 whatever happens here: nothing may stop the exit.
                    with contextlib.suppress(Exception):
                        self.on_expire()
                os._exit(3)
            time.sleep(min(remaining, 0.25))
