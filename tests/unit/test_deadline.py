"""The hook's watchdog (`server.deadline`): once it has fired, the hook's answer is 3.

Each case runs in a process of its own (the watchdog ends its process). Nothing here waits on a
timing: the watchdog's `on_expire` signals that it has started, and the case that must end with
3 has an `on_expire` that never returns."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent("""
    import sys, threading
    from server import deadline
    deadline.EXPIRE_WAIT_SECONDS = 0.1
    started = threading.Event()
    def on_expire():
        started.set()
        threading.Event().wait()  # the take-back and audit line, hanging: the watchdog never exits
    d = deadline.Deadline(float(sys.argv[1]), on_expire=on_expire)
    if sys.argv[2] == "fired":
        started.wait()
    d.cancel()  # the main thread's answer is settled: accept
    print("accepted")
    sys.exit(0)
""")


def _run(seconds: str, when: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _SCRIPT, seconds, when], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)


def test_an_answer_settled_after_the_watchdog_fired_is_its_3() -> None:
    """The watchdog fired (and ran `on_expire`, which takes back the push's approvals) while the
    main thread was finishing an accept: the accept would land a push whose approvals were given
    back. `cancel` waits for the watchdog's exit instead, and ends the process with 3 itself when
    `on_expire` hangs."""
    out = _run("0", "fired")
    assert out.returncode == 3, (out.returncode, out.stdout, out.stderr)
    assert "accepted" not in out.stdout
    assert "GATE-HOOK-DEADLINE" in out.stderr


def test_an_answer_settled_before_the_deadline_stands() -> None:
    out = _run("3600", "settled")
    assert out.returncode == 0 and out.stdout == "accepted\n", (out.returncode, out.stdout, out.stderr)
