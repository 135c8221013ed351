"""Running the model's command for `gate review run` (the runner's side; `gatecore.records.modelcall`).

The command is a shell command line, as the runner's configuration gives it (`--model-command
'claude -p --model "$GATE_MODEL_ID"'`), run with `/bin/sh -c` in its own process group. It
reads the request on stdin and prints its answer on stdout; stderr is passed through to the
runner's log but for its end, which a failure names. It must finish within the timeout: past
it the whole group is killed. Its stdout is read up to the size of an answer
(`strictjson.MAX_DOCUMENT_BYTES` twice over: a wrapper's JSON around the answer); more is
refused. Each failure is `GATE-REVIEW-MODEL-COMMAND`, and nothing is sealed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import IO

from ..errors import GateError
from ..strictjson import MAX_DOCUMENT_BYTES
from . import gitcmd

MAX_OUTPUT_BYTES = 2 * MAX_DOCUMENT_BYTES
STDERR_TAIL = 600
CODE = "GATE-REVIEW-MODEL-COMMAND"


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run(command: str, request: bytes, timeout: float, env: Mapping[str, str]) -> bytes:
    """The command's stdout, when it exits 0 within `timeout` seconds having printed at most
    `MAX_OUTPUT_BYTES`."""
    try:
        proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**os.environ, **env}, start_new_session=True)
    except OSError as exc:
        raise GateError(CODE, f"cannot start the model's command: {exc}") from None
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdout, stderr = proc.stdout, proc.stderr
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        _kill(proc)

    err = bytearray()

    def drain() -> None:
        for chunk in iter(lambda: stderr.read(4096), b""):
            err.extend(chunk)
            del err[:-STDERR_TAIL]

    timer = threading.Timer(timeout, expire)
    timer.start()
    # a command that does not read all of the request: its answer says whether that matters
    feeder, _ = gitcmd.start_writer(proc.stdin, request, "model-request", close=True)
    threads = [feeder, threading.Thread(target=drain, daemon=True)]
    threads[1].start()
    try:
        out, too_much = _read_capped(proc, stdout)
        code = proc.wait()
    finally:
        timer.cancel()
        _kill(proc)  # whatever the shell left behind in its group
        for t in threads:
            t.join(timeout=5)
        stdout.close()
        stderr.close()
    tail = err.decode("utf-8", "replace").strip().replace("\n", " | ")[-STDERR_TAIL:]
    said = f"; its stderr ends: {tail}" if tail else ""
    if timed_out.is_set():
        raise GateError(CODE, f"the model's command did not answer within {timeout:g} s and was ended{said}")
    if too_much:
        raise GateError(CODE, f"the model's command printed more than {MAX_OUTPUT_BYTES} bytes: an answer is "
                              "smaller")
    if code != 0:
        raise GateError(CODE, f"the model's command exited {code}{said}")
    return out


def _read_capped(proc: subprocess.Popen[bytes], stdout: IO[bytes]) -> tuple[bytes, bool]:
    """What the command printed, and whether it printed more than `MAX_OUTPUT_BYTES` (then its
    group is killed at once)."""
    out = bytearray()
    for chunk in iter(lambda: stdout.read(65536), b""):
        out.extend(chunk)
        if len(out) > MAX_OUTPUT_BYTES:
            _kill(proc)
            return bytes(out), True
    return bytes(out), False
