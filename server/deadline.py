"""The hook's deadline: cooperative checks, plus a watchdog that cannot be outwaited.

Long loops compare `time.monotonic()` with `Deadline.at` and raise a `GateError` with
GATE-HOOK-DEADLINE, which rejects the push with an audit line. If the process is stuck
where it cannot check (waiting on a git process that does not answer), the watchdog thread writes the
code to stderr and ends the process with exit 3 a moment after the deadline: the push is
rejected either way, never accepted. Before it exits, the watchdog kills the process groups the
gate runs in sessions of their own (`groups`: a chained hook's, which would outlive it), and gives
`on_expire` (the hook's audit line, taking back the approvals the push spent) a brief chance to run.
Once it has fired, the hook's answer is 3 whatever the main thread had settled: `cancel` then waits
for the watchdog's exit (an accept of a push whose approvals `on_expire` gave back would let them
serve again).
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
#: How long a `cancel` that comes after the watchdog fired waits for its exit before exiting itself (3).
EXPIRE_WAIT_SECONDS = 5.0


class Deadline:
    def __init__(self, seconds: float, prefix: str = "", on_expire: Callable[[], None] | None = None) -> None:
        self.at = time.monotonic() + seconds
        self._prefix = prefix
        self.on_expire = on_expire
        #: process groups to kill with the gate if the watchdog ends it (a chained hook's, while it runs)
        self.groups: list[int] = []
        self._lock = threading.Lock()
        self._cancelled = False
        self._fired = False
        thread = threading.Thread(target=self._watch, name="gate-deadline", daemon=True)
        thread.start()

    def reset(self, seconds: float, started: float) -> None:
        with self._lock:
            self.at = started + seconds

    def cancel(self) -> None:
        """The hook's answer is settled: the watchdog stands down, unless it fired first; then this
        never returns: the process ends with 3, the watchdog's exit (or its own, should `on_expire`
        hang past EXPIRE_WAIT_SECONDS)."""
        with self._lock:
            self._cancelled = True
            fired = self._fired
        if fired:
            time.sleep(EXPIRE_WAIT_SECONDS)
            os._exit(3)

    def _watch(self) -> None:
        while True:
            with self._lock:
                if self._cancelled:
                    return
                remaining = self.at + GRACE_SECONDS - time.monotonic()
                self._fired = remaining <= 0  # (under the lock: `cancel` either comes first or waits for the exit)
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
