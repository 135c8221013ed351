"""Running the model's command for `gate review run` (the runner's side; `gatecore.records.modelcall`).

The command is a shell command line, as the runner's configuration gives it (`--model-command
'claude -p --model "$GATE_MODEL_ID"'`), run with `/bin/sh -c` in a session of its own. It reads
the request on stdin and prints its answer on stdout; the end of its stderr is named when it
fails. The deadline holds whatever the command leaves behind (`childproc`): its pipes are read
until it exits (plus a short grace) or the timeout passes, never until their end of file, so a
process it left holding them (a `setsid` child, a helper that never ends) keeps nothing waiting;
then its process group and every process that left the group are ended. Its stdout is read up to
the size of an answer (`strictjson.MAX_DOCUMENT_BYTES` twice over: a wrapper's JSON around the
answer); more is refused. The outcome is the answer it printed before it exited 0, or
`GATE-REVIEW-MODEL-COMMAND` in one line (it ran out of time, exited non-zero, or printed too
much), and nothing is sealed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import GateError
from ..strictjson import MAX_DOCUMENT_BYTES
from . import childproc

MAX_OUTPUT_BYTES = 2 * MAX_DOCUMENT_BYTES
STDERR_TAIL = 600
CODE = "GATE-REVIEW-MODEL-COMMAND"


def run(command: str, request: bytes, timeout: float, env: Mapping[str, str],
        notes: list[str] | None = None) -> bytes:
    """The command's stdout, when it exits 0 within `timeout` seconds having printed at most
    `MAX_OUTPUT_BYTES`. What it left running is ended, and said in `notes`."""
    try:
        ran = childproc.run(["/bin/sh", "-c", command], request, env={**os.environ, **env}, timeout=timeout,
                            max_stdout=MAX_OUTPUT_BYTES, stderr_tail=STDERR_TAIL)
    except OSError as exc:
        raise GateError(CODE, f"cannot start the model's command: {exc}") from None
    tail = ran.stderr_tail.decode("utf-8", "replace").strip().replace("\n", " | ")[-STDERR_TAIL:]
    said = f"; its stderr ends: {tail}" if tail else ""
    if ran.timed_out:
        raise GateError(CODE, f"the model's command did not answer within {timeout:g} s and was ended{said}")
    if ran.too_much:
        raise GateError(CODE, f"the model's command printed more than {MAX_OUTPUT_BYTES} bytes: an answer is "
                              "smaller")
    if ran.status != 0:
        raise GateError(CODE, f"the model's command exited {ran.status}{said}")
    if ran.left_behind and notes is not None:
        notes.append(f"note: the model's command left {ran.left_behind} process(es) running when it exited; "
                     "they were ended")
    return ran.stdout

